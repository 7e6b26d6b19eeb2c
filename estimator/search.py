"""Layout search: every open choice as numpy arrays, with GPU types as a second axis.

The layout grid L (GPU count, tensor, pipeline, expert and context parallel, ZeRO stage, offload,
checkpointing, micro-batch, interleaved pipeline chunks) is evaluated once for what does not
depend on the GPU type: memory, FLOPs and bytes moved. GPU types T add a second axis for
capacity, speed, links, price and stock, so one pass scores T x L candidates without a Python
loop over them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields

import numpy as np

from gpuplan.estimator import compute, conventions, fit, io, memo, memory, network, reliability
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.memory import GIB, OFFLOAD_CODE, Job, Layout, Overheads
from gpuplan.estimator.schema import ADAPTER_METHODS
from gpuplan.knowledge import GPU, Catalog, Defaults

MICRO_BATCHES = (1, 2, 4, 8)
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16)
MIN_LAYERS_PER_STAGE = 2  # layers per pipeline stage, at least, where they do not split evenly
EXPERT_PARALLEL = (1, 2, 4, 8, 16, 32, 64, 128, 256)
CONTEXT_PARALLEL = (1, 2, 4, 8, 16)
# Context parallelism is searched for long sequences only, each rank keeping at least this many
# tokens (Llama 3's 131k-token stage: CP 16, 8k tokens per rank)
CP_MIN_TOKENS_PER_RANK = 8192
PIPELINE_FROM_PARAMS_B = 100  # below this, ZeRO/FSDP plus tensor parallel hold any model we plan for
COST_TIE = 1.02  # costs within 2% count as equal; then fewer GPUs, the plain pipeline schedule, then faster
# An alternative that takes more than this many times the plan's time is none anybody would take
# (gpuplan's choice, no published figure: 1,441 days beside a plan of nine)
ALTERNATIVE_SLOWDOWN = 10.0


def gpu_counts(per_node: int, max_gpus: int) -> np.ndarray:
    """1, 2, 4, ... within a node, then whole nodes: 2, 3, 4, 6, 8, 12, 16, 24, ... nodes."""
    within = [n for n in (1, 2, 4, 8, 16) if n <= per_node] + [per_node]
    node_counts = {2**k for k in range(1, 13)} | {3 * 2**k for k in range(12)}
    across = [n * per_node for n in node_counts if n > 1 and n * per_node <= max_gpus]
    return np.array(sorted(set(within) | set(across)), dtype=float)


@dataclass
class Fixed:
    """Layout fields the user fixed (None = open)."""

    gpus: int | None = None
    tp: int | None = None
    pp: int | None = None
    zero: int | None = None
    offload: str | None = None
    ckpt: int | None = None
    micro_batch: int | None = None
    ep: int | None = None
    cp: int | None = None
    etp: int | None = None  # expert tensor parallel (MoE)
    vpp: int | None = None  # interleaved pipeline chunks per GPU (1: plain 1F1B)


FIXED_FIELDS = fields(Fixed)


@functools.lru_cache(maxsize=128)
def _product(axes: tuple[tuple[float, ...], ...]) -> tuple[np.ndarray, ...]:
    """Every combination of the axis values, one flat array per axis (read-only, shared)."""
    arrays = tuple(x.ravel() for x in np.meshgrid(*(np.array(a, dtype=float) for a in axes), indexing="ij"))
    for a in arrays:
        a.setflags(write=False)
    return arrays


@dataclass
class Grid:
    """The layout axis L: one entry per combination that passes the layout-only constraints."""

    gpus: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    zero: np.ndarray
    offload: np.ndarray
    ckpt: np.ndarray
    micro_batch: np.ndarray
    ep: np.ndarray  # expert parallel ranks (1 for a dense model)
    cp: np.ndarray  # context parallel ranks: each sequence split over them
    vpp: np.ndarray  # virtual pipeline stages per GPU (1: plain 1F1B)
    # expert tensor parallel ranks: ep x etp GPUs of a pipeline stage hold the routed experts (None: tp)
    etp: np.ndarray | None = None
    # the number of each layout's micro-batch shape (micro-batch, tp, ep, cp, etp: what the kernels
    # see) in the order of their values, numbered once for the grid (compute.distinct_micro_batches)
    shapes: np.ndarray | None = None

    @property
    def size(self) -> int:
        return int(self.gpus.size)

    def dp(self) -> np.ndarray:
        """Data-parallel replicas: the ranks that split the batch (context parallel ranks split a sequence)."""
        return self.gpus / (self.tp * self.pp * self.cp)

    def subset(self, keep: np.ndarray) -> Grid:
        return Grid(
            self.gpus[keep],
            self.tp[keep],
            self.pp[keep],
            self.zero[keep],
            self.offload[keep],
            self.ckpt[keep],
            self.micro_batch[keep],
            self.ep[keep],
            self.cp[keep],
            self.vpp[keep],
            None if self.etp is None else self.etp[keep],
            None if self.shapes is None else self.shapes[keep],
        )


def training_grid(
    arch: Arch, method: str, fixed: Fixed, gbs: int, per_node: int, max_gpus: int, seq_len: int = 0
) -> Grid:
    """Every combination of the open layout fields, filtered by the constraints that need no GPU type.
    The grid depends on a few numbers only, so it is built once per combination of them (the
    arrays are read-only and shared; Grid.subset makes new ones)."""
    pipeline_allowed = arch.params >= PIPELINE_FROM_PARAMS_B * 1e9
    adapters = method in ADAPTER_METHODS
    experts = arch.experts if arch.is_moe else 1
    long_enough = [c for c in CONTEXT_PARALLEL if c == 1 or seq_len // c >= CP_MIN_TOKENS_PER_RANK]
    cps = (fixed.cp,) if fixed.cp else tuple(long_enough)
    return _training_grid(
        arch.heads, arch.layers, experts, cps, pipeline_allowed, adapters, _fields(fixed), gbs, per_node, max_gpus
    )


def _fields(fixed: Fixed) -> tuple:
    """The fixed values in field order (dataclasses.astuple without its deep copy: they are numbers)."""
    return tuple(getattr(fixed, f.name) for f in FIXED_FIELDS)


@functools.lru_cache(maxsize=512)
def _training_grid(
    heads: int,
    layers: int,
    experts: int,
    cps: tuple[int, ...],
    pipeline_allowed: bool,
    adapters: bool,
    fixed_fields: tuple,
    gbs: int,
    per_node: int,
    max_gpus: int,
) -> Grid:
    fixed = Fixed(*fixed_fields)
    gpus = np.array([fixed.gpus], dtype=float) if fixed.gpus else gpu_counts(per_node, max_gpus)
    tps = [t for t in TENSOR_PARALLEL if heads % t == 0]
    pps = [1]
    if fixed.pp:
        pps = [fixed.pp]
    elif pipeline_allowed:
        # stages of unequal depth too (DeepSeek-V3's 61 layers over 16, a layer apart at most as
        # Megatron-Core's --pipeline-model-parallel-layout writes them), each stage two layers or more
        pps = [p for p in PIPELINE_PARALLEL if layers % p == 0 or layers // p >= MIN_LAYERS_PER_STAGE]
    offloads = [OFFLOAD_CODE[fixed.offload]] if fixed.offload else ([0] if adapters else [0, OFFLOAD_CODE["cpu"]])
    axes = [
        gpus,
        np.array([fixed.tp] if fixed.tp else tps, dtype=float),
        np.array(pps, dtype=float),
        # ZeRO-0/1/2 move the same bytes per step (an all-reduce's volume) and differ only in memory,
        # so an open stage is searched as 2 or 3 and simplified afterwards (simplest_zero)
        np.array([fixed.zero] if fixed.zero is not None else [0, 2, 3], dtype=float),
        np.array(offloads, dtype=float),
        np.array([fixed.ckpt] if fixed.ckpt is not None else [0, 1, 2], dtype=float),
        np.array([fixed.micro_batch] if fixed.micro_batch else MICRO_BATCHES, dtype=float),
        np.array([fixed.ep] if fixed.ep else [e for e in EXPERT_PARALLEL if experts % e == 0], dtype=float),
        np.array(cps, dtype=float),
    ]
    arrays = _product(tuple(tuple(a.tolist()) for a in axes))
    keep = _consistent(*arrays, fixed=fixed, gbs=gbs)
    arrays = [a[keep] for a in arrays]
    arrays = _with_interleaving(arrays, layers, gbs, fixed.vpp)
    g, t, p, e = arrays[0], arrays[1], arrays[2], arrays[7]
    arrays.append(np.full_like(g, fixed.etp) if fixed.etp else conventions.expert_tensor_parallel(t, e, g / p))
    m, x, etp = arrays[6], arrays[8], arrays[-1]
    arrays.append(compute.distinct_layouts(m, t, e, x, etp)[1])
    for a in arrays:
        a.setflags(write=False)
    return Grid(*arrays)


def _consistent(g, t, p, z, o, c, m, e, x, *, fixed: Fixed, gbs: int) -> np.ndarray:
    """The combinations a framework accepts: tp x pp x cp dividing the GPUs, expert parallel x
    expert tensor parallel ranks dividing a pipeline stage's GPUs (Megatron-Core's parallel folding:
    parallel_state.py requires world_size % (etp x ep x pp) == 0; etp 1 where ep x tp does not
    divide them, conventions.expert_tensor_parallel), ZeRO only where there is something to shard,
    offload with the ZeRO stage it needs, the batch split evenly."""
    shard = g / (t * p)  # ZeRO and gradient all-reduce group: data x context parallel ranks
    dp = shard / x
    experts = e * (fixed.etp or 1)
    keep = (g % (t * p * x) == 0) & ((g / p) % experts == 0) & ((shard > 1) | (z == 0) | (fixed.zero is not None))
    if fixed.zero is None:  # without data parallelism there is nothing to shard: ZeRO-0
        keep &= (shard > 1) != (z == 0)
    keep &= (o == 0) | (z >= np.where(o >= 3, 3, 1)) | (fixed.zero is not None)
    # an optimizer step splits the global batch evenly over replicas and micro-batches
    even = (gbs % (dp * m) == 0) & (dp * m <= gbs)
    return keep & (even if (even & keep).any() else dp * m <= max(gbs, float((dp * m).min())))


# Layers per interleaved chunk, at least: Megatron-LM takes any --num-layers-per-virtual-pipeline-stage
# that divides a stage's layers, down to one; Llama 3 405B ran one a chunk (its first chunk holds only
# the embedding, its last only the output head and loss: arXiv:2407.21783, Sec. 3.3.2)
MIN_LAYERS_PER_CHUNK = 1


def stage_slots(layers: int, pp: int) -> int:
    """Layers one pipeline stage holds for interleaving: an even split, else an even split with the
    embedding and the loss counted as a layer each (Llama 3's balanced first and last stages, Megatron-
    Core's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split), else
    the smallest stage's whole layers (an uneven --pipeline-model-parallel-layout)."""
    for slots in (layers, layers + 2):
        if slots % pp == 0:
            return slots // pp
    return layers // pp


def virtual_stages(layers: int, pp: np.ndarray, micro_batches: np.ndarray, fixed: int | None = None) -> np.ndarray:
    """Interleaved 1F1B chunks per GPU (Narayanan et al. 2021, Sec. 2.2.2): as many as leave each
    chunk MIN_LAYERS_PER_CHUNK layers, where Megatron-Core interleaves: two stages or more (with its
    default --overlap-p2p-communication) and at least as many micro-batches as stages (its
    microbatch_group_size_per_vp_stage lies in [PP, M]; Llama 3's flexible N); 1 elsewhere. `fixed`
    chunks where the pipeline's pp x vpp chunks hold a layer each at least, the embedding and the loss
    counted as one (Megatron-Core's --pipeline-model-parallel-layout spreads uneven layers over
    them). Stages of unequal depth are costed by compute.slowest_stage."""
    out = np.ones_like(pp)
    for p in sorted(set(pp[pp > 1].tolist())):  # not np.unique: it imports numpy.ma (5 ms of a first answer)
        if fixed is None:
            chunks = stage_slots(layers, int(p)) // MIN_LAYERS_PER_CHUNK
        else:
            chunks = fixed if fixed * p <= layers + 2 else 1
        if chunks >= 2:
            out[(pp == p) & (micro_batches >= p)] = chunks
    return out


def _with_interleaving(arrays: list[np.ndarray], layers: int, gbs: int, fixed: int | None = None) -> list[np.ndarray]:
    """The layout fields plus a vpp column: pipelines that can interleave are listed twice, plain
    and interleaved (interleaving shrinks the bubble but keeps more activations in flight); a
    schedule the user fixed (`fixed` chunks a GPU, 1 for plain 1F1B) only as fixed."""
    g, t, p, _, _, _, m, _, x = arrays
    micro_batches = np.maximum(1.0, np.ceil(gbs / (g / (t * p * x) * m)))
    vpp = virtual_stages(layers, p, micro_batches, fixed)
    twice = vpp > 1
    if fixed == 1:
        return [*arrays, np.ones_like(vpp)]
    if fixed:
        return [a[twice] for a in arrays] + [vpp[twice]]
    return [np.concatenate((a, a[twice])) for a in arrays] + [np.concatenate((np.ones_like(vpp), vpp[twice]))]


@dataclass
class GpuOptions:
    """The GPU-type axis T: figures as (T, 1) columns."""

    gpus: list[GPU]
    regions: list[str | None]
    capacity: np.ndarray
    price: np.ndarray
    stock: np.ndarray
    per_node: np.ndarray  # GPUs per server
    usable: np.ndarray  # the job's precision runs on this type
    nvlink: np.ndarray  # GPUs on one NVLink domain (a server, or an NVL72 rack): where TP and EP groups go
    rdma: np.ndarray | None = None  # the fabric between domains carries RDMA (wide serving EP)

    @property
    def size(self) -> int:
        return len(self.gpus)


def drop_dominated(cat: Catalog, gpus: list[GPU], region: str | None, speed: dict[str, float]) -> list[GPU]:
    """Remove GPU types another candidate beats or equals on every count: memory, sustained matmul
    speed, interconnect, HBM bandwidth and stock, at no higher price (same node size). A dominated
    type cannot win, or be a useful alternative, under any objective: exact but for the kernel
    model's SM counts and attention rates, which follow the matmul speed within a generation."""
    rows = np.array(
        [
            (
                g.memory_gib,
                speed[g.id],
                g.link_gb_s,
                g.hbm_gb_s,
                cat.stock(g.id, region)[0],
                -cat.price(g.id, cat.stock(g.id, region)[1]),
            )
            for g in gpus
        ]
    )
    node = np.array([g.gpus_per_node for g in gpus])
    at_least = (rows[:, None, :] >= rows[None, :, :]).all(axis=2)  # [j, i]: j >= i everywhere
    better = (rows[:, None, :] > rows[None, :, :]).any(axis=2)
    dominated = (at_least & better & (node[:, None] == node[None, :])).any(axis=0)
    return [g for g, out in zip(gpus, dominated, strict=True) if not out]


# gpu_options by catalog, GPU types, region, precision and fabric
_OPTIONS = memo.ShapeCache(256)


def gpu_options(
    cat: Catalog, gpus: list[GPU], region: str | None, precision: str | None, fabric: str | None = None
) -> GpuOptions:
    """The GPU-type axis of a search: memory, price, stock and server of each type (read-only,
    shared: kept by its arguments, the catalog and GPU objects by identity, which the entry keeps
    alive; the process's catalog and its copies stocking a type, Catalog.with_stock, come back)."""
    key = (id(cat), *map(id, gpus), region, precision, fabric)
    return _OPTIONS.get(key, (cat, *gpus), lambda: _read_only(_gpu_options(cat, list(gpus), region, precision, fabric)))


def _read_only(options: GpuOptions) -> GpuOptions:
    for x in vars(options).values():
        if isinstance(x, np.ndarray):
            x.setflags(write=False)
    return options


def _gpu_options(
    cat: Catalog, gpus: list[GPU], region: str | None, precision: str | None, fabric: str | None
) -> GpuOptions:
    regions: list[str | None] = []
    stock, price = [], []
    for g in gpus:
        count, where = cat.stock(g.id, region)
        regions.append(where)
        stock.append(count)
        price.append(cat.price(g.id, where))
    usable = [
        not ((precision or "").startswith("bf16") and not g.supports_bf16)
        and not (precision == "fp8-mixed" and not g.fp8_tflops)
        for g in gpus
    ]
    column = lambda values: np.array(values, dtype=float).reshape(-1, 1)  # noqa: E731
    return GpuOptions(
        gpus,
        regions,
        column([g.memory_gib * GIB for g in gpus]),
        column(price),
        column(stock),
        column([g.gpus_per_node for g in gpus]),
        column(usable).astype(bool),
        column([g.nvlink_gpus for g in gpus]),
        column([cat.fabrics[fabric or g.node_fabric].rdma for g in gpus]).astype(bool),
    )


@dataclass
class Scored:
    """T x L matrices for every candidate, plus the layout-only arrays they came from."""

    grid: Grid
    options: GpuOptions
    parts: dict[str, np.ndarray]  # memory per GPU by kind, (L,)
    per_gpu: np.ndarray  # (L,)
    fits: np.ndarray  # (T, L)
    deliverable: np.ndarray  # fits, runs, in stock (T, L)
    seconds: np.ndarray  # wall-clock of the whole job (T, L)
    cost: np.ndarray
    step: compute.StepTime
    tokens_per_s_gpu: np.ndarray
    micro_batches: np.ndarray  # (L,)
    explicit_gpus: bool = False
    goodput: np.ndarray | None = None  # of the time, what trains (job_reliability), (T, L)
    tight: np.ndarray | None = None  # fits with little room to spare (fit.tight), (T, L)
    tight_premium: float = 0.0  # what a tight plan is ranked as costing more (overhead.tight_premium)

    @functools.cached_property
    def days(self) -> np.ndarray:
        return self.seconds / 86400.0

    @property
    def candidates(self) -> int:
        return self.options.size * self.grid.size

    @functools.cached_property
    def flat(self) -> dict[str, np.ndarray]:
        """Per-candidate arrays in flat (T x L) order, built once for ranking and alternatives."""
        shape = self.fits.shape
        return {
            "cost": self.cost.ravel(),
            "days": self.days.ravel(),
            "gpus": _flat_over(self.grid.gpus, shape),
            "offload": _flat_over(self.grid.offload, shape),
            "type": _flat_over(np.arange(shape[0])[:, None], shape),
            "interleaved": _flat_over(self.grid.vpp > 1, shape),
            "tight": np.zeros(self.fits.size, dtype=bool) if self.tight is None else self.tight.ravel(),
        }


def _flat_over(values: np.ndarray, shape: tuple) -> np.ndarray:
    """`values` broadcast over `shape`, flattened: np.broadcast_to(values, shape).ravel() without
    broadcast_to's Python overhead (a few microseconds a call)."""
    out = np.empty(shape, dtype=values.dtype)
    out[...] = values
    return out.ravel()


def simplest_zero(
    job: Job, grid: Grid, i: int, gbs: int, over: Overheads, capacity_bytes: float, defaults: Defaults
) -> tuple[int, dict[str, float] | None]:
    """The lowest ZeRO stage that still fits layout i on a card of `capacity_bytes` (stages 0-2
    take the same time) with room to spare, and its memory parts when it is a lower stage than
    the layout's; a stage that fits only tightly is taken only where stage 2 is tight too."""
    zero = int(grid.zero[i])
    if zero != 2:
        return zero, None
    stages = grid.subset(np.array([i, i, i]))
    stages.zero = np.array([0.0, 1.0, 2.0])
    parts = memory.training_memory(job, layout_of(stages, gbs), over)
    need = memory.per_gpu_total(parts)
    usable = fit.usable(capacity_bytes, defaults)
    roomy = need <= defaults.number("overhead", "tight_fraction") * usable
    fitting = np.flatnonzero(roomy if roomy.any() else need <= usable)
    j = int(fitting[0]) if fitting.size else 2
    if j == 2:
        return zero, None
    return j, {k: float(np.ravel(v)[j if np.size(v) > 1 else 0]) for k, v in parts.items()}  # a part may be one value


def layout_of(grid: Grid, gbs: int, micro_batches: np.ndarray | None = None) -> Layout:
    """The layouts of `grid` at global batch `gbs` (`micro_batches`: each one's, when known already)."""
    if micro_batches is None:
        micro_batches = np.maximum(1.0, np.ceil(gbs / (grid.dp() * grid.micro_batch)))
    return Layout(
        grid.gpus,
        grid.tp,
        grid.pp,
        grid.zero,
        grid.offload,
        grid.ckpt,
        grid.micro_batch,
        micro_batches,
        8,
        grid.vpp,
        grid.ep,
        grid.cp,
        grid.etp,
        grid.shapes,
    )


def _viable(grid: Grid, per_gpu: np.ndarray, options: GpuOptions, defaults: Defaults) -> np.ndarray:
    """Layouts some candidate GPU type can hold, plus the least-memory plain layout for the report."""
    viable = fit.fits(per_gpu, options.capacity.max(), defaults)
    plain = grid.offload == 0
    if plain.any() and not (viable & plain).any():
        viable[np.flatnonzero(plain)[np.argmin(per_gpu[plain])]] = True
    return viable


def _deliverable(
    grid: Grid, options: GpuOptions, per_gpu: np.ndarray, explicit_gpus: bool, defaults: Defaults
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fits, deliverable, tight) per candidate (T, L): it fits in the usable memory, runs on the
    type, and is in stock; tight, it fits with little room to spare (fit.tight)."""
    usable = fit.usable(options.capacity, defaults)
    fits = per_gpu[None, :] <= usable
    tight = fits & (per_gpu[None, :] > defaults.number("overhead", "tight_fraction") * usable)
    runs = options.usable & (grid.tp[None, :] <= options.nvlink)
    in_stock = (grid.gpus[None, :] <= options.stock) | explicit_gpus
    return fits, fits & runs & in_stock, tight


def _training_time(
    job: Job,
    hw: compute.Hardware,
    grid: Grid,
    layout: Layout,
    tokens: float,
    cat: Catalog,
    mfu: float | None,
    per_node: np.ndarray,
) -> tuple[compute.StepTime, np.ndarray, np.ndarray, np.ndarray]:
    """Step time, tokens/s per GPU, wall-clock seconds of the whole job and its goodput (T, L): the
    training time over its goodput, from interruptions and checkpoints (estimator/reliability.py)."""
    gbs_effective = np.asarray(layout.micro_batches) * grid.dp() * grid.micro_batch
    step = compute.training_step(job, hw, layout, gbs_effective, cat.defaults, mfu)
    tokens_per_s_gpu = step.tokens / step.seconds / grid.gpus
    goodput = job_reliability(job, grid.gpus, per_node, cat).goodput
    seconds = tokens / (tokens_per_s_gpu * grid.gpus) / goodput
    return step, tokens_per_s_gpu, seconds, goodput


def job_reliability(job: Job, gpus, per_node, cat: Catalog) -> reliability.Reliability:
    """Goodput and checkpoint interval of a job on `gpus` GPUs, its checkpoints written at the
    slowest storage's rate (the storage is chosen after the layout; the write is seconds either way)."""
    ckpt = io.checkpoint_bytes(job.arch, job.method, job.precision, job.optimizer, job.lora_rank)
    write_rate = min(option.write_gb_s for option in cat.storage.options)
    nodes = np.ceil(np.asarray(gpus, dtype=float) / np.asarray(per_node, dtype=float))
    return reliability.reliability(gpus, reliability.checkpoint_write_s(ckpt, nodes, write_rate), cat.defaults)


def score_training(
    job: Job,
    grid: Grid,
    options: GpuOptions,
    hw: compute.Hardware,
    *,
    gbs: int,
    tokens: float,
    over: Overheads,
    cat: Catalog,
    mfu: float | None,
    explicit_gpus: bool,
    prune: bool = True,
) -> Scored:
    """Memory, fit, step time, days and cost of every GPU type x layout candidate."""
    layout = layout_of(grid, gbs)
    parts = memory.training_memory(job, layout, over)
    per_gpu = memory.per_gpu_total(parts)
    viable = _viable(grid, per_gpu, options, cat.defaults)
    if prune and viable.any() and not viable.all():  # layouts no candidate GPU can hold need no more work
        keep = np.flatnonzero(viable)  # indices: one pass each below, where a mask takes two
        grid = grid.subset(keep)
        parts = {k: v.take(keep) for k, v in parts.items()}
        per_gpu = per_gpu.take(keep)
        layout = layout_of(grid, gbs, np.asarray(layout.micro_batches).take(keep))
    fits, deliverable, tight = _deliverable(grid, options, per_gpu, explicit_gpus, cat.defaults)

    micro_batches = np.asarray(layout.micro_batches)
    step, tokens_per_s_gpu, seconds, goodput = _training_time(job, hw, grid, layout, tokens, cat, mfu, options.per_node)
    cost = seconds / 3600 * grid.gpus * options.price
    return Scored(
        grid,
        options,
        parts,
        per_gpu,
        fits,
        deliverable,
        seconds,
        cost,
        step,
        tokens_per_s_gpu,
        micro_batches,
        explicit_gpus,
        goodput,
        tight,
        cat.defaults.number("overhead", "tight_premium"),
    )


# --- choosing --------------------------------------------------------------------------------


def _band(values: np.ndarray) -> np.ndarray:
    """Values within COST_TIE of each other land in the same integer band."""
    return np.round(np.log(np.maximum(values, 1e-9)) / np.log(COST_TIE))


def ranking_keys(scored: Scored, objective: str) -> tuple[np.ndarray, ...]:
    """Flattened sort keys, most significant first, cached per search. A tight plan ranks as if it
    cost (or took) its premium more, so a plan with room to spare wins unless it costs more than
    that; within a band the plain 1F1B schedule goes before the interleaved one: interleaving earns
    its v times more sends where it shortens the step by more than the band."""
    cache = scored.__dict__.setdefault("_keys", {})
    if objective not in cache:
        f = scored.flat
        risk = 1.0 + scored.tight_premium * f["tight"]
        if objective == "fastest":
            cache[objective] = (_band(f["days"] * risk), f["gpus"], f["interleaved"], f["cost"])
        elif objective == "fewest":
            cache[objective] = (f["gpus"], _band(f["cost"] * risk), f["interleaved"], f["days"])
        else:
            cache[objective] = (_band(f["cost"] * risk), f["gpus"], f["interleaved"], f["days"])
    return cache[objective]


# from this few candidates on, best() compares their keys in Python: four numpy calls a key cost more
FEW_CANDIDATES = 8


def best(scored: Scored, objective: str, allowed: np.ndarray) -> int | None:
    """The allowed candidate that sorts first for the objective (a lexicographic argmin, O(n); of
    candidates tied on every key, the first)."""
    idx = np.flatnonzero(allowed)
    if idx.size == 0:
        return None
    keys = ranking_keys(scored, objective)
    for n, key in enumerate(keys):
        if idx.size <= FEW_CANDIDATES:
            return min(idx.tolist(), key=lambda j: tuple(k[j] for k in keys[n:]))
        values = key[idx]
        idx = idx[values == values.min()]
    return int(idx[0])


@dataclass
class Choice:
    index: int  # flat index into T x L
    met: bool  # every constraint met
    shortfalls: list[tuple[str, dict]] = field(default_factory=list)
    alternatives: list[tuple[str, int]] = field(default_factory=list)


def choose(
    scored: Scored, objective: str, deadline: float | None, budget: float | None, offload_fixed: bool = False
) -> Choice:
    """The best candidate for the objective under deadline and budget, or the nearest miss with
    each unmet constraint and by how much. Offload (slow, hungry for host RAM) is only chosen when
    the user asked for it; otherwise offloading layouts compete as alternatives."""
    everything = scored.deliverable
    ok_deliver = everything if offload_fixed else everything & (scored.grid.offload[None, :] == 0)
    # a limit not given is met by every candidate (True broadcasts over them)
    meets_deadline = scored.days <= deadline if deadline else True
    meets_budget = scored.cost <= budget if budget else True
    ok = ok_deliver & meets_deadline & meets_budget
    i = best(scored, objective, ok)
    if i is not None:
        if everything.size == 1:  # a fully fixed layout on one GPU type has nothing to compare with
            return Choice(i, True)
        extra = everything & meets_deadline & meets_budget
        return Choice(i, True, alternatives=alternatives(scored, objective, extra, i, deadline, budget))

    if not ok_deliver.any():
        j, shortfalls = _undeliverable(scored, offload_fixed)
    else:
        j, shortfalls = _nearest_miss(scored, ok_deliver, meets_deadline, meets_budget, deadline, budget)
    return Choice(j, False, shortfalls, alternatives(scored, objective, everything, j, deadline, budget))


def _undeliverable(scored: Scored, offload_fixed: bool) -> tuple[int, list[tuple[str, dict]]]:
    """Nothing can be delivered: the fewest GPUs that fit but are out of stock, else the layout
    that needs least memory (offloading layouts then come as alternatives)."""
    fits_somewhere = scored.fits & scored.options.usable & (scored.grid.tp[None, :] <= scored.options.nvlink)
    if not offload_fixed:
        fits_somewhere &= scored.grid.offload[None, :] == 0
    if fits_somewhere.any():
        j = best(scored, "fewest", fits_somewhere)
        return j, [_stock_shortfall(scored, j)]
    # nothing fits without offload: the layout that needs least memory, offload as alternatives
    no_offload = np.broadcast_to(scored.grid.offload == 0, scored.fits.shape).ravel() | offload_fixed
    per_gpu = np.broadcast_to(scored.per_gpu, scored.fits.shape).ravel()
    j = int(np.lexsort((scored.days.ravel(), per_gpu, ~no_offload))[0])
    return j, [] if scored.deliverable.any() else [("memory", {})]


def _stock_shortfall(scored: Scored, j: int) -> tuple[str, dict]:
    """Candidate j fits but its GPU type is not in stock in that number."""
    t, layout_i = np.unravel_index(j, scored.fits.shape)
    return (
        "stock",
        {
            "gpus": int(scored.grid.gpus[layout_i]),
            "gpu": scored.options.gpus[t].name,
            "stock": int(scored.options.stock[t, 0]),
        },
    )


def _nearest_miss(
    scored: Scored,
    ok_deliver: np.ndarray,
    meets_deadline: np.ndarray,
    meets_budget: np.ndarray,
    deadline: float | None,
    budget: float | None,
) -> tuple[int, list[tuple[str, dict]]]:
    """Deliverable candidates exist but none meets deadline and budget: by how much each is missed,
    and the cheapest in time, else the fastest in budget, else the fastest."""
    fastest = best(scored, "fastest", ok_deliver)
    cheapest = best(scored, "cheapest", ok_deliver)
    days, cost = scored.flat["days"], scored.flat["cost"]
    shortfalls: list[tuple[str, dict]] = []
    if deadline and days[fastest] > deadline:
        shortfalls.append(
            ("deadline", {"days": float(days[fastest]), "deadline": deadline, "ratio": float(days[fastest] / deadline)})
        )
    if budget and cost[cheapest] > budget:
        shortfalls.append(
            ("budget", {"cost": float(cost[cheapest]), "budget": budget, "over": float(cost[cheapest] - budget)})
        )
    in_time = ok_deliver & meets_deadline
    in_budget = ok_deliver & meets_budget
    if not shortfalls and deadline and budget:  # each alone is possible, not both together
        shortfalls.append(_both_limits_shortfall(scored, in_time, in_budget, deadline, budget))
    if in_time.any():
        pick = best(scored, "cheapest", in_time)
    elif in_budget.any():
        pick = best(scored, "fastest", in_budget)
    else:
        pick = fastest
    return int(pick), shortfalls


def _both_limits_shortfall(
    scored: Scored, in_time: np.ndarray, in_budget: np.ndarray, deadline: float, budget: float
) -> tuple[str, dict]:
    """Deadline and budget each alone can be met: the cost in time and the days within budget."""
    days, cost = scored.flat["days"], scored.flat["cost"]
    j = best(scored, "cheapest", in_time)
    k = best(scored, "fastest", in_budget)
    return (
        "deadline_and_budget",
        {
            "cost_in_time": float(cost[j]),
            "budget": budget,
            "over": float(cost[j] - budget),
            "days_in_budget": float(days[k]),
            "deadline": deadline,
        },
    )


def alternatives(
    scored: Scored,
    objective: str,
    allowed: np.ndarray,
    chosen: int,
    deadline: float | None = None,
    budget: float | None = None,
) -> list[tuple[str, int]]:
    """Up to three candidates that differ meaningfully from the chosen one. Beside a plan that
    fits, none that misses the deadline or the budget by more than the plan does, nor one more
    than ALTERNATIVE_SLOWDOWN times slower (a plan that does not fit keeps no time to compare)."""
    f = scored.flat
    allowed = allowed.ravel()
    t_chosen, l_chosen = np.unravel_index(chosen, scored.fits.shape)
    picks: list[tuple[str, int]] = []
    plan_fits = bool(scored.fits[t_chosen, l_chosen])
    if plan_fits:
        allowed = allowed & ~(f["days"] > ALTERNATIVE_SLOWDOWN * f["days"][chosen])
        if deadline or budget:
            allowed &= within_plan_limits(f["days"], f["cost"], chosen, deadline, budget)
    wanted = [] if plan_fits else [("with_offload", allowed & (f["offload"] > 0), "fewest")]
    if scored.options.size > 1:  # with one GPU type there is no other
        wanted.append(("other_gpu", allowed & (f["type"] != t_chosen), objective))
    wanted.append(("fewer_gpus_offload", allowed & (f["gpus"] < f["gpus"][chosen]) & (f["offload"] > 0), "cheapest"))
    if objective == "fastest":
        wanted.append(("cheaper_slower", allowed & (f["cost"] <= 0.7 * f["cost"][chosen]), "fastest"))
    else:
        wanted.append(("faster", allowed & (f["days"] <= 0.6 * f["days"][chosen]), "cheapest"))
    seen = {chosen}
    for reason, mask, goal in wanted:
        j = best(scored, goal, mask)
        if j is not None and j not in seen:
            picks.append((reason, j))
            seen.add(j)
    return picks


def within_plan_limits(
    days: np.ndarray, cost: np.ndarray, plan: int, deadline: float | None, budget: float | None
) -> np.ndarray:
    """Candidates that meet the deadline and the budget, or miss each by no more than the plan
    (`plan`: its index) does, within COST_TIE."""
    keep = np.ones(days.shape, dtype=bool)
    if deadline:
        keep &= (days <= deadline) | (days <= days[plan] * COST_TIE)
    if budget:
        keep &= (cost <= budget) | (cost <= cost[plan] * COST_TIE)
    return keep


# --- serving -------------------------------------------------------------------------------


@dataclass
class ServingScored:
    tp: np.ndarray  # (L,)
    pp: np.ndarray
    ep: np.ndarray  # expert parallel with data-parallel attention (MoE); 1 elsewhere
    options: GpuOptions
    parts: dict[str, np.ndarray]
    per_gpu: np.ndarray
    fits: np.ndarray  # (T, L)
    deliverable: np.ndarray
    tokens_per_s_gpu: np.ndarray  # (T, L)
    step_seconds: np.ndarray  # the whole decode step, its communication included
    replica_cost: np.ndarray  # USD per hour for one replica (T, L)
    comm_seconds: np.ndarray  # the step's tensor-, pipeline- and expert-parallel communication (T, L)

    @property
    def replica(self) -> np.ndarray:
        """GPUs of each replica shape (L,)."""
        return self.tp * self.pp * self.ep


# Expert-parallel serving replicas (MoE): attention data-parallel over the ep GPUs of one node,
# routed experts split over them (DeepSeek-V2's and SGLang's deployment of large MoE models)
SERVING_EP = (2, 4, 8, 16, 32, 64)  # beyond a server: over RDMA or inside an NVL72 rack (expert_parallel_ok)


def serving_grid(arch: Arch, fixed: Fixed, max_nodes: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replica shapes (tp, pp, ep): tensor x pipeline, and for MoE models expert parallelism
    with tp = pp = 1 (unless the user fixed tp or pp above 1). Built once per combination of the
    few numbers it reads (the arrays are read-only, shared), as training_grid is."""
    experts = arch.experts if arch.is_moe else 0
    return _serving_grid(arch.heads, arch.layers, experts, fixed.tp, fixed.pp, fixed.ep, fixed.gpus, max_nodes)


@functools.lru_cache(maxsize=512)
def _serving_grid(heads: int, layers: int, experts: int, tp, pp, ep, gpus, max_nodes: int):
    arrays = _replica_shapes(heads, layers, experts, Fixed(gpus=gpus, tp=tp, pp=pp, ep=ep), max_nodes)
    for a in arrays:
        a.setflags(write=False)
    return arrays


def _replica_shapes(heads: int, layers: int, experts: int, fixed: Fixed, max_nodes: int):
    tps = [t for t in (1, 2, 4, 8, 16) if heads % t == 0]
    shapes = [
        (t, p, 1)
        for t in ([fixed.tp] if fixed.tp else tps)
        for p in ([fixed.pp] if fixed.pp else range(1, max_nodes + 1))
    ]
    if experts and (fixed.tp or 1) == 1 and (fixed.pp or 1) == 1:
        eps = [fixed.ep] if fixed.ep else [n for n in SERVING_EP if experts % n == 0]
        shapes += [(1, 1, n) for n in eps if n > 1]
    t, p, e = (np.array(column, dtype=float) for column in zip(*shapes, strict=True))
    keep = p <= layers
    if fixed.ep:
        keep &= e == fixed.ep
    if fixed.gpus:
        keep &= (fixed.gpus % (t * p * e)) == 0
    return t[keep], p[keep], e[keep]


def _decode_speed(
    arch: Arch,
    precision: str,
    load: compute.Served,
    batch: int,
    tp: np.ndarray,
    pp: np.ndarray,
    options: GpuOptions,
    cat: Catalog,
    fabric: str | None,
    ep: np.ndarray | float = 1.0,
    kv_cache: str | None = None,
) -> tuple[np.ndarray, compute.ServingSpeed]:
    """(network seconds per step, generation throughput) of every GPU type x replica shape (T, L),
    the prompts' prefill in the steps (compute.step_load) within the engine's step token budget."""
    step_tokens = cat.defaults.number("inference", "prefill_chunk_tokens")
    links = network.decode_links(options.gpus, cat, fabric)
    comm = network.decode_comm_seconds(arch, compute.step_load(load, batch, ep, step_tokens)[1], tp, pp, links, ep)
    return comm, compute.decode_speed_arrays(
        arch,
        precision,
        load=load,
        batch=batch,
        tp=tp,
        pp=pp,
        dev=compute.serving_device(options.gpus, precision, cat),
        comm_seconds=comm,
        ep=ep,
        kv_cache=kv_cache,
        step_tokens=step_tokens,
    )


def serving_fit(
    arch: Arch,
    precision: str,
    *,
    seq: int,
    batch: int | np.ndarray,
    tp: np.ndarray,
    pp: np.ndarray,
    options: GpuOptions,
    over: Overheads,
    cat: Catalog,
    fixed: Fixed,
    ep: np.ndarray,
    kv_cache: str | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """(memory parts, bytes per GPU, fits, deliverable) of every replica shape on every GPU type:
    what score_serving decides before it times the decode. `batch` may be a column of batches
    (B, 1): the figures then gain that leading axis, (B, L) and (B, T, L)."""
    d = cat.defaults
    chunk = int(d.number("inference", "prefill_chunk_tokens"))
    parts = memory.serving_memory(
        arch,
        precision,
        seq_len=seq,
        batch=batch,
        tp=tp,
        pp=pp,
        prefill_chunk=chunk,
        over=over,
        ep=ep,
        kv_cache=kv_cache,
    )
    per_gpu = memory.per_gpu_total(parts)
    # an engine places weights, activations and KV cache in its share of the card (vLLM's default 0.9)
    fits = fit.fits(per_gpu[..., None, :], options.capacity, d, serving=True)
    per_node = options.nvlink
    # tensor parallel inside an NVLink domain; pipeline stages only across them (vLLM / TensorRT-LLM practice)
    shape_ok = (tp[None, :] <= per_node) & ((pp[None, :] == 1) | (tp[None, :] == np.minimum(per_node, max(tp))))
    if fixed.tp or fixed.pp:
        shape_ok = tp[None, :] <= np.maximum(per_node, tp.max())
    shape_ok &= expert_parallel_ok(ep, options)
    in_stock = ((tp * pp * ep)[None, :] <= options.stock) | bool(fixed.gpus)
    return parts, per_gpu, fits, fits & shape_ok & options.usable & in_stock


def score_serving(
    arch: Arch,
    precision: str,
    *,
    seq: int,
    batch: int,
    tp: np.ndarray,
    pp: np.ndarray,
    options: GpuOptions,
    over: Overheads,
    cat: Catalog,
    fixed: Fixed,
    fabric: str | None = None,
    ep: np.ndarray | None = None,
    kv_cache: str | None = None,
    prompt: int | None = None,
    chunked: bool = True,
) -> ServingScored:
    """Every replica shape on every GPU type serving `batch` sequences of `seq` tokens, `prompt`
    of them prompt (compute.served), the prefill sharing the steps when `chunked`."""
    ep = np.ones_like(tp) if ep is None else ep
    shapes = dict(seq=seq, batch=batch, tp=tp, pp=pp, options=options, over=over, cat=cat, fixed=fixed, ep=ep)
    parts, per_gpu, fits, deliverable = serving_fit(arch, precision, **shapes, kv_cache=kv_cache)
    load = compute.served(seq, prompt, chunked)
    comm, speed = _decode_speed(arch, precision, load, batch, tp, pp, options, cat, fabric, ep, kv_cache)
    return ServingScored(
        tp,
        pp,
        ep,
        options,
        parts,
        per_gpu,
        fits,
        deliverable,
        speed.tokens_per_s_per_gpu,
        speed.step_seconds,
        (tp * pp * ep)[None, :] * options.price,
        np.broadcast_to(comm, speed.step_seconds.shape),
    )


def expert_parallel_ok(ep: np.ndarray, options: GpuOptions) -> np.ndarray:
    """(T, L): expert-parallel replicas on NVLink GPUs, inside one NVLink domain (a server, or an
    NVL72 rack) or over whole domains joined by an RDMA fabric, as wide-EP decode runs (DeepSeek's
    EP144-320 and SGLang's EP72 on DeepEP's low-latency kernels, which need NVLink inside a node
    and RDMA between nodes); PCIe cards and TCP networks are left to tensor parallelism."""
    nvlink = np.array([[g.link == "nvlink"] for g in options.gpus])
    rdma = np.ones_like(nvlink) if options.rdma is None else options.rdma
    return (ep[None, :] == 1) | (nvlink & ((ep[None, :] <= options.nvlink) | rdma))


def choose_serving(scored: ServingScored, objective: str, batch: int, min_speed: float) -> tuple[int, bool, bool]:
    """The replica to deploy: cheapest per generated token (default), fastest per sequence, or
    fewest GPUs, among those that fit, are in stock and stream at least `min_speed` tokens/s per
    sequence. Returns (flat index, deliverable, interactive)."""
    replica = np.broadcast_to(scored.replica, scored.fits.shape).ravel()
    per_sequence = scored.tokens_per_s_gpu.ravel() * replica / batch
    interactive = per_sequence >= min_speed
    allowed = scored.deliverable.ravel()
    met = bool(allowed.any())
    if not met:  # nothing deliverable: fits anywhere, but never an expert-parallel replica over nodes
        allowed = (scored.fits & scored.options.usable & expert_parallel_ok(scored.ep, scored.options)).ravel()
        if not allowed.any():
            per_gpu = np.broadcast_to(scored.per_gpu, scored.fits.shape).ravel()
            least = int(np.argmin(per_gpu))  # nothing fits: the answer says so, not that it is slow
            return least, False, bool(interactive[least])
    fast_enough = bool((allowed & interactive).any())
    if fast_enough:
        allowed = allowed & interactive
    banned = ~allowed
    per_token = scored.replica_cost.ravel() / np.maximum(per_sequence * batch, 1e-9)
    pp = np.broadcast_to(scored.pp, scored.fits.shape).ravel()
    band = np.round(np.log(np.maximum(per_token, 1e-12)) / np.log(COST_TIE))
    if objective == "fastest":
        order = np.lexsort((per_token, -per_sequence, banned))
    elif objective == "fewest":
        order = np.lexsort((per_token, replica, banned))
    else:
        order = np.lexsort((-per_sequence, replica, pp, band, banned))
    return int(order[0]), met, fast_enough
