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
from collections.abc import Callable

from gpuplan.estimator.answer_schema import Bilingual, Largest, LargestInTime, LargestRow, Price, PriceTier
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import check_request, estimate
from gpuplan.estimator.schema import Note, Request
from gpuplan.knowledge import Catalog

METHODS = ("pretrain", "full", "lora", "qlora", "infer")
SMALLEST_B, LARGEST_B = 0.1, 3000.0  # the sizes searched, in billions of parameters
STEPS = 10  # bisection steps on log(size): ln(3000/0.1)/2^10, about 1% resolution
DEFAULT_DEADLINE_DAYS = 30.0  # "could we pretrain it" without a deadline: in about a month


def largest(request: Request, cat: Catalog) -> Largest:
    """A row per method (params_b, at_least, per_gpu_gib, capacity_gib, usable_gib, days) for the GPUs
    of `request` (with the settings it fixes: zero, tp, precision, ...), plus `pretrain_in_time` (the
    biggest pretraining that ends by the deadline) and the hardware used; `at_least` marks a row
    whose size is the search's upper bound, LARGEST_B, which fits: the largest size is larger still.
    Raises RequestError when those settings cannot hold any model."""
    base = _base(request, cat)
    problems = check_request(base, cat)  # the fixed settings on their own: errors are the user's
    if problems:
        raise RequestError(problems)
    estimate(_request(base, "lora", SMALLEST_B), cat)  # settings no size can meet (tp=3: heads) raise here
    methods: dict[str, LargestRow | None] = {}
    for key, method, fixed in _rows(base):
        size = _bisect(lambda b, m=method, f=fixed: _fits(f, m, b, cat))
        methods[key] = _row(fixed, method, size, cat) if size else None
    deadline = request.deadline_days or DEFAULT_DEADLINE_DAYS
    training = _rows(base)[0][2]
    size = _bisect(lambda b: _ends_by(training, b, deadline, cat))
    in_time = LargestInTime(**dict(_row(training, "pretrain", size, cat)), deadline_days=deadline) if size else None
    return Largest(
        gpu=base.gpu,
        gpus=base.gpus,
        methods=methods,
        pretrain_in_time=in_time,
        deadline_given=request.deadline_days is not None,
    )


def _base(request: Request, cat: Catalog) -> Request:
    """The GPUs asked about (a type without a count is one server of it) and every setting the
    question fixed; the model, the method and the deadline are what the search varies."""
    gpu = request.gpu
    if gpu is None or gpu not in cat.gpus:
        raise RequestError([Note(code="unknown_gpu", params={"value": gpu or "", "suggestions": []})])
    gpus = request.gpus or (request.nodes or 1) * cat.gpus[gpu].gpus_per_node
    return request.model_copy(update={"gpus": gpus, "deadline_days": None, "budget_usd": None})


def _rows(base: Request) -> list[tuple[str, str, Request]]:
    """(key, method, the request it is sized with): every method as the question fixes it; serving
    runs one sequence unless the question says how many ("what is the largest model one A100 can
    run" asks what loads, not what serves sixteen users at once), and again in 4 bits unless the
    question fixes the precision."""
    # a served question's concurrency ("64 concurrent users") is no training micro-batch
    training = base.model_copy(update={"micro_batch": None}) if base.method == "infer" else base
    rows = [(method, method, training) for method in METHODS if method != "infer"]
    serving = base.model_copy(update={"micro_batch": base.micro_batch or 1})
    rows.append(("infer", "infer", serving))
    if base.precision is None:
        rows.append(("infer_int4", "infer", serving.model_copy(update={"precision": "int4"})))
    return rows


def _request(base: Request, method: str, size_b: float) -> Request:
    return base.model_copy(update={"model": None, "params_b": size_b, "method": method})


def _fits(base: Request, method: str, size_b: float, cat: Catalog) -> bool:
    try:
        return estimate(_request(base, method, size_b), cat).memory.fits
    except RequestError:  # a size whose shape the fixed settings cannot split (heads over tp)
        return False


def _ends_by(base: Request, size_b: float, days: float, cat: Catalog) -> bool:
    try:
        est = estimate(_request(base, "pretrain", size_b), cat)
    except RequestError:
        return False
    return est.memory.fits and est.compute.days <= days


def _bisect(ok: Callable[[float], bool]) -> float | None:
    """The largest size in [SMALLEST_B, LARGEST_B] for which `ok` holds (monotone), or None."""
    low, high = math.log(SMALLEST_B), math.log(LARGEST_B)
    if not ok(SMALLEST_B):
        return None
    if ok(LARGEST_B):
        return LARGEST_B
    for _ in range(STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if ok(math.exp(middle)) else (low, middle)
    scale = 10.0 ** (2 - math.floor(math.log10(math.exp(low))))  # three significant figures
    return math.floor(math.exp(low) * scale) / scale  # rounded down: it still fits


def _row(base: Request, method: str, size_b: float, cat: Catalog) -> LargestRow:
    est = estimate(_request(base, method, size_b), cat)
    return LargestRow(
        method=method,
        precision=est.resolved.precision,
        sequences=est.resolved.micro_batch,
        seq_len=est.resolved.seq_len,
        params_b=size_b,
        at_least=size_b >= LARGEST_B,  # the bound fits: no figure of the largest, only that it is larger
        per_gpu_gib=est.memory.per_gpu_gib,
        capacity_gib=est.memory.capacity_gib,
        usable_gib=est.memory.usable_gib,
        days=est.compute.days,
        zero=est.resolved.zero,
        tp=est.resolved.tp,
        pp=est.resolved.pp,
    )


def price(request: Request, cat: Catalog) -> Price:
    """GPUs x hours x the GPU-hour price where they are asked for (the default region otherwise)."""
    base = _base(request, cat)
    problems = check_request(request.model_copy(update={"gpus": base.gpus}), cat)
    if problems:
        raise RequestError(problems)
    gpu, gpus = cat.gpus[base.gpu], base.gpus
    hours = (request.deadline_days or 1.0) * 24
    region = request.region or cat.stock(gpu.id, None)[1]
    per_hour = cat.price(gpu.id, region)
    tier = next(
        (t for t in cat.tiers if gpu.id in t.gpu_ids and t.gpus[0] <= gpus <= t.gpus[1]),
        None,
    )
    title = Bilingual(en=tier.title.en, zh=tier.title.zh) if tier else None
    offered = PriceTier(id=tier.id, url=cat.tier_url(tier), title=title) if tier else None
    return Price(
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=gpus,
        hours=hours,
        region=region,
        usd_per_gpu_hour=per_hour,
        cost_usd=per_hour * gpus * hours,
        hours_given=request.deadline_days is not None,
        tier=offered,
        price_source=gpu.price_source,
    )
