"""Serving engines: the `vllm serve` and SGLang `launch_server` commands for the plan's replica
(tensor and pipeline parallel size, replicas as data parallel), sized from its KV-cache budget:
the context, the most concurrent sequences the budget holds (per replica: each engine schedules
its own), the memory share assumed, and the weights' and KV cache's precision. Flag names as in
vLLM's engine arguments and SGLang's server_args.py (lists in tests/data/tool_options/)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.bot.configs import common
from gpuplan.bot.configs.launch import ConfigError, Launch
from gpuplan.bot.configs.text import CHANGE_ME, Script, Words, flag

PRE_QUANTIZED = ("int4", "int8")  # served from a checkpoint quantized beforehand (AWQ/GPTQ, W8A8)


@dataclass(frozen=True)
class Topology:
    """How the replicas sit on the nodes: one replica over several nodes, or whole replicas per node."""

    replica_gpus: int
    replica_nodes: int  # nodes one replica spans (1 when it fits in a node)
    per_node: int  # replicas on each node, when they fit in one

    @property
    def spans(self) -> bool:
        return self.replica_nodes > 1


def topology(launch: Launch, fmt: str) -> Topology:
    replica = launch.tp * launch.pp * launch.ep
    spans = launch.nodes > 1 and replica > launch.per_node
    if not spans and launch.dp % launch.nodes:
        raise ConfigError("config_uneven_nodes", format=fmt, gpus=launch.gpus, nodes=launch.nodes)
    nodes = -(-replica // launch.per_node) if spans else 1
    return Topology(replica, nodes, 1 if spans else launch.dp // launch.nodes)


def check(launch: Launch, fmt: str) -> Topology:
    if not launch.serving:
        raise ConfigError("config_serving_only", format=fmt)
    if launch.kv_cache in ("int8", "int4"):  # vLLM's and SGLang's --kv-cache-dtype: auto or fp8 variants
        raise ConfigError("config_kv_cache", format=fmt, kv=launch.kv_cache)
    return topology(launch, fmt)


def model_argument(launch: Launch, words: Words) -> tuple[str, list[tuple[str, str, str]]]:
    """The model argument and the variable that holds it when the plan cannot name it."""
    published = launch.spec.weights_dtype if launch.spec else "bf16"
    if launch.precision in PRE_QUANTIZED and published != launch.precision:
        note = words("model_quantized", precision=launch.precision, model=launch.model_name)
        return "$MODEL", [("MODEL", f"{CHANGE_ME}/{launch.precision}-checkpoint", note)]
    if launch.hf_id:
        return launch.hf_id, []
    return "$MODEL", [("MODEL", f"{CHANGE_ME}/model", words("model_path"))]


def quantization(launch: Launch, kv_fp8: str) -> list[str]:
    """FP8 asked of a checkpoint published in 16 bits is quantized at load time; a plan that
    counts an fp8 KV cache (fp8 weights, or kv=fp8) asks the engine for one. `--quantization fp8`
    on a 16-bit checkpoint: vLLM docs (features/quantization/fp8, online dynamic quantization) and
    SGLang's server arguments; `--kv-cache-dtype`: vLLM's {auto,fp8,fp8_e5m2,fp8_e4m3} (fp8 is E4M3
    on CUDA, features/quantization/quantized_kvcache), SGLang's fp8_e4m3 or fp8_e5m2 (E4M3 the more
    precise, advanced_features/quantized_kv_cache)."""
    published = launch.spec.weights_dtype if launch.spec else "bf16"
    args = [flag("--quantization", "fp8")] if launch.precision == "fp8" and published != "fp8" else []
    kv_fp8_planned = launch.kv_cache == "fp8" or (launch.kv_cache is None and launch.precision == "fp8")
    return args + ([flag("--kv-cache-dtype", kv_fp8)] if kv_fp8_planned else [])


def _header(launch: Launch, words: Words, where: Topology, flags: tuple[str, str, str]) -> list[str]:
    """Replicas and nodes, what the sized flags (sequences, context, memory share) hold, the address."""
    seqs, length, memory = flags
    extra = []
    if launch.ep > 1:
        extra.append(words("header_expert_parallel", ep=launch.ep, replicas=launch.dp))
    elif where.spans and launch.dp > 1:
        extra.append(words("header_replica_groups", replicas=launch.dp, nodes=where.replica_nodes))
    elif launch.dp > 1:
        extra.append(words("header_replicas", replicas=launch.dp, per_replica=where.replica_gpus))
    extra += [
        f"{seqs}: {words('serving_seqs')}",
        f"{length}: {words('serving_len')}",
        f"{memory}: {words('serving_mem')}",
    ]
    return common.header(launch, words, *extra, words("serving_host"))


def vllm_files(launch: Launch, words: Words) -> dict[str, str]:
    where = check(launch, "vllm")
    model, variables = model_argument(launch, words)
    command = [
        f"vllm serve {model}",
        flag("--tensor-parallel-size", launch.tp),
        flag("--pipeline-parallel-size", launch.pp),
        *_vllm_nodes(launch, where),
        # the context and the sequences scheduled at once (vLLM engine arguments: --max-model-len, --max-num-seqs)
        flag("--max-model-len", launch.seq_len),
        flag("--max-num-seqs", vllm_max_num_seqs(launch)),
        flag("--gpu-memory-utilization", launch.memory_fraction),
        *quantization(launch, "fp8"),
        flag("--host", "0.0.0.0"),
        flag("--port", 8000),
    ]
    seqs_flag = "--max-num-seqs (per attention rank)" if launch.ep > 1 else "--max-num-seqs"
    script = Script(_header(launch, words, where, (seqs_flag, "--max-model-len", "--gpu-memory-utilization")))
    if launch.ep > 1:
        if launch.dp > 1:  # several expert-parallel replicas: each on its own GPUs and port
            variables += _replica_group(launch, words, "GPUS", ",".join(map(str, range(launch.ep))), 8000)
            command[0] = f"CUDA_VISIBLE_DEVICES=$GPUS {command[0]}"
            command[-1] = flag("--port", "$PORT")
    elif where.spans:
        variables += common.rendezvous(launch, words)
    elif launch.nodes > 1:
        variables += common.rendezvous(launch, words, node_rank=False)
        variables.append(("DP_START_RANK", "0", words("dp_start_rank", local=where.per_node)))
    if launch.nodes > 1 and launch.ep == 1:
        script.header += [words("header_run_all"), words("header_headless")]
    script.variables = variables
    script.commands = [command]
    return {"serve_vllm.sh": script.text()}


def _replica_group(launch: Launch, words: Words, gpus_var: str, first: str, port: int) -> list[tuple[str, str, str]]:
    """Where one of several expert-parallel replicas runs: its GPUs and its port."""
    return [(gpus_var, first, words("replica_gpus", ep=launch.ep)), ("PORT", str(port), words("replica_port"))]


def vllm_max_num_seqs(launch: Launch) -> int | None:
    """vLLM schedules each data-parallel rank on its own: an expert-parallel replica's sequences
    are split over its ep attention ranks."""
    if launch.max_num_seqs and launch.ep > 1:
        return max(1, -(-launch.max_num_seqs // launch.ep))
    return launch.max_num_seqs


def _vllm_nodes(launch: Launch, where: Topology) -> list[str]:
    """Replicas as data-parallel ranks; over several nodes, either one replica spread over them
    (vLLM's multiprocessing backend: --nnodes, --node-rank, --master-addr) or whole replicas per
    node (--data-parallel-size-local of them, the first at --data-parallel-start-rank)."""
    if launch.ep > 1:  # data-parallel attention over the replica's GPUs, experts split over them
        return [flag("--data-parallel-size", launch.ep), flag("--enable-expert-parallel")]
    if where.spans:
        return [
            flag("--distributed-executor-backend", "mp"),
            flag("--nnodes", where.replica_nodes),
            flag("--node-rank", "$NODE_RANK"),
            flag("--master-addr", "$MASTER_ADDR"),
            flag("--master-port", "$MASTER_PORT"),
        ]
    if launch.dp <= 1:
        return []
    args = [flag("--data-parallel-size", launch.dp)]
    if launch.nodes > 1:
        args += [
            flag("--data-parallel-size-local", where.per_node),
            flag("--data-parallel-start-rank", "$DP_START_RANK"),
            flag("--data-parallel-address", "$MASTER_ADDR"),
            flag("--data-parallel-rpc-port", "$MASTER_PORT"),
        ]
    return args


def sglang_files(launch: Launch, words: Words) -> dict[str, str]:
    """One server over the nodes of a replica (--nnodes), or one server per node holding that
    node's replicas (--dp-size) with a load balancer in front: SGLang's --nnodes splits one
    tensor/pipeline group over nodes, it does not spread replicas."""
    where = check(launch, "sglang")
    model, variables = model_argument(launch, words)
    command = ["python -m sglang.launch_server", flag("--model-path", model)]
    if launch.ep > 1:  # --tp-size GPUs, attention data-parallel over them, experts split over them
        command += [
            flag("--tp-size", launch.ep),
            flag("--dp-size", launch.ep),
            flag("--enable-dp-attention"),
            flag("--ep-size", launch.ep),
        ]
    else:
        command.append(flag("--tp-size", launch.tp))
    if launch.pp > 1:
        command.append(flag("--pp-size", launch.pp))
    if where.per_node > 1 and launch.ep == 1:
        command.append(flag("--dp-size", where.per_node))
    command += [
        # SGLang server arguments: the context (--context-length) and the requests run at once (--max-running-requests)
        flag("--context-length", launch.seq_len),
        flag("--max-running-requests", launch.max_num_seqs),
        flag("--mem-fraction-static", launch.memory_fraction),
        *quantization(launch, "fp8_e4m3"),
    ]
    if where.spans:
        variables += common.rendezvous(launch, words)
        command += [
            flag("--nnodes", where.replica_nodes),
            flag("--node-rank", "$NODE_RANK"),
            flag("--dist-init-addr", "$MASTER_ADDR:$MASTER_PORT"),
        ]
    several = launch.ep > 1 and launch.dp > 1  # expert-parallel replicas: each on its own GPUs and port
    if several:
        variables += _replica_group(launch, words, "BASE_GPU_ID", "0", 30000)
        command.append(flag("--base-gpu-id", "$BASE_GPU_ID"))
    command += [flag("--host", "0.0.0.0"), flag("--port", "$PORT" if several else 30000)]
    script = Script(
        _header(launch, words, where, ("--max-running-requests", "--context-length", "--mem-fraction-static"))
    )
    if where.spans:
        script.header.append(words("header_run_all"))
    elif launch.nodes > 1 and launch.ep == 1:
        script.header.append(words("header_server_per_node", nodes=launch.nodes))
    script.variables = variables
    script.commands = [command]
    return {"serve_sglang.sh": script.text()}
