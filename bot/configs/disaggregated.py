"""Serving plans that prefill the prompts on GPUs of their own (disaggregated): a prefill server
on the first GPUs and a decode server on the others, each started in the background, and the
proxy or router that takes the requests in front of them.

vLLM: both servers with the NixlConnector (`--kv-transfer-config`, vLLM docs
features/nixl_connector_usage), each on its own CUDA_VISIBLE_DEVICES, port and NIXL side-channel
port, and vLLM's example proxy (tests/v1/kv_connector/nixl_integration/toy_proxy_server.py), which
sends each request to the prefill server, then to the decode server. SGLang:
`--disaggregation-mode prefill` / `decode` servers (advanced_features/pd_disaggregation) and
`sglang_router.launch_router --pd-disaggregation`. The decode pool is the plan's replicas with the
sequences its KV budget holds; the prefill pool runs instances of the same shape."""

from __future__ import annotations

import json
from dataclasses import dataclass

from gpuplan.bot.configs import common, serving
from gpuplan.bot.configs.launch import ConfigError, Launch
from gpuplan.bot.configs.text import CHANGE_ME, Script, Words, flag

# vLLM docs, features/nixl_connector_usage: the connector of both instances (kv_both: the proxy decides the roles)
NIXL_CONFIG = json.dumps({"kv_connector": "NixlConnector", "kv_role": "kv_both"}, separators=(",", ":"))
# vLLM docs, nixl_connector_usage: VLLM_NIXL_SIDE_CHANNEL_PORT defaults to 5600, one port per data-parallel rank
NIXL_SIDE_PORT = 5600
# SGLang server_args: --disaggregation-bootstrap-port's default, where the prefill server meets the decode one
BOOTSTRAP_PORT = 8998
# the servers' ports on the node (the proxy in front keeps the engine's usual 8000 / 30000)
PORTS = {"vllm": (8100, 8200, 8000), "sglang": (30100, 30200, 30000)}
PROXY = "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py"  # in the vLLM repository


@dataclass(frozen=True)
class Pool:
    """The GPUs of one role: a contiguous range on the node, in instances of the plan's replica shape."""

    role: str  # "prefill" or "decode"
    first: int  # its first GPU on the node
    gpus: int
    instances: int

    @property
    def devices(self) -> str:
        return ",".join(str(i) for i in range(self.first, self.first + self.gpus))


def pools(launch: Launch, fmt: str) -> tuple[Pool, Pool]:
    """The prefill and decode pools; ConfigError where these files cannot launch them: pools over
    several nodes, or an expert-parallel pool of several groups (each its own server)."""
    replica = launch.tp * launch.pp * launch.ep
    prefill = Pool("prefill", 0, launch.prefill_gpus, launch.prefill_gpus // replica)
    decode = Pool("decode", launch.prefill_gpus, launch.gpus - launch.prefill_gpus, launch.dp)
    params = {"format": fmt, "prefill": prefill.gpus, "decode": decode.gpus}
    if launch.nodes > 1:
        raise ConfigError("config_disaggregated_nodes", nodes=launch.nodes, **params)
    if launch.ep > 1 and max(prefill.instances, decode.instances) > 1:
        raise ConfigError("config_disaggregated_expert_groups", ep=launch.ep, **params)
    serving.check(launch, fmt)
    return prefill, decode


def _header(launch: Launch, words: Words, prefill: Pool, decode: Pool, fmt: str, flags: tuple[str, str, str]) -> list:
    seqs, length, memory = flags
    lines = [
        words("header_pools", prefill=prefill, decode=decode, replica=launch.tp * launch.pp * launch.ep),
        words(f"header_{fmt}_front", port=PORTS[fmt][2]),
    ]
    if launch.ep > 1:
        lines.append(words("header_expert_parallel", ep=launch.ep, replicas=1))
    lines += [
        f"{seqs}: {words('serving_seqs')}{'' if words.lang == 'zh' else ' '}{words('serving_decode_pool')}",
        f"{length}: {words('serving_len')}",
        f"{memory}: {words('serving_mem')}",
    ]
    return common.header(launch, words, *lines, words("serving_host"))


def _background(command: list[str]) -> list[str]:
    """The server started in the background: the proxy or router runs in front of it."""
    return [*command[:-1], f"{command[-1]} &"]


def _vllm_parallel(launch: Launch, pool: Pool) -> list[str]:
    """An expert-parallel instance: attention data-parallel over its GPUs, experts split over them
    (as serving._vllm_nodes); else the pool's instances as data-parallel ranks."""
    if launch.ep > 1:
        return [flag("--data-parallel-size", launch.ep), flag("--enable-expert-parallel")]
    return [flag("--data-parallel-size", pool.instances)] if pool.instances > 1 else []


def _vllm_server(launch: Launch, model: str, pool: Pool, side_port: int) -> list[str]:
    env = f"CUDA_VISIBLE_DEVICES={pool.devices} VLLM_NIXL_SIDE_CHANNEL_PORT={side_port}"
    seqs = [flag("--max-num-seqs", serving.vllm_max_num_seqs(launch))] if pool.role == "decode" else []
    port = PORTS["vllm"][0 if pool.role == "prefill" else 1]
    return _background(
        [
            f"{env} vllm serve {model}",
            flag("--tensor-parallel-size", launch.tp),
            flag("--pipeline-parallel-size", launch.pp),
            *_vllm_parallel(launch, pool),
            flag("--max-model-len", launch.seq_len),
            *seqs,
            flag("--gpu-memory-utilization", launch.memory_fraction),
            *serving.quantization(launch, "fp8"),
            flag("--kv-transfer-config", NIXL_CONFIG),
            flag("--host", "127.0.0.1"),
            flag("--port", port),
        ]
    )


def vllm_files(launch: Launch, words: Words) -> dict[str, str]:
    prefill, decode = pools(launch, "vllm")
    model, variables = serving.model_argument(launch, words)
    variables.append(("PROXY_SCRIPT", f"{CHANGE_ME}/toy_proxy_server.py", words("proxy_script", path=PROXY)))
    prefill_ranks = launch.ep if launch.ep > 1 else prefill.instances  # each rank takes its own side-channel port
    low, high, front = PORTS["vllm"]
    proxy = [
        "python $PROXY_SCRIPT",
        flag("--host", "0.0.0.0"),
        flag("--port", front),
        flag("--prefiller-hosts", "127.0.0.1"),
        flag("--prefiller-ports", low),
        flag("--decoder-hosts", "127.0.0.1"),
        flag("--decoder-ports", high),
    ]
    seqs = "--max-num-seqs (per attention rank)" if launch.ep > 1 else "--max-num-seqs"
    flags = (seqs, "--max-model-len", "--gpu-memory-utilization")
    script = Script(_header(launch, words, prefill, decode, "vllm", flags))
    script.variables = variables
    script.commands = [
        ["trap 'kill 0' EXIT"],
        _vllm_server(launch, model, prefill, NIXL_SIDE_PORT),
        _vllm_server(launch, model, decode, NIXL_SIDE_PORT + prefill_ranks),
        proxy,
    ]
    return {"serve_vllm.sh": script.text()}


def _sglang_parallel(launch: Launch, pool: Pool) -> list[str]:
    """As serving.sglang_files: an expert-parallel instance over --tp-size GPUs with data-parallel
    attention, else tensor (and pipeline) parallel with the pool's instances as --dp-size."""
    if launch.ep > 1:
        ep = launch.ep
        return [flag("--tp-size", ep), flag("--dp-size", ep), flag("--enable-dp-attention"), flag("--ep-size", ep)]
    args = [flag("--tp-size", launch.tp)] + ([flag("--pp-size", launch.pp)] if launch.pp > 1 else [])
    return args + ([flag("--dp-size", pool.instances)] if pool.instances > 1 else [])


def _sglang_server(launch: Launch, model: str, pool: Pool) -> list[str]:
    prefill = pool.role == "prefill"
    placement = [flag("--disaggregation-bootstrap-port", BOOTSTRAP_PORT)] if prefill else []
    placement += [flag("--base-gpu-id", pool.first)] if pool.first else []
    seqs = [] if prefill else [flag("--max-running-requests", launch.max_num_seqs)]
    return _background(
        [
            "python -m sglang.launch_server",
            flag("--model-path", model),
            flag("--disaggregation-mode", pool.role),
            flag("--disaggregation-transfer-backend", "nixl"),
            *placement,
            *_sglang_parallel(launch, pool),
            flag("--context-length", launch.seq_len),
            *seqs,
            flag("--mem-fraction-static", launch.memory_fraction),
            *serving.quantization(launch, "fp8_e4m3"),
            flag("--host", "127.0.0.1"),
            flag("--port", PORTS["sglang"][0 if prefill else 1]),
        ]
    )


def sglang_files(launch: Launch, words: Words) -> dict[str, str]:
    prefill, decode = pools(launch, "sglang")
    model, variables = serving.model_argument(launch, words)
    low, high, front = PORTS["sglang"]
    router = [
        "python -m sglang_router.launch_router",
        flag("--pd-disaggregation"),
        f"--prefill http://127.0.0.1:{low} {BOOTSTRAP_PORT}",  # the prefill server's URL and bootstrap port
        flag("--decode", f"http://127.0.0.1:{high}"),
        flag("--host", "0.0.0.0"),
        flag("--port", front),
    ]
    flags = ("--max-running-requests", "--context-length", "--mem-fraction-static")
    script = Script(_header(launch, words, prefill, decode, "sglang", flags))
    script.variables = variables
    script.commands = [
        ["trap 'kill 0' EXIT"],
        _sglang_server(launch, model, prefill),
        _sglang_server(launch, model, decode),
        router,
    ]
    return {"serve_sglang.sh": script.text()}
