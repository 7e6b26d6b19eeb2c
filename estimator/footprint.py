"""The least memory a model takes on one GPU, method by method: the answer to "how much VRAM does
X need?" / "显存最低要多少?", beside the plan for the setup asked about.

Each row is the estimator's own figure for one GPU at its leanest setting: training with one
sequence per step and every layer recomputed (full activation checkpointing), serving one
sequence at the context length; the sequence length is the request's or the estimator's
default. Nothing here is a separate formula: memory.py sizes every row, the same way it sizes
a plan (LLaMA-Factory's hardware table and Hugging Face's accelerate `estimate-memory` answer the
same question by method and precision).
"""

from __future__ import annotations

from gpuplan.estimator import fit
from gpuplan.estimator.answer_schema import FootprintRow
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request
from gpuplan.knowledge import GPU, Catalog

# (method, precision); None keeps the method's default (serving: the published checkpoint's)
ROWS = (
    ("full", None),
    ("lora", None),
    ("qlora", None),
    ("infer", None),
    ("infer", "int8"),
    ("infer", "int4"),
)
EIGHT_BIT = ("fp8", "int8")
# sized on a card that takes every precision, so that no row is refused for the GPU's sake; the
# per-GPU figure does not depend on which card holds it
REFERENCE_GPU = "h100-80gb"
CARDS_NAMED = 2  # of the smallest cards that hold a row, the cheapest this many are named
OLD_FAMILIES = ("kepler", "maxwell", "pascal")  # no tensor cores: not named as a card to buy or rent


def footprint(request: Request, cat: Catalog) -> list[FootprintRow]:
    """One row per method and precision for the model of `request`, on one GPU; a method asked
    for that the rows lack (DPO, PPO, pretraining) comes first."""
    rows: list[FootprintRow] = []
    asked = [(request.method, None)] if request.method and request.method not in {m for m, _ in ROWS} else []
    for method, precision in asked + list(ROWS):
        lean = _lean_request(request, method, precision, cat)
        try:
            est = estimate(lean, cat)
        except RequestError:
            continue  # a method the model cannot take (a precision its weights refuse)
        if precision in EIGHT_BIT and rows and rows[-1].method == "infer" and rows[-1].precision in EIGHT_BIT:
            continue  # published in 8 bits already (DeepSeek-V3's fp8): the row above is it
        need = est.memory.per_gpu_gib
        holding = _smallest_cards(cat, need, serving=method == "infer")
        rows.append(
            FootprintRow(
                method=method,
                precision=est.resolved.precision,
                per_gpu_gib=need,
                seq_len=est.resolved.seq_len,
                smallest_gib=holding[0].memory_gib if holding else None,
                cards=tuple(g.name for g in holding[:CARDS_NAMED]),
            )
        )
    return rows


def _lean_request(request: Request, method: str, precision: str | None, cat: Catalog) -> Request:
    training = method != "infer"
    gpu = REFERENCE_GPU if REFERENCE_GPU in cat.gpus else max(cat.gpus.values(), key=lambda g: g.memory_gib).id
    return Request(
        model=request.model,
        params_b=request.params_b,
        method=method,
        precision=precision,
        seq_len=request.seq_len,
        lora_rank=request.lora_rank if method in ("lora", "qlora") else None,
        gpu=gpu,
        gpus=1,
        micro_batch=1,
        ckpt="full" if training else None,
        train_tokens=request.train_tokens if training else None,
    )


def _smallest_cards(cat: Catalog, need_gib: float, serving: bool) -> list[GPU]:
    """The catalog cards of the least memory whose usable memory (fit.usable) still holds
    `need_gib`, cheapest first."""
    holding = [
        g
        for g in cat.gpus.values()
        if fit.fits(need_gib, g.memory_gib, cat.defaults, serving) and g.family not in OLD_FAMILIES
    ]
    if not holding:
        return []
    least = min(g.memory_gib for g in holding)
    same = [g for g in holding if g.memory_gib <= least * 1.02]  # "24 GB" cards report 23.6-24 GiB
    return sorted(same, key=lambda g: (g.price_usd_per_hour, g.id))
