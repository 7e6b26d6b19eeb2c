"""Training and serving time: FLOPs per token, utilisation, step time, days and cost.

`total_flops` counts model FLOPs (PaLM's definition: matmuls and attention, forward and backward,
no recomputation), so recomputation shows up as lower MFU. Layout fields may be numpy arrays.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from gpuplan.estimator import conventions, kernels
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.memory import (
    NF4_BYTES_PER_PARAM,
    Job,
    Layout,
    kv_bytes_per_token,
    kv_share,
    serving_expert_slots,
    serving_weight_bytes,
    state_bytes,
)
from gpuplan.estimator.network import (
    Links,
    Overlap,
    exposed_comm,
    paired_micro_batch_share,
    pipeline_exposed_share,
    step_comm_seconds,
    step_traffic,
    tensor_parallel_async_share,
)
from gpuplan.estimator.schema import ADAPTER_METHODS
from gpuplan.knowledge import GPU, Catalog, Defaults, catalog


@dataclass(frozen=True)
class TokenFlops:
    model: float  # FLOPs credited per token (PaLM definition)
    forward: float  # FLOPs a full recomputation repeats per token


def attention_flops_forward(a: Arch, context: float) -> float:
    """QK^T and AV per token per forward: 2·L·T·H·(d_qk + d_v).

    Chowdhery et al. 2022 (PaLM), App. B: 12·L·H·Q·T for forward and backward together.
    """
    v_dim = a.v_head_dim if a.is_mla else a.head_dim
    return 2.0 * a.layers * context * a.heads * (a.head_dim + v_dim)


def token_flops(a: Arch, method: str, seq_len: int, lora_rank: int = 16) -> TokenFlops:
    """Model FLOPs per trained token; 6·N·D (Kaplan et al. 2020) plus attention."""
    n = a.matmul_params_per_token
    fwd = 2.0 * n + attention_flops_forward(a, seq_len)
    if method in ADAPTER_METHODS:
        # frozen weights need no weight gradients: forward + input gradients ~ 4·N (Hu et al. 2021)
        adapters = a.lora_params(lora_rank)
        attn = attention_flops_forward(a, seq_len)
        return TokenFlops(model=4.0 * n + 3.0 * attn + 6.0 * adapters, forward=fwd)
    if method == "dpo":  # policy forward+backward on chosen and rejected, plus the reference forward
        return TokenFlops(model=4.0 * fwd, forward=fwd)
    if method == "ppo":
        # per experience token: actor generation, reference, reward and critic forwards, then actor
        # and critic training (Ouyang et al. 2022 setup with equal-sized models): 4 + 2 x 3 forwards
        return TokenFlops(model=10.0 * fwd, forward=2.0 * fwd)
    if method == "infer":
        return TokenFlops(model=2.0 * n + attention_flops_forward(a, seq_len / 2), forward=0.0)
    return TokenFlops(model=3.0 * fwd, forward=fwd)


def outside_kernels(method: str, defaults: Defaults) -> float:
    """Share of a step's time its kernels take, for what the kernel model does not time: PPO's
    rollout generation (defaults.method_efficiency); 1 otherwise."""
    eff = defaults.method_efficiency.get(method)
    return float(eff.value) if eff is not None and not isinstance(eff, str) else 1.0


@dataclass(frozen=True)
class Hardware:
    """What the time model needs of the GPU types: scalars for one type, (T, 1) arrays for many."""

    peak: np.ndarray | float  # dense 16-bit FLOP/s, MFU's denominator
    device: kernels.Device
    links: Links
    outside: float = 1.0  # outside_kernels


def training_device(gpus: list[GPU], precision: str, cat: Catalog, sdpa: bool = False) -> kernels.Device:
    """The kernel figures of GPU types for a training precision; grouped expert GEMMs take the row
    tiles of the serving precision of the same matmul type (moe_tile_rows); `sdpa`: attention
    through PyTorch's SDPA (kernels.device)."""
    serving = "fp8" if precision == "fp8-mixed" else "bf16"
    rows = [moe_tile_rows(g, serving, cat.defaults) for g in gpus]
    return kernels.device(gpus, precision, cat.kernels, rows, sdpa=sdpa)


def hardware_for(
    gpus: list[GPU],
    method: str,
    precision: str,
    cat: Catalog,
    links: Links,
    recipe_speed: float = 1.0,
    sdpa: bool = False,
) -> Hardware:
    """The types' figures for a training job; `recipe_speed`: the named framework's tuned recipes'
    step rate over a generic stack's (knowledge/frameworks.yaml), 1 for none; `sdpa`: the framework
    runs attention through PyTorch's SDPA (its `attention` habit)."""
    peak = np.array([[g.peak_16bit_tflops * 1e12] for g in gpus])
    outside = outside_kernels(method, cat.defaults) * recipe_speed
    return Hardware(peak, training_device(gpus, precision, cat, sdpa), links, outside)


def sustained_matmul_flops(gpu: GPU, precision: str, cat: Catalog) -> float:
    """FLOP/s a large GEMM sustains on a GPU at a training precision (kernels.yaml)."""
    return kernels.sustained_gemm(gpu, precision, cat.kernels)


@dataclass
class StepTime:
    seconds: np.ndarray
    compute: np.ndarray
    bubble: np.ndarray
    comm_exposed: np.ndarray
    comm_total: np.ndarray
    offload: np.ndarray
    tokens: float
    mfu: np.ndarray
    traffic: dict[str, np.ndarray]  # bytes per GPU per step by parallel dimension, per layout
    overlap: Overlap = Overlap()  # what the communication ran beside


def _step_at_mfu(model_flops_gpu, hw: Hardware, mfu: float, tokens_step, traffic) -> StepTime:
    """Step time at a fixed model FLOPs utilisation: all of it counted as compute."""
    seconds = model_flops_gpu / (hw.peak * mfu)
    zero_arr = np.zeros_like(seconds)
    return StepTime(seconds, seconds, zero_arr, zero_arr, zero_arr, zero_arr, tokens_step, seconds * 0 + mfu, traffic)


def step_overlap(
    a: Arch,
    lay: Layout,
    t_compute,
    backward_share,
    micro_batches,
    sm_share: float,
    sixteen_bit: bool = True,
    pairing: bool = True,
) -> Overlap:
    """What a training step's communication runs beside: the shared experts' compute or, paired
    under combined 1F1B, an adjacent micro-batch's (MoE; the all-to-all takes `sm_share` of the SMs
    meanwhile), the column-parallel layers' backward GEMMs (`backward_share` of the compute is the
    backward pass) for Megatron-Core's asynchronous tensor-parallel collectives, and the pipeline's
    schedule. A dense model has no all-to-all to hide: nothing runs beside it."""
    ep_hidden = 0.0
    if a.is_moe:
        paired = paired_micro_batch_share(lay.ep, lay.pp, lay.vpp, micro_batches, lay.ckpt, sixteen_bit, pairing)
        ep_hidden = t_compute * np.maximum(a.shared_flops_share, paired)
    return Overlap(
        ep_hidden=ep_hidden,
        ep_sm_share=sm_share if a.is_moe else 0.0,
        tp_async=tensor_parallel_async_share(lay.ckpt),
        tp_hidden=t_compute * backward_share * a.column_parallel_share,
        # without interleaving every hop waits (pipeline_exposed_share's 1 on every layout)
        pp_share=pipeline_exposed_share(lay.pp, lay.vpp, micro_batches) if (np.asarray(lay.vpp) > 1).any() else 1.0,
    )


# Passes one micro-batch makes per method, as token_flops counts them: (models trained forward and
# backward, further forward passes). DPO adds the frozen reference model's forward; PPO trains actor
# and critic beside the actor's generation and the reference, reward and critic forwards.
PASSES = {"dpo": (1, 1), "ppo": (2, 4)}


def micro_batch_work(job: Job, lay: Layout, defaults: Defaults) -> kernels.Work:
    """The shapes of one micro-batch on one GPU (DPO: chosen and rejected sequences together)."""
    sequences = np.asarray(lay.micro_batch, dtype=float)
    if job.method == "dpo":  # chosen and rejected
        sequences = sequences * 2
    cp, ep = np.asarray(lay.cp, dtype=float), np.asarray(lay.ep, dtype=float)
    load = np.where(ep > 1, defaults.number("moe", "expert_load"), 1.0) if job.arch.is_moe else 1.0
    adapters = job.method in ADAPTER_METHODS
    return kernels.Work(
        tokens=sequences * job.seq_len / cp,
        sequences=sequences,
        seq_len=float(job.seq_len),
        tp=np.asarray(lay.tp, dtype=float),
        ep=ep,
        etp=np.asarray(lay.expert_tp(), dtype=float),
        cp=cp,
        trained=not adapters,
        lora_rank=job.lora_rank if adapters else 0,
        qlora_bytes=NF4_BYTES_PER_PARAM if job.method == "qlora" else 0.0,
        expert_load=load,
    )


def slowest_stage(a: Arch, pp, layer, first, last) -> np.ndarray:
    """Seconds of the slowest pipeline stage per micro-batch: the first holds ceil(layers / pp)
    layers and the embedding, the last floor(layers / pp) layers and the output layer and loss
    (memory.stage_layers); a pipeline runs at the pace of its slowest stage. Without a pipeline,
    every layer and both ends."""
    pp = np.asarray(pp, dtype=float)
    piped = pp > 1
    whole = a.layers * layer + first + last
    if not piped.any():
        return whole
    most, fewest = np.ceil(a.layers / pp), np.floor(a.layers / pp)
    staged = np.maximum(most * layer + first, fewest * layer + last)
    return np.where(piped, staged, whole)


def optimizer_step_seconds(job: Job, lay: Layout, dev: kernels.Device) -> np.ndarray:
    """The optimizer step on this GPU's share of the trained parameters: tp x pp split them, ep x etp
    the routed experts, ZeRO-1 and above the optimizer state over the data-parallel ranks (as
    memory._placement); its state read and written, the gradient read, the weight written
    (memory.state_bytes). Nothing when the optimizer runs on the host (offload)."""
    a = job.arch
    gpus, tp, pp, ep, zero = (np.asarray(x, dtype=float) for x in (lay.gpus, lay.tp, lay.pp, lay.ep, lay.zero))
    dp, sharded = gpus / (tp * pp), zero >= 1
    weights, grads, state = state_bytes(job.precision, job.optimizer)
    if job.method in ADAPTER_METHODS:
        params = a.lora_params(job.lora_rank, job.lora_targets) / (tp * pp) / np.where(sharded, dp, 1.0)
    else:
        dense, routed = a.params - a.routed_expert_params, a.routed_expert_params
        copies = PASSES.get(job.method, (1, 0))[0]
        params = dense / np.where(sharded, dp, 1.0) / tp
        if routed:  # a dense model has no routed term (0 / its ranks adds nothing)
            experts = ep * np.asarray(lay.expert_tp(), dtype=float)
            params = params + routed / np.where(sharded, dp * tp, experts)
        params = (copies * params if copies > 1 else params) / pp
    seconds = kernels.optimizer_seconds(dev, params, 2 * state + grads + weights)
    return np.where(np.asarray(lay.offload) >= 1, 0.0, seconds)


DISTINCT_FROM = 64  # layouts from which sorting out the distinct micro-batches costs less than timing each


def distinct_layouts(*fields) -> tuple[np.ndarray, np.ndarray]:
    """(an index of each distinct combination of the fields' values, and for every layout the number
    of its combination): the fields, small whole numbers, make one exact sort key. Not np.unique,
    which imports numpy.ma (search.py). No layouts: none of either."""
    key = np.zeros(np.broadcast_shapes(*(np.shape(f) for f in fields)))
    if key.size == 0:
        return np.zeros(0, dtype=int), np.zeros(key.shape, dtype=int)
    base = max(float(np.max(f)) for f in fields) + 1.0
    for f in fields:
        key = key * base + f
    order = key.argsort(kind="stable")
    ordered = key[order]
    starts = np.empty(key.size, dtype=bool)
    starts[0], starts[1:] = True, ordered[1:] != ordered[:-1]
    inverse = np.empty(key.size, dtype=int)
    inverse[order] = starts.cumsum() - 1
    return order[starts], inverse


def distinct_numbered(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """distinct_layouts of layouts whose combinations are numbered already, 0, 1, ... in the order
    of their values (search.Grid.shapes): a layout of each number present, and for every layout
    the rank of its number among those present."""
    present = np.zeros(int(numbers.max()) + 1, dtype=bool)
    present[numbers] = True
    layout = np.empty(present.size, dtype=int)
    layout[numbers] = np.arange(numbers.size)  # any layout of a combination stands for all of them
    return layout[present], (present.cumsum() - 1)[numbers]


def distinct_micro_batches(dev: kernels.Device, job: Job, lay: Layout, defaults: Defaults) -> kernels.MicroBatch:
    """kernels.micro_batch_seconds over the layouts' distinct micro-batch shapes only (micro-batch,
    tp, ep, cp: the grid's layouts differ mostly in what the kernels do not see, GPUs, pipeline,
    ZeRO, checkpointing), spread back over the layouts: the shapes' work (micro_batch_work) is
    built from a layout of each, the same figures as picking it from every layout's."""
    a = job.arch
    if lay.shapes is not None:  # a grid's layouts, their shapes numbered with the grid
        shape = lay.shapes.shape
        if shape[0] < DISTINCT_FROM:
            return kernels.cached_micro_batch_seconds(dev, a, micro_batch_work(job, lay, defaults))
        firsts, inverse = distinct_numbered(lay.shapes)
    else:
        fields = [np.asarray(x, dtype=float) for x in (lay.micro_batch, lay.tp, lay.ep, lay.cp, lay.expert_tp())]
        shape = np.broadcast_shapes(*(f.shape for f in fields))
        if len(shape) != 1 or shape[0] < DISTINCT_FROM:
            return kernels.cached_micro_batch_seconds(dev, a, micro_batch_work(job, lay, defaults))
        firsts, inverse = distinct_layouts(*fields)
    picked = {f: _at_layouts(getattr(lay, f), shape, firsts) for f in ("micro_batch", "tp", "ep", "cp", "etp")}
    mb = kernels.cached_micro_batch_seconds(dev, a, micro_batch_work(job, Layout(gpus=1, **picked), defaults))

    def spread(x):
        # np.take writes the layouts in row order (x[..., inverse] leaves them strided, which
        # slows every pass over the (types, layouts) arrays after it): the same values either way
        if np.shape(x)[-1:] != firsts.shape:
            x = np.broadcast_to(x, (*np.shape(x)[:-1], firsts.size))
        return np.take(x, inverse, axis=-1)

    layer = kernels.LayerTime(*(spread(x) for x in vars(mb.layer).values()))
    return kernels.MicroBatch(layer, spread(mb.first), spread(mb.last))


def _at_layouts(values, shape: tuple, picked: np.ndarray):
    """A per-layout field at the `picked` layouts; a number (or None) stays as it is (the same at all)."""
    if values is None or np.ndim(values) == 0:
        return values
    return (values if np.shape(values) == shape else np.broadcast_to(values, shape))[picked]


@dataclass(frozen=True)
class KernelTime:
    compute: np.ndarray  # a step's kernels on the slowest stage, the optimizer step included
    pipelined: np.ndarray  # of which the micro-batches' (what a pipeline's bubble scales with)
    backward_share: np.ndarray  # share of the micro-batches' time in backward passes


def kernel_time(job: Job, hw: Hardware, lay: Layout, defaults: Defaults) -> KernelTime:
    """A step's kernels: each micro-batch's passes through the slowest stage, activation
    checkpointing repeating every layer's forward (full) or its core attention (selective: Megatron-
    Core's core_attn recomputation, Korthikanti et al. 2022), then the optimizer step; over the
    share of a step's time kernels take on the GPU's generation (kernels.yaml step_share), for the
    method (outside_kernels) and on a framework's tuned recipes (hardware_for's recipe_speed)."""
    a, dev = job.arch, hw.device
    mb = distinct_micro_batches(dev, job, lay, defaults)
    layer, first, last = mb.layer, mb.first, mb.last
    ckpt = np.asarray(lay.ckpt)
    recompute = np.where(ckpt == 2, layer.forward, np.where(ckpt == 1, layer.attention_forward, 0.0))
    trained, forwards = PASSES.get(job.method, (1, 0))
    per_layer = layer.forward + layer.backward + recompute
    backward = layer.backward
    if (trained, forwards) != (1, 0):  # DPO's and PPO's further passes (one trained model, no forward: as is)
        per_layer = trained * per_layer + forwards * layer.forward
        backward = trained * layer.backward
        ends = trained + forwards / 3.0  # the ends' forward as a third of their forward and backward
        first, last = ends * first, ends * last
    stage = slowest_stage(a, lay.pp, per_layer, first, last)
    share = np.minimum(hw.outside * dev.step_share, 1.0)  # a step takes at least its kernels' time
    pipelined = np.asarray(lay.micro_batches, dtype=float) * stage / share
    backward_share = backward / per_layer
    return KernelTime(pipelined + optimizer_step_seconds(job, lay, dev) / share, pipelined, backward_share)


def training_step(
    job: Job,
    hw: Hardware,
    lay: Layout,
    global_batch,
    defaults: Defaults,
    mfu_override: float | None = None,
) -> StepTime:
    """Seconds per optimizer step: compute (kernel_time), pipeline bubble, exposed communication,
    offload.

    Layout arrays have shape (L,); `hw` holds scalars or (T, 1) arrays; results are (T, L).
    """
    a = job.arch
    gpus, tp, pp = (np.asarray(x, dtype=float) for x in (lay.gpus, lay.tp, lay.pp))
    micro_batches = np.asarray(lay.micro_batches, dtype=float)
    seqs_per_step = np.asarray(global_batch, dtype=float)
    if job.method == "dpo":  # chosen and rejected
        seqs_per_step = seqs_per_step * 2
    tokens_step = seqs_per_step * job.seq_len
    flops = token_flops(a, job.method, job.seq_len, job.lora_rank)

    model_flops_gpu = tokens_step * flops.model / gpus
    traffic = training_traffic(job, lay)
    if mfu_override is not None:
        return _step_at_mfu(model_flops_gpu, hw, mfu_override, tokens_step, traffic)

    kt = kernel_time(job, hw, lay, defaults)
    t_compute = kt.compute
    # 1F1B pipeline bubble: (p-1)/m of the ideal time, (p-1)/(v m) interleaved over v chunks
    # (Narayanan et al. 2021, Sec. 2.2); none without a pipeline
    if (pp > 1).any():
        bubble = kt.pipelined * (pp - 1) / (np.maximum(micro_batches, 1) * np.asarray(lay.vpp, dtype=float))
    else:
        bubble = np.zeros(np.broadcast(kt.pipelined, pp, micro_batches, lay.vpp).shape)

    comm = step_comm_seconds(traffic, hw.links, gpus, tp, lay.ep, lay.cp, a, lay.expert_tp(), pp)
    sm_share = defaults.number("moe", "comm_sm_share")
    sixteen_bit = job.precision != "fp32"
    overlap = step_overlap(a, lay, t_compute, kt.backward_share, micro_batches, sm_share, sixteen_bit, job.ep_overlap)
    comm_exposed, comm_total = exposed_comm(comm, t_compute, lay.zero, overlap)

    t_offload = offload_seconds(job, lay, defaults)
    seconds = t_compute + bubble + comm_exposed + t_offload
    mfu = model_flops_gpu / (seconds * hw.peak)
    return StepTime(seconds, t_compute, bubble, comm_exposed, comm_total, t_offload, tokens_step, mfu, traffic, overlap)


def training_traffic(job: Job, lay: Layout) -> dict[str, np.ndarray]:
    """Bytes per GPU per step for a training layout (network.step_traffic with the job's figures)."""
    micro_batch = np.asarray(lay.micro_batch, dtype=float)
    if job.method == "dpo":  # chosen and rejected
        micro_batch = micro_batch * 2
    trained = job.method not in ADAPTER_METHODS and job.method != "infer"
    return step_traffic(
        job.arch,
        trained,
        job.seq_len,
        gpus=lay.gpus,
        tp=lay.tp,
        pp=lay.pp,
        zero=lay.zero,
        ckpt=lay.ckpt,
        micro_batch=micro_batch,
        micro_batches=lay.micro_batches,
        vpp=lay.vpp,
        ep=lay.ep,
        cp=lay.cp,
        grad_bytes=conventions.grad_bytes(job.precision, conventions.megatron_layout(lay.tp, lay.pp, lay.ep, lay.cp)),
        adapter_params=0.0 if trained else job.arch.lora_params(job.lora_rank, job.lora_targets),
        etp=lay.expert_tp(),
    )


def offload_seconds(job: Job, lay: Layout, defaults: Defaults) -> np.ndarray:
    """ZeRO-Offload/Infinity per step: CPU Adam update plus PCIe copies (Ren et al. 2021), or NVMe reads and writes."""
    a = job.arch
    offload = np.asarray(lay.offload)
    gpus = np.asarray(lay.gpus, dtype=float)
    if job.method in ADAPTER_METHODS:
        return np.zeros_like(gpus * offload, dtype=float)
    nodes = np.ceil(gpus / np.asarray(lay.gpus_per_node, dtype=float))
    trained = a.params * (2 if job.method == "ppo" else 1)
    cpu_adam = trained / nodes / defaults.number("host", "cpu_adam_params_per_s_per_node")
    pcie = trained / gpus * 4.0 / (defaults.number("host", "pcie_gb_s_per_gpu") * 1e9)  # grads down, params up
    seconds = cpu_adam + pcie
    on_nvme = (offload == 2) | (offload == 4)
    if on_nvme.any():  # NVMe offload, which the open grids do not search (they offload to the CPU)
        nvme = trained / nodes * 32.0 / (defaults.number("host", "nvme_gb_s_per_node") * 1e9)  # read+write 16 B/param
        seconds = np.where(on_nvme, seconds + nvme, seconds)
    return np.where(offload == 0, 0.0, seconds)


@dataclass
class ServingSpeed:
    tokens_per_s_per_gpu: np.ndarray
    step_seconds: np.ndarray
    memory_bound: np.ndarray


# A served sequence is taken as half prompt, half output (a benchmark's 1000/1000) when the question
# does not split it (Request.prompt_tokens): while it generates it holds its prompt and, on average,
# half its output
PROMPT_SHARE = 0.5
HELD_SHARE = PROMPT_SHARE + (1 - PROMPT_SHARE) / 2


@dataclass(frozen=True)
class Served:
    """What each served sequence is: `seq` tokens of context, the first `prompt` of them its prompt
    (at least one output token). `chunked`: its prompt's prefill shares the decode steps (chunked
    prefill, vLLM's default), else it runs on GPUs apart (disaggregated) and the steps only decode."""

    seq: int
    prompt: int
    chunked: bool = True

    @property
    def output(self) -> int:
        return self.seq - self.prompt

    @property
    def held(self) -> float:
        """Tokens a generating sequence holds in its KV cache on average: its prompt, half its output."""
        return self.prompt + self.output / 2

    @property
    def reserved(self) -> int:
        """Tokens of KV cache the engine sets aside for a sequence it admits: its prompt and all its
        output. TensorRT-LLM's default capacity scheduler (GUARANTEED_NO_EVICT, "Useful Runtime
        Options" in its performance tuning guide) admits a request only when both fit, so it is
        never paused; a paging engine that admits more (vLLM) preempts and recomputes when they grow."""
        return self.seq

    @property
    def prefill_per_output(self) -> float:
        """Prompt tokens the steps prefill per generated token at steady state: every sequence's
        prompt once over its output (none when prefill runs apart)."""
        return self.prompt / self.output if self.chunked else 0.0


def served(seq: int, prompt: int | None = None, chunked: bool = True) -> Served:
    """The load of sequences of `seq` tokens, `prompt` of them prompt (PROMPT_SHARE when not said)."""
    default = int(round(seq * PROMPT_SHARE))
    return Served(seq, min(prompt if prompt is not None else default, seq - 1), chunked)


def step_load(load: Served, batch, ep=1.0, step_tokens: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(sequences generating each step, tokens through each step's matmuls): every generating
    sequence's token and the prompt tokens prefilled with it. An engine's step holds at most
    `step_tokens` on each scheduler (vLLM's max_num_batched_tokens, TensorRT-LLM's max_num_tokens;
    one per attention data-parallel rank): past it prompts wait, and the sequences generating fall to
    what the budget prefills for."""
    batch, ep = np.asarray(batch, dtype=float), np.asarray(ep, dtype=float)
    per_token = 1.0 + load.prefill_per_output
    generating = batch if step_tokens is None else np.minimum(batch, step_tokens / per_token * ep)
    return generating, generating * per_token


def prefill_attention_seconds(a: Arch, dev: kernels.Device, load: Served, prompts, tp, pp) -> np.ndarray:
    """Causal attention over `prompts` whole prompts (fractions allowed) on one attention rank, every
    layer of a pipeline stage (kernels.attention_seconds: FlashAttention's rate by length and head
    dimension); chunked prefill does the same work a chunk at a time."""
    prompts = np.asarray(prompts, dtype=float)
    forward = kernels.attention_forward_seconds(dev, a, prompts, float(load.prompt), tp=np.asarray(tp, dtype=float))
    return np.where(prompts > 0, forward * a.layers / np.asarray(pp, dtype=float), 0.0)


# Bytes of an activation entering a matmul: FP8 serving quantises activations too (W8A8); the
# weight-only formats (int8, int4) and 16-bit serving compute on 16-bit activations
ACTIVATION_BYTES = {"fp8": 1.0}


def experts_touched(a: Arch, tokens, placed=None) -> np.ndarray:
    """Share of a MoE layer's routed experts a step's tokens reach: 1 - (1 - k/S)^tokens (uniform
    routing over the S placed experts: E, or E and their redundant copies). 1 for a dense model."""
    tokens = np.asarray(tokens, dtype=float)
    if not a.is_moe:
        return np.ones_like(tokens)
    placed = a.experts if placed is None else np.asarray(placed, dtype=float)
    return 1.0 - (1.0 - a.experts_per_token / placed) ** tokens


def moe_tile_rows(gpu: GPU, precision: str, defaults: Defaults) -> float:
    """Rows of the smallest tile a MoE grouped GEMM computes one expert's tokens in, on this GPU at
    this precision (TensorRT-LLM's candidates, cutlass_heuristic.cpp): FP8 on Hopper has only the
    128-row TMA tiles, on Blackwell 64-row ones; 16-bit GEMMs reach 32 rows, the rest 16."""
    if precision == "fp8" and gpu.family in ("hopper", "blackwell"):
        return defaults.number("inference", f"moe_tile_rows_{gpu.family}_fp8")
    if precision in ("bf16", "fp16"):
        return defaults.number("inference", "moe_tile_rows_16bit")
    return defaults.number("inference", "moe_tile_rows_small")


def moe_staging_bytes(a: Arch, precision: str, tokens, tp, pp, ep) -> np.ndarray:
    """HBM bytes one GPU moves per step staging MoE activations between kernels, after TensorRT-LLM's
    CUTLASS MoE (cutlass_fused_moe_kernels.cuh: expandInputRows -> FC1 -> doActivation -> FC2 with
    the finalize fused, its default): every routed copy of a token is written and read once at the
    activation precision, then FC1's gate and up outputs in 16-bit and the activation again at the
    activation precision. Tensor-parallel experts give every rank all copies at 1/tp of the expert
    width; expert parallelism gives each rank 1/ep of the copies; a pipeline stage has 1/pp of the layers."""
    if not a.is_moe:
        return np.zeros(np.broadcast(tokens, tp, pp, ep).shape)
    act = ACTIVATION_BYTES.get(precision, 2.0)
    inter = a.moe_ffn_hidden / np.asarray(tp, dtype=float)
    fc1_out = 2 if a.gated else 1  # gate and up, or one up projection, per unit of expert width
    per_copy = 2 * act * a.hidden + (2 * 2.0 * fc1_out + 2 * act) * inter
    return a.moe_layers * a.experts_per_token * tokens * per_copy / (pp * ep)


def serving_device(gpus: list[GPU], precision: str, cat: Catalog) -> kernels.Device:
    """The kernel figures of GPU types for a serving engine's decode step (kernels.device, serving),
    grouped expert GEMMs in TensorRT-LLM's smallest row tiles (moe_tile_rows)."""
    rows = [moe_tile_rows(g, precision, cat.defaults) for g in gpus]
    return kernels.device(gpus, precision, cat.kernels, rows, serving=True)


def decode_matmul_seconds(a: Arch, precision: str, *, tokens, tp, pp, ep, dev: kernels.Device) -> np.ndarray:
    """A step's matmuls, each GEMM timed from its shape (kernels.decode_seconds: dense weights
    stream once for all the step's tokens, each routed expert for its own rows in whole tiles, so
    MoE layers stay memory-bound at batches where the dense ones are not), plus the MoE activations
    staged between the expert kernels (moe_staging_bytes) at HBM bandwidth."""
    slots = serving_expert_slots(a, ep)
    touched = experts_touched(a, tokens, np.asarray(ep, dtype=float) * slots)
    gemms = kernels.cached_decode_seconds(dev, a, tokens=tokens, tp=tp, pp=pp, ep=ep, touched=touched, slots=slots)
    if not a.is_moe:  # nothing staged between expert kernels: 0 bytes
        return gemms
    return gemms + moe_staging_bytes(a, precision, tokens, tp, pp, ep) / dev.hbm


def decode_speed_arrays(
    a: Arch,
    precision: str,
    *,
    load: Served,
    batch,
    tp,
    pp,
    dev: kernels.Device,
    comm_seconds=0.0,
    ep=1.0,
    kv_cache: str | None = None,
    step_tokens: float | None = None,
) -> ServingSpeed:
    """Generation throughput: each step's matmuls (decode_matmul_seconds) over its generated tokens
    and, with chunked prefill, the prompt tokens prefilled beside them (step_load), each such
    prompt's attention (prefill_attention_seconds), then attention over every generating
    sequence's KV cache (kernels.decode_attention_seconds: streamed, or for MLA computed; its kernels
    run after the matmuls, not beside them), then tensor-parallel
    all-reduces, pipeline hops and expert-parallel all-to-alls wait on the layer before. With ep > 1
    each GPU holds all but the routed experts and 1/ep of those, and attends to 1/ep of the
    sequences. `dev` (serving_device) holds the GPU types' figures; the step is memory-bound where
    its weights and KV cache take longer at HBM bandwidth than its FLOPs at the GEMM rate."""
    tp, pp, ep = (np.asarray(x, dtype=float) for x in (tp, pp, ep))
    gpus = tp * pp * ep
    generating, tokens = step_load(load, batch, ep, step_tokens)
    matmuls = decode_matmul_seconds(a, precision, tokens=tokens, tp=tp, pp=pp, ep=ep, dev=dev)
    own = np.ceil(generating / ep)  # sequences on the busiest attention rank
    prompts = own / load.output if load.chunked else 0.0
    kv_read = own * load.held * kv_bytes_per_token(a, precision, kv_cache) / pp * kv_share(a, tp)
    t_kv = kernels.decode_attention_seconds(dev, a, own, load.held, kv_read, tp=tp, pp=pp)
    step = matmuls + prefill_attention_seconds(a, dev, load, prompts, tp, pp) + t_kv + comm_seconds
    step = step * inflight_data_parallel(a, ep, load)
    streaming = (serving_weight_bytes(a, precision, tp, pp, ep) + kv_read) / dev.hbm
    computing = tokens * token_flops(a, "infer", load.seq).model / gpus / dev.gemm
    return ServingSpeed(generating / step / gpus, step, streaming >= computing)


def routed_share(a: Arch) -> float:
    """The share of a token's matmul work in its routed experts: k experts' MLPs in every MoE layer
    over the active parameters (DeepSeek-R1 0.54, Qwen3-235B-A22B 0.64, Llama 4 Maverick 0.18:
    one expert in every other layer); 0 for a dense model."""
    if not a.is_moe:
        return 0.0
    width = (3 if a.gated else 2) * a.hidden * a.moe_ffn_hidden
    return a.moe_layers * a.experts_per_token * width / a.active_params


def experts_inflight() -> float:
    """inference.attention_dp_inflight_experts: fitted (bench/fit_inflight_dp.py sets it while fitting)."""
    return catalog().defaults.number("inference", "attention_dp_inflight_experts")


def inflight_data_parallel(a: Arch, ep, load: Served) -> np.ndarray:
    """The factor on a serving step's kernel time where attention is data-parallel over the
    expert-parallel ranks (ep > 1) and the prompts are prefilled in the same steps (in-flight
    batching): the routed experts' share of the work (routed_share) taken experts_inflight() times;
    1 for tensor parallelism and for decode with the prefill apart. What it stands for is
    documented, not modelled one by one: without an expert load balancer the busiest expert rank
    sets every MoE layer's time (TensorRT-LLM's blog4: 2.56x the mean at EP32); every rank waits
    each step for the busiest, and in-flight batching puts a whole prompt on one rank (its ADP
    balance blog: balance ratio 54%); a step in which any rank prefills runs without CUDA graphs."""
    slowed = 1.0 + (experts_inflight() - 1.0) * routed_share(a)
    return np.where((np.asarray(ep, dtype=float) > 1) & load.chunked, slowed, 1.0)


def decode_speed(
    a: Arch,
    gpu: GPU,
    precision: str,
    *,
    seq_len: int,
    batch,
    tp,
    pp,
    defaults: Defaults,
    comm_seconds=0.0,
    prompt: int | None = None,
    chunked: bool = False,
    ep=1,
    kv_cache: str | None = None,
) -> ServingSpeed:
    """decode_speed_arrays for one GPU type, with the process's kernel figures: sequences of
    `seq_len` tokens, `prompt` of them prompt (half when not said), the prompts' prefill in the
    steps when `chunked`."""
    return decode_speed_arrays(
        a,
        precision,
        load=served(seq_len, prompt, chunked),
        batch=batch,
        tp=tp,
        pp=pp,
        dev=serving_device([gpu], precision, with_defaults(defaults)),
        comm_seconds=comm_seconds,
        ep=ep,
        kv_cache=kv_cache,
    )


def with_defaults(defaults: Defaults) -> Catalog:
    """The process's catalog with `defaults` (itself when they are its own: no copy to make)."""
    cat = catalog()
    return cat if defaults is cat.defaults else dataclasses.replace(cat, defaults=defaults)
