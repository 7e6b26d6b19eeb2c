"""The smallest change that makes a plan that does not fit fit.

Two kinds of change are tried, each re-estimated with everything else as asked and kept when the
result fits:
- a ladder of what the job itself gives up, one more step at a time until it fits: for training its
  memory settings (a chunked loss, a micro-batch of one, activation checkpointing, ZeRO-3), for serving
  its precision and load (an fp8 KV cache, fp8 or int4 weights, fewer sequences at once, a shorter
  context);
- changes made one at a time: more GPUs of the same type, then for training CPU offload, a lighter
  method (LoRA, QLoRA) and shorter sequences.
Only what the plan does not already do is tried. For serving, the ladder comes first when it keeps
the load and context asked for; when it has to cut them, more GPUs come first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.schema import Estimate, Remedy, Request
from gpuplan.knowledge import Catalog

Change = tuple[str, Any, dict[str, Any]]  # (what changes, its new value, the request update)
EstimateFn = Callable[[Request], Estimate]
MOST = 3  # remedies kept: the smallest first, then ones of other kinds
SHORTEST_SEQ = 512  # a shorter sequence is offered down to this, not below
LOAD_CUTS = ("micro_batch", "seq_len")  # ladder steps that serve less than was asked


def remedies(
    request: Request, est: Estimate, estimate_fn: EstimateFn, cat: Catalog, relaxed: Request | None = None
) -> list[Remedy]:
    """Up to MOST changes that make `est` (the plan of `request`, which does not fit) fit, smallest
    first, each of a different kind. The ladder climbs from `request`; the single changes start from
    `relaxed` (the request with the settings gpuplan may choose left open; `request` by default)."""
    serving = est.resolved.method == "infer"
    ladder = _serving_ladder(est, cat) if serving else _training_ladder(est)
    climbed = _climb(ladder, request, estimate_fn)
    singles = _first_of_each(
        _serving_singles(est, cat) if serving else _training_singles(est, cat), relaxed or request, estimate_fn
    )
    if climbed is None:
        return singles[:MOST]
    if serving and any(cut in climbed.change.split("+") for cut in LOAD_CUTS):
        return (singles[:1] + [climbed] + singles[1:])[:MOST]
    return ([climbed] + singles)[:MOST]


def _climb(ladder: list[Change], request: Request, estimate_fn: EstimateFn) -> Remedy | None:
    """The first rung of the ladder whose changes, all taken together, make the plan fit."""
    update: dict[str, Any] = {}
    taken: list[str] = []
    for change, value, step in ladder:
        update.update(step)
        if change not in taken:
            taken.append(change)
        fixed = _estimate(estimate_fn, request.model_copy(update=update))
        if fixed is not None and fixed.memory.fits:
            return _remedy("+".join(taken), value, fixed)
    return None


def _first_of_each(changes: Iterator[Change], base: Request, estimate_fn: EstimateFn) -> list[Remedy]:
    """Of each kind of change, the first (smallest) that makes the plan fit."""
    found: list[Remedy] = []
    for change, value, update in changes:
        if any(r.change == change for r in found):
            continue
        fixed = _estimate(estimate_fn, base.model_copy(update=update))
        if fixed is not None and fixed.memory.fits:
            found.append(_remedy(change, value, fixed))
    return found


def _estimate(estimate_fn: EstimateFn, request: Request) -> Estimate | None:
    try:
        return estimate_fn(request)
    except (RequestError, ValueError):
        return None


def _remedy(change: str, value: Any, est: Estimate) -> Remedy:
    r, m, c = est.resolved, est.memory, est.compute
    serving = r.method == "infer"
    return Remedy(
        change=change,
        value=value,
        gpus=r.gpus,
        gpu_name=r.gpu_name,
        per_gpu_gib=m.per_gpu_gib,
        usable_gib=m.usable_gib,
        days=None if serving else c.days,
        cost_usd=None if serving else c.cost_usd,
        host_ram_gib=m.host_ram_gib if r.offload != "none" else None,
        concurrency=est.serving.concurrency if est.serving else None,
        precision=r.precision if serving else None,
        kv_cache=r.kv_cache if serving else None,
        seq_len=r.seq_len,
    )


def _training_ladder(est: Estimate) -> list[Change]:
    """The run's own memory settings it does not use yet, least costly in time first."""
    r = est.resolved
    out: list[Change] = []
    if r.loss == "unchunked":
        out.append(("loss", "chunked", {"loss": "chunked"}))
    if r.micro_batch > 1:
        out.append(("micro_batch", 1, {"micro_batch": 1}))
    if r.ckpt != "full":
        out.append(("ckpt", "full", {"ckpt": "full"}))
    if r.zero < 3 and r.gpus > 1 and r.tp * r.pp < r.gpus:
        out.append(("zero", 3, {"zero": 3}))
    return out


def _training_singles(est: Estimate, cat: Catalog) -> Iterator[Change]:
    r = est.resolved
    yield from _more_gpus(r.gpus, r.gpu, cat)
    if r.offload == "none" and r.method != "qlora":
        yield "offload", "cpu", {"offload": "cpu", "zero": 3}
    lighter = {"full": "lora", "dpo": "lora", "lora": "qlora"}.get(r.method)
    if lighter:
        yield "method", lighter, {"method": lighter, "optimizer": None, "precision": None, "zero": None}
    yield from _shorter(r.seq_len)


def _serving_ladder(est: Estimate, cat: Catalog) -> list[Change]:
    """What serving gives up, least first: an fp8 KV cache and smaller weights (fp8 where the GPU
    has it, then int4), then fewer sequences at once, then a shorter context."""
    r = est.resolved
    has_fp8 = bool(cat.gpus[r.gpu].fp8_tflops) if r.gpu in cat.gpus else False
    sixteen_bit = r.precision in ("bf16", "fp16")
    out: list[Change] = []
    if has_fp8 and (r.kv_cache or "bf16") == "bf16" and sixteen_bit:
        out.append(("kv_cache", "fp8", {"kv_cache": "fp8"}))
    if has_fp8 and sixteen_bit:
        out.append(("precision", "fp8", {"precision": "fp8"}))
    if r.precision != "int4":
        out.append(("precision", "int4", {"precision": "int4"}))
    out += [("micro_batch", n, {"micro_batch": n}) for n in _halving(r.micro_batch, 1)]
    out += list(_shorter(r.seq_len))
    return out


def _serving_singles(est: Estimate, cat: Catalog) -> Iterator[Change]:
    yield from _more_gpus(est.resolved.gpus, est.resolved.gpu, cat)


def _more_gpus(gpus: int, gpu: str, cat: Catalog) -> Iterator[Change]:
    """The same GPU type in larger counts, smallest first: doubling within a server, then whole
    servers, up to 16 times as many."""
    per_node = cat.gpus[gpu].gpus_per_node if gpu in cat.gpus else 8
    counts: list[int] = []
    for factor in (2, 4, 8, 16):
        n = factor * gpus
        if n > per_node:  # beyond one server: whole servers
            n = -(-n // per_node) * per_node
        if n not in counts:
            counts.append(n)
    for n in counts:
        update = {"gpus": n, "nodes": None, "gpu": gpu, "tp": None, "pp": None, "zero": None}
        yield "gpus", n, update


def _shorter(seq_len: int) -> Iterator[Change]:
    for seq in _halving(seq_len, SHORTEST_SEQ):
        yield "seq_len", seq, {"seq_len": seq}


def _halving(value: int, floor: int) -> Iterator[int]:
    value //= 2
    while value >= floor:
        yield value
        value //= 2
