"""Everything around the GPUs that can starve them: the data pipeline, storage and host RAM.

Rates are per second of training at the estimated throughput; sizes in GB (10^9 bytes) for
data and checkpoints as storage is sold, GiB for host RAM as memory is reported.
"""

from __future__ import annotations

import math
from typing import Any

from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.memory import GIB, SERVE_WEIGHT_BYTES, Job, loaded_model_bytes, state_bytes
from gpuplan.estimator.schema import ADAPTER_METHODS, IOEstimate
from gpuplan.knowledge import Catalog

SHARED_STORAGE_FROM_NODES = 4  # estimate: past 4 nodes keep data and checkpoints where any node can restart
DISK_BUSY_LIMIT = 0.5  # estimate: plan storage to run at most half busy, leaving room for checkpoint bursts
HEADROOM = 1.2  # estimate: 20% free space for logs, evaluation output and temporary files (headline_storage says 20%)


def default_data_kind(method: str) -> str:
    """Pretraining reads pre-tokenised shards; fine-tuning usually tokenises JSON text on the fly."""
    return "tokens" if method in ("pretrain", "continue") else "text"


def checkpoint_bytes(arch: Arch, method: str, precision: str, optimizer: str, lora_rank: int) -> float:
    """A resumable checkpoint: weights plus optimizer state of what is trained (adapters only for
    LoRA/QLoRA; actor and critic for PPO). Same accounting as the ZeRO paper: 2 + 12 bytes/param."""
    w_b, _, o_b = state_bytes(precision, optimizer)
    w_b = min(w_b, 2.0) if precision != "fp32" else w_b  # the fp8 weight cache is not saved
    if method in ADAPTER_METHODS:
        return arch.lora_params(lora_rank) * (w_b + o_b)
    copies = 2 if method == "ppo" else 1
    return copies * arch.params * (w_b + o_b)


def export_bytes(arch: Arch, method: str, lora_rank: int) -> float:
    """The final model to hand over: 16-bit weights (a vision-language model's encoder with them),
    or the adapters alone."""
    if method in ADAPTER_METHODS:
        return arch.lora_params(lora_rank) * 2.0
    return (arch.params + arch.vision_params) * 2.0


def host_ram_gib(cat: Catalog, model_bytes: float, gpus: int, per_node: int, offload_gib_per_node: float) -> float:
    """Host RAM per node: offloaded state with DeepSpeed's 1.5x buffer, this node's share of the
    model while loading (`model_bytes`: memory.loaded_model_bytes), and a baseline per GPU process."""
    on_node = min(gpus, per_node)
    factor = cat.defaults.number("offload", "host_buffer_factor")
    loading = model_bytes * on_node / gpus / GIB
    baseline = float(cat.storage.host["per_gpu_process_gib"].value) * on_node
    return offload_gib_per_node * factor + loading + baseline


def _pick_storage(cat: Catalog, read_gb_s_node: float, local_tb: float, nodes: int) -> tuple[Any, str]:
    for option in cat.storage.options:
        shared = option.id.startswith("object")
        if nodes > SHARED_STORAGE_FROM_NODES and not shared:
            continue
        if read_gb_s_node > option.read_gb_s * DISK_BUSY_LIMIT:
            continue
        if not shared and local_tb > option.capacity_tb:
            continue
        reason = "multi_node" if nodes > SHARED_STORAGE_FROM_NODES and shared else "fits"
        return option, reason
    return cat.storage.options[-1], "fastest"


def _read_rate(cat: Catalog, data_kind: str, tokens_per_s_total: float) -> tuple[float, float, float]:
    """(bytes per token, bytes read per second, CPU cores decoding) for the whole job."""
    s = cat.storage
    if data_kind in ("tokens", "text"):
        bytes_per_token = s.number("bytes_per_token", data_kind)
        read_b_s = tokens_per_s_total * bytes_per_token
        decode_cores = tokens_per_s_total / s.number("tokenize_tokens_per_s_per_core") if data_kind == "text" else 0.0
    elif data_kind == "image":
        images_s = tokens_per_s_total / s.number("image_tokens")
        read_b_s = images_s * s.number("image_bytes")
        bytes_per_token = s.number("image_bytes") / s.number("image_tokens")
        decode_cores = images_s / s.number("image_decodes_per_s_per_core")
    else:  # video
        video_s = tokens_per_s_total / s.number("video_tokens_per_s")  # seconds of video per second
        read_b_s = video_s * s.number("video_bytes_per_s")
        bytes_per_token = s.number("video_bytes_per_s") / s.number("video_tokens_per_s")
        decode_cores = video_s / s.number("video_decode_seconds_per_core")
    return bytes_per_token, read_b_s, decode_cores


def _kept(
    cat: Catalog, job: Job, precision: str, dataset_gb: float, nodes: int, nvme_gib_per_node: float
) -> tuple[float, int, float, float, float]:
    """(checkpoint GB, checkpoints kept, export GB, base weights GB, storage TB in all, storage TB
    per node)."""
    arch, method = job.arch, job.method
    ckpt_gb = checkpoint_bytes(arch, method, precision, job.optimizer, job.lora_rank) / 1e9
    export_gb = export_bytes(arch, method, job.lora_rank) / 1e9
    base_gb = base_weights_gb(arch, method)
    kind = "pretrain" if method in ("pretrain", "continue") else "finetune"
    retained = int(cat.storage.checkpoints.retained[kind])
    kept_gb = dataset_gb + base_gb + export_gb
    total_tb = (kept_gb + ckpt_gb * retained) * HEADROOM / 1000
    local_tb = (kept_gb + ckpt_gb * retained / nodes) * HEADROOM / 1000 + nvme_gib_per_node * GIB / 1e12
    return ckpt_gb, retained, export_gb, base_gb, total_tb, local_tb


def base_weights_gb(arch: Arch, method: str) -> float:
    """The weights a run starts from, downloaded as released (the Hub's safetensors in the model's
    weights_dtype): none when pretraining from scratch."""
    return 0.0 if method == "pretrain" else arch.params * SERVE_WEIGHT_BYTES[arch.weights_dtype] / 1e9


def training_io(
    cat: Catalog,
    job: Job,
    *,
    precision: str,
    train_tokens: float,
    epochs: float,
    dataset_gb: float | None,
    data_kind: str,
    tokens_per_s_total: float,
    gpus: int,
    per_node: int,
    offload_gib_per_node: float,
    nvme_gib_per_node: float,
) -> IOEstimate:
    """What the job reads, writes and keeps around the GPUs: read rate and decode cores per node,
    DataLoader workers, dataset, checkpoint and export sizes, the storage that serves them, host RAM."""
    s = cat.storage
    nodes = max(1, math.ceil(gpus / per_node))
    on_node = min(gpus, per_node)
    cores_per_gpu = s.number("cpu_cores_per_gpu")
    bytes_per_token, read_b_s, decode_cores = _read_rate(cat, data_kind, tokens_per_s_total)
    read_gb_s_node = read_b_s / nodes / 1e9
    decode_cores_node = decode_cores / nodes
    # DataLoader workers: enough cores for decoding with 50% spare, at least 2 per GPU for prefetch
    workers = max(2, math.ceil(decode_cores_node / on_node * 1.5))
    workers = min(workers, int(cores_per_gpu))
    cpu_bound = decode_cores_node > cores_per_gpu * on_node * 0.75

    dataset = dataset_gb if dataset_gb else train_tokens / max(epochs, 1.0) * bytes_per_token / 1e9
    ckpt_gb, retained, export_gb, base_gb, total_tb, local_tb = _kept(
        cat, job, precision, dataset, nodes, nvme_gib_per_node
    )

    option, reason = _pick_storage(cat, read_gb_s_node, local_tb, nodes)
    shared = option.id.startswith("object")
    write_rate = option.write_gb_s * nodes  # sharded checkpoints: every node writes its share at once
    return IOEstimate(
        **{
            "data": data_kind,
            "bytes_per_token": bytes_per_token,
            "read_mb_s": read_b_s / 1e6,
            "read_mb_s_per_node": read_gb_s_node * 1e3,
            "decode_cores_per_node": decode_cores_node,
            "cpu_bound": cpu_bound,
            "dataloader_workers_per_gpu": workers,
            "dataset_gb": dataset,
            "checkpoint_gb": ckpt_gb,
            "retained_checkpoints": retained,
            "export_gb": export_gb,
            "base_gb": base_gb,
            "checkpoint_write_s": ckpt_gb / write_rate,
            "storage_tb": total_tb,
            "storage_tb_per_node": total_tb if shared else local_tb,
            "storage": option.id,
            "storage_reason": reason,
            "storage_read_gb_s": option.read_gb_s,
            "host_ram_gib": host_ram_gib(cat, loaded_model_bytes(job), gpus, per_node, offload_gib_per_node),
            "nodes": nodes,
        }
    )


def serving_io(cat: Catalog, arch: Arch, precision: str, gpus: int, per_node: int) -> IOEstimate:
    """Serving reads the weights once at start-up; storage holds them plus one spare version."""
    weights_gb = (arch.params * SERVE_WEIGHT_BYTES[precision]) / 1e9
    option = cat.storage.options[0]
    nodes = max(1, math.ceil(gpus / per_node))
    return IOEstimate(
        **{
            "data": "weights",
            "read_mb_s": 0.0,
            "dataset_gb": 0.0,
            "checkpoint_gb": weights_gb,
            "checkpoint_write_s": 0.0,
            "load_s": weights_gb / nodes / option.read_gb_s,
            "storage_tb": weights_gb * 2 * HEADROOM / 1000,
            "storage": option.id,
            "host_ram_gib": host_ram_gib(cat, arch.params * 2.0, gpus, per_node, 0.0),
            "nodes": nodes,
        }
    )
