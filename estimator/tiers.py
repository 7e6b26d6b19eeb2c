"""Match a plan to the provider's tiers and standard plans by computation.

A tier matches when the job's method is one it lists, its configuration (GPU type, count, servers)
is the plan's, and the model size falls in its range; otherwise the closest is cited: among the
tiers listing the method, the nearest configuration, then the nearest size range. The starting
configuration of the matching starter row is then estimated like any plan: when it cannot hold
the job, the answer says so and gives the configuration that can.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuplan.estimator import answer_schema as answer
from gpuplan.estimator.schema import Estimate, Request
from gpuplan.knowledge import Catalog, Tier

# a model's name rounds its size (Llama 3.1 70B has 70.6B parameters, Qwen2.5-72B 72.7B, in
# config.json) and the guide's ranges name such classes: a range is read this much wider (estimate)
NAME_ROUNDING = 0.05


@dataclass(frozen=True)
class Hardware:
    """What a plan recommends: the GPU type, its memory, how many GPUs and on how many servers."""

    gpu: str
    memory_gib: float
    gpus: int
    nodes: int


def _outside(value: float, low: float, high: float) -> float:
    """0 within [low, high], else how many times too small or too large (log scale)."""
    if low <= value <= high:
        return 0.0
    return abs(math.log(value / (low if value < low else high)))


def _distance(tier: Tier, params_b: float) -> float:
    low, high = tier.params_b
    return _outside(params_b, low / (1 + NAME_ROUNDING), high * (1 + NAME_ROUNDING))


def _hardware_distance(cat: Catalog, tier: Tier, hw: Hardware) -> float:
    """How far the tier's configuration is from the plan's: GPU count or servers, whichever is
    further out, plus, for a type the tier does not list, its memory against the nearest listed."""
    count = _outside(hw.gpus, *tier.gpus)
    servers = _outside(hw.nodes, *tier.nodes) if tier.nodes else 0.0
    if hw.gpu in tier.gpu_ids:
        return max(count, servers)
    return max(count, servers) + min(abs(math.log(hw.memory_gib / cat.gpus[g].memory_gib)) for g in tier.gpu_ids)


def _rank(cat: Catalog, tier: Tier, method: str, params_b: float, hw: Hardware | None) -> tuple:
    """A tier listing the method first, then the nearest configuration, a listed GPU type, the
    nearest size range; a standard plan before a starter row."""
    hardware = _hardware_distance(cat, tier, hw) if hw else 0.0
    listed = hw is None or hw.gpu in tier.gpu_ids
    return method not in tier.methods, hardware, not listed, _distance(tier, params_b), tier.kind != "plan"


def best_tier(
    cat: Catalog, method: str, params_b: float, kinds: tuple[str, ...], hardware: Hardware | None = None
) -> Tier | None:
    tiers = [t for t in cat.tiers if t.kind in kinds]
    return min(tiers, key=lambda t: _rank(cat, t, method, params_b, hardware), default=None)


def is_exact(cat: Catalog, tier: Tier, method: str, params_b: float, hardware: Hardware) -> bool:
    """The tier lists the method, the size and the plan's own configuration."""
    fits_job = method in tier.methods and _distance(tier, params_b) == 0
    return fits_job and hardware.gpu in tier.gpu_ids and _hardware_distance(cat, tier, hardware) == 0


def plan_hardware(cat: Catalog, est: Estimate) -> Hardware:
    r = est.resolved
    spec = cat.gpus.get(r.gpu)
    return Hardware(r.gpu, spec.memory_gib if spec else est.memory.capacity_gib, r.gpus, r.nodes)


def match(
    cat: Catalog, est: Estimate, request: Request, lang: str, estimate_fn: Callable[[Request], Estimate]
) -> answer.Tier:
    r = est.resolved
    hardware = plan_hardware(cat, est)
    tier = best_tier(cat, r.method, r.params_b, ("plan", "starter"), hardware)
    starter = best_tier(cat, r.method, r.params_b, ("starter",), hardware)
    other = starter if starter and starter.id != tier.id else None
    named = answer.TierLink(id=other.id, title=getattr(other.title, lang), url=cat.tier_url(other)) if other else None
    return answer.Tier(
        id=tier.id,
        title=getattr(tier.title, lang),
        url=cat.tier_url(tier),
        summary=getattr(tier.summary, lang),
        kind=tier.kind,
        exact=is_exact(cat, tier, r.method, r.params_b, hardware),
        starter=named,
        # the starter rows name concrete starting configurations ("from 8 x A100/H100 80GB")
        start=_check_start(cat, starter or tier, request, est, estimate_fn),
    )


def _check_start(
    cat: Catalog, tier: Tier, request: Request, est: Estimate, estimate_fn: Callable[[Request], Estimate]
) -> answer.TierStart:
    """Estimate the tier's starting configuration for this job, on the plan's GPU type when the
    tier lists it: does it hold it?"""
    r = est.resolved
    gpu_id = r.gpu if r.gpu in tier.gpu_ids else tier.gpu_ids[0]
    gpus = tier.gpus[0]
    if r.gpu == gpu_id and r.gpus == gpus and est.memory.fits:
        return _start_row(cat, tier, gpu_id, gpus, True, est.memory.per_gpu_gib)
    trial = _starting_request(request, est, gpu_id, gpus)
    try:
        start = estimate_fn(trial)
    except ValueError:
        return answer.TierStart(gpu=gpu_id, gpu_name=cat.gpus[gpu_id].name, gpus=gpus, fits=False, per_gpu_gib=None)
    result = _start_row(cat, tier, gpu_id, gpus, start.memory.fits, start.memory.per_gpu_gib)
    if not start.memory.fits:
        needed = _fewest_that_hold(cat, gpu_id, trial, estimate_fn)
        result = result.model_copy(update={"needed": needed, "with_offload": _with_offload(gpus, start)})
    return result


def _start_row(cat: Catalog, tier: Tier, gpu_id: str, gpus: int, fits: bool, per_gpu_gib: float) -> answer.TierStart:
    """The starting configuration as the answer reports it."""
    return answer.TierStart(
        tier=tier.id, gpu=gpu_id, gpu_name=cat.gpus[gpu_id].name, gpus=gpus, fits=fits, per_gpu_gib=per_gpu_gib
    )


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


def _with_offload(gpus: int, start: Estimate) -> answer.TierWithOffload | None:
    """When the starting configuration does not hold the job: the same GPUs with offload, when the
    estimate suggests it (its fits_with_offload warning)."""
    offload = [w.params for w in start.warnings if w.code == "fits_with_offload"]
    if not offload:
        return None
    return answer.TierWithOffload(gpus=gpus, per_gpu_gib=offload[0]["per_gpu"], host_ram_gib=offload[0]["host_ram"])


def _fewest_that_hold(cat: Catalog, gpu_id: str, trial: Request, estimate_fn: Callable) -> answer.TierNeeded | None:
    """When the starting configuration does not hold the job: the fewest GPUs of its type that do,
    or None when none can be estimated."""
    try:
        fix = estimate_fn(trial.model_copy(update={"gpus": None, "objective": "fewest"}))
    except ValueError:
        return None
    return answer.TierNeeded(
        gpu=gpu_id,
        gpu_name=cat.gpus[gpu_id].name,
        gpus=fix.resolved.gpus,
        tp=fix.resolved.tp,
        zero=fix.resolved.zero,
        ckpt=fix.resolved.ckpt,
        fits=fix.memory.fits,
    )


def deployment_link(cat: Catalog, lang: str) -> answer.Tier | None:
    """A serving plan's link: the guide's section on serving a trained model near its users."""
    link = cat.deployment
    if link is None:
        return None
    return answer.Tier(
        id=link.id,
        title=getattr(link.title, lang),
        url=cat.tier_url(link),
        summary=getattr(link.summary, lang),
        kind="deployment",
        exact=True,
    )
