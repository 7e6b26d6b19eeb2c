"""The most a plan's GPUs hold: the longest sequence ("what's the max context I can serve Llama 3 70B
with on 8 H100?", "4张4090能跑多长的上下文") and the largest training micro-batch ("what batch size can
I use for llama 3 8b lora on one A100?").

A bisection on the sequence length, in whole steps of 1,024 tokens (our rounding), over the plan's
own GPUs, in the plan's precision, with the memory headroom every plan keeps, one sequence at a time
(one sequence served on one replica over all the GPUs, or a micro-batch of one in training): the
layout stays the search's to choose (tensor, pipeline and context parallel, checkpointing,
ZeRO), the GPU type and count do not. What the model reads by itself (its config.json's
max_position_embeddings) is said beside it by the answer: a longer sequence needs its positions
extended (YaRN, RoPE scaling). The micro-batch is bisected the same way, at the plan's length.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from gpuplan.estimator.schema import Estimate, Request

STEP = 1_024  # tokens: the resolution of the answer

EstimateFn = Callable[[Request], Estimate]


class Longest(NamedTuple):
    tokens: int  # the longest sequence that fits, in tokens
    at_least: bool  # it is the longest gpuplan plans: longer ones fit too
    request: Request  # the request it was found with (the plan's GPUs, one sequence; serving: one replica)


def longest_sequence(request: Request, est: Estimate, estimate_fn: EstimateFn, limit: int) -> Longest | None:
    """The longest sequence that fits on `est`'s GPUs, up to `limit` (the longest gpuplan plans), or
    None when not even STEP tokens fit."""
    r = est.resolved
    one = {"gpu": r.gpu, "gpus": r.gpus, "nodes": None, "micro_batch": 1, "global_batch": None}
    one |= {"precision": r.precision, "kv_cache": r.kv_cache}  # the plan's, chosen for its length
    on_its_gpus = request.model_copy(update=one | {"prompt_tokens": None, "full_load": None})
    if r.method == "infer":  # one replica over all the GPUs: a sequence's KV cache has them all
        on_its_gpus = _one_replica(on_its_gpus, r.gpus, r.nodes, estimate_fn)
        if on_its_gpus is None:
            return None

    def fits(steps: int) -> bool:
        return _fits(estimate_fn, on_its_gpus.model_copy(update={"seq_len": steps * STEP}))

    longest = limit // STEP
    if not fits(1):
        return None
    if fits(longest):
        return Longest(longest * STEP, True, on_its_gpus)
    low, high = 1, longest  # fits(low), not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return Longest(low * STEP, False, on_its_gpus)


def _fits(estimate_fn: EstimateFn, request: Request) -> bool:
    """It fits with the headroom a plan keeps (fit.tight)."""
    try:
        memory = estimate_fn(request).memory
    except ValueError:  # RequestError is a ValueError: a layout the model's shape cannot split
        return False
    return memory.fits and not memory.tight


def _one_replica(request: Request, gpus: int, nodes: int, estimate_fn: EstimateFn) -> Request | None:
    """The request served by one replica over `gpus` GPUs: tensor parallel within a server, as wide
    as the model's heads allow, pipeline parallel over the servers; None when no such shape holds
    even STEP tokens."""
    per_node = gpus // max(1, nodes)
    for tp in range(per_node, 0, -1):
        if per_node % tp or gpus % tp:
            continue
        shaped = request.model_copy(update={"tp": tp, "pp": gpus // tp, "seq_len": STEP})
        if _fits(estimate_fn, shaped):
            return shaped
    return None


# --- the largest micro-batch -----------------------------------------------------------------

MOST_SEQUENCES = 1_024  # micro-batches searched: 1 to 1,024 sequences a GPU


class Largest(NamedTuple):
    sequences: int  # the largest micro-batch that fits, in sequences a GPU
    at_least: bool  # it is MOST_SEQUENCES: larger ones fit too
    estimate: Estimate  # the plan at that micro-batch (its checkpointing and sharding)


def largest_micro_batch(request: Request, est: Estimate, estimate_fn: EstimateFn) -> Largest | None:
    """The largest training micro-batch that fits on `est`'s GPUs and layout (its sharding and
    parallelism) at its sequence length, with the headroom a plan keeps; activation checkpointing
    stays the search's unless the request fixes it. None when not even one sequence fits."""
    r = est.resolved
    fixed = {"gpu": r.gpu, "gpus": r.gpus, "nodes": None, "seq_len": r.seq_len, "global_batch": None}
    layout = {"precision": r.precision, "zero": r.zero, "offload": r.offload, "tp": r.tp, "pp": r.pp, "cp": r.cp}
    on_its_gpus = request.model_copy(update=fixed | layout | {"ep": r.ep})

    def at(sequences: int) -> Request:
        return on_its_gpus.model_copy(update={"micro_batch": sequences})

    if not _fits(estimate_fn, at(1)):
        return None
    if _fits(estimate_fn, at(MOST_SEQUENCES)):
        return Largest(MOST_SEQUENCES, True, estimate_fn(at(MOST_SEQUENCES)))
    low, high = 1, MOST_SEQUENCES  # fits at low, not at high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _fits(estimate_fn, at(middle)) else (low, middle)
    return Largest(low, False, estimate_fn(at(low)))
