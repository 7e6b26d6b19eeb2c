"""Bytes each GPU moves per training step, and the time that takes on each link.

Collective volumes follow the ring algorithms NCCL uses (Patarasuk & Yuan 2009): an all-reduce
moves 2(n-1)/n of the buffer per GPU; all-gather and reduce-scatter move (n-1)/n each.
Like memory.py, layout fields may be numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from estimator.architecture import Arch
from knowledge import GPU, Fabric


@dataclass(frozen=True)
class Links:
    """Achievable collective bandwidth in bytes/s per GPU, per direction."""

    intra_node: float
    inter_node: float
    gpus_per_node: int


def links_for(gpu: GPU, fabric: Fabric, efficiency: float) -> Links:
    # vendor link figures are bidirectional totals; a ring uses one direction at a time
    return Links(
        intra_node=gpu.link_gb_s / 2 * 1e9 * efficiency,
        inter_node=fabric.gb_s * 1e9 * efficiency,
        gpus_per_node=gpu.gpus_per_node,
    )


def _ring(n: np.ndarray) -> np.ndarray:
    return np.where(n > 1, (n - 1) / np.maximum(n, 1), 0.0)


def step_traffic(
    a: Arch,
    trained: bool,
    seq_len: int,
    gpus,
    tp,
    pp,
    zero,
    ckpt,
    micro_batch,
    micro_batches,
    frozen_gathered: bool = False,
    grad_bytes: float = 2.0,
) -> dict[str, np.ndarray]:
    """Bytes per GPU per optimizer step on each parallel dimension.

    tp: Megatron-LM all-reduces (Shoeybi et al. 2019), 2 per layer forward and 2 backward, 2 more
    when the forward is recomputed; with sequence parallelism the same volume as reduce-scatter +
    all-gather. dp: gradient all-reduce once per step (ZeRO-1/2 reduce-scatter + all-gather is
    the same volume); ZeRO-3 gathers parameters twice and reduce-scatters gradients on every
    micro-batch (Rajbhandari et al. 2020, Sec. 7). pp: activations and their gradients between stages.
    """
    gpus, tp, pp, micro_batch, micro_batches = (
        np.asarray(x, dtype=float) for x in (gpus, tp, pp, micro_batch, micro_batches)
    )
    zero, ckpt = np.asarray(zero), np.asarray(ckpt)
    dp = gpus / (tp * pp)
    tokens_mb = micro_batch * seq_len
    params_shard = a.params / (tp * pp)

    per_layer_allreduces = 4 + np.where(ckpt == 2, 2, 0)
    tp_bytes = per_layer_allreduces * 2 * _ring(tp) * tokens_mb * a.hidden * 2.0 * (a.layers / pp) * micro_batches

    gather = 2 * _ring(dp) * params_shard * 2.0 * micro_batches  # forward and backward all-gathers
    scatter = _ring(dp) * params_shard * grad_bytes * micro_batches if trained else 0.0
    zero3 = gather + scatter
    allreduce = 2 * _ring(dp) * params_shard * grad_bytes if trained else np.zeros_like(dp)
    dp_bytes = np.where((zero >= 3) | frozen_gathered, zero3, allreduce)

    pp_bytes = np.where(pp > 1, 2 * tokens_mb * a.hidden * 2.0 / tp * micro_batches, 0.0)
    return {"tp": tp_bytes, "dp": dp_bytes, "pp": pp_bytes}


def step_comm_seconds(traffic: dict[str, np.ndarray], links: Links, gpus, tp) -> dict[str, np.ndarray]:
    """Seconds per step on each dimension: tp inside a node, dp/pp across nodes when the job spans nodes."""
    gpus, tp = np.asarray(gpus, dtype=float), np.asarray(tp, dtype=float)
    multi_node = gpus > links.gpus_per_node
    tp_bw = np.where(tp <= links.gpus_per_node, links.intra_node, links.inter_node)
    outer_bw = np.where(multi_node, links.inter_node, links.intra_node)
    return {
        "tp": traffic["tp"] / tp_bw,
        "dp": traffic["dp"] / outer_bw,
        "pp": traffic["pp"] / outer_bw,
    }
