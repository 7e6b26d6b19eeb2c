"""What several formats share: the header, the multi-node rendezvous, NCCL's settings for the
fabric, and the Hugging Face Trainer arguments that carry the batch, optimizer and checkpointing."""

from __future__ import annotations

from gpuplan.bot.configs.launch import ConfigError, Launch, uses_liger
from gpuplan.bot.configs.text import CHANGE_ME, Words, flag
from gpuplan.estimator import conventions

PRECISION_WORD = {"bf16-mixed": "bf16", "bf16": "bf16", "fp16-mixed": "fp16", "fp8-mixed": "fp8", "fp32": "no"}
# the plan's optimizer as Hugging Face Trainer's --optim names it (adamw is its default)
HF_OPTIM = {
    "adamw8bit": "adamw_bnb_8bit",
    "paged-adamw8bit": "paged_adamw_8bit",
    "adafactor": "adafactor",
    "sgd": "sgd",
}


def header(launch: Launch, words: Words, *extra: str) -> list[str]:
    """Title, layout and what the placeholders mean, the adapters the plan trains, then any
    format-specific lines."""
    title = f"{launch.model_name} · {launch.method} · {launch.gpus} x {launch.gpu_name}"
    if launch.nodes > 1:
        title += f" ({launch.nodes} nodes x {launch.per_node})"
    lines = [words("header", title=title), words("header_layout", layout=layout_line(launch)), words("header_values")]
    if launch.adapters:
        lines.append(words("header_adapters", rank=launch.lora_rank, qlora=launch.method == "qlora"))
    return lines + ([launch.note] if launch.note else []) + list(extra)


def layout_line(launch: Launch) -> str:
    parts = [f"tp={launch.tp}", f"pp={launch.pp}"]
    if launch.vpp > 1:
        parts.append(f"vpp={launch.vpp}")
    parts += [f"ep={launch.ep}"] if launch.ep > 1 else []
    parts += [f"cp={launch.cp}"] if launch.cp > 1 else []
    parts.append(f"dp={launch.dp}")
    parts += ["prefill=disaggregated"] if launch.disaggregated else []
    if not launch.serving:
        parts += [f"zero={launch.zero}", f"offload={launch.offload}", f"ckpt={launch.ckpt}"]
        parts += [f"mbs={launch.micro_batch}", f"gbs={launch.global_batch}"]
    parts.append(f"seq={launch.seq_len}")
    return " ".join(parts)


def even_nodes(launch: Launch, fmt: str) -> None:
    """Launchers start the same number of processes on every node: the plan's GPUs must split evenly."""
    if launch.gpus % launch.nodes:
        raise ConfigError("config_uneven_nodes", format=fmt, gpus=launch.gpus, nodes=launch.nodes)


def rendezvous(launch: Launch, words: Words, *, node_rank: bool = True) -> list[tuple[str, str, str]]:
    """MASTER_ADDR / MASTER_PORT (and NODE_RANK, unless a rendezvous numbers the nodes) for a
    multi-node job; none on one node."""
    if launch.nodes <= 1:
        return []
    out = [("MASTER_ADDR", CHANGE_ME, words("master_addr")), ("MASTER_PORT", "29500", words("master_port"))]
    return out + ([("NODE_RANK", "0", words("node_rank"))] if node_rank else [])


def train_script(words: Words) -> tuple[str, str, str]:
    """The user's training script: the one thing every training launcher starts that the plan cannot name."""
    return ("TRAIN_SCRIPT", f"{CHANGE_ME}_train.py", words("train_script"))


def nccl_exports(launch: Launch, words: Words) -> list[tuple[str, str, str]]:
    """NCCL environment settings for the fabric between nodes (NCCL user guide, Environment
    Variables), each kept when the site already sets it: the RDMA adapters on InfiniBand and
    RoCE, TCP sockets with more threads per connection on plain Ethernet."""
    out = [("NCCL_DEBUG", "WARN", words("nccl_debug"))]
    if launch.nodes <= 1:
        return out
    fabric = launch.fabric or ""
    if fabric.startswith(("ib", "roce")):
        return out + [("NCCL_IB_HCA", "mlx5", words("nccl_ib_hca"))]
    return out + [
        ("NCCL_IB_DISABLE", "1", words("nccl_ib_disable")),
        ("NCCL_SOCKET_NTHREADS", "4", words("nccl_threads")),
        ("NCCL_NSOCKS_PERTHREAD", "4", words("nccl_threads")),
    ]


def fabric_note(launch: Launch, words: Words) -> list[str]:
    """A header line for what NCCL cannot be told generically: one node, or RoCE's traffic class."""
    if launch.nodes <= 1:
        return [words("nccl_one_node")]
    return [words("nccl_roce")] if (launch.fabric or "").startswith("roce") else []


def torchrun_flags(launch: Launch) -> list[str]:
    """torchrun's node layout: standalone on one node, c10d rendezvous at node 0 across nodes."""
    if launch.nodes <= 1:
        return ["--standalone", flag("--nproc_per_node", launch.per_node)]
    return [
        flag("--nnodes", launch.nodes),
        flag("--nproc_per_node", launch.per_node),
        flag("--rdzv_backend", "c10d"),
        flag("--rdzv_endpoint", "$MASTER_ADDR:$MASTER_PORT"),
        flag("--rdzv_id", "gpuplan"),
    ]


def loss_note(launch: Launch, words: Words) -> list[str]:
    """The plan's memory counts a loss taken in chunks; a Hugging Face trainer does so with Liger's
    fused linear cross-entropy (switched on where Liger has kernels for the family), else it holds
    the whole sequence's fp32 logits: how much more that needs per GPU. A plan that counts that
    loss already (loss=unchunked) says so."""
    if launch.loss == "unchunked":
        return [words("loss_as_asked")]
    if uses_liger(launch):
        return [words("loss_liger")]
    tokens = launch.micro_batch * launch.seq_len / launch.cp
    gib = conventions.unchunked_loss_extra_bytes(tokens, launch.shape.vocab, launch.tp) / 2**30
    return [words("loss_unchunked", gib=f"{gib:.1f}")]


def trainer_args(launch: Launch, *, checkpointing: bool = True) -> list[str]:
    """Hugging Face Trainer arguments that must agree with the config: batch, accumulation,
    precision, optimizer and gradient checkpointing (False where the launcher's config does it)."""
    args = [
        flag("--per_device_train_batch_size", launch.micro_batch),
        flag("--gradient_accumulation_steps", launch.grad_accum),
    ]
    word = PRECISION_WORD.get(launch.precision)
    if word in ("bf16", "fp16"):
        args.append(flag(f"--{word}", "true"))
    if launch.optimizer in HF_OPTIM:
        args.append(flag("--optim", HF_OPTIM[launch.optimizer]))
    if checkpointing and launch.ckpt != "none":
        args.append(flag("--gradient_checkpointing", "true"))
    if uses_liger(launch):
        args.append(flag("--use_liger_kernel", "true"))
    return args
