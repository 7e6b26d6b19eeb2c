"""A training plan: settle the job (defaults stated as assumptions), score every layout on every
candidate GPU type, choose one, and assemble its memory, time, cost, IO and network report."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from gpuplan.estimator import compute, conventions, fit, io, kernels, memo, memory, network, reliability, search
from gpuplan.estimator.assemble import architecture_used, compute_estimate, memory_estimate, resolved
from gpuplan.estimator.context import Context, candidate_gpus, fabric_for, no_layout, overheads, stock_warning
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.memory import CKPT_CODE, GIB, Job
from gpuplan.estimator.schema import (
    ADAPTER_METHODS,
    CKPTS,
    OFFLOADS,
    Alternative,
    Estimate,
    IOEstimate,
    MemoryEstimate,
    NetworkEstimate,
)
from gpuplan.knowledge import GPU, Catalog

PRETRAINING = ("pretrain", "continue")


@dataclass
class Pick:
    """The chosen candidate: GPU type t (with its region) and layout i of the scored grid."""

    scored: search.Scored
    t: int
    i: int
    gpu: GPU
    region: str | None
    objective: str
    alternatives: list[tuple[str, int]]

    def at(self, values: np.ndarray) -> float:
        """A per-candidate figure (types x layouts, or broadcast to it) at the chosen candidate."""
        return at_candidate(values, self.t, self.i)


def _dp(grid: search.Grid, i: int) -> float:
    """grid.dp() at layout i, without a pass over every layout."""
    return grid.gpus[i] / (grid.tp[i] * grid.pp[i] * grid.cp[i])


def at_candidate(values, t: int, i: int) -> float:
    """A figure per candidate (types x layouts) or broadcast to it (per layout, per type, one for
    all) at type t and layout i, indexed where it varies, without broadcasting."""
    values = values if isinstance(values, np.ndarray) else np.asarray(values)
    if values.ndim == 0:
        return float(values)
    if values.ndim == 1:
        return float(values[0 if values.shape[0] == 1 else i])
    rows, columns = values.shape
    return float(values[0 if rows == 1 else t, 0 if columns == 1 else i])


def estimate_training(ctx: Context, seq: int) -> Estimate:
    job, gbs, tokens = _job(ctx, seq)
    types = candidate_gpus(ctx, ctx.req.precision)
    fixed = _fixed_layout(ctx, types[0].gpus_per_node)
    scored = _score(ctx, job, fixed, types, gbs, tokens)
    pick = _choose(ctx, scored, fixed)
    zero, parts = _reported_zero(ctx, job, pick, gbs)
    precision = _precision(ctx, pick.gpu)
    gbs_used = _state_choices(ctx, pick, fixed, zero, gbs, len(types))
    _state_speed(ctx, pick, precision, job, zero)
    mem, io_plan = _memory_and_io(ctx, job, pick, parts, precision, tokens)
    if not mem.fits:
        _suggest_fixes(ctx, job, fixed, pick.gpu, gbs, mem.per_gpu_gib)
    net = _network_report(ctx, pick)
    return Estimate(
        resolved=_resolved(ctx, job, pick, zero, precision, gbs_used, tokens, net),
        memory=mem,
        compute=_compute(ctx, job, pick, tokens, io_plan),
        io=io_plan,
        network=net,
        alternatives=[_alternative(scored, reason, j) for reason, j in pick.alternatives],
        candidates=scored.candidates,
        assumptions=ctx.assumptions,
        warnings=ctx.warnings,
        architecture=architecture_used(ctx.arch),
    )


# --- the job ------------------------------------------------------------------------------


def _job(ctx: Context, seq: int) -> tuple[Job, int, float]:
    """The job to size (its optimizer, LoRA rank and precision), the global batch and the tokens."""
    req, d, method = ctx.req, ctx.cat.defaults, ctx.method
    optimizer = req.optimizer or str(d.optimizer["qlora" if method == "qlora" else "default"].value)
    if not req.optimizer:
        ctx.assume("default_optimizer", optimizer=optimizer)
    lora_rank = req.lora_rank or int(d.lora["rank"].value)
    targets = str(d.lora["targets"].value)
    if method in ADAPTER_METHODS and not req.lora_rank:
        ctx.assume("default_lora", rank=lora_rank, targets=targets)
    if method in ADAPTER_METHODS and ctx.arch.is_moe:
        ctx.assume("adapters_skip_routed_experts", experts=ctx.arch.experts)
    tokens = _train_tokens(ctx, seq)
    gbs = _global_batch(ctx, seq, tokens)
    # precision None: bf16-mixed, or fp16-mixed on GPUs without bf16 (decided per type)
    job = Job(ctx.arch, method, req.precision or "bf16-mixed", optimizer, seq, lora_rank, targets, **_habits(ctx))
    return job, gbs, tokens


def _habits(ctx: Context) -> dict:
    """The Job's framework habits: those of the framework the request names (knowledge/frameworks.yaml),
    the layout's defaults for the rest; a loss the request sets (loss=) comes before its framework's."""
    framework = ctx.cat.frameworks.get(ctx.req.framework or "")
    names = ("loss", "fsdp_ends", "keeps_logits", "megatron_core", "pp_unsharded")
    habit = {k: getattr(framework, k, None) for k in names}
    return {
        "loss": ctx.req.loss or (str(habit["loss"].value) if habit["loss"] else "chunked"),
        "fsdp_ends": str(habit["fsdp_ends"].value) if habit["fsdp_ends"] else "root",
        "keeps_logits": bool(habit["keeps_logits"] and habit["keeps_logits"].value),
        "megatron_core": bool(habit["megatron_core"] and habit["megatron_core"].value),
        "pp_unsharded": bool(habit["pp_unsharded"] and habit["pp_unsharded"].value),
        "ep_overlap": ctx.req.ep_overlap is not False,
    }


def _global_batch(ctx: Context, seq: int, tokens: float) -> int:
    if ctx.req.global_batch:
        return ctx.req.global_batch
    d = ctx.cat.defaults
    if ctx.method in PRETRAINING:
        # the compute-optimal batch of DeepSeek LLM's scaling law (arXiv:2401.02954, Sec. 3.1):
        # B = 0.292 C^0.3271 tokens for C = 6 N D training FLOPs
        law = d.pretrain_batch_law
        flops = 6.0 * ctx.arch.active_params * tokens
        sequences = float(law["coefficient"].value) * flops ** float(law["exponent"].value) / seq
        # on a large cluster, at least one sequence per 8 GPUs (Llama 3 405B: 2,048 sequences on 16,384 H100)
        gpus = ctx.req.gpus or (ctx.req.nodes or 0) * (ctx.gpu.gpus_per_node if ctx.gpu else 8)
        gbs = _divisible(max(sequences, gpus / 8))
    else:
        gbs = int(d.global_batch_tokens["finetune_sequences"])
    ctx.assume("default_global_batch", global_batch=gbs, tokens=gbs * seq)
    return gbs


# batches of 2^k or 3 x 2^k sequences split evenly over the GPU counts the search tries
DIVISIBLE_BATCHES = tuple(sorted({2**k for k in range(25)} | {3 * 2**k for k in range(24)}))


def _divisible(sequences: float) -> int:
    """The nearest batch of 2^k or 3 x 2^k sequences (1,024, 1,536, 2,048, ...), as published batches are:
    in log distance the nearest is one of the two batches either side of `sequences`."""
    wanted = max(sequences, 1.0)
    at = bisect.bisect_left(DIVISIBLE_BATCHES, wanted)
    return min(DIVISIBLE_BATCHES[max(at - 1, 0) : at + 1], key=lambda n: (abs(math.log(n / wanted)), n))


def _train_tokens(ctx: Context, seq: int) -> float:
    req, d = ctx.req, ctx.cat.defaults
    if req.train_tokens:
        return req.train_tokens
    if req.samples:
        epochs = req.epochs or (1.0 if ctx.method in PRETRAINING else 3.0)
        per_sample = min(req.sample_tokens or seq, seq)  # longer samples are cut to the sequence length
        tokens = req.samples * per_sample * epochs
        ctx.assume(
            "tokens_from_samples",
            samples=req.samples,
            seq=per_sample,
            epochs=epochs,
            tokens=tokens,
            epochs_default=req.epochs is None,
            average=req.sample_tokens is not None,
        )
        return tokens
    if req.dataset_gb:
        epochs = req.epochs or 1.0
        tokens = req.dataset_gb * 1e9 / 4 * epochs  # ~4 bytes of raw English text per BPE token
        ctx.assume("tokens_from_dataset", dataset_gb=req.dataset_gb, tokens=tokens, epochs=epochs)
        return tokens
    if ctx.method == "pretrain":
        ratio = float(d.train_tokens["pretrain_tokens_per_param"])
        tokens = ratio * ctx.arch.params
        ctx.assume("tokens_chinchilla", tokens=tokens, ratio=ratio)
        return tokens
    tokens = float(d.train_tokens[ctx.method]) * (req.epochs or 1.0)
    ctx.assume("tokens_default", tokens=tokens, method=ctx.method)
    return tokens


def _fixed_layout(ctx: Context, per_node: int) -> search.Fixed:
    """What the user fixed of the layout. Checkpointing left open is the search's choice also with
    tp/pp given: since selective recomputation with sequence parallelism (Korthikanti et al. 2022)
    Megatron runs recompute every layer only when memory demands it."""
    req = ctx.req
    return search.Fixed(
        gpus=req.gpus or (req.nodes * per_node if req.nodes else None),
        tp=req.tp,
        pp=req.pp,
        zero=req.zero,
        offload=req.offload,
        ckpt=CKPT_CODE[req.ckpt] if req.ckpt else None,
        micro_batch=req.micro_batch,
        ep=req.ep,
        cp=req.cp,
        etp=req.etp,
        vpp=req.vpp,
    )


# --- scoring and choosing ---------------------------------------------------------------------


def _score(ctx: Context, job: Job, fixed: search.Fixed, types: list[GPU], gbs: int, tokens: float) -> search.Scored:
    cat = ctx.cat
    max_gpus = int(ctx.number("limits", "max_gpus"))
    if fixed.gpus is None:  # never consider more GPUs than any candidate type has in stock
        max_gpus = min(max_gpus, max(cat.stock(g.id, ctx.req.region)[0] for g in types))
    per_node = types[0].gpus_per_node
    grid = search.training_grid(job.arch, job.method, fixed, gbs, per_node, max(per_node, max_gpus), job.seq_len)
    if grid.size == 0:
        raise RequestError([no_layout(ctx.req, gbs)])
    options = search.gpu_options(cat, types, ctx.req.region, job.precision if ctx.req.precision else None)
    fabrics = [fabric_for(ctx, g) for g in types]
    hw = _hardware(cat, types, fabrics, job.method, job.precision, recipe_speed(ctx), pytorch_sdpa(ctx))
    return search.score_training(
        job,
        grid,
        options,
        hw,
        gbs=gbs,
        tokens=tokens,
        over=overheads(cat),
        cat=cat,
        mfu=ctx.req.mfu,
        explicit_gpus=bool(fixed.gpus),
    )


# the GPU types' figures for a method and precision, by the catalog and GPU objects (identity) and fabrics
_HARDWARE = memo.ShapeCache(256)


def recipe_speed(ctx: Context) -> float:
    """The step rate of the named framework's published performance recipes over a generic stack's
    (knowledge/frameworks.yaml recipe_speed), 1 when none is named or it publishes none."""
    framework = ctx.cat.frameworks.get(ctx.req.framework or "")
    return float(framework.recipe_speed.value) if framework and framework.recipe_speed else 1.0


def pytorch_sdpa(ctx: Context) -> bool:
    """Whether the named framework runs attention through PyTorch's SDPA (knowledge/frameworks.yaml
    attention), whose kernel kernels.yaml times apart where it differs (sdpa_attention)."""
    framework = ctx.cat.frameworks.get(ctx.req.framework or "")
    return bool(framework and framework.attention and framework.attention.value == "pytorch_sdpa")


def _hardware(
    cat: Catalog,
    types: list[GPU],
    fabric_ids: list[str],
    method: str,
    precision: str,
    speed: float = 1.0,
    sdpa: bool = False,
) -> compute.Hardware:
    """compute.hardware_for the types on their fabrics (read-only, shared: the entry keeps the
    catalog and GPU objects alive, so their ids stay theirs)."""

    def read() -> compute.Hardware:
        links = network.links_for_types(types, [cat.fabrics[f] for f in fabric_ids], cat.collective_efficiency)
        hw = compute.hardware_for(types, method, precision, cat, links, speed, sdpa)
        for x in (hw.peak, *vars(links).values()):
            if isinstance(x, np.ndarray):
                x.setflags(write=False)
        return hw

    key = (id(cat), *map(id, types), *fabric_ids, method, precision, speed, sdpa)
    return _HARDWARE.get(key, (cat, *types), read)


def _choose(ctx: Context, scored: search.Scored, fixed: search.Fixed) -> Pick:
    """The objective's best candidate within the deadline and budget; a pretraining run with open
    GPUs aims at the guide's target duration."""
    req = ctx.req
    deadline = req.deadline_days
    if deadline is None and ctx.method in PRETRAINING and fixed.gpus is None:
        deadline = ctx.number("limits", "pretrain_target_days")
        ctx.assume("pretrain_target", days=deadline)
    objective = req.objective or "cheapest"
    choice = search.choose(scored, objective, deadline, req.budget_usd, offload_fixed=fixed.offload is not None)
    t, i = divmod(int(choice.index), scored.fits.shape[1])  # np.unravel_index's (type, layout), without its cost
    for code, params in choice.shortfalls:
        if code == "deadline":  # the user's deadline, or the target a pretraining run is sized to
            params = {**params, "given": req.deadline_days is not None}
        ctx.warn(f"short_{code}", **params)
    gpu, region = scored.options.gpus[t], scored.options.regions[t]
    return Pick(scored, t, i, gpu, region, objective, choice.alternatives)


def _reported_zero(ctx: Context, job: Job, pick: Pick, gbs: int) -> tuple[int, dict[str, float]]:
    """The simplest ZeRO stage that fits (stages 0-2 take the same time and cost) and its memory."""
    grid, i = pick.scored.grid, pick.i
    if ctx.req.zero is None:  # a lower stage comes with its memory, as simplest_zero found it
        capacity = pick.gpu.memory_gib * GIB
        zero, parts = search.simplest_zero(job, grid, i, gbs, overheads(ctx.cat), capacity, ctx.cat.defaults)
        if parts is not None:
            return zero, parts
    return int(grid.zero[i]), {k: float(v[i]) for k, v in pick.scored.parts.items()}


def _precision(ctx: Context, gpu: GPU) -> str:
    if ctx.req.precision:
        return ctx.req.precision
    precision = "bf16-mixed" if gpu.supports_bf16 else "fp16-mixed"
    ctx.assume("default_precision", precision=precision)
    return precision


def _state_choices(ctx: Context, pick: Pick, fixed: search.Fixed, zero: int, gbs: int, types: int) -> int:
    """Say what was chosen for the user; returns the global batch the layout really runs."""
    req, grid, i = ctx.req, pick.scored.grid, pick.i
    if not req.gpu:
        ctx.assume("chosen_gpu", gpu=pick.gpu.name, region=pick.region or "", types=types)
    given = {
        "gpus": fixed.gpus,
        "tp": req.tp,
        "zero": req.zero is not None,
        "ckpt": fixed.ckpt is not None,
        "micro_batch": req.micro_batch,
    }
    open_fields = [name for name, value in given.items() if not value]
    if open_fields:
        ctx.assume(
            "chosen_layout",
            gpus=int(grid.gpus[i]),
            tp=int(grid.tp[i]),
            pp=int(grid.pp[i]),
            vpp=int(grid.vpp[i]),
            ep=int(grid.ep[i]),
            cp=int(grid.cp[i]),
            zero=zero,
            ckpt=CKPTS[int(grid.ckpt[i])],
            micro_batch=int(grid.micro_batch[i]),
            fields=open_fields,
            objective=pick.objective,
            fits=bool(pick.scored.fits[pick.t, i]),
        )
    if pick.scored.explicit_gpus:
        stock_warning(ctx, pick.gpu, int(grid.gpus[i]), req.region)
    gbs_used = int(float(pick.scored.micro_batches[i]) * _dp(grid, i) * grid.micro_batch[i])
    if gbs_used != gbs:
        ctx.warn("global_batch_rounded", asked=gbs, used=gbs_used)
    return gbs_used


def _state_speed(ctx: Context, pick: Pick, precision: str, job: Job, zero: int) -> None:
    """The utilisation, goodput and price the time and cost rest on, and the framework habits the
    memory follows (with what an unchunked loss would add, or holds when asked for)."""
    gpu = pick.gpu
    if ctx.req.mfu is None:
        gemm = compute.sustained_matmul_flops(gpu, precision, ctx.cat) / kernels.matmul_peak(gpu, precision)[0]
        ctx.assume("mfu_model", mfu=pick.at(pick.scored.step.mfu), gemm=gemm, family=gpu.family)
        speed = recipe_speed(ctx)
        if speed != 1.0:  # the framework's tuned recipes set the pace: said with their name
            ctx.assume("recipe_speed", framework=ctx.cat.frameworks[str(ctx.req.framework)].name, speed=speed)
        _state_sdpa(ctx, gpu)
    grid, i = pick.scored.grid, pick.i
    if conventions.megatron_layout(grid.tp[i], grid.pp[i], grid.ep[i], grid.cp[i]):
        ctx.assume("megatron_conventions")
    if ctx.req.mfu is None and grid.ep[i] > 1:
        _state_experts(ctx, pick, precision, job.ep_overlap)
    scheduled = ctx.req.mfu is None and (grid.tp[i] > 1 or grid.pp[i] > 1)
    if scheduled:
        _state_schedule(ctx, pick)
    stated = ctx.req.framework in ctx.cat.frameworks and _state_framework(ctx, job, pick, zero)
    if not stated and not scheduled:
        _state_loss(ctx, job, pick)
    _state_sharding(ctx, job, pick, zero)
    price = float(pick.scored.options.price[pick.t, 0])
    ctx.assume("price_default", gpu=gpu.name, price=price, region=pick.region or "")


def _state_schedule(ctx: Context, pick: Pick) -> None:
    """How the time counts a model-parallel step: the pipeline's schedule and bubble, and what of
    the tensor- and pipeline-parallel traffic waits (network.Overlap, as Megatron-Core runs them)."""
    grid, i, step = pick.scored.grid, pick.i, pick.scored.step
    seconds = pick.at(step.seconds)
    ctx.assume(
        "megatron_schedule",
        tp=int(grid.tp[i]),
        pp=int(grid.pp[i]),
        vpp=int(grid.vpp[i]),
        micro_batches=int(pick.scored.micro_batches[i]),
        bubble=pick.at(step.bubble) / seconds,
        waiting=pick.at(step.comm_exposed) / seconds,
    )


def _state_experts(ctx: Context, pick: Pick, precision: str, overlap: bool) -> None:
    """How the time counts the expert all-to-alls: the nodes a token crosses the fabric to when
    an expert group spans nodes (network.expert_fabric_share) and what compute hides them
    (network.paired_micro_batch_share: combined 1F1B, or only the shared experts)."""
    grid, i, a = pick.scored.grid, pick.i, ctx.arch
    ep, etp = float(grid.ep[i]), float(grid.etp[i])
    if etp != float(grid.tp[i]):  # Megatron-Core's parallel folding: experts laid out apart from attention
        stage = int(grid.gpus[i] / grid.pp[i])
        ctx.assume("expert_folding", ep=int(ep), etp=int(etp), tp=int(grid.tp[i]), stage=stage, dp=int(_dp(grid, i)))
    nodes = etp * ep / pick.gpu.gpus_per_node
    share = float(network.expert_fabric_share(a, nodes, ep)) if nodes > 1 else 0.0
    layout = (grid.ep[i], grid.pp[i], grid.vpp[i], pick.scored.micro_batches[i], grid.ckpt[i])
    paired = network.paired_micro_batch_share(*layout, sixteen_bit=precision != "fp32", asked=overlap)
    fabric = ctx.cat.fabrics.get(fabric_for(ctx, pick.gpu))
    rdma = fabric.rdma if fabric is not None else True
    ctx.assume(
        "expert_dispatch",
        ep=int(ep),
        nodes=int(math.ceil(nodes)) if nodes > 1 else 1,
        other_nodes=share * a.experts_per_token * (ep - 1) / ep,
        top_k=a.experts_per_token,
        limit=a.groups_per_token if a.expert_groups > 1 else 0,
        paired=bool(float(paired) > 0),
        off=not overlap,  # the question turned the pairing off (ep_overlap=off)
        sm_share=ctx.cat.defaults.number("moe", "comm_sm_share"),
        shared=a.shared_experts > 0,
        rdma=rdma,
    )


def _state_loss(ctx: Context, job: Job, pick: Pick) -> None:
    """The loss the activations count, with what Transformers' unchunked one would add, or holds when asked for."""
    grid, i = pick.scored.grid, pick.i
    tokens = float(grid.micro_batch[i]) * job.seq_len / float(grid.cp[i])
    tp = float(grid.tp[i])
    if job.loss == "unchunked":
        held = tokens * ctx.arch.vocab * conventions.UNCHUNKED_LOSS_BYTES_PER_LOGIT / tp
        ctx.assume("activation_conventions_unchunked", gib=held / 2**30)
    else:
        extra = conventions.unchunked_loss_extra_bytes(tokens, ctx.arch.vocab, tp)
        ctx.assume("activation_conventions", chunks=conventions.LOSS_CHUNKS, extra_gib=extra / 2**30)


def _state_sdpa(ctx: Context, gpu: GPU) -> None:
    """The attention kernel the named framework's PyTorch SDPA runs, where it is not the one timed by
    default for the GPU's generation (kernels.yaml sdpa_attention)."""
    gen = ctx.cat.kernels.generations[gpu.family]
    if not (pytorch_sdpa(ctx) and gen.sdpa_attention):
        return
    sdpa, default = (ctx.cat.kernels.attention[str(k.value)] for k in (gen.sdpa_attention, gen.attention))
    framework = ctx.cat.frameworks[str(ctx.req.framework)].name
    share, usual = float(sdpa.forward.value), float(default.forward.value)
    ctx.assume("sdpa_attention", framework=framework, family=gpu.family, share=share, usual=usual)


def _state_framework(ctx: Context, job: Job, pick: Pick, zero: int) -> bool:
    """Whose memory habits the plan follows (the framework named), those that apply to this layout:
    where FSDP keeps the embeddings and head, the loss and what it holds at its peak (with the logits
    a loop keeps), Megatron-Core's. True when the loss was stated here."""
    grid, i = pick.scored.grid, pick.i
    framework = ctx.cat.frameworks[str(ctx.req.framework)]
    megatron = bool(conventions.megatron_layout(grid.tp[i], grid.pp[i], grid.ep[i], grid.cp[i])) or job.megatron_core
    sharded = zero >= 3 or int(grid.offload[i]) >= memory.OFFLOAD_CODE["cpu-all"]
    sharded = sharded and framework.fsdp_ends is not None
    loss = job.loss if not megatron and (framework.loss or job.keeps_logits or ctx.req.loss) else ""
    if not (sharded or loss or job.megatron_core):
        return False
    logits = float(grid.micro_batch[i]) * job.seq_len / float(grid.cp[i]) * ctx.arch.vocab / float(grid.tp[i])
    logits *= 2 if job.method == "dpo" else 1  # chosen and rejected
    per_logit = float(conventions.loss_bytes_per_logit(megatron, job.loss, job.keeps_logits))
    kept = conventions.KEPT_LOGITS_BYTES_PER_LOGIT if job.keeps_logits and loss else 0
    ctx.assume(
        "framework_habits",
        framework=framework.name,
        sharded=sharded,
        apart=job.fsdp_ends != "root",
        loss=loss,
        chunks=conventions.LOSS_CHUNKS,
        loss_gib=logits * per_logit / GIB,
        kept_gib=logits * kept / GIB,
        megatron=job.megatron_core,
    )
    return bool(loss) or job.megatron_core


def _state_sharding(ctx: Context, job: Job, pick: Pick, zero: int) -> None:
    """What ZeRO-3 / FSDP or parameter offload keeps gathered on each GPU, and what offload moves
    to the host (memory.gathered_bytes, memory.replicated_constant_bytes)."""
    grid, i = pick.scored.grid, pick.i
    offload_all = int(grid.offload[i]) >= memory.OFFLOAD_CODE["cpu-all"]
    if zero < 3 and not offload_all:
        return
    tp, pp = np.asarray(float(grid.tp[i])), np.asarray(float(grid.pp[i]))
    root, layers = (float(x) / GIB for x in memory.gathered_bytes(job, tp, pp))
    # the host-to-device copy buffers exist only with the parameters on the host (0 bytes otherwise)
    copy = (
        memory.offload_copy_bytes(job, grid.gpus[i], tp, pp, zero, grid.offload[i], grid.ep[i]) if offload_all else 0.0
    )
    ctx.assume(
        "sharded_gathers",
        root_gib=root,
        layers_gib=layers,
        constants_gib=float(memory.replicated_constant_bytes(job, tp, pp)) / GIB,
        offload_all=offload_all,
        copy_gib=float(copy) / GIB,
        adapters=ctx.method in ADAPTER_METHODS,
        apart=job.fsdp_ends != "root",
    )


# --- the report ---------------------------------------------------------------------------------


def _tokens_per_s(pick: Pick) -> float:
    per_gpu = pick.scored.tokens_per_s_gpu
    return float(per_gpu[pick.t, pick.i] if np.ndim(per_gpu) == 2 else per_gpu[pick.i])


def _memory_and_io(
    ctx: Context, job: Job, pick: Pick, parts: dict[str, float], precision: str, tokens: float
) -> tuple[MemoryEstimate, IOEstimate]:
    req, gpu = ctx.req, pick.gpu
    gpus = int(pick.scored.grid.gpus[pick.i])
    data_kind = req.data or io.default_data_kind(ctx.method)
    if not req.data:
        ctx.assume("default_data", data=data_kind)
    io_plan = io.training_io(
        ctx.cat,
        job,
        precision=precision,
        train_tokens=tokens,
        epochs=req.epochs or 1.0,
        dataset_gb=req.dataset_gb,
        data_kind=data_kind,
        tokens_per_s_total=_tokens_per_s(pick) * gpus,
        gpus=gpus,
        per_node=gpu.gpus_per_node,
        offload_gib_per_node=parts["host_offload"] / GIB,
        nvme_gib_per_node=parts["nvme_offload"] / GIB,
    )
    breakdown = {k: parts[k] / GIB for k in memory.BREAKDOWN_KEYS}
    nvme_gib = parts["nvme_offload"] / GIB
    mem = memory_estimate(breakdown, sum(breakdown.values()), gpu, io_plan.host_ram_gib, nvme_gib, ctx.cat.defaults)
    if ctx.req.host_ram_gib and mem.host_ram_gib > ctx.req.host_ram_gib:
        ctx.warn("host_ram_short", host_ram=mem.host_ram_gib, have=ctx.req.host_ram_gib)
    elif not ctx.req.host_ram_gib and mem.host_ram_gib > ctx.number("offload", "host_ram_per_node_gib"):
        typical = ctx.number("offload", "host_ram_per_node_gib")
        ctx.warn("host_ram_high", host_ram=mem.host_ram_gib, typical=typical)
    return mem, io_plan


def _compute(ctx: Context, job: Job, pick: Pick, tokens: float, io_plan: IOEstimate):
    scored = pick.scored
    flops = compute.token_flops(ctx.arch, ctx.method, job.seq_len, job.lora_rank)
    gpus = int(scored.grid.gpus[pick.i])
    seconds, cost, rel = _with_reliability(ctx, pick, io_plan.checkpoint_write_s)
    interval, mtbi = float(rel.interval_s), float(rel.mtbi_s)
    figures = {"goodput": float(rel.goodput), "mtbi_hours": mtbi / 3600, "interruptions": seconds / mtbi}
    # an interval matters when the run more likely than not meets an interruption: P(none) = exp(-n)
    likely = figures["interruptions"] > math.log(2) and interval < seconds
    figures["checkpoint_interval_min"] = interval / 60 if likely else None
    _state_reliability(ctx, gpus, figures, io_plan.checkpoint_write_s)
    return compute_estimate(
        tokens=tokens,
        flops_per_token=flops.model,
        mfu=pick.at(scored.step.mfu),
        tokens_per_s_per_gpu=_tokens_per_s(pick),
        step_time_s=pick.at(scored.step.seconds),
        seconds=seconds,
        gpus=gpus,
        price=float(scored.options.price[pick.t, 0]),
        cost_usd=cost,
        **figures,
    )


def _with_reliability(ctx: Context, pick: Pick, write_s: float) -> tuple[float, float, reliability.Reliability]:
    """Wall-clock seconds and cost over the goodput of the checkpoints this plan writes (the search
    ranked with the slowest storage's write, search.job_reliability; the storage chosen since
    writes faster or as fast)."""
    scored = pick.scored
    gpus = float(scored.grid.gpus[pick.i])
    rel = reliability.reliability(gpus, write_s, ctx.cat.defaults)
    scale = pick.at(scored.goodput) / float(rel.goodput)
    return float(scored.seconds[pick.t, pick.i]) * scale, float(scored.cost[pick.t, pick.i]) * scale, rel


def _state_reliability(ctx: Context, gpus: int, figures: dict[str, float | None], write_s: float) -> None:
    params = {**figures, "gpus": gpus, "write_s": write_s, "restart_min": ctx.number("reliability", "restart_minutes")}
    ctx.assume("reliability" if figures["checkpoint_interval_min"] else "reliability_short", **params)


def _resolved(
    ctx: Context,
    job: Job,
    pick: Pick,
    zero: int,
    precision: str,
    gbs_used: int,
    tokens: float,
    net: NetworkEstimate | None,
):
    grid, i, gpu = pick.scored.grid, pick.i, pick.gpu
    gpus = int(grid.gpus[i])
    return resolved(
        ctx,
        method=ctx.method,
        seq_len=job.seq_len,
        micro_batch=int(grid.micro_batch[i]),
        global_batch=gbs_used,
        train_tokens=tokens,
        precision=precision,
        optimizer=job.optimizer,
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=gpus,
        nodes=max(1, math.ceil(gpus / gpu.gpus_per_node)),
        zero=zero,
        offload=OFFLOADS[int(grid.offload[i])],
        tp=int(grid.tp[i]),
        pp=int(grid.pp[i]),
        dp=int(_dp(grid, i)),
        ckpt=CKPTS[int(grid.ckpt[i])],
        loss="unchunked" if job.loss == "unchunked" else "chunked",  # Unsloth's in-place loss holds less than chunks
        vpp=int(grid.vpp[i]),
        ep=int(grid.ep[i]),
        cp=int(grid.cp[i]),
        etp=int(grid.etp[i]) if grid.ep[i] > 1 else None,
        lora_rank=job.lora_rank if ctx.method in ADAPTER_METHODS else None,
        region=pick.region,
        objective=pick.objective,
        fabric=ctx.req.fabric or (net.fabric if net else None),  # the user's own network, else the one to choose
    )


def _alternative(scored: search.Scored, reason: str, flat: int) -> Alternative:
    t, i = divmod(int(flat), scored.fits.shape[1])  # np.unravel_index's (type, layout), without its cost
    g = scored.grid
    gpu = scored.options.gpus[t]
    return Alternative(
        reason=reason,
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=int(g.gpus[i]),
        zero=int(g.zero[i]),
        tp=int(g.tp[i]),
        pp=int(g.pp[i]),
        ep=int(g.ep[i]),
        ckpt=CKPTS[int(g.ckpt[i])],
        offload=OFFLOADS[int(g.offload[i])],
        micro_batch=int(g.micro_batch[i]),
        region=scored.options.regions[t],
        days=float(scored.seconds[t, i] / 86400.0),  # Scored.days at one candidate
        cost_usd=float(scored.cost[t, i]),
        per_gpu_gib=float(scored.per_gpu[i]) / GIB,
    )


def _network_report(ctx: Context, pick: Pick) -> NetworkEstimate:
    """Traffic per step and the waiting share on each fabric the plan could run on."""
    scored, i, g = pick.scored, pick.i, pick.scored.grid
    step = scored.step
    traffic = {k: at_candidate(v, 0, i) for k, v in step.traffic.items()}  # per layout
    t_compute = pick.at(step.compute)
    # the network the user has (the plan's time is on it) beside the ones a cluster could have
    offered = [f for f in ctx.cat.fabrics.values() if f.offered or f.id == ctx.req.fabric]
    report = network.compare_fabrics(
        traffic,
        pick.gpu,
        offered,
        ctx.cat.collective_efficiency,
        gpus=int(g.gpus[i]),
        tp=int(g.tp[i]),
        zero=int(g.zero[i]),
        t_compute=t_compute,
        other_seconds=t_compute + pick.at(step.bubble) + pick.at(step.offload),
        assumed=fabric_for(ctx, pick.gpu),
        ep=int(g.ep[i]),
        cp=int(g.cp[i]),
        etp=int(g.etp[i]),
        pp=int(g.pp[i]),
        overlap=network.Overlap(**{k: pick.at(v) for k, v in vars(step.overlap).items()}),
        owned=ctx.req.fabric is not None,
        arch=ctx.arch,
        planned=(pick.at(step.comm_exposed), pick.at(step.comm_total)),  # on one node, the search's own figures
    )
    # "even on the best fabric": the least any fabric offered leaves waiting, not the assumed one's
    waiting = min((o.comm_fraction for o in report.options), default=report.comm_fraction)
    if waiting > 0.3:
        ctx.warn("comm_bound", fraction=waiting, fabric=report.fabric)
    return report


def _suggest_fixes(ctx: Context, job: Job, fixed: search.Fixed, gpu: GPU, gbs: int, per_gpu_gib: float) -> None:
    """When what the user fixed cannot fit (`per_gpu_gib` over the usable memory), quantify the two
    usual ways out on the same GPU type: offload on the same GPUs, or more GPUs. Only memory
    decides these, so only memory is evaluated."""
    usable = fit.usable(gpu.memory_gib, ctx.cat.defaults)
    ctx.warn("does_not_fit", gpu=gpu.name, capacity=gpu.memory_gib, usable=usable, per_gpu=per_gpu_gib)
    if job.method not in ADAPTER_METHODS and (fixed.offload in (None, "none")) and fixed.gpus and fixed.gpus > 1:
        _fits_with_offload(ctx, job, fixed, gpu, gbs)
    relaxed = search.Fixed(
        tp=fixed.tp,
        pp=fixed.pp,
        zero=3,
        offload="none" if fixed.offload is None else fixed.offload,
        ckpt=CKPT_CODE["full"],
        micro_batch=1,
        ep=fixed.ep,
        cp=fixed.cp,
        etp=fixed.etp,
        vpp=fixed.vpp,
    )
    max_gpus = int(ctx.number("limits", "max_gpus"))
    grid = search.training_grid(job.arch, job.method, relaxed, gbs, gpu.gpus_per_node, max_gpus, job.seq_len)
    need = memory.per_gpu_total(memory.training_memory(job, search.layout_of(grid, gbs), overheads(ctx.cat)))
    more = fit.fits(need, gpu.memory_gib * GIB, ctx.cat.defaults) & (grid.gpus > (fixed.gpus or 0))
    if more.any():
        ctx.warn("fits_with_more_gpus", gpus=int(grid.gpus[more].min()), gpu=gpu.name)


def _fits_with_offload(ctx: Context, job: Job, fixed: search.Fixed, gpu: GPU, gbs: int) -> None:
    relaxed = search.Fixed(
        gpus=fixed.gpus,
        tp=fixed.tp,
        pp=fixed.pp,
        zero=3,
        offload="cpu",
        ckpt=CKPT_CODE["full"],
        micro_batch=fixed.micro_batch or 1,
        ep=fixed.ep,
        cp=fixed.cp,
        etp=fixed.etp,
        vpp=fixed.vpp,
    )
    grid = search.training_grid(job.arch, job.method, relaxed, gbs, gpu.gpus_per_node, fixed.gpus, job.seq_len)
    parts = memory.training_memory(job, search.layout_of(grid, gbs), overheads(ctx.cat))
    need = memory.per_gpu_total(parts)
    fitting = fit.fits(need, gpu.memory_gib * GIB, ctx.cat.defaults)
    if grid.size and fitting.any():
        i = int(np.argmin(np.where(fitting, need, np.inf)))
        factor = ctx.number("offload", "host_buffer_factor")
        ctx.warn(
            "fits_with_offload",
            per_gpu=float(need[i]) / GIB,
            gpus=fixed.gpus,
            host_ram=float(parts["host_offload"][i]) / GIB * factor,
        )
