"""The parts every estimate reports, built one way for training and serving: the memory per GPU,
the compute and cost, and the resolved request (every choice made)."""

from __future__ import annotations

from typing import Any

from gpuplan.estimator import fit
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.context import SECONDS_PER_DAY, Context
from gpuplan.estimator.schema import ComputeEstimate, MemoryBreakdown, MemoryEstimate, NamedShape, Resolved
from gpuplan.knowledge import GPU, Defaults


def memory_estimate(
    breakdown_gib: dict[str, float],
    per_gpu_gib: float,
    gpu: GPU,
    host_ram_gib: float,
    nvme_gib: float,
    defaults: Defaults,
    serving: bool = False,
) -> MemoryEstimate:
    """The memory per GPU against what a plan may fill of the card (fit.usable): a share of it for
    training, the engine's share for serving (also reported as `engine_limit_gib`)."""
    usable_gib = fit.usable(gpu.memory_gib, defaults, serving)
    return MemoryEstimate(
        per_gpu_gib=per_gpu_gib,
        capacity_gib=gpu.memory_gib,
        usable_gib=usable_gib,
        fits=fit.fits(per_gpu_gib, gpu.memory_gib, defaults, serving),
        tight=fit.tight(per_gpu_gib, usable_gib, defaults),
        host_ram_gib=host_ram_gib,
        nvme_gib=nvme_gib,
        breakdown_gib=MemoryBreakdown(**breakdown_gib),
        engine_limit_gib=usable_gib if serving else None,
    )


def compute_estimate(
    *,
    tokens: float,
    flops_per_token: float,
    mfu: float,
    tokens_per_s_per_gpu: float,
    step_time_s: float,
    seconds: float,
    gpus: int,
    price: float,
    cost_usd: float | None = None,
    cost_per_million_tokens_usd: float | None = None,
    **reliability: float | None,
) -> ComputeEstimate:
    """Time and cost of `tokens` at `tokens_per_s_per_gpu` on `gpus`; the cost is the GPU-hours'
    unless the search priced it already; a training plan's `reliability` figures (goodput,
    mtbi_hours, interruptions, checkpoint_interval_min) beside them."""
    gpu_hours = seconds / 3600 * gpus
    return ComputeEstimate(
        total_flops=tokens * flops_per_token,
        flops_per_token=flops_per_token,
        train_tokens=tokens,
        mfu=mfu,
        tokens_per_s_per_gpu=tokens_per_s_per_gpu,
        step_time_s=step_time_s,
        days=seconds / SECONDS_PER_DAY,
        gpu_hours=gpu_hours,
        cost_usd=gpu_hours * price if cost_usd is None else cost_usd,
        price_usd_per_gpu_hour=price,
        cost_per_million_tokens_usd=cost_per_million_tokens_usd,
        **reliability,
    )


def resolved(ctx: Context, **choices: Any) -> Resolved:
    """The request with every choice made: the model's and the request's own fields from `ctx`,
    the method, layout, hardware and data from `choices`."""
    arch, req = ctx.arch, ctx.req
    return Resolved(
        model=ctx.model_id,
        model_name=arch.name,
        params_b=(arch.params + arch.vision_params) / 1e9,
        active_params_b=(arch.active_params + arch.vision_params) / 1e9,
        mfu=req.mfu,
        deadline_days=req.deadline_days,
        budget_usd=req.budget_usd,
        **choices,
    )


def architecture_used(arch: Arch) -> NamedShape:
    """The shape `arch` was built from, without what the estimator derives from it."""
    return arch.shape
