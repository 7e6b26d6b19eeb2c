"""GPU memory per device for training and serving, in bytes.

Layout fields (GPU count, tp, pp, ZeRO stage, offload, checkpointing, micro-batch) may be numpy
arrays of one shape: the layout search evaluates many candidates with this same code. Scalars
(method, precision, optimizer, sequence length) describe the job and are fixed per call.
Conventions: bf16 activations, FlashAttention (no s^2 scores), no dropout, sequence
parallelism whenever tp > 1, 1F1B pipeline schedule.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from gpuplan.estimator import conventions
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.schema import ADAPTER_METHODS

GIB = float(2**30)
CKPT_CODE = {"none": 0, "selective": 1, "full": 2}
OFFLOAD_CODE = {"none": 0, "cpu": 1, "nvme": 2, "cpu-all": 3, "nvme-all": 4}

# QLoRA (Dettmers et al. 2023, Sec. 3): NF4 4 bits + double-quantised constants 0.127 bits/param
NF4_DATA_BYTES = 4 / 8
NF4_CONSTANT_BYTES = 0.127 / 8
NF4_BYTES_PER_PARAM = NF4_DATA_BYTES + NF4_CONSTANT_BYTES
# Group-wise int4 (AWQ/GPTQ, group 128): fp16 scale and zero point per 128 weights
INT4_BYTES_PER_PARAM = 0.5 + 4 / 128


@dataclass(frozen=True)
class Job:
    """The fixed part of a training or serving job."""

    arch: Arch
    method: str
    precision: str
    optimizer: str
    seq_len: int
    lora_rank: int = 16
    lora_targets: str = "all-linear"
    loss: str = "chunked"  # "unchunked": Transformers' own cross-entropy over the whole sequence; "inplace": Unsloth's
    # the framework's habits (knowledge/frameworks.yaml): where FSDP keeps the embeddings and head ("root" unit, or
    # "apart" as units of their own), the loop keeping the fp32 logits through backward, Megatron-Core on any layout
    fsdp_ends: str = "root"
    keeps_logits: bool = False
    megatron_core: bool = False
    pp_unsharded: bool = False  # FSDP under PP: the stage's weights gathered, its gradients unsharded in fp32
    ep_overlap: bool = True  # MoE: an adjacent micro-batch's compute may hide the all-to-all (combined 1F1B)


@dataclass(frozen=True)
class Overheads:
    cuda_context_gib: float
    comm_buffers_gib: float
    fragmentation: float


@dataclass
class Layout:
    """Numeric layout; each field a scalar or a numpy array (all broadcastable)."""

    gpus: np.ndarray | int
    tp: np.ndarray | int = 1
    pp: np.ndarray | int = 1
    zero: np.ndarray | int = 0
    offload: np.ndarray | int = 0  # OFFLOAD_CODE
    ckpt: np.ndarray | int = 0  # CKPT_CODE
    micro_batch: np.ndarray | int = 1
    micro_batches: np.ndarray | int = 1  # per optimizer step per pipeline (gradient accumulation)
    gpus_per_node: np.ndarray | int = 8
    vpp: np.ndarray | int = 1  # virtual pipeline stages per GPU (interleaved 1F1B); 1 = plain 1F1B
    ep: np.ndarray | int = 1  # expert parallel: MoE routed experts split over ep ranks of a pipeline stage
    cp: np.ndarray | int = 1  # context parallel: each sequence split over cp ranks
    etp: np.ndarray | int | None = None  # expert tensor parallel (None: tp, Megatron-Core's default)
    # the number of each layout's micro-batch shape (search.Grid.shapes), where a grid numbered them
    shapes: np.ndarray | None = None

    def expert_tp(self) -> np.ndarray | int:
        """The experts' tensor-parallel ranks: etp, or the attention's tp where it is left open."""
        return self.tp if self.etp is None else self.etp


# --- bytes per parameter -------------------------------------------------------------------


def state_bytes(precision: str, optimizer: str) -> tuple[float, float, float]:
    """Bytes per trainable parameter held as (weights, gradients, optimizer state).

    ZeRO (Rajbhandari et al. 2020, Sec. 3): mixed-precision Adam holds 2 + 2 + 12 (fp32 master,
    momentum, variance). Pure bf16 keeps states in bf16; 8-bit optimizers (Dettmers et al. 2022)
    keep 1 byte per state; fp8-mixed also caches an fp8 copy of each weight (Transformer Engine).
    """
    pure16 = precision == "bf16"
    fp32 = precision == "fp32"
    weights = 4.0 if fp32 else 3.0 if precision == "fp8-mixed" else 2.0
    grads = 4.0 if fp32 else 2.0
    master = 0.0 if (pure16 or fp32) else 4.0
    state = 2.0 if pure16 else 4.0
    per_optimizer = {"adamw": 2 * state, "adamw8bit": 2.0, "paged-adamw8bit": 2.0, "sgd": state, "adafactor": 0.0}
    return weights, grads, master + per_optimizer[optimizer]


def activation_bytes() -> float:
    return 2.0


# --- activations -----------------------------------------------------------------------------


def _mlp_width(a: Arch) -> float:
    """Average MLP intermediate width a token passes through, over all layers."""
    if not a.is_moe:
        return float(a.ffn_hidden)
    moe_width = (a.experts_per_token + a.shared_experts) * a.moe_ffn_hidden
    return (a.dense_layers * a.ffn_hidden + a.moe_layers * moe_width) / a.layers


def activation_elems_per_token_layer(a: Arch) -> dict[str, float]:
    """Elements one layer saves per token for the backward pass, by checkpointing mode.

    Korthikanti et al. 2022 (arXiv:2205.05198) Sec. 4.1, updated for FlashAttention (Dao 2022:
    saves q, k, v, output and a fp32 log-sum-exp instead of s^2 scores), RMSNorm, no dropout,
    gated MLPs (gate, up and their product saved) and MoE routing copies.
    """
    h = a.hidden
    attn = a.q_dim + a.k_dim + a.v_dim + a.o_dim + 2 * a.heads
    if a.is_mla:
        attn += a.q_lora_rank + a.kv_lora_rank
    norms = 4 * h  # inputs and outputs of the two norms
    width = _mlp_width(a)
    mlp = (3 if a.gated else 2) * width
    if a.is_moe:
        mlp += 2 * a.experts_per_token * h * a.moe_layers / a.layers  # dispatched inputs, expert outputs
    none = norms + attn + mlp
    # selective: keep matmul outputs, recompute pointwise ops (norm outputs, activation function)
    # and MLA's up-projections: q, k and v come back from the saved latents (DeepSeek-V3,
    # arXiv:2412.19437, Sec. 3.2.3; Megatron-Core's recompute_modules "mla_up_proj", which NeMo's
    # DeepSeek-V3 recipes set)
    selective = none - 2 * h - width - (a.q_dim + a.k_dim + a.v_dim if a.is_mla else 0)
    return {"none": none, "selective": selective, "full": float(h)}


def expert_output_elems_per_token_layer(a: Arch) -> float:
    """Of activation_elems_per_token_layer, the routed experts' outputs (k x hidden per token) that
    the weighted sum back needs for the routing weights' gradient. Megatron-Core applies the weights
    inside the experts' activation (moe/experts.py: weighted_bias_swiglu_impl on permuted_probs) and
    its dispatchers unpermute without them (moe/token_dispatcher.py), a plain sum that keeps none."""
    return a.experts_per_token * a.hidden * a.moe_layers / a.layers if a.is_moe else 0.0


def _stored_per_token_layer(a: Arch, ckpt: np.ndarray) -> np.ndarray:
    e = activation_elems_per_token_layer(a)
    by_code = np.array([e[mode] for mode in CKPT_CODE])  # indexed by CKPT_CODE: none, selective, full
    return by_code[np.asarray(ckpt, dtype=int)]


# --- training --------------------------------------------------------------------------------


def stage_layers(a: Arch, pp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decoder layers on the first and the last pipeline stage: layers that do not split evenly put
    one more on the first stages (the Megatron export's --pipeline-model-parallel-layout), so the
    first holds ceil(layers / pp) and the last floor(layers / pp)."""
    return np.ceil(a.layers / pp), np.floor(a.layers / pp)


def _stage_params(a: Arch, pp: np.ndarray, tp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parameters per GPU on the first and the last pipeline stage (embedding vs head)."""
    first_layers, last_layers = stage_layers(a, pp)
    # a pipelined MoE stage may hold MoE layers only (DeepSeek-V3's first 3 dense layers sit on one
    # stage): each stage is sized at the largest layer's parameters, the whole stack without stages
    widest = max(a.dense_layer_params, a.moe_layer_params) if a.is_moe else a.layer_stack_params / a.layers
    per_layer = np.where(pp > 1, widest, a.layer_stack_params / a.layers)
    head = a.head_params + a.final_norm_params
    # Megatron-LM keeps a copy of tied embeddings on the last stage for the output layer
    head_last = np.where(pp > 1, head + (a.vocab * a.hidden if a.tied else 0), head)
    first = (first_layers * per_layer + a.embed_params + np.where(pp == 1, head, 0)) / tp
    last = (last_layers * per_layer + head_last + np.where(pp == 1, a.embed_params, 0)) / tp
    return first, last


def _unstaged_params(a: Arch) -> float:
    """_stage_params without a pipeline, the same for every layout: every layer, embedding and head."""
    return a.layers * (a.layer_stack_params / a.layers) + a.embed_params + (a.head_params + a.final_norm_params)


def _frozen_weight_bytes(job: Job, params: np.ndarray, pp: np.ndarray, tp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sharded, replicated) bytes of a frozen base model's weights per GPU (LoRA base, DPO/PPO
    reference), before ZeRO-3 sharding. QLoRA's linear layers are NF4 whose 4-bit data FSDP shards
    (bitsandbytes packs it into bf16 storage, PEFT's FSDP guide); their quantisation constants are
    no parameters: every rank keeps all of them on its GPU (bitsandbytes Linear4bit.quant_state,
    fix_4bit_weight_quant_state_from_module). Embeddings, head and norms stay 16-bit."""
    a = job.arch
    if job.method != "qlora":
        return params * (4.0 if job.precision == "fp32" else 2.0), np.zeros_like(params)
    norms = a.layers * a.norm_params_per_layer
    linear = (a.layer_stack_params - norms) / pp / tp
    return linear * NF4_DATA_BYTES + (params - linear) * 2.0, linear * NF4_CONSTANT_BYTES


def loaded_model_bytes(job: Job) -> float:
    """The whole model as its loader holds it in host RAM: the 16-bit checkpoint, or for QLoRA the
    NF4 model (Transformers quantises each weight on the GPU and keeps it on the CPU under FSDP or
    ZeRO-3: modeling_utils._load_state_dict_into_meta_model)."""
    a = job.arch
    if job.method != "qlora":
        return a.params * 2.0
    sharded, replicated = _frozen_weight_bytes(job, np.asarray(float(a.params)), np.asarray(1.0), np.asarray(1.0))
    return float(sharded + replicated)


def _largest_matrix(a: Arch) -> int:
    return a.largest_matrix_params


def _broadcast_layout(lay: Layout) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Ones of the layout's broadcast shape, and the layout fields as float arrays of that shape."""
    fields = (
        *(lay.gpus, lay.tp, lay.pp, lay.zero, lay.offload, lay.ckpt),
        *(lay.micro_batch, lay.micro_batches, lay.ep, lay.cp, lay.expert_tp()),
    )
    ones = np.ones(np.broadcast(*fields).shape)
    return ones, tuple(_as_float(x, ones) for x in fields)


def _as_float(x, ones: np.ndarray) -> np.ndarray:
    """`x` as floats of the shape of `ones`: a float array of that shape already is taken as it is
    (x * 1.0 is x to the bit), anything else broadcast by multiplying."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == ones.shape:
        return x
    return np.asarray(x, dtype=float) * ones


def _model_copies(method: str) -> tuple[int, int]:
    """Trained and frozen model copies per GPU."""
    trained = 2 if method == "ppo" else 1  # PPO trains actor and critic
    frozen = {"dpo": 1, "ppo": 2}.get(method, 0)  # reference (and reward) models
    return trained, frozen


@dataclass(frozen=True)
class _Placement:
    """Where the layout keeps training state: ZeRO shard counts, offload, gathered units."""

    tp: np.ndarray
    pp: np.ndarray
    zero: np.ndarray
    zero3: np.ndarray  # ZeRO-3: the weights sharded, gathered a unit at a time
    shard_w: np.ndarray
    shard_g: np.ndarray
    shard_o: np.ndarray
    opt_on_host: np.ndarray
    params_on_host: np.ndarray
    unit: np.ndarray  # the largest unit (a layer, the embedding or the head) per GPU: ZeRO-Offload's gradient staging
    gathers: np.ndarray  # ZeRO-3 or parameter offload: weights arrive one unit at a time
    megatron: np.ndarray  # the layout runs on Megatron-Core (conventions.megatron_layout)

    @functools.cached_property
    def any_params_on_host(self) -> bool:
        """Some layout keeps its parameters on the host (most searches have none: then the terms
        that hold only there are left out, not added as zeros)."""
        return bool(self.params_on_host.any())


def _placement(
    a: Arch, gpus: np.ndarray, tp: np.ndarray, pp: np.ndarray, zero, offload, ep=1.0, cp=1.0, etp=None
) -> _Placement:
    dp = gpus / (tp * pp)
    # ZeRO stages 1, 2, 3 shard optimizer states, gradients, weights over data parallel ranks (Rajbhandari et al. 2020);
    # the routed experts are split over ep x etp GPUs of a stage (Megatron-Core's parallel folding: EP x ETP over
    # the stage's TP x CP x DP), and ZeRO shards them over the stage's gpus / (ep x etp) that hold the same experts
    # (parallel_state.py: expert_data_parallel_size = world_size // (etp x ep x pp)); params arrive here / tp
    routed = a.routed_expert_share
    ep = np.asarray(ep, dtype=float)
    zero3 = zero >= 3
    if routed:
        expert_split = ep * np.asarray(tp if etp is None else etp, dtype=float) / tp

        def shard(sharded: np.ndarray) -> np.ndarray:
            return 1.0 / ((1.0 - routed) / np.where(sharded, dp, 1.0) + routed / np.where(sharded, dp, expert_split))

    else:  # a dense model: the experts' term is 0 / expert, which adds nothing: 1 / (1 / dp) where sharded
        whole = 1.0 / (1.0 / dp)

        def shard(sharded: np.ndarray) -> np.ndarray:
            return np.where(sharded, whole, 1.0)

    shard_w, shard_g, shard_o = shard(zero3), shard(zero >= 2), shard(zero >= 1)
    opt_on_host = offload >= 1
    params_on_host = offload >= 3
    unit = a.largest_unit_params / tp
    gathers = zero3 | params_on_host
    megatron = conventions.megatron_layout(tp, pp, ep, cp)
    return _Placement(
        tp, pp, zero, zero3, shard_w, shard_g, shard_o, opt_on_host, params_on_host, unit, gathers, megatron
    )


@dataclass(frozen=True)
class _Activations:
    """Activation bytes per GPU that do not depend on the pipeline stage."""

    stored_per_layer: np.ndarray  # kept for the backward pass, per layer and micro-batch
    recompute_peak: np.ndarray  # one layer's full activations, rebuilt under full checkpointing
    loss_peak: np.ndarray  # logits and their loss on the last stage


def _activations(job: Job, place: _Placement, ckpt: np.ndarray, mbs: np.ndarray, cp=1.0) -> _Activations:
    a = job.arch
    seqs = mbs * 2 if job.method == "dpo" else mbs  # DPO: chosen and rejected
    tokens = seqs * job.seq_len / cp  # context parallel: each rank keeps its share of every sequence
    tp = place.tp
    act_b = 4.0 if job.precision == "fp32" else activation_bytes()
    full = ckpt == 2
    # MoE: the routed experts' outputs are not kept on Megatron-Core (a dense model has none: 0 taken off)
    combined = np.where(place.megatron, expert_output_elems_per_token_layer(a), 0.0) if a.is_moe else 0.0
    per_layer_none = (activation_elems_per_token_layer(a)["none"] - combined) * tokens * act_b / tp
    stored = _stored_per_token_layer(a, ckpt)
    if a.is_moe:
        stored = stored - np.where(full, 0.0, combined)
    stored_per_layer = stored * tokens * act_b / tp
    recompute_peak = np.where(full, per_layer_none, 0.0)
    per_logit = conventions.loss_bytes_per_logit(place.megatron, job.loss, job.keeps_logits)
    loss_peak = tokens * (a.vocab * per_logit + a.hidden * act_b) / tp
    return _Activations(stored_per_layer, recompute_peak, loss_peak)


def _layer_params(a: Arch) -> int:
    return a.moe_layer_params if a.is_moe else a.dense_layer_params


def _ends_params(a: Arch, pp: np.ndarray) -> np.ndarray:
    """Parameters outside the decoder layers on a stage: embedding, head and final norm without
    pipelining; with it the first stage holds the embedding, the last the head."""
    both = a.embed_params + a.head_params + a.final_norm_params
    return np.where(pp > 1, max(a.embed_params, a.head_params + a.final_norm_params), both)


def largest_unit_params(a: Arch, tp: np.ndarray, ends: str = "root") -> np.ndarray:
    """Parameters per GPU of the largest unit gathered apart from the root: a decoder layer, or where
    the embeddings and head are units of their own ("apart"), the larger of those and a layer."""
    layer = _layer_params(a)
    return (layer if ends == "root" else max(layer, a.embed_params, a.head_params)) / np.asarray(tp, dtype=float)


def gathered_unit_params(a: Arch, tp: np.ndarray, pp: np.ndarray, ends: str = "root") -> tuple[np.ndarray, np.ndarray]:
    """(root, units) parameters per GPU that ZeRO-3 / FSDP holds gathered at the step's peak.

    FSDP with transformer auto-wrap (Accelerate, PEFT's fsdp_auto_wrap_policy) wraps each decoder
    layer; the embeddings, head and final norm stay in the root unit, which FSDP does not reshard
    after forward (torch fsdp/_runtime_utils._post_forward_reshard; FSDP2 likewise), so they are
    gathered for the whole step. Two layers are gathered at a time: the running one and the next,
    prefetched (BACKWARD_PRE); their buffers come from the all-gather stream's own pool, which the
    caching allocator does not lend to the activations. Where the embeddings and head are units of
    their own (torchtune's custom_sharded_layers, DeepSpeed ZeRO-3's per-module gathering) the root
    keeps the final norm alone, and the head's backward gathers the head beside the last layer.
    """
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    layer = _layer_params(a) / tp
    if ends == "root":
        return _ends_params(a, pp) / tp, 2.0 * layer
    return np.ones_like(pp) * a.final_norm_params / tp, layer + largest_unit_params(a, tp, ends)


def gathered_bytes(
    job: Job, tp: np.ndarray, pp: np.ndarray, root: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(root, units) bytes of the gathered units, each in the bytes it is stored in: 16-bit (fp32
    for fp32 training), the 4-bit data of a QLoRA base's linear layers (its constants stay resident).
    `root`: the root unit's parameters (gathered_unit_params), where the caller has them already."""
    root = gathered_unit_params(job.arch, tp, pp, job.fsdp_ends)[0] if root is None else root
    w16 = 4.0 if job.precision == "fp32" and job.method != "qlora" else 2.0
    layer, largest = _unit_bytes(job, tp)
    return root * w16, layer + largest


def _unit_bytes(job: Job, tp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(one decoder layer, the largest unit apart from the root) in gathered bytes: a QLoRA layer's
    linear weights in 4 bits, its norms, the embeddings and head in 16."""
    a = job.arch
    tp = np.asarray(tp, dtype=float)
    w16 = 4.0 if job.precision == "fp32" and job.method != "qlora" else 2.0
    layer = _layer_params(a) / tp * w16
    if job.method == "qlora":
        norms = a.norm_params_per_layer / tp
        layer = (_layer_params(a) / tp - norms) * NF4_DATA_BYTES + norms * 2.0
    if job.fsdp_ends == "root":
        return layer, layer
    return layer, np.maximum(layer, max(a.embed_params, a.head_params) / tp * w16)


def _offload_copy(job: Job, place: _Placement, gathered: tuple | None = None) -> np.ndarray | float:
    """Bytes the caching allocator keeps for parameter offload's host-to-device copies (0 without).

    FSDP copies a unit's shard from host RAM to the GPU on a stream of its own before gathering it
    (torch fsdp/_flat_param.py pre_unshard: flat_param_to(device, non_blocking=True) on the
    pre-unshard stream, handed to the all-gather with record_stream; FSDP2 copies in likewise), and
    the allocator keeps that stream's blocks for that stream alone: the largest unit's shard, the
    root's (embeddings and head) unless a decoder layer is larger."""
    if not place.any_params_on_host:
        return 0.0
    root = (gathered or gathered_bytes(job, place.tp, place.pp))[0]
    largest = _unit_bytes(job, place.tp)[1]
    return np.where(place.params_on_host, np.maximum(root, largest) / place.shard_w, 0.0)


def offload_copy_bytes(job: Job, gpus, tp, pp, zero, offload, ep=1.0) -> np.ndarray:
    """_offload_copy for one layout, for the answer that states it."""
    fields = (np.asarray(x, dtype=float) for x in (gpus, tp, pp, zero, offload, ep))
    return _offload_copy(job, _placement(job.arch, *fields))


def replicated_constant_bytes(job: Job, tp: np.ndarray, pp: np.ndarray) -> np.ndarray:
    """Bytes of a QLoRA base's quantisation constants every GPU keeps whole (0 otherwise)."""
    return _frozen_weight_bytes(job, np.asarray(float(job.arch.params)), pp, tp)[1]


def _stage_weights(
    job: Job, place: _Placement, params: np.ndarray, gathered: tuple | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """(GPU, host) weight bytes: trained models (16-bit compute copy), frozen models, ZeRO-3
    gathered units; with parameter offload the sharded frozen weights live in host RAM (host None:
    no frozen weights there)."""
    a = job.arch
    w_b = state_bytes(job.precision, job.optimizer)[0]
    trained_copies, frozen_copies = _model_copies(job.method)
    adapter_method = job.method in ADAPTER_METHODS
    on_host = place.any_params_on_host
    weights = 0.0
    if not adapter_method:
        trained_w = params * w_b / place.shard_w
        weights = np.where(place.params_on_host, 0.0, trained_w) if on_host else trained_w
        weights = trained_copies * weights if trained_copies > 1 else weights
    frozen_models = frozen_copies + (1 if adapter_method else 0)
    host = None  # without frozen models (full training, pretraining) they add 0 bytes to GPU and host
    if frozen_models:
        sharded, replicated = _frozen_weight_bytes(job, params, place.pp, place.tp)
        frozen_host = sharded / place.shard_w
        frozen_w = (np.where(place.params_on_host, 0.0, frozen_host) if on_host else frozen_host) + replicated
        weights = weights + frozen_models * frozen_w
        host = np.where(place.params_on_host, frozen_models * frozen_host, 0.0) if on_host else None
    root, layers = gathered or gathered_bytes(job, place.tp, place.pp)
    units = root + layers
    if job.pp_unsharded and not adapter_method:  # the whole stage gathered under PP, not two units
        units = np.where(place.pp > 1, params * 2.0, units)
    weights = weights + np.where(place.gathers, units, 0.0)
    if job.method == "qlora":
        weights = weights + _largest_matrix(a) / place.tp * 2.0  # dequantised bf16 copy of one matrix
    return weights, host


def _adapter_states(job: Job, place: _Placement, params: np.ndarray) -> tuple[np.ndarray, ...]:
    """(gradients, optimizer, adapters, host state) when only LoRA adapters train.

    Sharded by ZeRO stage like any trained weight. Offloading the optimizer moves the optimizer
    state and fp32 gradients to the host (ZeRO-Offload); offloading the parameters too keeps the
    adapters' weights and gradients there and steps on the CPU (FSDP CPUOffload(offload_params=True))."""
    w_b, _, o_b = state_bytes(job.precision, job.optimizer)
    g_b = conventions.grad_bytes(job.precision, place.megatron)
    n = job.arch.lora_params(job.lora_rank, job.lora_targets) / (place.pp * place.tp)
    weights = np.where(place.params_on_host, 0.0, n * w_b / place.shard_w)
    resident = n * g_b / place.shard_g + n * o_b / place.shard_o
    adapters = weights + np.where(place.opt_on_host, 0.0, resident)
    host = np.where(place.opt_on_host, n * (o_b + 4.0) / place.shard_o, 0.0)
    if place.any_params_on_host:
        host = host + np.where(place.params_on_host, n * w_b / place.shard_w, 0.0)
    return np.zeros_like(params), np.zeros_like(params), adapters, host


def _trained_states(
    job: Job, place: _Placement, params: np.ndarray, root: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """(gradients, optimizer, adapters, host state) when the whole model trains."""
    a = job.arch
    w_b, _, o_b = state_bytes(job.precision, job.optimizer)
    g_b = conventions.grad_bytes(job.precision, place.megatron)
    trained_copies = _model_copies(job.method)[0]
    pp, tp = place.pp, place.tp
    root = gathered_unit_params(a, tp, pp, job.fsdp_ends)[0] if root is None else root
    # FSDP reduce-scatters a unit's gradient when the unit's backward ends: the root's (embeddings,
    # head, unless they are units of their own) is held unsharded for the whole backward, beside the
    # running unit's
    unit = np.where(place.zero3, root + largest_unit_params(a, tp, job.fsdp_ends), place.unit)
    unit_g = unit * g_b
    resident_g = params * g_b / place.shard_g + np.where(place.zero3, unit_g, 0.0)
    if job.pp_unsharded:  # under PP the stage's gradients accumulate unsharded in fp32 until the last micro-batch
        resident_g = resident_g + np.where((place.pp > 1) & place.zero3, params * 4.0, 0.0)
    gradients = np.where(place.opt_on_host, unit_g, resident_g)
    resident_o = params * o_b / place.shard_o
    if job.optimizer == "adafactor":  # its factored second moments, in fp32
        resident_o = resident_o + a.factored_state_elems * 4.0 / (pp * tp) / place.shard_o
    optimizer = np.where(place.opt_on_host, 0.0, resident_o)
    # ZeRO-Offload keeps fp32 master, Adam states and fp32 gradients on the host
    host_state = np.where(place.opt_on_host, params * (o_b + 4.0) / place.shard_o, 0.0)
    if place.any_params_on_host:
        host_state = host_state + np.where(place.params_on_host, params * w_b / place.shard_w, 0.0)
    if trained_copies > 1:
        gradients, optimizer, host_state = (trained_copies * x for x in (gradients, optimizer, host_state))
    return gradients, optimizer, np.zeros_like(params), host_state


def _rollout_kv_cache(job: Job, params: np.ndarray, mbs: np.ndarray, pp: np.ndarray, tp: np.ndarray) -> np.ndarray:
    """PPO rollout generation keeps a KV cache for the micro-batch; other methods none."""
    a = job.arch
    kv_cache = np.zeros_like(params)
    if job.method == "ppo":
        kv_heads_share = kv_share(a, tp)
        kv_cache = (
            kv_cache + mbs * job.seq_len * (a.layers / pp) * a.kv_cache_elems_per_token_layer * kv_heads_share * 2.0
        )
    return kv_cache


@dataclass(frozen=True)
class _Units:
    """What ZeRO-3 / FSDP gathers on a layout, the same on every stage: gathered_bytes, and the
    root unit's parameters (gathered_unit_params), computed once for the stages to share."""

    gathered: tuple[np.ndarray, np.ndarray]
    root: np.ndarray


def _stage_memory(
    job: Job,
    place: _Placement,
    act: _Activations,
    params: np.ndarray,
    inflight: np.ndarray | float,
    has_loss: np.ndarray | bool,
    mbs: np.ndarray,
    ones: np.ndarray,
    layers: np.ndarray,
    vision: np.ndarray | float = 0.0,
    units: _Units | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Bytes per GPU on one pipeline stage holding `params` (and `vision` encoder parameters,
    frozen in 16-bit), with `inflight` micro-batches' activations over its `layers`."""
    pp = place.pp
    weights, weights_host = _stage_weights(job, place, params, units and units.gathered)
    if job.arch.vision_params:  # a vision-language model's encoder (`vision` is 0 on every stage without one)
        weights = weights + vision * 2.0 / place.tp / place.shard_w
    if job.method in ADAPTER_METHODS:
        gradients, optimizer, adapters, host_state = _adapter_states(job, place, params)
    else:
        gradients, optimizer, adapters, host_state = _trained_states(job, place, params, units and units.root)
    if weights_host is not None:
        host_state = host_state + weights_host
    activations = inflight * layers * act.stored_per_layer
    loss_peak = act.loss_peak if has_loss is True else np.where(has_loss, act.loss_peak, 0.0)
    activations = activations + np.maximum(loss_peak, act.recompute_peak)
    kv_cache = _rollout_kv_cache(job, params, mbs, pp, place.tp)
    parts = {
        "weights": _as_float(weights, ones),
        "gradients": _as_float(gradients, ones),
        "optimizer": _as_float(optimizer, ones),
        "activations": _as_float(activations, ones),
        "adapters": _as_float(adapters, ones),
        "kv_cache": _as_float(kv_cache, ones),
    }
    return parts, host_state


def _larger_stage(stages: list) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The stage that needs more memory sets the per-GPU figure; host state takes the larger of the two."""
    parts, host_state = stages[0]
    if len(stages) == 2:
        (first, host_first), (last, host_last) = stages
        use_first = _sum(first.values()) >= _sum(last.values())
        if use_first.all() or not use_first.any():  # one stage is the larger on every layout
            parts = dict(first if use_first.all() else last)
        else:
            parts = {k: np.where(use_first, first[k], last[k]) for k in first}
        host_state = np.maximum(host_first, host_last)
    return parts, host_state


def _offloaded(
    host_state: np.ndarray, gpus: np.ndarray, offload: np.ndarray, gpus_per_node
) -> tuple[np.ndarray, np.ndarray]:
    """(host RAM, NVMe) bytes per node that the GPUs of one node offload."""
    gpus_per_node_used = np.minimum(gpus, gpus_per_node)
    offloaded_per_node = host_state * gpus_per_node_used
    nvme = np.where((offload == 2) | (offload == 4), offloaded_per_node, 0.0)
    host_ram = np.where((offload == 1) | (offload == 3), offloaded_per_node, 0.0)
    return host_ram, nvme


def interleave_memory_factor(pp, vpp) -> np.ndarray:
    """Activations in flight on the first stage, interleaved over vpp chunks, relative to plain 1F1B."""
    pp, vpp = np.asarray(pp, dtype=float), np.asarray(vpp, dtype=float)
    return np.where(vpp > 1, 1 + (pp - 1) / (pp * vpp), 1.0)


def training_memory(job: Job, lay: Layout, over: Overheads) -> dict[str, np.ndarray]:
    """Peak bytes per GPU of one training step, with host RAM and NVMe the layout needs.

    The first pipeline stage (embedding, most micro-batches in flight) and the last (output head,
    loss) are evaluated; the one that needs more sets the figure.
    """
    a = job.arch
    ones, (gpus, tp, pp, zero, offload, ckpt, mbs, micro_batches, ep, cp, etp) = _broadcast_layout(lay)
    place = _placement(a, gpus, tp, pp, zero, offload, ep, cp, etp)
    if job.megatron_core:  # a framework that runs Megatron-Core on data parallelism alone too
        place = dataclasses.replace(place, megatron=np.ones_like(place.megatron, dtype=bool))
    act = _activations(job, place, ckpt, mbs, cp)
    # a vision-language model's image encoder runs before the first decoder layer, frozen
    # (LLaMA-Factory's freeze_vision_tower default)
    if (pp > 1).any():
        first_p, last_p = _stage_params(a, pp, tp)
        # 1F1B (Narayanan et al. 2021): the first stage keeps up to pp micro-batches in flight, the last one;
        # interleaved over v chunks it keeps 1 + (p-1)/(p v) times that (Korthikanti et al. 2022, Sec. 4.2.3;
        # Megatron's warm-up of 2(p-1) + (v-1)p chunk passes)
        inflight_first = np.minimum(pp, np.maximum(micro_batches, 1)) * interleave_memory_factor(pp, lay.vpp)
        first_layers, last_layers = stage_layers(a, pp)
        stage_list = [
            (first_p, inflight_first, pp == 1, first_layers, a.vision_params),
            (last_p, 1.0, True, last_layers, np.where(pp > 1, 0.0, a.vision_params)),
        ]
    else:  # without pipelining the first stage is the last, one micro-batch in flight: evaluate it once
        stage_list = [(_unstaged_params(a) / tp, 1.0, True, a.layers, a.vision_params)]
    root = gathered_unit_params(a, place.tp, place.pp, job.fsdp_ends)[0]
    units = _Units(gathered_bytes(job, place.tp, place.pp, root), root)
    stages = [
        _stage_memory(job, place, act, p, inflight, has_loss, mbs, ones, layers, vision, units)
        for p, inflight, has_loss, layers, vision in stage_list
    ]

    parts, host_state = _larger_stage(stages)
    parts["overhead"] = _overhead(_sum(parts.values()), gpus, over)
    if place.any_params_on_host:  # the host-to-device copies' buffers (none without parameter offload)
        parts["overhead"] = parts["overhead"] + _offload_copy(job, place, units.gathered)
    host_ram, nvme = _offloaded(host_state, gpus, offload, lay.gpus_per_node)
    return {**parts, "host_offload": host_ram, "nvme_offload": nvme}


def kv_share(a: Arch, tp: np.ndarray) -> np.ndarray:
    """Share of the KV cache one GPU holds: kv heads split over tp, replicated when fewer."""
    if a.is_mla:
        return np.ones_like(tp)  # the latent is shared by all heads: every tp rank keeps it
    return np.ceil(a.kv_heads / tp) / a.kv_heads


def _overhead(subtotal: np.ndarray, gpus: np.ndarray, over: Overheads) -> np.ndarray:
    context = over.cuda_context_gib * GIB
    # the CUDA context, NCCL's buffers where there are peers, the allocator's fragmentation
    fixed = np.where(gpus > 1, context + over.comm_buffers_gib * GIB, context)
    return fixed + over.fragmentation * subtotal


# --- serving ---------------------------------------------------------------------------------

SERVE_WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": INT4_BYTES_PER_PARAM}


# bytes of one KV-cache element by its type: vLLM's --kv-cache-dtype fp8, lmdeploy's --quant-policy 8 / 4
KV_ELEMENT_BYTES = {"bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


def kv_element(precision: str, kv: str | None = None) -> str:
    """The KV cache's element type: the one asked for, else fp8 beside fp8 weights, 16-bit otherwise."""
    return kv or ("fp8" if precision == "fp8" else "bf16")


def kv_bytes_per_token(a: Arch, precision: str, kv: str | None = None) -> float:
    """KV cache bytes per token for the whole model (vLLM, Kwon et al. 2023, Sec. 3), in the element
    type kv_element gives."""
    return a.layers * a.kv_cache_elems_per_token_layer * KV_ELEMENT_BYTES[kv_element(precision, kv)]


def serving_expert_slots(a: Arch, ep) -> np.ndarray:
    """Routed experts one GPU of an expert-parallel serving replica holds per MoE layer: E / ep, or
    ceil(E / ep) where ep does not divide E, the slots beyond E holding redundant copies of the
    busiest experts (DeepSeek-V3's deployment, arXiv:2412.19437 Sec. 3.4: 32 redundant experts over
    EP32 in prefill; SGLang's EPLB, --ep-num-redundant-experts, 288 slots for 256 experts at EP72)."""
    ep = np.asarray(ep, dtype=float)
    return np.ceil(a.experts / ep) if a.is_moe else np.ones_like(ep)


def serving_weight_bytes(a: Arch, precision: str, tp=1.0, pp=1.0, ep=1.0) -> np.ndarray:
    """Weight bytes one GPU of a replica holds (with tp = pp = ep = 1: the served model once).
    Quantised checkpoints (AWQ, GPTQ, FP8) leave embeddings and the output head in 16-bit; the first
    pipeline stage holds the embedding and a vision-language model's encoder, the last the head;
    expert parallelism splits only the routed experts, serving_expert_slots of them per GPU."""
    tp, pp, ep = (np.asarray(x, dtype=float) for x in (tp, pp, ep))
    ends = a.embed_params + a.head_params + a.final_norm_params
    first, last = a.embed_params + a.vision_params, a.head_params
    held = serving_expert_slots(a, ep) / a.experts if a.is_moe else 1.0
    stack = a.layer_stack_params - a.routed_expert_params * (1 - held)
    weights = (
        stack / pp * SERVE_WEIGHT_BYTES[precision] + np.where(pp > 1, max(first, last), ends + a.vision_params) * 2.0
    )
    return weights / tp


def serving_memory(
    a: Arch,
    precision: str,
    *,
    seq_len: int,
    batch: np.ndarray | int,
    tp: np.ndarray | int,
    pp: np.ndarray | int,
    prefill_chunk: int,
    over: Overheads,
    ep: np.ndarray | int = 1,
    kv_cache: str | None = None,
) -> dict[str, np.ndarray]:
    """Bytes per GPU to serve `batch` concurrent sequences of `seq_len` tokens (prompt + output).
    With ep > 1 (a MoE replica of ep GPUs, SGLang's and DeepSeek's data-parallel attention with
    expert parallelism) each GPU holds all but the routed experts, its serving_expert_slots of
    those, and its own 1/ep of the sequences with their whole KV cache."""
    tp_f, pp_f, ep_f = (np.asarray(x, dtype=float) for x in (tp, pp, ep))
    batch_f = np.ceil(np.asarray(batch, dtype=float) / ep_f)  # the sequences the busiest attention rank serves
    weights = serving_weight_bytes(a, precision, tp_f, pp_f, ep_f)
    kv = batch_f * seq_len * kv_bytes_per_token(a, precision, kv_cache) / pp_f * kv_share(a, tp_f)
    chunk = np.minimum(batch_f * seq_len, prefill_chunk)
    layer_working = activation_elems_per_token_layer(a)["none"] * chunk * 2.0 / tp_f
    logits = batch_f * a.vocab * 4.0 / tp_f  # fp32 logits of the last position for sampling
    parts = {
        "weights": weights * np.ones_like(batch_f),
        "gradients": np.zeros_like(kv),
        "optimizer": np.zeros_like(kv),
        "activations": layer_working + logits,
        "adapters": np.zeros_like(kv),
        "kv_cache": kv,
    }
    # the parts' sum, in their order, without the states a server keeps none of (0 added)
    subtotal = parts["weights"] + parts["activations"] + parts["kv_cache"]
    parts["overhead"] = _overhead(subtotal, tp_f * pp_f * ep_f, over)
    return {**parts, "host_offload": np.zeros_like(kv), "nvme_offload": np.zeros_like(kv)}


BREAKDOWN_KEYS = ("weights", "gradients", "optimizer", "activations", "adapters", "kv_cache", "overhead")


def per_gpu_total(parts: dict[str, np.ndarray]) -> np.ndarray:
    return _sum(parts[k] for k in BREAKDOWN_KEYS)


def _sum(values: Iterable[np.ndarray]) -> np.ndarray:
    """sum(values) without its leading 0 + (a copy of the first array): the same figures, one pass fewer."""
    values = iter(values)
    total = next(values)
    for x in values:
        total = total + x
    return total
