"""A serving replica at full load: as many concurrent sequences as its KV-cache budget holds, and
the throughput a benchmark measures there (TensorRT-LLM's trtllm-bench and vLLM's throughput
benchmark send requests at an unbounded rate and report generated tokens per second).

The budget is what the engine leaves the KV cache: its share of the GPU's memory (vLLM's
gpu_memory_utilization, TensorRT-LLM's free-memory fraction) less weights, activations and
overhead. Sequences are half prompt, half output (compute.HELD_SHARE); at steady state every
generated token brings one prompt token of prefill into the same step (chunked prefill).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.estimator import compute, fit, network
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.memory import GIB, kv_bytes_per_token, kv_share
from gpuplan.estimator.search import ServingScored
from gpuplan.knowledge import GPU, Defaults

# TensorRT-LLM's default max_batch_size (BuildConfig); engines that cap lower (vLLM's
# --max-num-seqs) stop there, and the answer says so
MAX_BATCH = 2048


@dataclass(frozen=True)
class Saturation:
    concurrency: int  # sequences in flight at full load
    tokens_per_s_per_gpu: float  # generated tokens
    tokens_per_s_per_sequence: float
    kv_budget_gib_per_gpu: float
    capped: bool  # stopped by MAX_BATCH, not by memory


def kv_budget_bytes(capacity_bytes: float, held_bytes: float, kv_bytes: float, defaults: Defaults) -> float:
    """Per GPU: the engine's share of the GPU less everything the replica holds besides its KV cache
    (`held_bytes` in all, `kv_bytes` of it KV cache at the planned concurrency)."""
    return fit.usable(capacity_bytes, defaults, serving=True) - (held_bytes - kv_bytes)


def saturation(
    a: Arch,
    precision: str,
    *,
    seq: int,
    tp: int,
    pp: int,
    gpu: GPU,
    budget_bytes: float,
    links: network.DecodeLinks,
    defaults: Defaults,
    ep: int = 1,
    kv_cache: str | None = None,
) -> Saturation | None:
    """The most concurrent sequences the budget holds (each its prompt and half its output on
    average, paged; with ep > 1 each of the ep GPUs holds its own sequences and schedules them)
    and the generated tokens per second at that load; None when not one fits."""
    per_sequence = seq * compute.HELD_SHARE * kv_bytes_per_token(a, precision, kv_cache) / pp * float(kv_share(a, tp))
    by_memory = int(budget_bytes // per_sequence) if budget_bytes > 0 else 0
    concurrency = min(by_memory, MAX_BATCH) * ep
    if concurrency < 1:
        return None
    prefill = compute.PROMPT_SHARE / (1 - compute.PROMPT_SHARE)
    comm = network.decode_comm_seconds(a, concurrency * (1 + prefill), tp, pp, links, ep)
    speed = compute.decode_speed(
        a,
        gpu,
        precision,
        seq_len=seq,
        batch=concurrency,
        tp=tp,
        pp=pp,
        defaults=defaults,
        comm_seconds=comm,
        prefill_per_output=prefill,
        ep=ep,
        kv_cache=kv_cache,
    )
    per_gpu = float(speed.tokens_per_s_per_gpu.ravel()[0])
    return Saturation(
        concurrency=concurrency,
        tokens_per_s_per_gpu=per_gpu,
        tokens_per_s_per_sequence=per_gpu * tp * pp * ep / concurrency,
        kv_budget_gib_per_gpu=budget_bytes / 2**30,
        capped=by_memory > MAX_BATCH,
    )


def of_shape(
    a: Arch,
    precision: str,
    scored: ServingScored,
    i: int,
    *,
    seq: int,
    gpu: GPU,
    links: network.DecodeLinks,
    defaults: Defaults,
    kv_cache: str | None = None,
) -> Saturation | None:
    """Replica shape i of a serving search on `gpu` at full load: the KV-cache budget its engine
    leaves (what the shape holds at the planned concurrency, its KV cache there taken back), filled."""
    budget = kv_budget_bytes(
        gpu.memory_gib * GIB, float(scored.per_gpu[i]), float(scored.parts["kv_cache"][i]), defaults
    )
    return saturation(
        a,
        precision,
        seq=seq,
        tp=int(scored.tp[i]),
        pp=int(scored.pp[i]),
        gpu=gpu,
        budget_bytes=budget,
        links=links,
        defaults=defaults,
        ep=int(scored.ep[i]),
        kv_cache=kv_cache,
    )
