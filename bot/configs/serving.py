"""Serving engines: the `vllm serve` and SGLang `launch_server` commands for the plan's replica
(tensor and pipeline parallel size, replicas as data parallel), sized from its KV-cache budget:
the context, the most concurrent sequences the budget holds, the memory share assumed, and the
weights' and KV cache's precision. Flag names as in vLLM's engine arguments and SGLang's
server_args.py (lists in tests/data/tool_options/)."""

from __future__ import annotations

from gpuplan.bot.configs import common
from gpuplan.bot.configs.launch import ConfigError, Launch
from gpuplan.bot.configs.text import CHANGE_ME, Script, Words, flag

PRE_QUANTIZED = ("int4", "int8")  # served from a checkpoint quantized beforehand (AWQ/GPTQ, W8A8)


def check(launch: Launch, fmt: str) -> None:
    if not launch.serving:
        raise ConfigError("config_serving_only", format=fmt)


def _model(launch: Launch, words: Words) -> tuple[str, list[tuple[str, str, str]]]:
    """The model argument and the variable that holds it when the plan cannot name it."""
    if launch.precision in PRE_QUANTIZED:
        note = words("model_quantized", precision=launch.precision, model=launch.model_name)
        return "$MODEL", [("MODEL", f"{CHANGE_ME}/{launch.precision}-checkpoint", note)]
    if launch.hf_id:
        return launch.hf_id, []
    return "$MODEL", [("MODEL", f"{CHANGE_ME}/model", words("model_path"))]


def _fp8_weights(launch: Launch) -> bool:
    """FP8 requested on a checkpoint published in 16 bits: the engine quantizes at load time."""
    published = launch.spec.weights_dtype if launch.spec else "bf16"
    return launch.precision == "fp8" and published != "fp8"


def _script(launch: Launch, words: Words, variables: list[tuple[str, str, str]], flags: tuple[str, str, str]) -> Script:
    """The script with its header: replicas, and what the sized flags (sequences, context,
    memory share) hold."""
    seqs, length, memory = flags
    extra = []
    if launch.dp > 1 and _replica_spans_nodes(launch):
        extra.append(words("header_replica_groups", replicas=launch.dp, nodes=replica_nodes(launch)))
    elif launch.dp > 1:
        extra.append(words("header_replicas", replicas=launch.dp, per_replica=launch.tp * launch.pp))
    extra += [
        f"{seqs}: {words('serving_seqs')}",
        f"{length}: {words('serving_len')}",
        f"{memory}: {words('serving_mem')}",
    ]
    script = Script(common.header(launch, words, *extra))
    script.variables = variables
    return script


def _replica_spans_nodes(launch: Launch) -> bool:
    return launch.nodes > 1 and launch.tp * launch.pp > launch.per_node


def replica_nodes(launch: Launch) -> int:
    """The nodes one replica spans; several such replicas are deployed once per group of nodes."""
    return -(-launch.tp * launch.pp // launch.per_node)


def _vllm_nodes(launch: Launch) -> list[str]:
    """Replicas as data parallel ranks; over several nodes, either one replica spread over them
    (vLLM's multiprocessing backend: --nnodes, --node-rank, --master-addr) or whole replicas per
    node (--data-parallel-size-local of them, the first at --data-parallel-start-rank)."""
    if _replica_spans_nodes(launch):
        return [
            flag("--distributed-executor-backend", "mp"),
            flag("--nnodes", replica_nodes(launch)),
            flag("--node-rank", "$NODE_RANK"),
            flag("--master-addr", "$MASTER_ADDR"),
            flag("--master-port", "$MASTER_PORT_ENGINE"),
        ]
    if launch.dp <= 1:
        return []
    args = [flag("--data-parallel-size", launch.dp)]
    if launch.nodes > 1:
        args += [
            flag("--data-parallel-size-local", launch.dp // launch.nodes),
            flag("--data-parallel-start-rank", "$DP_START_RANK"),
            flag("--data-parallel-address", "$MASTER_ADDR"),
            flag("--data-parallel-rpc-port", "$MASTER_PORT"),
        ]
    return args


def vllm_files(launch: Launch, words: Words) -> dict[str, str]:
    check(launch, "vllm")
    model, variables = _model(launch, words)
    command = [
        f"vllm serve {model}",
        flag("--tensor-parallel-size", launch.tp),
        flag("--pipeline-parallel-size", launch.pp),
    ]
    command += _vllm_nodes(launch)
    command += [
        flag("--max-model-len", launch.seq_len),
        flag("--max-num-seqs", launch.max_num_seqs),
        flag("--gpu-memory-utilization", launch.memory_fraction),
    ]
    if _fp8_weights(launch):
        command.append(flag("--quantization", "fp8"))
    if launch.precision == "fp8":
        command.append(flag("--kv-cache-dtype", "fp8"))
    command += [flag("--host", "0.0.0.0"), flag("--port", 8000)]
    if launch.nodes > 1:
        variables = [*variables, *common.rendezvous(launch, words)]
    if _replica_spans_nodes(launch):
        variables.append(("MASTER_PORT_ENGINE", "29501", words("master_port")))
    elif launch.nodes > 1:
        local = launch.dp // launch.nodes
        variables.append(("DP_START_RANK", "0", words("dp_start_rank", local=local)))
    script = _script(launch, words, variables, ("--max-num-seqs", "--max-model-len", "--gpu-memory-utilization"))
    if launch.nodes > 1:
        script.header.append(words("header_run_all"))
        if not _replica_spans_nodes(launch):
            script.header.append(words("header_headless"))
    script.commands = [command]
    return {"serve_vllm.sh": script.text()}


def sglang_files(launch: Launch, words: Words) -> dict[str, str]:
    check(launch, "sglang")
    model, variables = _model(launch, words)
    variables = [*variables, *common.rendezvous(launch, words)]  # SGLang spans nodes with --nnodes either way
    command = [
        "python -m sglang.launch_server",
        flag("--model-path", model),
        flag("--tp-size", launch.tp),
    ]
    if launch.pp > 1:
        command.append(flag("--pp-size", launch.pp))
    if launch.dp > 1 and not _replica_spans_nodes(launch):
        command.append(flag("--dp-size", launch.dp))
    command += [
        flag("--context-length", launch.seq_len),
        flag("--max-running-requests", launch.max_num_seqs),
        flag("--mem-fraction-static", launch.memory_fraction),
    ]
    if _fp8_weights(launch):
        command.append(flag("--quantization", "fp8"))
    if launch.precision == "fp8":
        command.append(flag("--kv-cache-dtype", "fp8_e4m3"))
    if launch.nodes > 1:
        command += [
            flag("--nnodes", replica_nodes(launch) if _replica_spans_nodes(launch) else launch.nodes),
            flag("--node-rank", "$NODE_RANK"),
            flag("--dist-init-addr", "$MASTER_ADDR:$MASTER_PORT"),
        ]
    command += [flag("--host", "0.0.0.0"), flag("--port", 30000)]
    script = _script(launch, words, variables, ("--max-running-requests", "--context-length", "--mem-fraction-static"))
    if launch.nodes > 1:
        script.header.append(words("header_run_all"))
    script.commands = [command]
    return {"serve_sglang.sh": script.text()}
