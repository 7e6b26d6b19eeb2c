"""Other ways to serve the same model: another GPU type, a quantized precision, fewer GPUs at
fewer concurrent sequences. Each is scored by the same search as the plan (search.score_serving)."""

from __future__ import annotations

import numpy as np

from gpuplan.estimator import fit, network, saturation, search
from gpuplan.estimator.context import Context, no_layout, overheads
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.memory import GIB
from gpuplan.estimator.schema import Alternative, Note
from gpuplan.knowledge import GPU

# the next precision down that serving engines run (FP8 needs FP8 tensor cores or Ampere's
# weight-only kernels; AWQ/GPTQ 4-bit runs everywhere)
QUANTIZED_NEXT = {"bf16": "fp8", "fp16": "fp8", "fp8": "int4", "int8": "int4"}


# a throughput layout is worth naming when it generates this much more per GPU at full load than
# the plan's own (gpuplan's choice: below it the difference is inside the model's error)
FULL_LOAD_GAIN = 1.1


def serving_alternatives(ctx: Context, replica, full: saturation.Saturation | None = None) -> list[Alternative]:
    """Up to four: the best replica on another GPU type, on the same type at a quantized
    precision, on the same type with fewer GPUs at the most sequences that still fit, and the
    layout of the plan's GPUs that generates most at full load (`full`: the plan's own full load)."""
    found = [
        _other_type(replica),
        _quantized(ctx, replica),
        _fewer_gpus(ctx, replica),
        _most_at_full_load(ctx, replica, full),
    ]
    return [a for a in found if a is not None and _worth_offering(ctx, replica, a)]


def _worth_offering(ctx: Context, replica, alt: Alternative) -> bool:
    """Streams at least a tenth (1 / search.ALTERNATIVE_SLOWDOWN) of the plan's tokens/s per
    sequence (its decode pool's with prefill apart), and serves the plan's work within the deadline
    and the budget, or misses each by no more than the plan does (search.within_plan_limits)."""
    per_sequence = alt.tokens_per_s_per_gpu * alt.gpus / alt.micro_batch
    if per_sequence * search.ALTERNATIVE_SLOWDOWN < replica.step.tokens_per_s_gpu * replica.gpus / replica.batch:
        return False
    plan_gpus = replica.pools.gpus if replica.pools else ctx.req.gpus or replica.gpus
    plan_hourly = float(replica.scored.options.price[replica.t, 0]) * plan_gpus
    plan_days = _work_days(ctx, replica.served_per_gpu * plan_gpus)
    alt_days = _work_days(ctx, alt.tokens_per_s_per_gpu * alt.gpus)
    days = np.array([plan_days, alt_days])
    cost = days * 24 * np.array([plan_hourly, alt.cost_usd / 24])  # an alternative's cost_usd is a day's
    return bool(search.within_plan_limits(days, cost, 0, ctx.req.deadline_days, ctx.req.budget_usd)[1])


def _work_days(ctx: Context, tokens_per_s: float) -> float:
    """Days the plan's work takes at `tokens_per_s`: the tokens asked for, else the service runs
    for the deadline's days (a day without one) whatever it generates."""
    if ctx.req.train_tokens:
        return ctx.req.train_tokens / tokens_per_s / 86400
    return ctx.req.deadline_days or 1.0


def _other_type(replica) -> Alternative | None:
    scored = replica.scored
    others = scored.deliverable.copy()
    others[replica.t, :] = False
    if not others.any():
        return None
    return _pick(scored, others, "other_gpu", replica.precision, replica.batch)


def _quantized(ctx: Context, replica) -> Alternative | None:
    precision = QUANTIZED_NEXT.get(replica.precision)
    gpu = replica.gpu
    if precision == "fp8" and not (gpu.fp8_tflops or gpu.family.startswith("ampere")):
        precision = "int4"
    if precision is None:
        return None
    scored = _rescore(ctx, replica, gpu, precision, replica.batch)
    plan = float(_per_token(replica.scored)[replica.t, replica.i])
    cheaper = scored.deliverable & (_per_token(scored) < plan)
    return _pick(scored, cheaper, "quantized", precision, replica.batch) if cheaper.any() else None


def _fewer_gpus(ctx: Context, replica) -> Alternative | None:
    """Half the batch, then a quarter, ...: memory, shape and stock (search.serving_fit) at every
    such batch in one pass (a batch axis: elementwise, the figures each batch gets alone), the
    decode timed only at the largest batch a replica of fewer GPUs serves."""
    batches = [int(replica.batch) >> k for k in range(1, int(replica.batch).bit_length())]
    if replica.gpus == 1 or ctx.req.gpus or not batches:
        return None
    tp, pp, ep, options, fixed = _grid(ctx, [replica.gpu], replica.region, batches[0])
    smaller = (tp * pp * ep < replica.gpus)[None, :]
    deliverable = search.serving_fit(
        ctx.arch,
        replica.precision,
        seq=replica.seq,
        batch=np.array(batches, dtype=float)[:, None],
        tp=tp,
        pp=pp,
        ep=ep,
        options=options,
        over=overheads(ctx.cat),
        cat=ctx.cat,
        fixed=fixed,
        kv_cache=ctx.req.kv_cache,
    )[3]
    served = np.flatnonzero((deliverable & smaller).any(axis=(1, 2)))
    if not served.size:
        return None
    batch = batches[int(served[0])]
    scored = _rescore(ctx, replica, replica.gpu, replica.precision, batch)
    return _pick(scored, scored.deliverable & smaller, "fewer_gpus", replica.precision, batch)


def _most_at_full_load(ctx: Context, replica, own: saturation.Saturation | None) -> Alternative | None:
    """The replica shape that generates most per GPU at full load (the saturation point a
    throughput benchmark measures), when it beats the plan's own by FULL_LOAD_GAIN: an
    expert-parallel or pipelined shape holds far more sequences than the tensor-parallel one
    sized for a few."""
    loads = full_loads(ctx, replica)
    if not loads:
        return None
    i, best = max(loads.items(), key=lambda load: load[1].tokens_per_s_per_gpu)
    if own is not None and best.tokens_per_s_per_gpu < FULL_LOAD_GAIN * own.tokens_per_s_per_gpu:
        return None
    scored, gpu = replica.scored, replica.gpu
    gpus, hourly = int(scored.replica[i]), float(scored.replica_cost[replica.t, i])
    return Alternative(
        reason="full_load_layout",
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=gpus,
        zero=0,
        tp=int(scored.tp[i]),
        pp=int(scored.pp[i]),
        ckpt="none",
        offload="none",
        micro_batch=best.concurrency,
        region=replica.region,
        days=1.0,
        cost_usd=hourly * 24,
        per_gpu_gib=fit.usable(gpu.memory_gib, ctx.cat.defaults, serving=True),
        precision=replica.precision,
        tokens_per_s_per_gpu=best.tokens_per_s_per_gpu,
        cost_per_million_tokens_usd=hourly / (best.tokens_per_s_per_gpu * gpus * 3600) * 1e6,
        ep=int(scored.ep[i]),
    )


def full_loads(ctx: Context, replica, own: bool = False) -> dict[int, saturation.Saturation]:
    """Shape index -> its full load, for every shape but the plan's (`own`: the plan's too) that fits
    on the plan's GPU type within the plan's GPUs (else one node's, or the plan's replica if larger)."""
    scored, gpu = replica.scored, replica.gpu
    limit = ctx.req.gpus or max(replica.gpus, gpu.gpus_per_node)
    links = network.decode_links([gpu], ctx.cat, ctx.req.fabric)
    # shapes an engine can run: they fit, and an expert-parallel one stays in its NVLink domain
    shapes = np.flatnonzero(scored.deliverable[replica.t] & (scored.replica <= limit))
    loads = {}
    for i in (int(i) for i in shapes if own or i != replica.i):
        full = saturation.of_shape(
            ctx.arch,
            replica.precision,
            scored,
            i,
            seq=replica.seq,
            gpu=gpu,
            links=links,
            defaults=ctx.cat.defaults,
            kv_cache=ctx.req.kv_cache,
            prompt=replica.load.prompt,
            chunked=replica.load.chunked,
        )
        if full is not None:
            loads[i] = full
    return loads


def _rescore(ctx: Context, replica, gpu: GPU, precision: str, batch: int) -> search.ServingScored:
    """The serving search on one GPU type, in the plan's region."""
    return score_replicas(ctx, [gpu], replica.region, precision, batch, replica.seq)


def score_replicas(
    ctx: Context, types: list[GPU], region: str | None, precision: str, batch: int, seq: int
) -> search.ServingScored:
    """Every replica shape the user's fixed values allow, on `types`: the plan's search and its
    alternatives' (raises RequestError when nothing fixed leaves a shape)."""
    req, cat = ctx.req, ctx.cat
    tp, pp, ep, options, fixed = _grid(ctx, types, region, batch)
    return search.score_serving(
        ctx.arch,
        precision,
        seq=seq,
        batch=batch,
        tp=tp,
        pp=pp,
        options=options,
        over=overheads(cat),
        cat=cat,
        fixed=fixed,
        fabric=req.fabric,
        ep=ep,
        kv_cache=req.kv_cache,
        prompt=req.prompt_tokens,
        chunked=req.prefill != "disaggregated",
    )


def _grid(ctx: Context, types: list[GPU], region: str | None, batch: int):
    """(tp, pp, ep, GPU options, fixed values) of the replica shapes the user's fixed values allow
    on `types` (raises RequestError when nothing fixed leaves a shape)."""
    req = ctx.req
    fixed = search.Fixed(gpus=req.gpus, tp=req.tp, pp=req.pp, ep=req.ep)
    tp, pp, ep = search.serving_grid(ctx.arch, fixed)
    if tp.size == 0:
        raise RequestError([no_layout(req, batch)])
    options = search.gpu_options(ctx.cat, types, region, None, req.fabric)
    if (req.ep or 1) > 1 and not search.expert_parallel_ok(ep, options).any():
        per_node, rdma = int(options.nvlink.max()), bool(options.rdma.any())
        params = {"ep": req.ep, "per_node": per_node, "rdma": rdma}
        raise RequestError([Note(code="serving_ep_beyond_node", params=params)])
    return tp, pp, ep, options, fixed


def _per_token(scored: search.ServingScored) -> np.ndarray:
    """USD per generated token of every candidate (T, L)."""
    return scored.replica_cost / np.maximum(scored.tokens_per_s_gpu * scored.replica * 3600, 1e-9)


def _pick(scored: search.ServingScored, allowed: np.ndarray, reason: str, precision: str, batch: int) -> Alternative:
    """The cheapest per generated token among `allowed`, as an Alternative."""
    cost = np.where(allowed, _per_token(scored), np.inf)
    t, i = divmod(int(np.argmin(cost)), allowed.shape[1])  # np.unravel_index's (type, shape), without its cost
    gpu = scored.options.gpus[t]
    tp, pp, gpus = int(scored.tp[i]), int(scored.pp[i]), int(scored.replica[i])
    per_gpu_speed = float(scored.tokens_per_s_gpu[t, i])
    hourly = float(scored.replica_cost[t, i])
    return Alternative(
        reason=reason,
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=gpus,
        zero=0,
        tp=tp,
        pp=pp,
        ckpt="none",
        offload="none",
        micro_batch=batch,
        region=scored.options.regions[t],
        days=1.0,
        cost_usd=hourly * 24,
        per_gpu_gib=float(scored.per_gpu[i]) / GIB,
        precision=precision,
        tokens_per_s_per_gpu=per_gpu_speed,
        cost_per_million_tokens_usd=hourly / (per_gpu_speed * gpus * 3600) * 1e6,
        ep=int(scored.ep[i]),
    )
