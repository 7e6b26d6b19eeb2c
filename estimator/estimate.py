"""Request -> Estimate: check the request, fill what is open (each default becomes a stated
assumption), choose the open layout fields among candidates evaluated as numpy arrays, and
compute memory, time and cost for the chosen layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from estimator import architecture, compute, memory, network
from estimator.architecture import Arch
from estimator.errors import RequestError
from estimator.memory import CKPT_CODE, GIB, OFFLOAD_CODE, Job, Layout, Overheads
from estimator.schema import (
    ADAPTER_METHODS,
    CKPTS,
    OFFLOADS,
    SERVE_PRECISIONS,
    TRAIN_PRECISIONS,
    ComputeEstimate,
    Estimate,
    MemoryBreakdown,
    MemoryEstimate,
    Note,
    Request,
    Resolved,
)
from knowledge import GPU, Catalog, catalog

PRETRAINING = ("pretrain", "continue")
MICRO_BATCHES = (1, 2, 4, 8)
MAX_PARAMS_B = 100_000  # 100T parameters: beyond any model built so far
SECONDS_PER_DAY = 86400.0


@dataclass
class _Context:
    cat: Catalog
    req: Request
    arch: Arch
    model_id: str | None
    gpu: GPU
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


def _check_request(req: Request, cat: Catalog) -> list[Note]:
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
    if req.nodes and req.gpus and req.gpus // req.nodes > gpu.gpus_per_node:
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
        elif precision.startswith("bf16") and not gpu.supports_bf16:
            bad.append(Note(code="no_bf16", params={"gpu": gpu.name}))
        elif precision == "fp8-mixed" and not gpu.fp8_tflops:
            bad.append(Note(code="no_fp8", params={"gpu": gpu.name}))
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
        return architecture.for_model(spec.id), spec.id
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


def _gpu_counts(gpu: GPU, max_gpus: int) -> np.ndarray:
    """1, 2, 4, ... within a node, then whole nodes: 2, 3, 4, 6, 8, 12, 16, 24, ... nodes."""
    per_node = gpu.gpus_per_node
    within = [n for n in (1, 2, 4, 8, 16) if n <= per_node] + [per_node]
    node_counts = {2**k for k in range(1, 13)} | {3 * 2**k for k in range(12)}
    across = [n * per_node for n in node_counts if n > 1 and n * per_node <= max_gpus]
    return np.array(sorted(set(within) | set(across)), dtype=float)


# --- training ------------------------------------------------------------------------------


def _training_grid(ctx: _Context, gbs: int) -> dict[str, np.ndarray]:
    """Every combination of the open layout fields, filtered by the hard constraints."""
    req, gpu, arch = ctx.req, ctx.gpu, ctx.arch
    max_gpus = int(ctx.number("limits", "max_gpus"))
    if req.gpus:
        gpus = np.array([req.gpus], dtype=float)
    elif req.nodes:
        gpus = np.array([req.nodes * gpu.gpus_per_node], dtype=float)
    else:
        gpus = _gpu_counts(gpu, max_gpus)
    tps = [t for t in (1, 2, 4, 8) if t <= gpu.gpus_per_node and arch.heads % t == 0]
    tp = np.array([req.tp] if req.tp else tps, dtype=float)
    zeros = np.array([req.zero] if req.zero is not None else [0, 1, 2, 3], dtype=float)
    ckpts = np.array([CKPT_CODE[req.ckpt]] if req.ckpt else [0, 1, 2], dtype=float)
    mbss = np.array([req.micro_batch] if req.micro_batch else MICRO_BATCHES, dtype=float)
    g, t, z, c, m = (x.ravel() for x in np.meshgrid(gpus, tp, zeros, ckpts, mbss, indexing="ij"))
    pp = np.full_like(g, req.pp or 1)
    offload = np.full_like(g, OFFLOAD_CODE[req.offload or "none"])
    dp = g / (t * pp)
    keep = (g % (t * pp) == 0) & ((dp > 1) | (z == 0))
    # each optimizer step splits the global batch evenly over replicas and micro-batches
    even = (gbs % (dp * m) == 0) & (dp * m <= gbs)
    keep &= even if (even & keep).any() else dp * m <= max(gbs, dp.min() * m.min())
    if req.zero is None and req.offload and req.offload != "none":
        keep &= z >= (3 if req.offload.endswith("-all") else 1)
    if not keep.any():
        raise RequestError(
            [Note(code="tp_pp_not_dividing", params={"gpus": req.gpus, "tp": req.tp or 1, "pp": req.pp or 1})]
        )
    return {
        "gpus": g[keep],
        "tp": t[keep],
        "pp": pp[keep],
        "zero": z[keep],
        "ckpt": c[keep],
        "offload": offload[keep],
        "micro_batch": m[keep],
    }


def _estimate_training(ctx: _Context, seq: int) -> Estimate:
    req, cat, gpu, arch, method = ctx.req, ctx.cat, ctx.gpu, ctx.arch, ctx.method
    d = cat.defaults
    precision = req.precision
    if not precision:
        key = "train" if gpu.supports_bf16 else "train_no_bf16"
        precision = str(d.precision[key].value)
        ctx.assume("default_precision", precision=precision)
    optimizer = req.optimizer or str(d.optimizer["qlora" if method == "qlora" else "default"].value)
    if not req.optimizer:
        ctx.assume("default_optimizer", optimizer=optimizer)
    lora_rank = req.lora_rank or int(d.lora["rank"].value)
    if method in ADAPTER_METHODS and not req.lora_rank:
        ctx.assume("default_lora", rank=lora_rank, targets=str(d.lora["targets"].value))
    if req.global_batch:
        gbs = req.global_batch
    elif method in PRETRAINING:
        gbs = max(1, round(float(d.global_batch_tokens["pretrain"]) / seq))
        ctx.assume("default_global_batch", global_batch=gbs, tokens=gbs * seq)
    else:
        gbs = int(d.global_batch_tokens["finetune_sequences"])
        ctx.assume("default_global_batch", global_batch=gbs, tokens=gbs * seq)
    tokens = _train_tokens(ctx, seq)

    job = Job(arch, method, precision, optimizer, seq, lora_rank, str(d.lora["targets"].value))
    over = _overheads(cat)
    fabric = cat.fabrics[cat.default_fabric]
    links = network.links_for(gpu, fabric, cat.collective_efficiency)

    if not req.ckpt and (req.tp or req.pp) and (req.tp or 1) * (req.pp or 1) > 1:
        # Megatron-LM's published 3D-parallel benchmarks recompute every layer (Narayanan et al. 2021)
        req = req.model_copy(update={"ckpt": "full"})
        ctx.req = req
        ctx.assume("megatron_recompute")
    grid = _training_grid(ctx, gbs)
    mbs = grid["micro_batch"]
    dp = grid["gpus"] / (grid["tp"] * grid["pp"])
    micro_batches = np.maximum(1.0, np.ceil(gbs / (dp * mbs)))
    layout = Layout(
        grid["gpus"],
        grid["tp"],
        grid["pp"],
        grid["zero"],
        grid["offload"],
        grid["ckpt"],
        mbs,
        micro_batches,
        gpu.gpus_per_node,
    )
    parts = memory.training_memory(job, layout, over)
    per_gpu = memory.per_gpu_total(parts)
    fits = per_gpu <= gpu.memory_gib * GIB
    gbs_effective = micro_batches * dp * mbs
    step = compute.training_step(job, gpu, layout, gbs_effective, links, d, req.mfu)
    tokens_per_s_gpu = step.tokens / step.seconds / grid["gpus"]
    goodput = ctx.number("goodput")
    seconds = tokens / (tokens_per_s_gpu * grid["gpus"]) / goodput
    days = seconds / SECONDS_PER_DAY
    cost = seconds / 3600 * grid["gpus"] * gpu.price_usd_per_hour

    deadline = req.deadline_days
    if deadline is None and method in PRETRAINING and not req.gpus and not req.nodes:
        deadline = ctx.number("limits", "pretrain_target_days")
        ctx.assume("pretrain_target", days=deadline)
    ok = fits.copy()
    if deadline:
        ok &= days <= deadline
    if req.budget_usd:
        ok &= cost <= req.budget_usd
    cost_band = np.round(np.log(np.maximum(cost, 1e-9)) / np.log(1.02))  # costs within ~2% tie
    if ok.any():
        order = np.lexsort((days, grid["gpus"], cost_band, ~ok))
    elif fits.any():
        order = np.lexsort((cost, days, ~fits))
    else:
        order = np.lexsort((days, per_gpu))
    i = int(order[0])

    chosen = {k: grid[k][i] for k in grid}
    open_fields = [
        f
        for f, given in (
            ("gpus", req.gpus or req.nodes),
            ("tp", req.tp),
            ("zero", req.zero is not None),
            ("ckpt", req.ckpt),
            ("micro_batch", req.micro_batch),
        )
        if not given
    ]
    if open_fields:
        ctx.assume(
            "chosen_layout",
            gpus=int(chosen["gpus"]),
            tp=int(chosen["tp"]),
            zero=int(chosen["zero"]),
            ckpt=CKPTS[int(chosen["ckpt"])],
            micro_batch=int(chosen["micro_batch"]),
            fields=open_fields,
        )
    if deadline and fits[i] and days[i] > deadline:
        ctx.warn("deadline_missed", days=float(days[i]), deadline=deadline)
    if req.budget_usd and fits[i] and cost[i] > req.budget_usd:
        ctx.warn("over_budget", cost=float(cost[i]), budget=req.budget_usd)
    if gbs_effective[i] != gbs:
        ctx.warn("global_batch_rounded", asked=gbs, used=int(gbs_effective[i]))

    hfu_note = compute.hardware_utilisation(gpu, method, precision, d)
    if req.mfu is None:
        ctx.assume("mfu_model", mfu=float(step.mfu[i]), hfu=hfu_note, family=gpu.family)
    ctx.assume("goodput", goodput=goodput)
    ctx.assume("activation_conventions", chunks=memory.LOSS_CHUNKS_NOTE)

    breakdown = {k: float(parts[k][i]) / GIB for k in memory.BREAKDOWN_KEYS}
    mem = _memory_estimate(ctx, breakdown, float(per_gpu[i]) / GIB, parts, i, int(chosen["gpus"]))
    if not mem.fits:
        _suggest_fixes(ctx, job, layout, over, i, gbs)

    flops = compute.token_flops(arch, method, seq, lora_rank)
    nodes = max(1, math.ceil(chosen["gpus"] / gpu.gpus_per_node))
    resolved = Resolved(
        model=ctx.model_id,
        model_name=arch.name,
        params_b=arch.params / 1e9,
        active_params_b=arch.active_params / 1e9,
        method=method,
        seq_len=seq,
        micro_batch=int(mbs[i]),
        global_batch=int(gbs_effective[i]),
        train_tokens=tokens,
        precision=precision,
        optimizer=optimizer,
        gpu=gpu.id,
        gpu_name=gpu.name,
        gpus=int(chosen["gpus"]),
        nodes=nodes,
        zero=int(chosen["zero"]),
        offload=OFFLOADS[int(chosen["offload"])],
        tp=int(chosen["tp"]),
        pp=int(chosen["pp"]),
        dp=int(dp[i]),
        ckpt=CKPTS[int(chosen["ckpt"])],
        lora_rank=lora_rank if method in ADAPTER_METHODS else None,
        mfu=req.mfu,
        deadline_days=req.deadline_days,
        budget_usd=req.budget_usd,
        region=req.region,
    )
    comp = ComputeEstimate(
        total_flops=tokens * flops.model,
        flops_per_token=flops.model,
        train_tokens=tokens,
        mfu=float(step.mfu[i]),
        tokens_per_s_per_gpu=float(tokens_per_s_gpu[i]),
        step_time_s=float(step.seconds[i]),
        days=float(days[i]),
        gpu_hours=float(seconds[i] / 3600 * grid["gpus"][i]),
        cost_usd=float(cost[i]),
        price_usd_per_gpu_hour=gpu.price_usd_per_hour,
    )
    return Estimate(resolved=resolved, memory=mem, compute=comp, assumptions=ctx.assumptions, warnings=ctx.warnings)


def _memory_estimate(
    ctx: _Context, breakdown: dict[str, float], per_gpu_gib: float, parts, i: int, gpus: int
) -> MemoryEstimate:
    gpu, arch = ctx.gpu, ctx.arch
    factor = ctx.number("offload", "host_buffer_factor")
    per_node = min(gpus, gpu.gpus_per_node)
    loading = arch.params * 2.0 * per_node / gpus / GIB  # this node's share of the 16-bit checkpoint
    host_ram = float(parts["host_offload"][i]) / GIB * factor + loading
    nvme = float(parts["nvme_offload"][i]) / GIB
    typical = ctx.number("offload", "host_ram_per_node_gib")
    if host_ram > typical:
        ctx.warn("host_ram_high", host_ram=host_ram, typical=typical)
    return MemoryEstimate(
        per_gpu_gib=per_gpu_gib,
        capacity_gib=gpu.memory_gib,
        usable_gib=gpu.memory_gib - breakdown["overhead"],
        fits=per_gpu_gib <= gpu.memory_gib,
        host_ram_gib=host_ram,
        nvme_gib=nvme,
        breakdown_gib=MemoryBreakdown(**breakdown),
    )


def _suggest_fixes(ctx: _Context, job: Job, layout: Layout, over: Overheads, i: int, gbs: int) -> None:
    """When the chosen layout does not fit, quantify the two usual ways out."""
    gpu = ctx.gpu
    pick = {
        f: float(np.asarray(getattr(layout, f)).ravel()[i] if np.ndim(getattr(layout, f)) else getattr(layout, f))
        for f in ("gpus", "tp", "pp", "offload", "micro_batch", "micro_batches")
    }
    ctx.warn("does_not_fit", gpu=gpu.name, capacity=gpu.memory_gib)
    if job.method not in ADAPTER_METHODS and pick["offload"] == 0 and pick["gpus"] > 1:
        trial = Layout(
            pick["gpus"],
            pick["tp"],
            pick["pp"],
            3,
            OFFLOAD_CODE["cpu"],
            CKPT_CODE["full"],
            pick["micro_batch"],
            pick["micro_batches"],
            gpu.gpus_per_node,
        )
        parts = memory.training_memory(job, trial, over)
        need = float(memory.per_gpu_total(parts)) / GIB
        host = float(parts["host_offload"]) / GIB * ctx.number("offload", "host_buffer_factor")
        if need <= gpu.memory_gib:
            ctx.warn("fits_with_offload", per_gpu=need, host_ram=host, gpus=int(pick["gpus"]))
    counts = _gpu_counts(gpu, int(ctx.number("limits", "max_gpus")))
    counts = counts[(counts % (pick["tp"] * pick["pp"]) == 0) & (counts > pick["gpus"])]
    dp = counts / (pick["tp"] * pick["pp"])
    trial = Layout(
        counts, pick["tp"], pick["pp"], 3, 0, CKPT_CODE["full"], 1, np.maximum(1, np.ceil(gbs / dp)), gpu.gpus_per_node
    )
    need = memory.per_gpu_total(memory.training_memory(job, trial, over)) / GIB
    enough = counts[need <= gpu.memory_gib]
    if enough.size:
        ctx.warn("fits_with_more_gpus", gpus=int(enough[0]), gpu=gpu.name)


# --- serving -------------------------------------------------------------------------------


def _estimate_serving(ctx: _Context, seq: int) -> Estimate:
    req, cat, gpu, arch = ctx.req, ctx.cat, ctx.gpu, ctx.arch
    d = cat.defaults
    published = arch.weights_dtype if arch.weights_dtype != "bf16" else None
    if published == "fp8" and not (gpu.fp8_tflops or gpu.family.startswith("ampere")):
        published = None  # no FP8 kernels (V100, T4): served upcast to 16-bit
    precision = req.precision or published or str(d.precision["infer"].value)
    if not req.precision:
        ctx.assume("default_serve_precision", precision=precision)
    batch = req.micro_batch or int(d.micro_batch["infer"])
    if not req.micro_batch:
        ctx.assume("default_concurrency", batch=batch)
    over = _overheads(cat)
    per_node = gpu.gpus_per_node
    tps = [t for t in (1, 2, 4, 8, 16) if t <= per_node and arch.heads % t == 0]
    tp = np.array([req.tp] if req.tp else tps, dtype=float)
    pp = np.array([req.pp] if req.pp else list(range(1, 17)), dtype=float)
    t, p = (x.ravel() for x in np.meshgrid(tp, pp, indexing="ij"))
    # tensor parallel inside a node; pipeline stages only across nodes (vLLM / TensorRT-LLM practice)
    keep = (p <= arch.layers) & ((p == 1) | (t == max(tps)) | bool(req.tp))
    if req.gpus:
        keep &= (req.gpus % (t * p)) == 0
    t, p = t[keep], p[keep]
    if t.size == 0:
        raise RequestError(
            [Note(code="tp_pp_not_dividing", params={"gpus": req.gpus, "tp": req.tp or 1, "pp": req.pp or 1})]
        )
    chunk = int(d.number("inference", "prefill_chunk_tokens"))
    parts = memory.serving_memory(arch, precision, seq, batch, t, p, chunk, over)
    per_gpu = memory.per_gpu_total(parts)
    fits = per_gpu <= gpu.memory_gib * GIB
    replica = t * p
    order = np.lexsort((p, replica, ~fits)) if fits.any() else np.lexsort((replica, per_gpu))
    i = int(order[0])
    replica_gpus = int(replica[i])
    gpus = req.gpus or replica_gpus
    if not (req.gpus or req.tp or req.pp):
        ctx.assume("serving_layout", tp=int(t[i]), pp=int(p[i]))
    if precision in ("int8", "int4", "fp8"):
        ctx.assume("quantized_ends", precision=precision)

    speed = compute.decode_speed(arch, gpu, precision, seq, batch, t[i], p[i], d)
    tokens_per_s_gpu = float(speed.tokens_per_s_per_gpu)
    if req.train_tokens:
        tokens = req.train_tokens
        seconds = tokens / (tokens_per_s_gpu * gpus)
    else:
        seconds = SECONDS_PER_DAY
        tokens = tokens_per_s_gpu * gpus * seconds
        ctx.assume("serving_day")
    gpu_hours = seconds / 3600 * gpus
    cost = gpu_hours * gpu.price_usd_per_hour
    flops = compute.token_flops(arch, "infer", seq)
    breakdown = {k: float(parts[k][i]) / GIB for k in memory.BREAKDOWN_KEYS}
    mem = _memory_estimate(ctx, breakdown, float(per_gpu[i]) / GIB, parts, i, replica_gpus)
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
        nodes=max(1, math.ceil(gpus / per_node)),
        zero=0,
        offload="none",
        tp=int(t[i]),
        pp=int(p[i]),
        dp=max(1, gpus // replica_gpus),
        ckpt="none",
        lora_rank=None,
        mfu=req.mfu,
        deadline_days=req.deadline_days,
        budget_usd=req.budget_usd,
        region=req.region,
    )
    peak = gpu.peak_16bit_tflops * 1e12
    comp = ComputeEstimate(
        total_flops=tokens * flops.model,
        flops_per_token=flops.model,
        train_tokens=tokens,
        mfu=tokens_per_s_gpu * flops.model / peak,
        tokens_per_s_per_gpu=tokens_per_s_gpu,
        step_time_s=float(speed.step_seconds),
        days=seconds / SECONDS_PER_DAY,
        gpu_hours=gpu_hours,
        cost_usd=cost,
        price_usd_per_gpu_hour=gpu.price_usd_per_hour,
        cost_per_million_tokens_usd=gpu.price_usd_per_hour / (tokens_per_s_gpu * 3600) * 1e6,
    )
    return Estimate(resolved=resolved, memory=mem, compute=comp, assumptions=ctx.assumptions, warnings=ctx.warnings)


# --- entry point ---------------------------------------------------------------------------


def estimate(req: Request, cat: Catalog | None = None) -> Estimate:
    """Estimate memory, time and cost; raises RequestError naming every value it cannot accept."""
    cat = cat or catalog()
    problems = _check_request(req, cat)
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
    gpu_id = req.gpu or str((cat.defaults.gpu_infer if method == "infer" else cat.defaults.gpu).value)
    if gpu_id not in cat.gpus:
        raise RequestError([Note(code="unknown_gpu", params={"value": gpu_id, "suggestions": []})])
    if not req.gpu:
        assumptions.append(Note(code="default_gpu", params={"gpu": cat.gpus[gpu_id].name}))
    ctx = _Context(cat, req, arch, model_id, cat.gpus[gpu_id], method, assumptions, [])
    ctx.assume("price_default", gpu=ctx.gpu.name, price=ctx.gpu.price_usd_per_hour)
    seq = _seq_len(ctx)
    problems = _check_against_model(ctx, seq)
    if problems:
        raise RequestError(problems)
    if method == "infer":
        return _estimate_serving(ctx, seq)
    return _estimate_training(ctx, seq)
