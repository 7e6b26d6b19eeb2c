"""Request -> Estimate: check the request, fill what is open (each default becomes a stated
assumption), choose the open layout fields among candidates evaluated as numpy arrays, and
compute memory, time and cost for the chosen layout.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from gpuplan.estimator import architecture, compute, hardware, io, memo, memory, network, search
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.memory import CKPT_CODE, GIB, Job, Overheads
from gpuplan.estimator.schema import (
    ADAPTER_METHODS,
    CKPTS,
    OFFLOADS,
    SERVE_PRECISIONS,
    TRAIN_PRECISIONS,
    Alternative,
    ComputeEstimate,
    Estimate,
    MemoryBreakdown,
    MemoryEstimate,
    Note,
    Request,
    Resolved,
)
from gpuplan.knowledge import GPU, Catalog, catalog

PRETRAINING = ("pretrain", "continue")
MAX_PARAMS_B = 100_000  # 100T parameters: beyond any model built so far
MAX_GPU_MEMORY_GIB = 1024  # a GPU named by its memory: 1 GiB to 1 TiB (today's largest carry 288 GB)
# Upper bounds on the other numbers (nodes, tp and pp share limits.max_gpus). Not sourced: each is
# far beyond any published job, so a typo or a pasted counter is an error, not an overflow.
LARGEST_VALUES: dict[str, float] = {
    "seq_len": 1 << 30,
    "micro_batch": 1_000_000,
    "global_batch": 1_000_000_000,
    "lora_rank": 1 << 20,
    "samples": 1e15,
    "train_tokens": 1e18,
    "epochs": 10_000,
    "dataset_gb": 1e9,
    "deadline_days": 36_500,
    "budget_usd": 1e13,
}
SECONDS_PER_DAY = 86400.0


@dataclass
class _Context:
    cat: Catalog
    req: Request
    arch: Arch
    model_id: str | None
    gpu: GPU | None  # the type the user fixed; None lets the search choose
    method: str
    assumptions: list[Note]
    warnings: list[Note]

    def assume(self, code: str, **params: object) -> None:
        self.assumptions.append(Note(code=code, params=params))

    def warn(self, code: str, **params: object) -> None:
        self.warnings.append(Note(code=code, params=params))

    def number(self, section: str, key: str | None = None) -> float:
        return self.cat.defaults.number(section, key)


# --- checks -------------------------------------------------------------------------------


def check_request(req: Request, cat: Catalog) -> list[Note]:
    """Values that make no sense on their own, whatever the model (each names the offender)."""
    bad: list[Note] = []

    def reject(code: str, **params: object) -> None:
        bad.append(Note(code=code, params=params))

    max_gpus = int(cat.defaults.number("limits", "max_gpus"))
    if req.params_b is not None and not (0 < req.params_b <= MAX_PARAMS_B):
        reject("bad_model_size", value=req.params_b)
    positive_ints = {
        "seq_len": req.seq_len,
        "micro_batch": req.micro_batch,
        "global_batch": req.global_batch,
        "nodes": req.nodes,
        "tp": req.tp,
        "pp": req.pp,
        "lora_rank": req.lora_rank,
        "samples": req.samples,
    }
    for field, value in positive_ints.items():
        if value is not None and value < 1:
            reject("not_positive", field=field, value=value)
        elif value is not None and value > LARGEST_VALUES.get(field, max_gpus):
            reject("too_large", field=field, value=value, limit=LARGEST_VALUES.get(field, max_gpus))
    positive_numbers = {
        "train_tokens": req.train_tokens,
        "epochs": req.epochs,
        "dataset_gb": req.dataset_gb,
        "deadline_days": req.deadline_days,
        "budget_usd": req.budget_usd,
    }
    for field, value in positive_numbers.items():
        if value is not None and not (value > 0 and math.isfinite(value)):
            reject("not_positive", field=field, value=value)
        elif value is not None and value > LARGEST_VALUES[field]:
            reject("too_large", field=field, value=value, limit=LARGEST_VALUES[field])
    if req.gpu_memory_gib is not None and not (1 <= req.gpu_memory_gib <= MAX_GPU_MEMORY_GIB):
        reject("bad_gpu_memory", value=req.gpu_memory_gib, limit=MAX_GPU_MEMORY_GIB)
    if req.gpus is not None and req.gpus < 1:
        reject("bad_gpus", value=req.gpus)
    elif req.gpus is not None and req.gpus > max_gpus:
        reject("too_many_gpus", value=req.gpus, limit=max_gpus)
    if req.zero is not None and req.zero not in (0, 1, 2, 3):
        reject("bad_zero", value=req.zero)
    if req.mfu is not None and not (0 < req.mfu <= 1):
        reject("bad_mfu", value=req.mfu)
    if req.gpus and req.nodes and req.nodes >= 1 and req.gpus % req.nodes:
        reject("gpus_nodes_mismatch", gpus=req.gpus, nodes=req.nodes)
    if req.gpus and req.tp and req.pp and req.tp >= 1 and req.pp >= 1 and req.gpus % (req.tp * req.pp):
        reject("tp_pp_not_dividing", gpus=req.gpus, tp=req.tp, pp=req.pp)
    return bad


def _check_against_model(ctx: _Context, seq: int) -> list[Note]:
    req, arch, gpu = ctx.req, ctx.arch, ctx.gpu
    bad: list[Note] = []
    limit = arch.max_context or int(ctx.number("limits", "generic_max_context"))
    if seq > limit:
        code = "seq_over_context" if arch.max_context else "seq_over_limit"
        bad.append(Note(code=code, params={"seq": seq, "context": limit, "model": arch.name}))
    if req.tp and req.tp >= 1 and (arch.heads % req.tp):
        bad.append(Note(code="tp_not_dividing_heads", params={"tp": req.tp, "heads": arch.heads, "model": arch.name}))
    if req.pp and req.pp > arch.layers:
        bad.append(Note(code="pp_over_layers", params={"pp": req.pp, "layers": arch.layers, "model": arch.name}))
    if req.lora_rank and req.lora_rank > arch.hidden:
        bad.append(Note(code="lora_rank_too_big", params={"rank": req.lora_rank, "hidden": arch.hidden}))
    if gpu and req.nodes and req.gpus and req.gpus // req.nodes > gpu.gpus_per_node:
        bad.append(
            Note(
                code="too_many_per_node",
                params={"per_node": req.gpus // req.nodes, "gpu": gpu.name, "limit": gpu.gpus_per_node},
            )
        )
    precision = req.precision
    if precision:
        allowed = SERVE_PRECISIONS if ctx.method == "infer" else TRAIN_PRECISIONS
        if precision not in allowed:
            bad.append(
                Note(code="bad_precision", params={"value": precision, "method": ctx.method, "allowed": list(allowed)})
            )
        elif gpu and precision.startswith("bf16") and not gpu.supports_bf16:
            bad.append(Note(code="no_bf16", params={"gpu": gpu.name}))
        elif gpu and precision == "fp8-mixed" and not gpu.fp8_tflops:
            bad.append(Note(code="no_fp8", params={"gpu": gpu.name}))
    if req.fabric and req.fabric not in ctx.cat.fabrics:
        bad.append(Note(code="unknown_fabric", params={"value": req.fabric, "fabrics": list(ctx.cat.fabrics)}))
    if ctx.method != "infer" and req.offload and req.offload != "none":
        needed = 3 if req.offload.endswith("-all") else 1
        if req.zero is not None and req.zero < needed:
            bad.append(
                Note(code="offload_needs_zero", params={"offload": req.offload, "zero": req.zero, "needed": needed})
            )
    return bad


# --- defaults ----------------------------------------------------------------------------


def _resolve_model(req: Request, cat: Catalog) -> tuple[Arch, str | None]:
    if req.model:
        spec = cat.models.get(req.model)
        if spec is None:
            raise RequestError([Note(code="unknown_model", params={"value": req.model, "suggestions": []})])
        return architecture.for_spec(spec), spec.id
    if req.params_b is None:
        raise RequestError([Note(code="model_missing")])
    return architecture.generic(req.params_b), None


def _seq_len(ctx: _Context) -> int:
    if ctx.req.seq_len:
        return ctx.req.seq_len
    default = int(getattr(ctx.cat.defaults.seq_len, "continue_" if ctx.method == "continue" else ctx.method))
    seq = min(default, ctx.arch.max_context or default)
    ctx.assume("default_seq", seq=seq)
    return seq


def _train_tokens(ctx: _Context, seq: int) -> float:
    req, d = ctx.req, ctx.cat.defaults
    if req.train_tokens:
        return req.train_tokens
    if req.samples:
        epochs = req.epochs or (1.0 if ctx.method in PRETRAINING else 3.0)
        tokens = req.samples * seq * epochs
        ctx.assume(
            "tokens_from_samples",
            samples=req.samples,
            seq=seq,
            epochs=epochs,
            tokens=tokens,
            epochs_default=req.epochs is None,
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


def _overheads(cat: Catalog) -> Overheads:
    d = cat.defaults
    return Overheads(
        cuda_context_gib=d.number("overhead", "cuda_context_gib"),
        comm_buffers_gib=d.number("overhead", "comm_buffers_gib"),
        fragmentation=d.number("overhead", "fragmentation"),
    )


def _candidate_gpus(ctx: _Context, precision: str | None) -> list[GPU]:
    """The fixed GPU type, else every type in stock (in the region, when one is given) that no
    other type dominates for this job."""
    if ctx.gpu:
        return [ctx.gpu]
    region = ctx.req.region
    types = [g for g in ctx.cat.gpus.values() if ctx.cat.stock(g.id, region)[0] > 0]
    if not types:
        raise RequestError([Note(code="no_stock", params={"region": region or ""})])
    wanted = ctx.req.gpu_memory_gib
    if wanted:  # "a 48GB card": the types of that memory class (marketed GB vs reported GiB, ECC)
        types = [g for g in types if hardware.in_class(g, wanted)]
        if not types:
            raise RequestError([Note(code="no_gpu_with_memory", params={"gib": wanted})])
        ctx.assume("gpu_memory_class", gib=wanted, gpus=[g.name for g in types])
    method = ctx.method
    speed = {
        g.id: g.peak_16bit_tflops * compute.hardware_utilisation(g, method, precision or "bf16-mixed", ctx.cat.defaults)
        for g in types
    }
    return search.drop_dominated(ctx.cat, types, region, speed)


def _fabric(ctx: _Context, gpu: GPU) -> str:
    """The inter-node fabric: the user's choice, else what servers of this GPU type usually carry."""
    return ctx.req.fabric or gpu.node_fabric


def _stock_warning(ctx: _Context, gpu: GPU, gpus: int, region: str | None) -> None:
    stock, where = ctx.cat.stock(gpu.id, region)
    if gpus > stock:
        ctx.warn("over_stock", gpus=gpus, gpu=gpu.name, stock=stock, region=where or "")


# --- training ------------------------------------------------------------------------------


def _training_defaults(ctx: _Context, seq: int) -> tuple[str | None, str, int, int, float]:
    req, d, method = ctx.req, ctx.cat.defaults, ctx.method
    precision = req.precision  # None: bf16-mixed, or fp16-mixed on GPUs without bf16 (per type)
    optimizer = req.optimizer or str(d.optimizer["qlora" if method == "qlora" else "default"].value)
    if not req.optimizer:
        ctx.assume("default_optimizer", optimizer=optimizer)
    lora_rank = req.lora_rank or int(d.lora["rank"].value)
    if method in ADAPTER_METHODS and not req.lora_rank:
        ctx.assume("default_lora", rank=lora_rank, targets=str(d.lora["targets"].value))
    if req.global_batch:
        gbs = req.global_batch
    else:
        gbs = (
            max(1, round(float(d.global_batch_tokens["pretrain"]) / seq))
            if method in PRETRAINING
            else int(d.global_batch_tokens["finetune_sequences"])
        )
        ctx.assume("default_global_batch", global_batch=gbs, tokens=gbs * seq)
    return precision, optimizer, lora_rank, gbs, _train_tokens(ctx, seq)


def _fixed_layout(req: Request, per_node: int) -> search.Fixed:
    gpus = req.gpus or (req.nodes * per_node if req.nodes else None)
    return search.Fixed(
        gpus=gpus,
        tp=req.tp,
        pp=req.pp,
        zero=req.zero,
        offload=req.offload,
        ckpt=CKPT_CODE[req.ckpt] if req.ckpt else None,
        micro_batch=req.micro_batch,
    )


def _no_layout(req: Request, batch: int) -> Note:
    """No parallel layout meets what was fixed: the note lists the fixed values, so one can go."""
    names = ("gpus", "nodes", "tp", "pp", "zero", "micro_batch")
    fixed = {name: getattr(req, name) for name in names if getattr(req, name) is not None}
    return Note(code="no_layout", params={"fixed": fixed, "batch": batch})


def _score(ctx: _Context, job: Job, fixed: search.Fixed, types: list[GPU], gbs: int, tokens: float) -> search.Scored:
    cat = ctx.cat
    max_gpus = int(ctx.number("limits", "max_gpus"))
    if fixed.gpus is None:  # never consider more GPUs than any candidate type has in stock
        max_gpus = min(max_gpus, max(cat.stock(g.id, ctx.req.region)[0] for g in types))
    per_node = types[0].gpus_per_node
    grid = search.training_grid(job.arch, job.method, fixed, gbs, per_node, max(per_node, max_gpus))
    if grid.size == 0:
        raise RequestError([_no_layout(ctx.req, gbs)])
    options = search.gpu_options(cat, types, ctx.req.region, job.precision if ctx.req.precision else None)
    fabrics = [cat.fabrics[_fabric(ctx, g)] for g in types]
    links = network.links_for_types(types, fabrics, cat.collective_efficiency)
    hw = compute.hardware_for(types, job.method, job.precision, cat.defaults, links)
    return search.score_training(
        job, grid, options, hw, gbs, tokens, _overheads(cat), cat, ctx.req.mfu, explicit_gpus=bool(fixed.gpus)
    )


def _estimate_training(ctx: _Context, seq: int) -> Estimate:
    req, cat, arch, method = ctx.req, ctx.cat, ctx.arch, ctx.method
    precision, optimizer, lora_rank, gbs, tokens = _training_defaults(ctx, seq)
    targets = str(cat.defaults.lora["targets"].value)
    job = Job(arch, method, precision or "bf16-mixed", optimizer, seq, lora_rank, targets)
    types = _candidate_gpus(ctx, precision)
    fixed = _fixed_layout(req, types[0].gpus_per_node)
    if fixed.ckpt is None and (req.tp or req.pp) and (req.tp or 1) * (req.pp or 1) > 1:
        # Megatron-LM's published 3D-parallel benchmarks recompute every layer (Narayanan et al. 2021)
        fixed.ckpt = CKPT_CODE["full"]
        ctx.assume("megatron_recompute")
    scored = _score(ctx, job, fixed, types, gbs, tokens)

    deadline = req.deadline_days
    if deadline is None and method in PRETRAINING and fixed.gpus is None:
        deadline = ctx.number("limits", "pretrain_target_days")
        ctx.assume("pretrain_target", days=deadline)
    objective = req.objective or "cheapest"
    choice = search.choose(scored, objective, deadline, req.budget_usd, offload_fixed=fixed.offload is not None)
    t, i = (int(x) for x in np.unravel_index(choice.index, scored.fits.shape))
    gpu = scored.options.gpus[t]
    region = scored.options.regions[t]
    for code, params in choice.shortfalls:
        ctx.warn(f"short_{code}", **params)

    grid = scored.grid
    # report the simplest ZeRO stage that fits: stages 0-2 take the same time and cost
    zero = int(grid.zero[i])
    if req.zero is None:
        zero = search.simplest_zero(job, grid, i, gbs, _overheads(cat), gpu.memory_gib * GIB)
    if zero == int(grid.zero[i]):
        parts = {k: float(v[i]) for k, v in scored.parts.items()}
    else:
        final = grid.subset(np.array([i]))
        final.zero = np.array([float(zero)])
        layout = search.layout_of(final, gbs)
        parts = {k: float(v[0]) for k, v in memory.training_memory(job, layout, _overheads(cat)).items()}
    chosen_gpus = int(grid.gpus[i])
    if not precision:
        precision = "bf16-mixed" if gpu.supports_bf16 else "fp16-mixed"
        ctx.assume("default_precision", precision=precision)
    if not req.gpu:
        ctx.assume("chosen_gpu", gpu=gpu.name, region=region or "", types=len(types))
    open_fields = [
        f
        for f, given in (
            ("gpus", fixed.gpus),
            ("tp", req.tp),
            ("zero", req.zero is not None),
            ("ckpt", fixed.ckpt is not None),
            ("micro_batch", req.micro_batch),
        )
        if not given
    ]
    if open_fields:
        ctx.assume(
            "chosen_layout",
            gpus=chosen_gpus,
            tp=int(grid.tp[i]),
            zero=zero,
            ckpt=CKPTS[int(grid.ckpt[i])],
            micro_batch=int(grid.micro_batch[i]),
            fields=open_fields,
            objective=objective,
        )
    if scored.explicit_gpus:
        _stock_warning(ctx, gpu, chosen_gpus, req.region)
    micro_batches = float(scored.micro_batches[i])
    gbs_used = int(micro_batches * grid.dp()[i] * grid.micro_batch[i])
    if gbs_used != gbs:
        ctx.warn("global_batch_rounded", asked=gbs, used=gbs_used)

    step = scored.step
    mfu = float(np.broadcast_to(step.mfu, scored.fits.shape)[t, i])
    if req.mfu is None:
        ctx.assume(
            "mfu_model",
            mfu=mfu,
            hfu=compute.hardware_utilisation(gpu, method, precision, cat.defaults),
            family=gpu.family,
        )
    ctx.assume("goodput", goodput=ctx.number("goodput"))
    ctx.assume("activation_conventions", chunks=memory.LOSS_CHUNKS_NOTE)
    price = float(scored.options.price[t, 0])
    ctx.assume("price_default", gpu=gpu.name, price=price, region=region or "")

    nodes = max(1, math.ceil(chosen_gpus / gpu.gpus_per_node))
    host_offload = parts["host_offload"] / GIB
    nvme_offload = parts["nvme_offload"] / GIB
    tokens_per_s = float(
        scored.tokens_per_s_gpu[t, i] if np.ndim(scored.tokens_per_s_gpu) == 2 else scored.tokens_per_s_gpu[i]
    )
    data_kind = req.data or io.default_data_kind(method)
    if not req.data:
        ctx.assume("default_data", data=data_kind)
    io_plan = io.training_io(
        cat,
        arch,
        method,
        precision,
        optimizer,
        lora_rank,
        tokens,
        req.epochs or 1.0,
        req.dataset_gb,
        data_kind,
        tokens_per_s * chosen_gpus,
        chosen_gpus,
        gpu.gpus_per_node,
        host_offload,
        nvme_offload,
    )
    breakdown = {k: parts[k] / GIB for k in memory.BREAKDOWN_KEYS}
    per_gpu = sum(breakdown.values())
    mem = MemoryEstimate(
        per_gpu_gib=per_gpu,
        capacity_gib=gpu.memory_gib,
        usable_gib=gpu.memory_gib - breakdown["overhead"],
        fits=per_gpu <= gpu.memory_gib,
        host_ram_gib=io_plan["host_ram_gib"],
        nvme_gib=nvme_offload,
        breakdown_gib=MemoryBreakdown(**breakdown),
    )
    typical = ctx.number("offload", "host_ram_per_node_gib")
    if mem.host_ram_gib > typical:
        ctx.warn("host_ram_high", host_ram=mem.host_ram_gib, typical=typical)
    if not mem.fits:
        _suggest_fixes(ctx, job, fixed, gpu, gbs)

    seconds = float(scored.seconds[t, i])
    flops = compute.token_flops(arch, method, seq, lora_rank)
    comp = ComputeEstimate(
        total_flops=tokens * flops.model,
        flops_per_token=flops.model,
        train_tokens=tokens,
        mfu=mfu,
        tokens_per_s_per_gpu=tokens_per_s,
        step_time_s=float(np.broadcast_to(step.seconds, scored.fits.shape)[t, i]),
        days=seconds / SECONDS_PER_DAY,
        gpu_hours=seconds / 3600 * chosen_gpus,
        cost_usd=float(scored.cost[t, i]),
        price_usd_per_gpu_hour=price,
    )
    net = _network_report(ctx, job, scored, t, i, gpu)
    resolved = Resolved(
        model=ctx.model_id,
        model_name=arch.name,
        params_b=arch.params / 1e9,
        active_params_b=arch.active_params / 1e9,
        method=method,
        seq_len=seq,
        micro_batch=int(grid.micro_batch[i]),
        global_batch=gbs_used,
        train_tokens=tokens,
        precision=precision,
        optimizer=optimizer,
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=chosen_gpus,
        nodes=nodes,
        zero=zero,
        offload=OFFLOADS[int(grid.offload[i])],
        tp=int(grid.tp[i]),
        pp=int(grid.pp[i]),
        dp=int(grid.dp()[i]),
        ckpt=CKPTS[int(grid.ckpt[i])],
        lora_rank=lora_rank if method in ADAPTER_METHODS else None,
        mfu=req.mfu,
        deadline_days=req.deadline_days,
        budget_usd=req.budget_usd,
        region=region,
        objective=objective,
        fabric=net["fabric"] if net else None,
    )
    alts = [_alternative(scored, reason, j) for reason, j in choice.alternatives]
    return Estimate(
        resolved=resolved,
        memory=mem,
        compute=comp,
        io=io_plan,
        network=net,
        alternatives=alts,
        candidates=scored.candidates,
        assumptions=ctx.assumptions,
        warnings=ctx.warnings,
    )


def _alternative(scored: search.Scored, reason: str, flat: int) -> Alternative:
    t, i = (int(x) for x in np.unravel_index(flat, scored.fits.shape))
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
        ckpt=CKPTS[int(g.ckpt[i])],
        offload=OFFLOADS[int(g.offload[i])],
        micro_batch=int(g.micro_batch[i]),
        region=scored.options.regions[t],
        days=float(scored.days[t, i]),
        cost_usd=float(scored.cost[t, i]),
        per_gpu_gib=float(scored.per_gpu[i]) / GIB,
    )


def _network_report(ctx: _Context, job: Job, scored: search.Scored, t: int, i: int, gpu: GPU) -> dict:
    size = scored.grid.size
    g = scored.grid
    traffic = {k: float(np.broadcast_to(v, (size,))[i]) for k, v in scored.step.traffic.items()}
    step = scored.step
    pick = lambda arr: float(np.broadcast_to(arr, scored.fits.shape)[t, i])  # noqa: E731
    t_compute = pick(step.compute)
    other = t_compute + pick(step.bubble) + pick(step.offload)
    fabrics = list(ctx.cat.fabrics.values())
    assumed = _fabric(ctx, gpu)
    if ctx.req.fabric:
        fabrics = [ctx.cat.fabrics[ctx.req.fabric]]
    report = network.compare_fabrics(
        traffic,
        gpu,
        fabrics,
        ctx.cat.collective_efficiency,
        int(g.gpus[i]),
        int(g.tp[i]),
        int(g.zero[i]),
        t_compute,
        other,
        assumed,
    )
    waiting = report.get("assumed_comm_fraction", report["comm_fraction"])
    if waiting > 0.3:
        ctx.warn("comm_bound", fraction=waiting, fabric=report.get("assumed_fabric", report["fabric"]))
    return report


def _suggest_fixes(ctx: _Context, job: Job, fixed: search.Fixed, gpu: GPU, gbs: int) -> None:
    """When what the user fixed cannot fit, quantify the two usual ways out on the same GPU type:
    offload on the same GPUs, or more GPUs. Only memory decides these, so only memory is evaluated."""
    ctx.warn("does_not_fit", gpu=gpu.name, capacity=gpu.memory_gib)
    over = _overheads(ctx.cat)
    capacity = gpu.memory_gib * GIB
    if job.method not in ADAPTER_METHODS and (fixed.offload in (None, "none")) and fixed.gpus and fixed.gpus > 1:
        relaxed = search.Fixed(
            gpus=fixed.gpus,
            tp=fixed.tp,
            pp=fixed.pp,
            zero=3,
            offload="cpu",
            ckpt=CKPT_CODE["full"],
            micro_batch=fixed.micro_batch or 1,
        )
        grid = search.training_grid(job.arch, job.method, relaxed, gbs, gpu.gpus_per_node, fixed.gpus)
        parts = memory.training_memory(job, search.layout_of(grid, gbs), over)
        need = memory.per_gpu_total(parts)
        if grid.size and (need <= capacity).any():
            i = int(np.argmin(np.where(need <= capacity, need, np.inf)))
            factor = ctx.number("offload", "host_buffer_factor")
            ctx.warn(
                "fits_with_offload",
                per_gpu=float(need[i]) / GIB,
                gpus=fixed.gpus,
                host_ram=float(parts["host_offload"][i]) / GIB * factor,
            )
    relaxed = search.Fixed(
        tp=fixed.tp,
        pp=fixed.pp,
        zero=3,
        offload="none" if fixed.offload is None else fixed.offload,
        ckpt=CKPT_CODE["full"],
        micro_batch=1,
    )
    max_gpus = int(ctx.number("limits", "max_gpus"))
    grid = search.training_grid(job.arch, job.method, relaxed, gbs, gpu.gpus_per_node, max_gpus)
    need = memory.per_gpu_total(memory.training_memory(job, search.layout_of(grid, gbs), over))
    more = (need <= capacity) & (grid.gpus > (fixed.gpus or 0))
    if more.any():
        ctx.warn("fits_with_more_gpus", gpus=int(grid.gpus[more].min()), gpu=gpu.name)


# --- serving -------------------------------------------------------------------------------


def _serving_precision(ctx: _Context, gpu: GPU | None) -> str:
    published = ctx.arch.weights_dtype if ctx.arch.weights_dtype != "bf16" else None
    if published == "fp8" and gpu is not None and not (gpu.fp8_tflops or gpu.family.startswith("ampere")):
        published = None  # no FP8 kernels (V100, T4): served upcast to 16-bit
    return ctx.req.precision or published or str(ctx.cat.defaults.precision["infer"].value)


def _estimate_serving(ctx: _Context, seq: int) -> Estimate:
    req, cat, arch = ctx.req, ctx.cat, ctx.arch
    d = cat.defaults
    precision = _serving_precision(ctx, ctx.gpu)
    if not req.precision:
        ctx.assume("default_serve_precision", precision=precision)
    batch = req.micro_batch or int(d.micro_batch["infer"])
    if not req.micro_batch:
        ctx.assume("default_concurrency", batch=batch)
    types = _candidate_gpus(ctx, None)
    if precision == "fp8":  # FP8 weights need FP8 tensor cores or Ampere's weight-only kernels
        types = [g for g in types if g.fp8_tflops or g.family.startswith("ampere")] or types
    region = _serving_region(ctx)
    fixed = search.Fixed(gpus=req.gpus, tp=req.tp, pp=req.pp)
    tp, pp = search.serving_grid(arch, fixed)
    if tp.size == 0:
        raise RequestError([_no_layout(req, batch)])
    options = search.gpu_options(cat, types, region, None)
    scored = search.score_serving(arch, precision, seq, batch, tp, pp, options, _overheads(cat), cat, fixed, req.fabric)
    objective = req.objective or "cheapest"
    min_speed = d.number("inference", "min_tokens_per_s_per_sequence")
    flat, met, interactive = search.choose_serving(scored, objective, batch, min_speed)
    t, i = (int(x) for x in np.unravel_index(flat, scored.fits.shape))
    gpu = options.gpus[t]
    where = options.regions[t]
    replica_gpus = int(tp[i] * pp[i])
    gpus = req.gpus or replica_gpus
    if not req.gpu:
        ctx.assume("chosen_gpu", gpu=gpu.name, region=where or "", types=len(types))
    if not (req.gpus or req.tp or req.pp):
        ctx.assume("serving_layout", tp=int(tp[i]), pp=int(pp[i]))
    if precision in ("int8", "int4", "fp8"):
        ctx.assume("quantized_ends", precision=precision)
    if not interactive:
        ctx.warn("slow_serving", speed=float(scored.tokens_per_s_gpu[t, i]) * replica_gpus / batch, minimum=min_speed)
    if not met and scored.fits.any():
        ctx.warn("short_stock", gpus=replica_gpus, gpu=gpu.name, stock=int(options.stock[t, 0]))
    _stock_warning(ctx, gpu, gpus, where) if req.gpus else None

    tokens_per_s_gpu = float(scored.tokens_per_s_gpu[t, i])
    if req.train_tokens:
        tokens = req.train_tokens
        seconds = tokens / (tokens_per_s_gpu * gpus)
    else:
        seconds = SECONDS_PER_DAY
        tokens = tokens_per_s_gpu * gpus * seconds
        ctx.assume("serving_day")
    price = float(options.price[t, 0])
    ctx.assume("price_default", gpu=gpu.name, price=price, region=where or "")
    gpu_hours = seconds / 3600 * gpus
    flops = compute.token_flops(arch, "infer", seq)
    breakdown = {k: float(scored.parts[k][i]) / GIB for k in memory.BREAKDOWN_KEYS}
    per_gpu = float(scored.per_gpu[i]) / GIB
    io_plan = io.serving_io(cat, arch, precision, replica_gpus, gpu.gpus_per_node)
    mem = MemoryEstimate(
        per_gpu_gib=per_gpu,
        capacity_gib=gpu.memory_gib,
        usable_gib=gpu.memory_gib - breakdown["overhead"],
        fits=per_gpu <= gpu.memory_gib,
        host_ram_gib=io_plan["host_ram_gib"],
        nvme_gib=0.0,
        breakdown_gib=MemoryBreakdown(**breakdown),
    )
    if not mem.fits:
        ctx.warn("does_not_fit", gpu=gpu.name, capacity=gpu.memory_gib)
    resolved = Resolved(
        model=ctx.model_id,
        model_name=arch.name,
        params_b=arch.params / 1e9,
        active_params_b=arch.active_params / 1e9,
        method="infer",
        seq_len=seq,
        micro_batch=batch,
        global_batch=batch * max(1, gpus // replica_gpus),
        train_tokens=tokens,
        precision=precision,
        optimizer="adamw",
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=gpus,
        nodes=max(1, math.ceil(gpus / gpu.gpus_per_node)),
        zero=0,
        offload="none",
        tp=int(tp[i]),
        pp=int(pp[i]),
        dp=max(1, gpus // replica_gpus),
        ckpt="none",
        lora_rank=None,
        mfu=req.mfu,
        deadline_days=req.deadline_days,
        budget_usd=req.budget_usd,
        region=where,
        objective=objective,
        fabric=None,
    )
    comp = ComputeEstimate(
        total_flops=tokens * flops.model,
        flops_per_token=flops.model,
        train_tokens=tokens,
        mfu=tokens_per_s_gpu * flops.model / (gpu.peak_16bit_tflops * 1e12),
        tokens_per_s_per_gpu=tokens_per_s_gpu,
        step_time_s=float(scored.step_seconds[t, i]),
        days=seconds / SECONDS_PER_DAY,
        gpu_hours=gpu_hours,
        cost_usd=gpu_hours * price,
        price_usd_per_gpu_hour=price,
        cost_per_million_tokens_usd=price / (tokens_per_s_gpu * 3600) * 1e6,
    )
    serving = {
        "kv_bytes_per_token": memory.kv_bytes_per_token(arch, precision),
        "kv_cache_gib": breakdown["kv_cache"] * tp[i] * pp[i] if arch.kv_heads >= tp[i] else breakdown["kv_cache"],
        "weights_gib": breakdown["weights"] * replica_gpus,
        "concurrency": batch,
        "context": seq,
        "replica_gpus": replica_gpus,
        "tokens_per_s_ceiling": tokens_per_s_gpu * replica_gpus,
        "tokens_per_s_per_sequence": tokens_per_s_gpu * replica_gpus / batch,
        "mig": _mig_fit(cat, gpu, per_gpu) if replica_gpus == 1 else None,
        "region": where,
        "users": req.users,
    }
    net = _serving_network(ctx, gpu, batch, int(tp[i]), int(pp[i]), float(scored.step_seconds[t, i]))
    return Estimate(
        resolved=resolved,
        memory=mem,
        compute=comp,
        io=io_plan,
        network=net,
        serving=serving,
        candidates=int(scored.fits.size),
        assumptions=ctx.assumptions,
        warnings=ctx.warnings,
    )


def _serving_network(ctx: _Context, gpu: GPU, batch: int, tp: int, pp: int, step_s: float) -> dict:
    """Bytes per decode step: two tensor-parallel all-reduces per layer (Megatron-LM) inside a node,
    one hidden-state hop per pipeline boundary between nodes."""
    a = ctx.arch
    hidden_bytes = batch * a.hidden * 2.0
    tp_bytes = 2 * a.layers / pp * 2 * (tp - 1) / tp * hidden_bytes if tp > 1 else 0.0
    pp_bytes = (pp - 1) * hidden_bytes / pp
    intra = network.intra_node_bandwidth(gpu, ctx.cat.collective_efficiency)
    fabric = ctx.cat.fabrics[_fabric(ctx, gpu)]
    seconds = tp_bytes / intra + pp_bytes / (fabric.gb_s * 1e9 * ctx.cat.collective_efficiency)
    return {
        "per_step_gb": (tp_bytes + pp_bytes) / 1e9,
        "fabric": fabric.id if pp > 1 else gpu.link,
        "single_node": pp == 1,
        "comm_fraction": seconds / (step_s + seconds) if step_s > 0 else 0.0,
        "by_dimension_gb": {"tp": tp_bytes / 1e9, "pp": pp_bytes / 1e9},
        "options": [],
    }


def _serving_region(ctx: _Context) -> str | None:
    """The region the user named, else one that serves the users' area (the guide's mapping)."""
    if ctx.req.region or not ctx.req.users:
        return ctx.req.region
    near = [r.id for r in ctx.cat.regions.values() if ctx.req.users in r.serves]
    if near:
        ctx.assume("region_for_users", region=near[0], users=ctx.req.users)
        return near[0]
    return None


MIG_GPUS = ("a100-80gb", "h100-80gb", "h200-141gb")


def _mig_fit(cat: Catalog, gpu: GPU, need_gib: float) -> dict | None:
    """The smallest MIG slice that holds one replica: on the chosen GPU, else on A100/H100/H200."""
    for candidate in [gpu, *(cat.gpus[g] for g in MIG_GPUS if g != gpu.id)]:
        fitting = [p for p in candidate.mig_profiles if p.memory_gib >= need_gib]
        if fitting:
            p = min(fitting, key=lambda p: (p.memory_gib, -p.count))
            if p.count > 1 or candidate.id != gpu.id:
                return {
                    "gpu": candidate.id,
                    "gpu_name": candidate.name,
                    "profile": p.name,
                    "memory_gib": p.memory_gib,
                    "per_gpu": p.count,
                }
            return None
    return None


# --- entry point ---------------------------------------------------------------------------


def estimate(req: Request, cat: Catalog | None = None) -> Estimate:
    """Estimate memory, time and cost; raises RequestError naming every value it cannot accept.

    With the process's own catalog the result is memoised by request: an estimate is a pure
    function of the request and the knowledge, which is loaded once per process. Callers never
    mutate an Estimate (tests/test_cache.py checks that cached and fresh answers agree)."""
    if (cat is None or cat is catalog()) and memo.enabled():
        return _estimate_memo(req.model_dump_json())
    return _estimate(req, cat or catalog())


@functools.lru_cache(maxsize=4096)
def _estimate_memo(request_json: str) -> Estimate:
    return _estimate(Request.model_validate_json(request_json), catalog())


def _estimate(req: Request, cat: Catalog) -> Estimate:
    problems = check_request(req, cat)
    if problems:
        raise RequestError(problems)
    arch, model_id = _resolve_model(req, cat)
    assumptions: list[Note] = []
    if arch.generic:
        assumptions.append(
            Note(
                code="generic_arch",
                params={"params_b": req.params_b, **architecture.describe_generic(arch), "vocab": arch.vocab},
            )
        )
    method = req.method or str(cat.defaults.method.value)
    if not req.method:
        assumptions.append(Note(code="default_method", params={"method": method}))
    gpu = None
    if req.gpu:
        gpu = cat.gpus.get(req.gpu)
        if gpu is None:
            raise RequestError([Note(code="unknown_gpu", params={"value": req.gpu, "suggestions": []})])
    ctx = _Context(cat, req, arch, model_id, gpu, method, assumptions, [])
    seq = _seq_len(ctx)
    problems = _check_against_model(ctx, seq)
    if problems:
        raise RequestError(problems)
    if method == "infer":
        return _estimate_serving(ctx, seq)
    return _estimate_training(ctx, seq)
