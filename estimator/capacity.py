"""Questions about hardware someone has, not about a model they chose.

"We own 32 L40S, what is the largest model we could pretrain?" -> `largest`: for each method, the
biggest generic dense model whose plan fits on exactly those GPUs (the layout search picks the
sharding, without offload), found by bisection on the model size; for pretraining also the biggest
one whose compute-optimal run (20 tokens per parameter) ends within the deadline.
"8 H100 for two weeks in Tokyo, how much?" -> `price`: GPUs x hours x the regional price, and
the provider's tier that offers that configuration.
"""

from __future__ import annotations

import math
from typing import Any

from estimator.errors import RequestError
from estimator.estimate import estimate
from estimator.schema import Request
from knowledge import Catalog

METHODS = ("pretrain", "full", "lora", "qlora", "infer")
SMALLEST_B, LARGEST_B = 0.1, 3000.0  # the sizes searched, in billions of parameters
STEPS = 10  # bisection steps on log(size): ln(3000/0.1)/2^10, about 1% resolution
DEFAULT_DEADLINE_DAYS = 30.0  # "could we pretrain it" without a deadline: in about a month


def largest(request: Request, cat: Catalog) -> dict[str, Any]:
    """{method: {params_b, per_gpu_gib, capacity_gib, days}} for the GPUs of `request`, plus
    `pretrain_in_time` (the biggest pretraining that ends by the deadline) and the hardware used."""
    fixed = _hardware(request, cat)
    out: dict[str, Any] = {"gpu": fixed["gpu"], "gpus": fixed["gpus"], "methods": {}}
    for method in METHODS:
        size = _bisect(lambda b, m=method: _fits(fixed, m, b, cat))
        out["methods"][method] = _row(fixed, method, size, cat) if size else None
    deadline = request.deadline_days or DEFAULT_DEADLINE_DAYS
    size = _bisect(lambda b: _ends_by(fixed, b, deadline, cat))
    out["pretrain_in_time"] = {**_row(fixed, "pretrain", size, cat), "deadline_days": deadline} if size else None
    out["deadline_given"] = request.deadline_days is not None
    return out


def _hardware(request: Request, cat: Catalog) -> dict[str, Any]:
    """The GPUs asked about; a type without a count is one server of it."""
    gpu = request.gpu
    if gpu is None:
        raise RequestError([])
    gpus = request.gpus or (request.nodes or 1) * cat.gpus[gpu].gpus_per_node
    return {"gpu": gpu, "gpus": gpus, "region": request.region}


def _request(fixed: dict[str, Any], method: str, size_b: float) -> Request:
    return Request(params_b=size_b, method=method, gpu=fixed["gpu"], gpus=fixed["gpus"], region=fixed["region"])


def _fits(fixed: dict[str, Any], method: str, size_b: float, cat: Catalog) -> bool:
    try:
        return estimate(_request(fixed, method, size_b), cat).memory.fits
    except RequestError:
        return False


def _ends_by(fixed: dict[str, Any], size_b: float, days: float, cat: Catalog) -> bool:
    try:
        est = estimate(_request(fixed, "pretrain", size_b), cat)
    except RequestError:
        return False
    return est.memory.fits and est.compute.days <= days


def _bisect(ok: Any) -> float | None:
    """The largest size in [SMALLEST_B, LARGEST_B] for which `ok` holds (monotone), or None."""
    low, high = math.log(SMALLEST_B), math.log(LARGEST_B)
    if not ok(SMALLEST_B):
        return None
    if ok(LARGEST_B):
        return LARGEST_B
    for _ in range(STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if ok(math.exp(middle)) else (low, middle)
    digits = 2 if math.exp(low) < 10 else 1
    return math.floor(math.exp(low) * 10**digits) / 10**digits  # rounded down: it still fits


def _row(fixed: dict[str, Any], method: str, size_b: float, cat: Catalog) -> dict[str, Any]:
    est = estimate(_request(fixed, method, size_b), cat)
    return {
        "params_b": size_b,
        "per_gpu_gib": est.memory.per_gpu_gib,
        "capacity_gib": est.memory.capacity_gib,
        "days": est.compute.days,
        "zero": est.resolved.zero,
        "tp": est.resolved.tp,
        "pp": est.resolved.pp,
    }


def price(request: Request, cat: Catalog) -> dict[str, Any]:
    """GPUs x hours x the GPU-hour price where they are asked for (the default region otherwise)."""
    gpu = cat.gpus[request.gpu]
    gpus = request.gpus or (request.nodes or 1) * gpu.gpus_per_node
    hours = (request.deadline_days or 1.0) * 24
    region = request.region or cat.stock(gpu.id, None)[1]
    per_hour = cat.price(gpu.id, region)
    tier = next(
        (t for t in cat.tiers if gpu.id in t.gpu_ids and t.gpus[0] <= gpus <= t.gpus[1]),
        None,
    )
    return {
        "gpu": gpu.id,
        "gpu_name": gpu.name,
        "gpus": gpus,
        "hours": hours,
        "region": region,
        "usd_per_gpu_hour": per_hour,
        "cost_usd": per_hour * gpus * hours,
        "hours_given": request.deadline_days is not None,
        "tier": {"id": tier.id, "url": cat.tier_url(tier)} if tier else None,
        "price_source": gpu.price_source,
    }
