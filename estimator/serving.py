"""A serving plan: settle precision, the prompt/output split and concurrency, score every tensor x
pipeline replica on every candidate GPU type, choose one, place its prompts' prefill (in the decode
steps or on a pool apart), and assemble its memory, speed, cost, IO and network report."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gpuplan.estimator import compute, fit, io, memory, network, prefill, saturation, search
from gpuplan.estimator.assemble import architecture_used, compute_estimate, memory_estimate, resolved
from gpuplan.estimator.context import (
    SECONDS_PER_DAY,
    Context,
    candidate_gpus,
    fabric_for,
    stock_warning,
)
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.hardware import is_memory_class
from gpuplan.estimator.memory import GIB
from gpuplan.estimator.schema import (
    ComputeEstimate,
    Estimate,
    IOEstimate,
    MemoryEstimate,
    MigSlice,
    NetworkEstimate,
    Note,
    ServingEstimate,
)
from gpuplan.estimator.serving_alternatives import full_loads, score_replicas, serving_alternatives
from gpuplan.knowledge import GPU, Catalog

MIG_GPUS = ("a100-80gb", "h100-80gb", "h200-141gb")


@dataclass(frozen=True)
class Step:
    """The plan's steps: generated tokens/s per GPU of the replica, seconds per step, of which on the
    network, and the tokens through each step's matmuls."""

    tokens_per_s_gpu: float
    seconds: float
    comm_seconds: float
    tokens: float


@dataclass
class Replica:
    """The chosen deployment: GPU type t (with its region) and replica shape i (tp x pp), the
    sequences it serves, and with prefill apart the two pools."""

    scored: search.ServingScored
    t: int
    i: int
    gpu: GPU
    region: str | None
    objective: str
    precision: str
    batch: int
    load: compute.Served
    pools: prefill.Pools | None = None
    decode: Step | None = None  # disaggregated: the decode pool's steps, generating only
    busy: float = 1.0  # share of the decoding replicas the load keeps busy (fewer sequences than replicas)

    @property
    def seq(self) -> int:
        return self.load.seq

    @property
    def tp(self) -> int:
        return int(self.scored.tp[self.i])

    @property
    def pp(self) -> int:
        return int(self.scored.pp[self.i])

    @property
    def ep(self) -> int:
        return int(self.scored.ep[self.i])

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.ep

    @property
    def tokens_per_s_gpu(self) -> float:
        """Generated tokens/s per GPU of a replica with the prompts' prefill in its steps (the search's)."""
        return float(self.scored.tokens_per_s_gpu[self.t, self.i])

    @property
    def step(self) -> Step:
        """The plan's steps: the decode pool's with prefill apart, else the search's."""
        if self.decode is not None:
            return self.decode
        t, i = self.t, self.i
        seconds, comm = (float(x[t, i]) for x in (self.scored.step_seconds, self.scored.comm_seconds))
        tokens = self.batch * (1 + self.load.prefill_per_output)
        return Step(self.tokens_per_s_gpu, seconds, comm, tokens)

    @property
    def served_per_gpu(self) -> float:
        """Generated tokens/s per GPU of the deployment, a prefill pool's GPUs counted and idle
        replicas' too."""
        return (self.pools.tokens_per_s_per_gpu if self.pools else self.tokens_per_s_gpu) * self.busy


def estimate_serving(ctx: Context, seq: int) -> Estimate:
    precision = _precision(ctx)
    types = _types_for(ctx, precision)
    ctx = _servers_given(ctx, types[0])
    given = ctx.req.gpus
    ctx = _decode_pool(ctx)
    said, base = (len(ctx.assumptions), len(ctx.warnings)), ctx
    batch = _concurrency(ctx, types, precision, seq)
    ctx, replica = _choose_shared(ctx, types, precision, batch, _load(ctx, seq))
    pool = _pool_full_load(base, precision, seq, replica)
    if pool is not None:  # planned again at the pool's full load, the default's notes dropped
        shaped, total, share = pool
        del ctx.assumptions[said[0] :], ctx.warnings[said[1] :]
        if shaped.req.decode_gpus:
            shaped.assume("pool_full_load", batch=total, decode_gpus=shaped.req.decode_gpus)
        else:
            shaped.assume("asked_full_load", batch=total, share=share, seq=seq)
        on_type = [gpu for gpu in types if gpu.id == shaped.req.gpu]  # the type its sequences were counted on
        ctx, replica = _choose_shared(shaped, on_type, precision, total, _load(shaped, seq), first=share)
    gpus = _place_prefill(ctx, replica)
    _within_given(ctx, replica, given)
    _state_choices(ctx, replica, gpus)
    tokens, seconds = _day_or_tokens(ctx, replica, gpus)
    mem, io_plan = _memory_and_io(ctx, replica)
    full = _full_load(ctx, replica)
    return Estimate(
        resolved=_resolved(ctx, replica, gpus, tokens),
        memory=mem,
        compute=_compute(ctx, replica, gpus, tokens, seconds),
        io=io_plan,
        network=_network_report(ctx, replica),
        serving=_serving_report(ctx, replica, mem.per_gpu_gib, full),
        alternatives=serving_alternatives(ctx, replica, full),
        candidates=int(replica.scored.fits.size),
        assumptions=ctx.assumptions,
        warnings=ctx.warnings,
        architecture=architecture_used(ctx.arch),
    )


def _servers_given(ctx: Context, gpu: GPU) -> Context:
    """`nodes=` without a GPU count: that many servers of the type's usual size, the GPUs the plan
    fills, as a training plan reads them ("serve Llama 3 70B on 2 nodes of H100": 16 GPUs); beside a
    decode pool of as many GPUs, the pool's own servers ("a decode pool of 72 H100 on 9 nodes"), its
    prefill pool added; fewer than the pool cannot hold it."""
    req = ctx.req
    if not req.nodes or req.gpus:
        return ctx
    gpus = req.nodes * gpu.gpus_per_node
    if req.decode_gpus and gpus < req.decode_gpus:
        params = {"decode_gpus": req.decode_gpus, "nodes": req.nodes, "gpus": gpus, "gpu": gpu.name}
        raise RequestError([Note(code="decode_gpus_over_nodes", params=params)])
    if gpus == req.decode_gpus:
        return ctx
    return dataclasses.replace(ctx, req=req.model_copy(update={"gpus": gpus}))


def _decode_pool(ctx: Context) -> Context:
    """A decode pool the question gives (`decode_gpus`): its GPUs are the ones the replica search
    fills, as `gpus=` has it fill the question's, and the prompts are prefilled on GPUs apart."""
    req = ctx.req
    if not req.decode_gpus:
        return ctx
    return dataclasses.replace(ctx, req=req.model_copy(update={"gpus": req.decode_gpus, "prefill": "disaggregated"}))


def _within_given(ctx: Context, replica: Replica, given: int | None) -> None:
    """A decode pool and the GPUs in all both given: its prefill pool must fit in what is left."""
    pools = replica.pools
    if ctx.req.decode_gpus and given and pools is not None and pools.gpus > given:
        params = {"decode_gpus": pools.decode_gpus, "prefill_gpus": pools.prefill_gpus, "gpus": given}
        raise RequestError([Note(code="decode_gpus_no_room", params=params)])


def _load(ctx: Context, seq: int) -> compute.Served:
    """Each sequence's prompt and output: as the question splits them, else half and half (said)."""
    load = compute.served(seq, ctx.req.prompt_tokens)
    if ctx.req.prompt_tokens is None:
        ctx.assume("default_prompt_split", prompt=load.prompt, output=load.output)
    return load


def _precision(ctx: Context) -> str:
    """The weights' precision: the request's, else the published checkpoint's, else 16-bit."""
    default = str(ctx.cat.defaults.precision["infer"].value)
    precision = ctx.req.precision or _published_precision(ctx, ctx.gpu) or default
    known = ctx.gpu is not None and not is_memory_class(ctx.gpu)  # a card named by its memory may have bf16
    if precision == "bf16" and known and not ctx.gpu.supports_bf16:
        precision = "fp16"  # V100, T4, Pascal: engines load bf16 checkpoints as fp16 (vLLM's dtype auto), same bytes
    if not ctx.req.precision:
        fp8 = bool(ctx.gpu is None or ctx.gpu.fp8_tflops or ctx.gpu.family.startswith("ampere"))
        ctx.assume("default_serve_precision", precision=precision, fp8=fp8)
    return precision


def _types_for(ctx: Context, precision: str) -> list[GPU]:
    """The GPU types the search may use; FP8 weights need FP8 tensor cores or Ampere's weight-only
    kernels."""
    types = candidate_gpus(ctx, None)
    if precision == "fp8":
        types = [g for g in types if g.fp8_tflops or g.family.startswith("ampere")] or types
    return types


def _concurrency(ctx: Context, types: list[GPU], precision: str, seq: int) -> int:
    """The sequences served at once: the request's, else the default, halved while the GPUs the
    question fixes cannot hold that many ("llama 3.1 8b on an L4": sixteen 4k sequences do not fit
    its 24 GB, eight do), and said."""
    default = int(ctx.cat.defaults.micro_batch["infer"])
    if ctx.req.micro_batch:
        return ctx.req.micro_batch
    batch = default
    if ctx.req.gpus:
        region = _region(ctx)
        while batch > 1 and not score_replicas(ctx, types, region, precision, batch, seq).fits.any():
            batch //= 2
    if batch < default:
        ctx.assume("fitted_concurrency", batch=batch, default=default)
    else:
        ctx.assume("default_concurrency", batch=batch)
    return batch


def _published_precision(ctx: Context, gpu: GPU | None) -> str | None:
    published = ctx.arch.weights_dtype if ctx.arch.weights_dtype != "bf16" else None
    if published == "fp8" and gpu is not None and not (gpu.fp8_tflops or gpu.family.startswith("ampere")):
        return None  # no FP8 kernels (V100, T4): served upcast to 16-bit
    return published


def _choose(ctx: Context, types: list[GPU], precision: str, batch: int, load: compute.Served) -> Replica:
    req, cat = ctx.req, ctx.cat
    region = _region(ctx)
    scored = score_replicas(ctx, types, region, precision, batch, load.seq)
    options = scored.options
    objective = req.objective or "cheapest"
    min_speed = cat.defaults.number("inference", "min_tokens_per_s_per_sequence")
    flat, met, interactive = search.choose_serving(scored, objective, batch, min_speed)
    t, i = divmod(int(flat), scored.fits.shape[1])  # np.unravel_index's (type, shape), without its cost
    replica = Replica(scored, t, i, options.gpus[t], options.regions[t], objective, precision, batch, load)
    if not req.gpu:
        ctx.assume("chosen_gpu", gpu=replica.gpu.name, region=replica.region or "", types=len(types))
    if not interactive:
        speed = replica.tokens_per_s_gpu * replica.gpus / batch
        ctx.warn("slow_serving", speed=speed, minimum=min_speed)
    if not met and scored.fits.any():
        ctx.warn("short_stock", gpus=replica.gpus, gpu=replica.gpu.name, stock=int(options.stock[t, 0]))
    return replica


def _region(ctx: Context) -> str | None:
    """The region the user named, else one that serves the users' area (the guide's mapping)."""
    if ctx.req.region or not ctx.req.users:
        return ctx.req.region
    near = [r.id for r in ctx.cat.regions.values() if ctx.req.users in r.serves]
    if near:
        ctx.assume("region_for_users", region=near[0], users=ctx.req.users)
        return near[0]
    return None


class _Choice(NamedTuple):
    """One choice of a replica: the request it was chosen under, the replica, how many of its kind
    decode on the GPUs given, and the (assumptions, warnings) the choice said."""

    ctx: Context
    replica: Replica
    decoding: int
    notes: tuple[list[Note], list[Note]]


def _choose_shared(
    ctx: Context, types: list[GPU], precision: str, total: int, load: compute.Served, first: int | None = None
) -> tuple[Context, Replica]:
    """The replica for the deployment's sequences at once (`total`: the question's users, mbs= or the
    default), which the replicas decoding on the GPUs given share. The shape is chosen for them all
    (or for `first`, a share known) first, then for the share of each were every GPU given decoding,
    that share raised while fewer replicas decode it (a prefill pool takes GPUs, a larger shape
    fits): the lightest share whose replicas serve them all, the notes of that choice kept."""
    said = len(ctx.assumptions), len(ctx.warnings)

    def choose(batch: int) -> _Choice:
        del ctx.assumptions[said[0] :], ctx.warnings[said[1] :]
        chosen, replica = _choose_placed(ctx, types, precision, batch, load)
        notes = ctx.assumptions[said[0] :], ctx.warnings[said[1] :]
        return _Choice(chosen, replica, _decoding_replicas(chosen, replica), notes)

    pick = heavy = choose(first or total)
    batch = -(-total // max(1, (ctx.req.gpus or 0) // heavy.replica.gpus))  # every GPU given decoding
    for _ in range(4):
        if batch >= heavy.replica.batch:
            break
        lighter = choose(batch)
        if batch * lighter.decoding >= total:
            pick = lighter
            break
        batch = -(-total // lighter.decoding)
    del ctx.assumptions[said[0] :], ctx.warnings[said[1] :]
    ctx.assumptions.extend(pick.notes[0]), ctx.warnings.extend(pick.notes[1])
    # fewer sequences than replicas of one each ("10 users on 64 H100"): the rest wait idle, paid for
    pick.replica.busy = min(1.0, -(-total // pick.replica.batch) / pick.decoding)
    return pick.ctx, pick.replica


def _decoding_replicas(ctx: Context, replica: Replica) -> int:
    """The replicas that decode on the GPUs the question gives: all of them, or with the prompts
    prefilled apart (_prefill_apart) the decode pool's; one where it gives none."""
    if not ctx.req.gpus:
        return 1
    pools, _, apart = _prefill_apart(ctx, replica)
    return max(1, (pools.decode_gpus if apart else ctx.req.gpus) // replica.gpus)


def _pool_full_load(ctx: Context, precision: str, seq: int, replica: Replica) -> tuple[Context, int, int] | None:
    """A decode pool given without the sequences at once is planned near its full load, what a pool
    is for, and so is a deployment asked how many it serves at once (`full_load`, on the GPUs given
    or the chosen replica's): the shape that generates most per GPU at saturation (saturation.py),
    fixed, and as many sequences of the full length as each of the pool's replicas of it holds with
    the usual headroom; (the request with that shape, the sequences in all, a replica's). None where
    the question gives them."""
    pool = ctx.req.decode_gpus or (ctx.req.full_load and (ctx.req.gpus or replica.gpus))
    if not pool or ctx.req.micro_batch:
        return None
    loads = full_loads(ctx, replica, own=True)
    if not loads:
        return None
    i, best = max(loads.items(), key=lambda load: load[1].tokens_per_s_per_gpu)
    scored = replica.scored
    # the GPU type too: the sequences that fit were counted on it
    shape = {"tp": int(scored.tp[i]), "pp": int(scored.pp[i]), "ep": int(scored.ep[i]), "gpu": replica.gpu.id}
    shaped = dataclasses.replace(ctx, req=ctx.req.model_copy(update=shape))
    share = _most_that_fit(shaped, replica.gpu, precision, best.concurrency, seq)
    return shaped, share * max(1, pool // int(scored.replica[i])), share


def _most_that_fit(ctx: Context, gpu: GPU, precision: str, most: int, seq: int) -> int:
    """The most sequences of `seq` tokens, at most `most`, that a replica of the request's shape holds
    on `gpu` with the headroom a plan keeps (fit.tight: not at the last gigabyte); bisection over
    the serving search's fit."""
    d = ctx.cat.defaults
    roomy = d.number("overhead", "tight_fraction") * fit.usable(gpu.memory_gib * GIB, d, serving=True)
    low, high = 1, most
    while low < high:
        mid = (low + high + 1) // 2
        scored = score_replicas(ctx, [gpu], _region(ctx), precision, mid, seq)
        if (scored.deliverable & (np.broadcast_to(scored.per_gpu, scored.fits.shape) <= roomy)).any():
            low = mid
        else:
            high = mid - 1
    return low


def _choose_placed(
    ctx: Context, types: list[GPU], precision: str, batch: int, load: compute.Served
) -> tuple[Context, Replica]:
    """The replica, chosen for steps that only decode when the question puts the prefill on GPUs
    apart. When the GPUs it fixes leave no room for a prefill pool beside that replica, the steps
    prefill too: the replica is chosen again for such steps, under the request as it is now served
    (the first choice's notes dropped, the reason said once)."""
    said = len(ctx.assumptions), len(ctx.warnings)
    replica = _choose(ctx, types, precision, batch, load)
    if ctx.req.prefill != "disaggregated" or _disaggregated(ctx, replica)[0] is not None:
        return ctx, replica
    del ctx.assumptions[said[0] :], ctx.warnings[said[1] :]
    ctx.warn("disaggregated_no_room", gpus=ctx.req.gpus or replica.gpus, replica=replica.gpus)
    chunked = dataclasses.replace(ctx, req=ctx.req.model_copy(update={"prefill": "chunked"}))
    return chunked, _choose(chunked, types, precision, batch, load)


def _place_prefill(ctx: Context, replica: Replica) -> int:
    """Where the prompts are prefilled, and the GPUs in all: as the question says, else on a pool
    apart when that generates more per GPU of the deployment (the same GPUs: cheaper per generated
    token), else in the decode steps; said either way."""
    asked = ctx.req.prefill
    pools, decode, apart = _prefill_apart(ctx, replica)
    chunked = replica.tokens_per_s_gpu
    if apart:
        replica.load = dataclasses.replace(replica.load, chunked=False)
        replica.pools, replica.decode = pools, decode
        ctx.assume(
            "prefill_disaggregated",
            prefill_gpus=pools.prefill_gpus,
            decode_gpus=pools.decode_gpus,
            prompt_rate=pools.prompt_tokens_per_s_per_gpu,
            per_gpu=pools.tokens_per_s_per_gpu,
            chunked=chunked,
            asked=asked == "disaggregated",
            pool=bool(ctx.req.decode_gpus),
            decode_rate=pools.decode_tokens_per_s_per_gpu,
        )
        return pools.gpus
    share = 1.0 - decode.seconds / replica.step.seconds if decode else 0.0
    apart = pools.tokens_per_s_per_gpu if pools else None
    ctx.assume("prefill_chunked", prompt=replica.load.prompt, share=share, apart=apart, chunked=chunked)
    return ctx.req.gpus or replica.gpus


def _prefill_apart(ctx: Context, replica: Replica) -> tuple[prefill.Pools | None, Step | None, bool]:
    """The pools and decode steps of the replica's shape with the prompts prefilled apart
    (_disaggregated), and whether they are: as the question says, else when that generates more per
    GPU of the deployment than prefilling in the decode steps."""
    pools, decode = _disaggregated(ctx, replica)
    asked = ctx.req.prefill
    better = pools is not None and pools.tokens_per_s_per_gpu > replica.tokens_per_s_gpu
    return pools, decode, pools is not None and (asked == "disaggregated" or (asked is None and better))


def _disaggregated(ctx: Context, replica: Replica) -> tuple[prefill.Pools | None, Step | None]:
    """The replica's shape as a decode pool generating only, at the plan's concurrency, with the
    prefill instances of the same shape that keep up with it (none when the GPUs the question fixes
    hold no decode replica beside its prefill; beside a decode pool it gives, its replicas), and the
    decode pool's steps."""
    a, gpu, load = ctx.arch, replica.gpu, dataclasses.replace(replica.load, chunked=False)
    tp, pp, ep = replica.tp, replica.pp, replica.ep
    links = network.decode_links([gpu], ctx.cat, ctx.req.fabric)
    comm = network.decode_comm_seconds(a, replica.batch, tp, pp, links, ep)
    speed = compute.decode_speed(
        a, gpu, replica.precision, seq_len=load.seq, batch=replica.batch, tp=tp, pp=pp,
        defaults=ctx.cat.defaults, comm_seconds=comm, prompt=load.prompt, chunked=False, ep=ep,
        kv_cache=ctx.req.kv_cache,
    )  # fmt: skip
    per_gpu = float(speed.tokens_per_s_per_gpu.ravel()[0])
    decode = Step(per_gpu, float(speed.step_seconds.ravel()[0]), float(np.ravel(comm)[0]), float(replica.batch))
    dev = compute.serving_device([gpu], replica.precision, ctx.cat)
    step_tokens = ctx.number("inference", "prefill_chunk_tokens")
    rate = prefill.prompt_tokens_per_s_per_gpu(
        a, replica.precision, load, tp=tp, pp=pp, ep=ep, dev=dev, links=links, step_tokens=step_tokens
    )
    rate = float(np.ravel(rate)[0])
    share = float(np.ravel(prefill.prefill_share(per_gpu, load, rate))[0])
    return prefill.size_pools(per_gpu, rate, share, replica.gpus, ctx.req.gpus, ctx.req.decode_gpus), decode


def _state_choices(ctx: Context, replica: Replica, gpus: int) -> None:
    req = ctx.req
    nodes = math.ceil(replica.ep / replica.gpu.nvlink_gpus)
    if replica.ep > 1 and not req.ep:
        ctx.assume("serving_expert_parallel", ep=replica.ep, experts=ctx.arch.experts // replica.ep, nodes=nodes)
    elif nodes > 1:  # wide EP the user asked for: the all-to-all over the fabric
        ctx.assume("serving_expert_parallel_nodes", ep=replica.ep, nodes=nodes, fabric=fabric_for(ctx, replica.gpu))
    elif replica.ep == 1 and not (req.gpus or req.tp or req.pp):
        ctx.assume("serving_layout", tp=replica.tp, pp=replica.pp)
    if replica.ep > 1 and replica.load.chunked and replica.decode is None:  # prompts in the decode steps
        factor = float(compute.inflight_data_parallel(ctx.arch, replica.ep, replica.load))
        ctx.assume("attention_dp_inflight", factor=factor)
    if replica.precision in ("int8", "int4", "fp8"):
        ctx.assume("quantized_ends", precision=replica.precision)
    if req.gpus or replica.pools:
        stock_warning(ctx, replica.gpu, gpus, replica.region)


def _day_or_tokens(ctx: Context, replica: Replica, gpus: int) -> tuple[float, float]:
    """(tokens, seconds): the tokens asked for and the time they take, else a day at full speed."""
    if ctx.req.train_tokens:
        return ctx.req.train_tokens, ctx.req.train_tokens / (replica.served_per_gpu * gpus)
    ctx.assume("serving_day")
    return replica.served_per_gpu * gpus * SECONDS_PER_DAY, SECONDS_PER_DAY


def _memory_and_io(ctx: Context, replica: Replica) -> tuple[MemoryEstimate, IOEstimate]:
    scored, i, gpu = replica.scored, replica.i, replica.gpu
    price = float(scored.options.price[replica.t, 0])
    ctx.assume("price_default", gpu=gpu.name, price=price, region=replica.region or "")
    breakdown = {k: float(scored.parts[k][i]) / GIB for k in memory.BREAKDOWN_KEYS}
    io_plan = io.serving_io(ctx.cat, ctx.arch, replica.precision, replica.gpus, gpu.gpus_per_node)
    per_gpu_gib = float(scored.per_gpu[i]) / GIB
    mem = memory_estimate(breakdown, per_gpu_gib, gpu, io_plan.host_ram_gib, 0.0, ctx.cat.defaults, serving=True)
    if not mem.fits:
        ctx.warn(
            "does_not_fit_engine",
            gpu=gpu.name,
            capacity=gpu.memory_gib,
            limit=mem.usable_gib,
            per_gpu=mem.per_gpu_gib,
            fraction=fit.usable_share(ctx.cat.defaults, serving=True),
            needed=mem.per_gpu_gib / gpu.memory_gib,
        )
    return mem, io_plan


def _compute(ctx: Context, replica: Replica, gpus: int, tokens: float, seconds: float) -> ComputeEstimate:
    gpu, speed = replica.gpu, replica.served_per_gpu
    price = float(replica.scored.options.price[replica.t, 0])
    flops = compute.token_flops(ctx.arch, "infer", replica.seq)
    return compute_estimate(
        tokens=tokens,
        flops_per_token=flops.model,
        mfu=speed * flops.model / (gpu.peak_16bit_tflops * 1e12),
        tokens_per_s_per_gpu=speed,
        step_time_s=replica.step.seconds,
        seconds=seconds,
        gpus=gpus,
        price=price,
        cost_per_million_tokens_usd=price / (speed * 3600) * 1e6,
    )


def _resolved(ctx: Context, replica: Replica, gpus: int, tokens: float):
    gpu = replica.gpu
    replicas = max(1, (replica.pools.decode_gpus if replica.pools else gpus) // replica.gpus)  # decoding
    return resolved(
        ctx,
        method="infer",
        seq_len=replica.seq,
        prompt_tokens=replica.load.prompt,
        prefill="chunked" if replica.load.chunked else "disaggregated",
        micro_batch=replica.batch,
        global_batch=replica.batch * max(1, round(replicas * replica.busy)),  # the sequences the busy replicas serve
        train_tokens=tokens,
        precision=replica.precision,
        kv_cache=ctx.req.kv_cache or ("fp8" if replica.precision == "fp8" else "bf16"),
        optimizer="adamw",
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=gpus,
        nodes=max(1, math.ceil(gpus / gpu.gpus_per_node)),
        zero=0,
        offload="none",
        tp=replica.tp,
        pp=replica.pp,
        ep=replica.ep,
        dp=replicas,
        ckpt="none",
        lora_rank=None,
        region=replica.region,
        objective=replica.objective,
        fabric=None,
    )


def _serving_report(
    ctx: Context, replica: Replica, per_gpu_gib: float, full: saturation.Saturation | None
) -> ServingEstimate:
    """The KV cache, weights and speed of one replica; a MIG slice when one replica needs less than a GPU."""
    arch, pools = ctx.arch, replica.pools
    ceiling = replica.step.tokens_per_s_gpu * replica.gpus
    kv_bytes = memory.kv_bytes_per_token(arch, replica.precision, ctx.req.kv_cache)
    return ServingEstimate(
        kv_bytes_per_token=kv_bytes,
        # the replica's cache and weights as data, whatever copies the layout keeps
        kv_cache_gib=kv_bytes * replica.batch * replica.seq / GIB,
        weights_gib=float(memory.serving_weight_bytes(arch, replica.precision)) / GIB,
        concurrency=replica.batch,
        context=replica.seq,
        replica_gpus=replica.gpus,
        tokens_per_s_ceiling=ceiling,
        tokens_per_s_per_sequence=ceiling / replica.batch,
        max_concurrency=full.concurrency if full else None,
        max_tokens_per_s_per_gpu=full.tokens_per_s_per_gpu if full else None,
        max_tokens_per_s_per_sequence=full.tokens_per_s_per_sequence if full else None,
        max_capped=bool(full and full.capped),
        prompt_tokens=replica.load.prompt,
        prefill="chunked" if pools is None else "disaggregated",
        decode_gpus=pools.decode_gpus if pools else None,
        prefill_gpus=pools.prefill_gpus if pools else 0,
        prefill_tokens_per_s_per_gpu=pools.prompt_tokens_per_s_per_gpu if pools else None,
        decode_tokens_per_s_per_gpu=pools.decode_tokens_per_s_per_gpu if pools else None,
        mig=_mig_fit(ctx.cat, replica.gpu, per_gpu_gib) if replica.gpus == 1 else None,
        region=replica.region,
        users=ctx.req.users,
    )


def _full_load(ctx: Context, replica: Replica) -> saturation.Saturation | None:
    """The replica's saturation point: the KV-cache budget its engine leaves, filled."""
    gpu = replica.gpu
    full = saturation.of_shape(
        ctx.arch,
        replica.precision,
        replica.scored,
        replica.i,
        seq=replica.seq,
        gpu=gpu,
        links=network.decode_links([gpu], ctx.cat, ctx.req.fabric),
        defaults=ctx.cat.defaults,
        kv_cache=ctx.req.kv_cache,
        prompt=replica.load.prompt,
        chunked=replica.load.chunked,
    )
    if full is not None:
        fraction = fit.usable_share(ctx.cat.defaults, serving=True)
        ctx.assume("full_load", fraction=fraction, prompt=replica.load.prompt, output=replica.load.output)
        if ctx.arch.is_moe:  # with expert parallelism inside one server, what its calibration rows measured
            one_server = replica.ep > 1 and replica.ep <= gpu.nvlink_gpus
            ctx.warn("moe_full_load", in_server_ep=int(replica.ep) if one_server else 0)
    return full


def _network_report(ctx: Context, replica: Replica) -> NetworkEstimate:
    """Bytes per step and the share of the step spent on them: the communication seconds the plan's
    steps were timed with (network.decode_comm_seconds over the step's tokens), not a second
    computation of them."""
    gpu, tp, pp, step = replica.gpu, replica.tp, replica.pp, replica.step
    allreduces, per_allreduce, hop = network.decode_collectives(ctx.arch, step.tokens, tp, pp)
    # per GPU: its share of the all-reduces, and one hop per boundary spread over the stages
    tp_bytes, pp_bytes = float(allreduces * per_allreduce), (pp - 1) * hop / pp
    links = network.decode_links([gpu], ctx.cat, ctx.req.fabric)
    gathered = network.expert_collectives_gathered(replica.ep, links)
    ep_bytes = float(network.expert_all_to_all_bytes(ctx.arch, step.tokens, replica.ep, gathered).ravel()[0])
    ep_across = ep_bytes * float(network.expert_across_share(replica.ep, gpu.nvlink_gpus))  # wide EP
    by_dimension = {"tp": tp_bytes / 1e9, "pp": pp_bytes / 1e9}
    if replica.ep > 1:
        by_dimension["ep"] = ep_bytes / 1e9
    return NetworkEstimate(
        per_step_gb=(tp_bytes + pp_bytes + ep_bytes) / 1e9,
        between_nodes_gb=((pp_bytes if pp > 1 else 0.0) + ep_across) / 1e9,  # a pipeline's stages are whole nodes
        fabric=fabric_for(ctx, gpu) if pp > 1 or ep_across else gpu.link,
        single_node=pp == 1 and not ep_across,
        comm_fraction=step.comm_seconds / step.seconds if step.seconds > 0 else 0.0,  # the step includes it
        by_dimension_gb=by_dimension,
    )


def _mig_fit(cat: Catalog, gpu: GPU, need_gib: float) -> MigSlice | None:
    """The smallest MIG slice that holds one replica within the engine's share of the slice: on the
    chosen GPU, else on A100/H100/H200."""
    for candidate in [gpu, *(cat.gpus[g] for g in MIG_GPUS if g != gpu.id)]:
        fitting = [p for p in candidate.mig_profiles if fit.fits(need_gib, p.memory_gib, cat.defaults, serving=True)]
        if fitting:
            p = min(fitting, key=lambda p: (p.memory_gib, -p.count))
            if p.count > 1 or candidate.id != gpu.id:
                return MigSlice(
                    gpu=candidate.id, gpu_name=candidate.name, profile=p.name, memory_gib=p.memory_gib, per_gpu=p.count
                )
            return None
    return None
