"""What several formats share: the header, the multi-node rendezvous, NCCL's settings for the
fabric, and the Hugging Face Trainer arguments that carry the batch and checkpointing."""

from __future__ import annotations

from gpuplan.bot.configs.launch import Launch
from gpuplan.bot.configs.text import CHANGE_ME, Words, flag

PRECISION_WORD = {"bf16-mixed": "bf16", "bf16": "bf16", "fp16-mixed": "fp16", "fp8-mixed": "fp8", "fp32": "no"}


def header(launch: Launch, words: Words, *extra: str) -> list[str]:
    """Title, layout and what the placeholders mean, then any format-specific lines."""
    title = f"{launch.model_name} · {launch.method} · {launch.gpus} x {launch.gpu_name}"
    if launch.nodes > 1:
        title += f" ({launch.nodes} nodes x {launch.per_node})"
    return [
        words("header", title=title),
        words("header_layout", layout=layout_line(launch)),
        words("header_values"),
        *extra,
    ]


def layout_line(launch: Launch) -> str:
    parts = [f"tp={launch.tp}", f"pp={launch.pp}"]
    if launch.vpp > 1:
        parts.append(f"vpp={launch.vpp}")
    parts += [f"ep={launch.ep}"] if launch.ep > 1 else []
    parts += [f"cp={launch.cp}"] if launch.cp > 1 else []
    parts.append(f"dp={launch.dp}")
    if not launch.serving:
        parts += [f"zero={launch.zero}", f"offload={launch.offload}", f"ckpt={launch.ckpt}"]
        parts += [f"mbs={launch.micro_batch}", f"gbs={launch.global_batch}"]
    parts.append(f"seq={launch.seq_len}")
    return " ".join(parts)


def rendezvous(launch: Launch, words: Words) -> list[tuple[str, str, str]]:
    """MASTER_ADDR / MASTER_PORT / NODE_RANK for a multi-node job; none on one node."""
    if launch.nodes <= 1:
        return []
    return [
        ("MASTER_ADDR", CHANGE_ME, words("master_addr")),
        ("MASTER_PORT", "29500", words("master_port")),
        ("NODE_RANK", "0", words("node_rank")),
    ]


def train_script(words: Words) -> tuple[str, str, str]:
    """The user's training script: the one thing every training launcher starts that the plan cannot name."""
    return ("TRAIN_SCRIPT", f"{CHANGE_ME}_train.py", words("train_script"))


def nccl_exports(launch: Launch, words: Words) -> list[tuple[str, str, str]]:
    """NCCL environment settings for the fabric between nodes (NCCL user guide, Environment
    Variables): RDMA verbs on InfiniBand and RoCE (RoCE v2 also names its GID and traffic class),
    TCP sockets with more threads on plain Ethernet."""
    if launch.nodes <= 1:
        return [("NCCL_DEBUG", "WARN", words("nccl_debug"))]
    fabric = launch.fabric or ""
    common = [
        ("NCCL_DEBUG", "WARN", words("nccl_debug")),
        ("NCCL_SOCKET_IFNAME", "^lo,docker", words("nccl_socket_ifname")),
    ]
    if fabric.startswith("ib"):
        return common + [
            ("NCCL_IB_DISABLE", "0", words("nccl_ib_enable")),
            ("NCCL_IB_HCA", "mlx5", words("nccl_ib_hca")),
        ]
    if fabric.startswith("roce"):
        return common + [
            ("NCCL_IB_DISABLE", "0", words("nccl_ib_enable")),
            ("NCCL_IB_HCA", "mlx5", words("nccl_ib_hca")),
            ("NCCL_IB_GID_INDEX", "3", words("nccl_gid")),
            ("NCCL_IB_TC", CHANGE_ME, words("nccl_tc")),
        ]
    return common + [
        ("NCCL_IB_DISABLE", "1", words("nccl_ib_disable")),
        ("NCCL_SOCKET_NTHREADS", "4", words("nccl_threads")),
        ("NCCL_NSOCKS_PERTHREAD", "4", words("nccl_threads")),
    ]


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


def trainer_args(launch: Launch, *, checkpointing: bool = True) -> list[str]:
    """Hugging Face Trainer arguments that must agree with the config: batch, accumulation,
    precision and gradient checkpointing (False where the launcher's config does it)."""
    args = [
        flag("--per_device_train_batch_size", launch.micro_batch),
        flag("--gradient_accumulation_steps", launch.grad_accum),
        flag("--max_length", launch.seq_len),  # TRL's SFTConfig / DPOConfig sequence length
    ]
    word = PRECISION_WORD.get(launch.precision)
    if word in ("bf16", "fp16"):
        args.append(flag(f"--{word}", "true"))
    if checkpointing and launch.ckpt != "none":
        args.append(flag("--gradient_checkpointing", "true"))
    return args
