"""A serving replica at full load: as many concurrent sequences as its KV-cache budget holds, and
the throughput a benchmark measures there (TensorRT-LLM's trtllm-bench and vLLM's throughput
benchmark send requests at an unbounded rate and report generated tokens per second).

The budget is what the engine leaves the KV cache: its share of the GPU's memory (vLLM's
gpu_memory_utilization, TensorRT-LLM's free-memory fraction) less weights, activations and
overhead. The engine admits a sequence only when its prompt and whole output fit (compute.Served.reserved,
TensorRT-LLM's default scheduler), while each step reads what the sequences hold on average, their
prompt and half their output (compute.Served.held); at steady
state every generated token brings prompt / output prompt tokens of prefill into the same step
(chunked prefill), within the engine's step token budget, or the prompts run on a prefill pool apart
(disaggregated, estimator/prefill.py) whose GPUs the throughput per GPU counts too.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.estimator import compute, fit, network, prefill
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
    capped: bool  # stopped by MAX_BATCH or the step token budget, not by memory
    prefill_share: float = 0.0  # disaggregated: prefill GPUs per decode GPU (counted in tokens_per_s_per_gpu)


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
    prompt: int | None = None,
    chunked: bool = True,
) -> Saturation | None:
    """The most concurrent sequences the budget admits (each its prompt and whole output reserved;
    with ep > 1 each of the ep GPUs holds its own sequences and schedules them),
    no more than the engine's batch limit and, with chunked prefill, than its step token budget
    prefills for, and the generated tokens per second at that load; None when not one fits."""
    load = compute.served(seq, prompt, chunked)
    per_sequence = load.reserved * kv_bytes_per_token(a, precision, kv_cache) / pp * float(kv_share(a, tp))
    by_memory = int(budget_bytes // per_sequence) if budget_bytes > 0 else 0
    step_tokens = defaults.number("inference", "prefill_chunk_tokens")
    by_engine = min(MAX_BATCH, step_tokens / (1 + load.prefill_per_output))
    concurrency = int(min(by_memory, by_engine) * ep)
    if concurrency < 1:
        return None
    tokens = concurrency * (1 + load.prefill_per_output)
    comm = network.decode_comm_seconds(a, tokens, tp, pp, links, ep)
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
        prompt=load.prompt,
        chunked=chunked,
        ep=ep,
        kv_cache=kv_cache,
    )
    per_gpu = float(speed.tokens_per_s_per_gpu.ravel()[0])
    share = 0.0 if chunked else _prefill_share(a, precision, load, per_gpu, tp, pp, ep, gpu, links, defaults)
    return Saturation(
        concurrency=concurrency,
        tokens_per_s_per_gpu=per_gpu / (1 + share),
        tokens_per_s_per_sequence=per_gpu * tp * pp * ep / concurrency,
        kv_budget_gib_per_gpu=budget_bytes / 2**30,
        capped=by_memory > by_engine,
        prefill_share=share,
    )


def _prefill_share(a: Arch, precision: str, load, decode_per_gpu: float, tp, pp, ep, gpu, links, defaults) -> float:
    """Prefill GPUs per decode GPU at this decode rate, the prefill instances in the decode replica's
    shape (prefill.prompt_tokens_per_s_per_gpu), as a fleet averages it."""
    dev = compute.serving_device([gpu], precision, compute.with_defaults(defaults))
    step_tokens = defaults.number("inference", "prefill_chunk_tokens")
    rate = prefill.prompt_tokens_per_s_per_gpu(
        a, precision, load, tp=tp, pp=pp, ep=ep, dev=dev, links=links, step_tokens=step_tokens
    )
    return float(prefill.prefill_share(decode_per_gpu, load, rate).ravel()[0])


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
    prompt: int | None = None,
    chunked: bool = True,
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
        prompt=prompt,
        chunked=chunked,
    )
