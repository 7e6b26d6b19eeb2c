"""Match a plan to the provider's tiers and standard plans by computation.

A tier matches when the job's method is one it lists and the model size falls in its range
(the nearest range otherwise). Its starting configuration (first listed GPU type, smallest GPU
count) is then estimated like any plan: when it cannot hold the job, the answer says so and
gives the configuration that can.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from gpuplan.estimator.schema import Estimate, Request
from gpuplan.knowledge import Catalog, Tier


def _distance(tier: Tier, params_b: float) -> float:
    """0 inside the tier's size range, else how many times too small or too large (log scale)."""
    low, high = tier.params_b
    if low <= params_b <= high:
        return 0.0
    edge = low if params_b < low else high
    return abs(math.log(params_b / edge))


def best_tier(cat: Catalog, method: str, params_b: float, kind: str) -> Tier | None:
    tiers = [t for t in cat.tiers if t.kind == kind]
    if not tiers:
        return None
    # a tier listing the method wins over one that does not; then the nearest size range
    return min(tiers, key=lambda t: (method not in t.methods, _distance(t, params_b)))


def match(
    cat: Catalog, est: Estimate, request: Request, lang: str, estimate_fn: Callable[[Request], Estimate]
) -> dict[str, Any]:
    r = est.resolved
    plan = best_tier(cat, r.method, r.params_b, "plan")
    starter = best_tier(cat, r.method, r.params_b, "starter")
    tier = plan or starter
    out: dict[str, Any] = {
        "id": tier.id,
        "title": tier.title.model_dump()[lang],
        "url": cat.tier_url(tier),
        "summary": tier.summary.model_dump()[lang],
        "kind": tier.kind,
        "exact": _distance(tier, r.params_b) == 0 and r.method in tier.methods,
    }
    if starter and starter.id != tier.id:
        out["starter"] = {"id": starter.id, "title": starter.title.model_dump()[lang], "url": cat.tier_url(starter)}
    # the starter rows name concrete starting configurations ("from 8 x A100/H100 80GB")
    out["start"] = _check_start(cat, starter or tier, request, est, estimate_fn)
    return out


def _check_start(
    cat: Catalog, tier: Tier, request: Request, est: Estimate, estimate_fn: Callable[[Request], Estimate]
) -> dict[str, Any]:
    """Estimate the tier's starting configuration for this job: does it hold it?"""
    gpu_id = tier.gpu_ids[0]
    gpus = tier.gpus[0]
    r = est.resolved
    if r.gpu == gpu_id and r.gpus == gpus and est.memory.fits:
        return _start_row(cat, tier, gpu_id, gpus, True, est.memory.per_gpu_gib)
    trial = _starting_request(request, est, gpu_id, gpus)
    try:
        start = estimate_fn(trial)
    except ValueError:
        return {"gpu": gpu_id, "gpu_name": cat.gpus[gpu_id].name, "gpus": gpus, "fits": False, "per_gpu_gib": None}
    result = _start_row(cat, tier, gpu_id, gpus, start.memory.fits, start.memory.per_gpu_gib)
    if not start.memory.fits:
        result.update(_what_holds(cat, gpu_id, gpus, trial, start, estimate_fn))
    return result


def _start_row(cat: Catalog, tier: Tier, gpu_id: str, gpus: int, fits: bool, per_gpu_gib: float) -> dict[str, Any]:
    """The starting configuration as the answer reports it."""
    return {
        "tier": tier.id,
        "gpu": gpu_id,
        "gpu_name": cat.gpus[gpu_id].name,
        "gpus": gpus,
        "fits": fits,
        "per_gpu_gib": per_gpu_gib,
    }


def _starting_request(request: Request, est: Estimate, gpu_id: str, gpus: int) -> Request:
    """The request on the starting configuration, every layout and goal choice left open but one:
    a job that splits no model (tp = pp = 1, a data-parallel-only stack such as the HF Trainer
    under DeepSpeed) cannot split it on the tier's GPUs either."""
    r = est.resolved
    unsplit = 1 if request.tp == 1 and request.pp == 1 else None
    return request.model_copy(
        update={
            "gpu": gpu_id,
            "gpus": gpus,
            "nodes": None,
            "tp": unsplit,
            "pp": unsplit,
            "zero": None,
            "offload": None,
            "deadline_days": None,
            "budget_usd": None,
            "objective": None,
            "method": r.method,
            "seq_len": r.seq_len,
        }
    )


def _what_holds(
    cat: Catalog, gpu_id: str, gpus: int, trial: Request, start: Estimate, estimate_fn: Callable
) -> dict[str, Any]:
    """When the starting configuration does not hold the job: the fewest GPUs of its type that do,
    and the same GPUs with offload when the estimate suggests it."""
    out: dict[str, Any] = {}
    needed = _fewest_that_hold(cat, gpu_id, trial, estimate_fn)
    if needed is not None:
        out["needed"] = needed
    offload = [w.params for w in start.warnings if w.code == "fits_with_offload"]
    if offload:
        out["with_offload"] = {
            "gpus": gpus,
            "per_gpu_gib": offload[0]["per_gpu"],
            "host_ram_gib": offload[0]["host_ram"],
        }
    return out


def _fewest_that_hold(cat: Catalog, gpu_id: str, trial: Request, estimate_fn: Callable) -> dict[str, Any] | None:
    """The fewest GPUs of the starter's type that hold the job, or None when none can be estimated."""
    try:
        fix = estimate_fn(trial.model_copy(update={"gpus": None, "objective": "fewest"}))
    except ValueError:
        return None
    return {
        "gpu": gpu_id,
        "gpu_name": cat.gpus[gpu_id].name,
        "gpus": fix.resolved.gpus,
        "tp": fix.resolved.tp,
        "zero": fix.resolved.zero,
        "ckpt": fix.resolved.ckpt,
        "fits": fix.memory.fits,
    }


def deployment_link(cat: Catalog, lang: str) -> dict[str, Any] | None:
    """A serving plan's link: the guide's section on serving a trained model near its users."""
    link = cat.deployment
    if link is None:
        return None
    return {
        "id": link.id,
        "title": link.title.model_dump()[lang],
        "url": cat.tier_url(link),
        "summary": link.summary.model_dump()[lang],
        "kind": "deployment",
        "exact": True,
    }
