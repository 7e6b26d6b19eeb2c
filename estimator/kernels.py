"""A step as the sum of its kernels, each timed from its shape.

Per layer and micro-batch on one GPU: every GEMM from its m x n x k on a roofline (FLOPs against the
bytes it moves), with the losses of whole tiles in whole waves over the SMs; attention at
FlashAttention's measured rates by head dimension and length; norms, activations, rotary, router,
permute, residual adds and FP8 casts at HBM bandwidth. Shapes may be layout arrays (L,), device
figures (T, 1) columns, so times come out (T, L). Constants and their sources: knowledge/kernels.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from gpuplan.estimator import memo
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.memory import SERVE_WEIGHT_BYTES
from gpuplan.knowledge import GPU, KernelFile

OUT_BYTES = 2.0  # GEMM outputs are written in 16 bits (FP8 GEMMs too: Transformer Engine's bf16 outputs)
FP32_PARTIAL_BYTES = 4.0  # split-K partial sums


@dataclass(frozen=True)
class Device:
    """What the kernel model needs of the GPU types: each field a (T, 1) column."""

    sms: np.ndarray
    tile_m: np.ndarray  # rows x columns of the large-GEMM thread-block tile
    tile_n: np.ndarray
    group_rows: np.ndarray  # the smallest row tile a grouped (expert) GEMM takes
    gemm: np.ndarray  # FLOP/s a large GEMM sustains at the step's matmul precision
    gemm16: np.ndarray  # the same at 16 bits (the output layer and router stay 16-bit under FP8)
    hbm: np.ndarray  # bytes/s a streaming kernel sustains
    attn_fwd: np.ndarray  # FLOP/s of attention at long lengths and head dimension 128
    attn_bwd: np.ndarray
    attn_half: np.ndarray  # length at which attention runs at half that
    cast_bytes: np.ndarray  # bytes per element an FP8 quantisation moves (0 without FP8 GEMMs)
    step_share: np.ndarray  # share of a training step's time its kernels take (the rest is not kernels)
    matmul_bytes: float  # bytes per GEMM operand element at the step's matmul precision
    weight_bytes: float  # bytes per weight element (serving's int8/int4 weights under 16-bit activations)
    head_dim_half: float
    launch: float  # seconds each kernel adds


# the Device columns a GEMM reads
GEMM_COLUMNS = ("sms", "tile_m", "tile_n", "group_rows", "gemm", "gemm16", "hbm")


def matmul_peak(gpu: GPU, precision: str) -> tuple[float, str]:
    """Dense FLOP/s of the tensor cores the step's GEMMs run on, and the kernels.yaml figure of their
    sustained share: FP8 where FP8 GEMMs run, TF32 (else the FP32 units: V100's 15.7 of 125 TFLOP/s)
    for fp32, 16-bit otherwise."""
    if precision in ("fp8-mixed", "fp8") and gpu.fp8_tflops:
        return gpu.fp8_tflops * 1e12, "gemm_fp8"
    if precision == "fp32":
        return (gpu.tf32_tflops or gpu.peak_16bit_tflops * 15.7 / 125) * 1e12, "gemm_tf32"
    return gpu.peak_16bit_tflops * 1e12, "gemm_16bit"


_ROWS: dict[tuple, list[float]] = {}  # _device_row by what it reads: the kernel figures of a GPU at a precision


def _device_row(gpu: GPU, precision: str, kf: KernelFile, group_rows: float, sdpa: bool = False) -> list[float]:
    key = (gpu.id, gpu.family, gpu.peak_16bit_tflops, gpu.fp8_tflops, gpu.tf32_tflops, gpu.hbm_gb_s)
    key += (precision, group_rows, id(kf), sdpa)
    if key not in _ROWS:
        _ROWS[key] = _read_device_row(gpu, precision, kf, group_rows, sdpa)
    return _ROWS[key]


def _read_device_row(gpu: GPU, precision: str, kf: KernelFile, group_rows: float, sdpa: bool) -> list[float]:
    """A GPU type's Device figures; `sdpa`: attention through PyTorch's scaled_dot_product_attention,
    the generation's sdpa_attention kernel where it names one (FlashAttention-2 on Hopper)."""
    gen = kf.generations[gpu.family]
    peak, figure = matmul_peak(gpu, precision)
    share = getattr(gen, figure) or gen.gemm_16bit  # no FP8 GEMM figure: the 16-bit one
    attn = kf.attention[str((sdpa and gen.sdpa_attention or gen.attention).value)]
    peak16 = gpu.peak_16bit_tflops * 1e12
    fp8 = figure == "gemm_fp8" and precision == "fp8-mixed"
    cast = float(kf.fp8_recipes[str(gen.fp8_recipe.value)].value) if fp8 and gen.fp8_recipe else 0.0
    sms = float(kf.sms_by_gpu.get(gpu.id, gen.sms.value))
    rows, columns = gen.tile_shape
    return [
        *(sms, rows, columns, group_rows),
        *(peak * float(share.value), peak16 * float(gen.gemm_16bit.value)),
        gpu.hbm_gb_s * 1e9 * float(kf.hbm_efficiency.value),
        *(peak16 * float(attn.forward.value), peak16 * float(attn.backward.value), float(attn.half_length.value)),
        cast,
        float(gen.step_share.value),
    ]


def sustained_gemm(gpu: GPU, precision: str, kf: KernelFile) -> float:
    """FLOP/s a large GEMM sustains on a GPU at a precision (Device.gemm of one type)."""
    return _device_row(gpu, precision, kf, float(kf.generations[gpu.family].tile_shape[0]))[4]


_DEVICES: dict[tuple, tuple[list[GPU], Device]] = {}  # device() by its GPU objects' ids (kept alive beside it)


def device(
    gpus: list[GPU],
    precision: str,
    kf: KernelFile,
    group_rows: list[float] | None = None,
    serving: bool = False,
    sdpa: bool = False,
) -> Device:
    """The kernel figures of GPU types as (T, 1) columns, for a training precision or (`serving`) a
    serving precision, whose weights may be narrower than its activations (int8, int4); `sdpa`:
    attention through PyTorch's SDPA (a framework's habit, knowledge/frameworks.yaml). Memoised by
    the (frozen) GPU and kernel-file objects, which the entry keeps alive so their ids stay theirs;
    the columns are read-only, shared by every caller."""
    key = (*map(id, gpus), precision, *(group_rows or ()), id(kf), serving, sdpa)
    if key not in _DEVICES:
        if len(_DEVICES) > 1024:  # custom GPUs make new objects per request: a bound, not an LRU
            _DEVICES.clear()
        _DEVICES[key] = ([*gpus, kf], _read_device(gpus, precision, kf, group_rows, serving, sdpa))
    return _DEVICES[key][1]


def _read_device(
    gpus: list[GPU], precision: str, kf: KernelFile, group_rows: list[float] | None, serving: bool, sdpa: bool
):
    rows = group_rows or [float(kf.generations[g.family].tile_shape[0]) for g in gpus]
    table = np.array([_device_row(g, precision, kf, r, sdpa) for g, r in zip(gpus, rows, strict=True)])
    columns = [table[:, [i]] for i in range(table.shape[1])]
    for column in columns:
        column.setflags(write=False)
    matmul_bytes = 1.0 if precision in ("fp8-mixed", "fp8") else 4.0 if precision == "fp32" else 2.0
    weight_bytes = SERVE_WEIGHT_BYTES[precision] if serving else matmul_bytes
    extra = (matmul_bytes, weight_bytes, float(kf.attention_head_dim_half.value), float(kf.launch_us.value) * 1e-6)
    return Device(*columns, *extra)


# --- GEMMs ------------------------------------------------------------------------------------


# the smallest tile side cuBLAS takes for a short dimension: its kernels tile by 64 and 128 as well as
# by their large tiles (sm90_xmma_gemm_..._tilesize64x128x64, ampere_bf16_s16816gemm_bf16_128x128)
SMALL_TILE = 64.0


def _fitting_tile(size, large) -> np.ndarray:
    """The tile side for a dimension: the large tile's, or for a shorter dimension the power of two
    that holds it, from SMALL_TILE up (estimate: at the large tile's rate per FLOP)."""
    return np.minimum(large, np.exp2(np.ceil(np.log2(np.maximum(size, SMALL_TILE)))))


def _tile_seconds(dev: Device, tm, tn, k_slices, rate) -> list[np.ndarray]:
    """One tile's main loop over each of `k_slices` of k, plus its output store, which does not
    overlap it: tm x tn outputs written at the SM's share of HBM bandwidth take as long as this many
    more of k."""
    k_store = OUT_BYTES * rate / (2.0 * dev.hbm)
    flops, per_sm = 2.0 * tm * tn, rate / dev.sms
    return [flops * (k_slice + k_store) / per_sm for k_slice in k_slices]


def gemm_seconds(
    dev: Device, m, n, k, *, groups=1.0, rate=None, in_bytes=None, weight_bytes=None, weights_read=1.0
) -> np.ndarray:
    """`groups` GEMMs of m x k by k x n in one kernel (a grouped expert GEMM when groups > 1): the
    longer of their compute, in whole tiles and whole waves over the SMs, and their bytes at HBM
    bandwidth (Williams et al. 2009, roofline), plus a launch. Tile and wave quantisation follow
    NVIDIA's Matrix Multiplication Background guide, Sec. 3; when the tiles leave SMs idle, cuBLAS
    splits k over them (split-K), the partial sums written and read once in fp32; a dimension
    shorter than the large tile takes a smaller one (_fitting_tile). A grouped GEMM
    tiles each expert's rows on its own, down to `group_rows` for experts with few tokens, the last
    tile half full on average (TensorRT-LLM's cutlass_heuristic.cpp), and reads the share
    `weights_read` of the groups' weights (experts no token reached are skipped)."""
    rate = dev.gemm if rate is None else rate
    in_bytes = dev.matmul_bytes if in_bytes is None else in_bytes
    weight_bytes = in_bytes if weight_bytes is None else weight_bytes
    grouped = np.asarray(groups) > 1
    tm = _fitting_tile(m, dev.tile_m)
    if grouped.any():
        tm = np.where(grouped, np.where(m < dev.tile_m, dev.group_rows, dev.tile_m), tm)
        row_tiles = np.where(grouped, np.maximum(weights_read, m / tm + weights_read / 2), np.ceil(m / tm))
    else:  # no grouped GEMM: the plain tiles alone (the same figures, fewer array passes)
        row_tiles = np.ceil(m / tm)
    tn = _fitting_tile(n, dev.tile_n)
    tiles = groups * row_tiles * np.ceil(n / tn)
    split = np.maximum(1.0, np.minimum(np.floor(dev.sms / tiles), np.ceil(k / 64.0)))
    tile_whole, tile_split = _tile_seconds(dev, tm, tn, (k, k / split), rate)
    whole = np.ceil(tiles / dev.sms) * tile_whole
    split_k = np.ceil(tiles * split / dev.sms) * tile_split
    compute = np.minimum(whole, split_k)
    partials = np.where(split_k < whole, (split - 1.0) * m * n * 2.0 * FP32_PARTIAL_BYTES, 0.0)
    traffic = groups * (in_bytes * m * k + weights_read * weight_bytes * k * n + OUT_BYTES * m * n + partials)
    return np.maximum(compute, traffic / dev.hbm) + dev.launch


def linear_seconds(dev: Device, m, n, k, *, trained=True, groups=1.0, **kw) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) of a linear layer y = x W with x m x k and W k x n: the forward GEMM, then
    the input gradient (m x n by n x k) and, for trained weights, the weight gradient (k x m by
    m x n, summed over the m rows)."""
    forward = gemm_seconds(dev, m, n, k, groups=groups, **kw)
    backward = gemm_seconds(dev, m, k, n, groups=groups, **kw)
    if trained:
        backward = backward + gemm_seconds(dev, n, k, m, groups=groups, **kw)
    return forward, backward


# --- attention and streaming kernels ----------------------------------------------------------------


def attention_seconds(dev: Device, a: Arch, sequences, length, *, tp=1.0, cp=1.0) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) of causal FlashAttention over `sequences` sequences of `length` tokens,
    heads split over tp and queries over cp ranks. FLOPs: QK^T and AV, 2 x d each per query-key
    pair, half the pairs under the causal mask; the backward does 2.5 x the forward's (the
    FlashAttention benchmarks' count). Rate: FlashAttention's at long lengths, scaled by d / (d +
    d_half) for the head dimension and L / (L + L_half) for the length each rank attends over."""
    flops, width, along = _attention_work(dev, a, sequences, length, tp, cp)
    forward = flops / (dev.attn_fwd * width * along) + dev.launch
    backward = 2.5 * flops / (dev.attn_bwd * width * along) + dev.launch
    return forward, backward


def attention_forward_seconds(dev: Device, a: Arch, sequences, length, *, tp=1.0, cp=1.0) -> np.ndarray:
    """attention_seconds' forward alone (a prefill has no backward)."""
    flops, width, along = _attention_work(dev, a, sequences, length, tp, cp)
    return flops / (dev.attn_fwd * width * along) + dev.launch


def _attention_work(dev: Device, a: Arch, sequences, length, tp, cp) -> tuple:
    """(FLOPs, head-dimension factor, length factor) of attention_seconds."""
    d_qk = a.head_dim
    d_v = a.v_head_dim if a.is_mla else a.head_dim
    # under cp, a load-balanced ring: each rank holds two of 2 x cp chunks (round-robin, PyTorch's
    # _templated_ring_attention note; Megatron's and Transformer Engine's dual chunks alike), so every
    # rank scores (L / cp) x (L / 2) pairs, over cp steps of (L / cp) x (L / 2cp) each
    flops = 2.0 * sequences * (a.heads / tp) * (d_qk + d_v) * (length / cp) * (length / 2.0)
    width = (d_qk / (d_qk + dev.head_dim_half)) / (128.0 / (128.0 + dev.head_dim_half))
    block = length / cp
    along = block / (block + dev.attn_half)
    return flops, width, along


def decode_attention_flops(a: Arch, sequences, held, *, tp=1.0) -> np.ndarray:
    """FLOPs of one layer's decode attention on a rank: each sequence's new query against the `held`
    positions of its cache, QK^T and AV at 2 FLOPs a multiply-add, heads split over tp. MLA decodes in
    its absorbed form (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1.2; FlashMLA): every head scores the
    kv_lora_rank + rope latent and sums the kv_lora_rank values, so 128 heads share one 576-wide
    cache entry (about 240 FLOPs a cached byte in 16 bits, against 1-8 for multi-head and GQA)."""
    if a.is_mla:
        d_qk, d_v = a.kv_lora_rank + a.qk_rope_head_dim, a.kv_lora_rank
    else:
        d_qk = d_v = a.head_dim
    return 2.0 * sequences * held * (a.heads / np.asarray(tp, dtype=float)) * (d_qk + d_v)


def decode_attention_seconds(dev: Device, a: Arch, sequences, held, kv_bytes, *, tp=1.0, pp=1.0) -> np.ndarray:
    """A decode step's attention over the KV cache on one rank, every layer of a pipeline stage: the
    longer of streaming `kv_bytes` (the stage's cache the step reads) at HBM bandwidth and the FLOPs
    (decode_attention_flops) at the generation's attention rate (Device.attn_fwd; FlashMLA, the MLA
    decode kernel, reaches 580 TFLOP/s compute-bound on H800, 0.59 of 989, near FlashAttention-3's
    0.65: FlashMLA README). Multi-head and GQA caches are memory-bound; MLA's is compute-bound."""
    flops = decode_attention_flops(a, sequences, held, tp=tp) * a.layers / np.asarray(pp, dtype=float)
    return np.maximum(kv_bytes / dev.hbm, flops / dev.attn_fwd)


def stream_seconds(dev: Device, nbytes, kernels=1.0) -> np.ndarray:
    """Memory-bound kernels: their bytes at the HBM bandwidth a streaming kernel sustains, plus launches."""
    return nbytes / dev.hbm + kernels * dev.launch


# --- a transformer layer ------------------------------------------------------------------------


@dataclass(frozen=True)
class Work:
    """One micro-batch on one GPU: its shapes and what of the model trains."""

    tokens: np.ndarray  # tokens through the layer on this rank: micro-batch x sequence / cp
    sequences: np.ndarray  # sequences in the micro-batch
    seq_len: float
    tp: np.ndarray  # tensor parallel (with sequence parallelism), also the experts' tensor parallel
    ep: np.ndarray  # expert parallel ranks, taken from the data-parallel ones
    cp: np.ndarray  # context parallel ranks
    trained: bool = True  # the base weights train (False: LoRA / QLoRA adapters only)
    lora_rank: int = 0
    qlora_bytes: float = 0.0  # bytes a QLoRA base weight's 4-bit data and constants take per element
    expert_load: np.ndarray | float = 1.0  # the busiest expert-parallel rank's routed rows over the average
    etp: np.ndarray | None = None  # the experts' tensor parallel (None: tp, Megatron-Core's default)

    def expert_tp(self) -> np.ndarray:
        return self.tp if self.etp is None else self.etp


def attention_linears(a: Arch, tp) -> list[tuple]:
    """(n, k) per rank of the attention projections: Megatron splits the query, key and value
    outputs and the output projection's input over tp; MLA's down projections are replicated
    (Megatron-Core's MLASelfAttention)."""
    h = a.hidden
    if not a.is_mla:
        return [((a.q_dim + 2 * a.kv_heads * a.head_dim) / tp, h), (h, a.o_dim / tp)]
    nope = a.head_dim - a.qk_rope_head_dim
    query = [(a.q_lora_rank, h), (a.q_dim / tp, a.q_lora_rank)] if a.q_lora_rank else [(a.q_dim / tp, h)]
    kv = [(a.kv_lora_rank + a.qk_rope_head_dim, h), (a.heads * (nope + a.v_head_dim) / tp, a.kv_lora_rank)]
    return [*query, *kv, (h, a.o_dim / tp)]


def mlp_linears(a: Arch, width, tp) -> list[tuple]:
    """(n, k) per rank of an MLP of `width`: gate and up fused (or one up projection), then down."""
    return [((2 if a.gated else 1) * width / tp, a.hidden), (a.hidden, width / tp)]


def _stacked(rows: list[tuple], shape: tuple) -> np.ndarray:
    """The GEMMs' (m, n, k, groups, weights_read), scalars and layout arrays, as (5, rows, *shape):
    a field that is a number in every row, or an array of one shape, in one pass, the others row by row."""
    stacked = np.empty((5, len(rows), *shape))
    for j in range(5):
        values = [row[j] for row in rows]
        try:
            column = np.array(values, dtype=float)
        except ValueError:  # numbers beside layout arrays, or arrays of different shapes
            for i, x in enumerate(values):
                stacked[j, i] = x
            continue
        stacked[j] = column.reshape(column.shape + (1,) * (1 + len(shape) - column.ndim))
    return stacked


# where a GEMM's time counts: an average layer's forward or backward, or the last stage's output layer
FORWARD, BACKWARD, HEAD = 0, 1, 2


class GemmTable:
    """The GEMMs of one micro-batch, gathered from its layers and timed in one vectorised pass:
    each row a GEMM's shape over the layouts, where its time counts and in what share of the layers
    it runs; beside them the elements its FP8 casts and QLoRA's dequantisation stream."""

    def __init__(self, w: Work | None, shape: tuple = ()):
        self.w = w  # None: forward GEMMs only, added one by one (a serving step) over layouts of `shape`
        self.shape = shape
        self.rows: list[tuple] = []  # (m, n, k, groups, weights_read, sixteen_bit, bucket, share)
        self.cast = [0.0, 0.0]  # elements cast to FP8, forward and backward (times the layer share)
        self.casts = [0.0, 0.0]  # cast kernels
        self.dequantised = 0.0  # QLoRA weight elements dequantised per pass (forward, and backward)

    def linear(self, m, n, k, *, share=1.0, groups=1.0, sixteen_bit=False, head=False, adapters=True, trained=None):
        """A linear layer y = x W (x m x k, W k x n): the forward GEMM, the input gradient (m x n by
        n x k) and, for trained weights, the weight gradient (k x m by m x n); its FP8 casts (the
        input forward, the output gradient backward); beside a frozen weight LoRA's rank-r GEMMs (Hu
        et al. 2021) and QLoRA's dequantisation before each use (bitsandbytes dequantize_4bit: 4-bit
        data and constants read, the 16-bit weight written)."""
        w, f, b = self.w, HEAD if head else FORWARD, HEAD if head else BACKWARD
        trained = w.trained if trained is None else trained
        self.rows += [(m, n, k, groups, 1.0, sixteen_bit, f, share), (m, k, n, groups, 1.0, sixteen_bit, b, share)]
        if trained:
            self.rows.append((n, k, m, groups, 1.0, sixteen_bit, b, share))
        if not sixteen_bit:
            self.cast = [self.cast[0] + share * groups * m * k, self.cast[1] + share * groups * m * n]
            self.casts = [self.casts[0] + share, self.casts[1] + share]
        if adapters and not w.trained and w.lora_rank and groups == 1:
            for n_, k_ in ((w.lora_rank, k), (n, w.lora_rank)):
                self.linear(m, n_, k_, share=share, sixteen_bit=True, adapters=False, trained=True)
        if adapters and w.qlora_bytes and groups == 1:
            self.dequantised = self.dequantised + share * n * k

    def add(self, m, n, k, *, share=1.0, groups=1.0, weights_read=1.0, sixteen_bit=False):
        """One forward GEMM (m x k by k x n), run `share` times."""
        self.rows.append((m, n, k, groups, weights_read, sixteen_bit, FORWARD, share))

    def _shape(self) -> tuple:
        if self.w is None:
            return self.shape or (1,)
        w = self.w
        fields = (w.tokens, w.tp, w.ep, w.expert_load, w.expert_tp())
        return np.broadcast_shapes(*(np.shape(x) for x in fields)) or (1,)

    def seconds(self, dev: Device) -> np.ndarray:
        """Seconds by where they count (FORWARD, BACKWARD, HEAD), each (T, layouts). The sum over the
        GEMMs is a BLAS dot, whose rounding moves with the arrays' shapes: answers printed in JSON
        show every digit, so it stays the dot they were recorded with."""
        m, n, k, groups, weights_read = _stacked(self.rows, self._shape())
        sixteen_bit = np.array([row[5] for row in self.rows])[:, None]
        columns = SimpleNamespace(**{f: getattr(dev, f)[..., None] for f in GEMM_COLUMNS}, launch=dev.launch)
        rate = np.where(sixteen_bit, columns.gemm16, columns.gemm)
        in_bytes, weight_bytes = (np.where(sixteen_bit, 2.0, x) for x in (dev.matmul_bytes, dev.weight_bytes))
        times = gemm_seconds(
            columns,
            m,
            n,
            k,
            groups=groups,
            rate=rate,
            in_bytes=in_bytes,
            weight_bytes=weight_bytes,
            weights_read=weights_read,
        )
        where = np.zeros((3, len(self.rows)))
        where[[row[6] for row in self.rows], np.arange(len(self.rows))] = [row[7] for row in self.rows]
        return np.tensordot(where, times, axes=([1], [1]))

    def stream_seconds(self, dev: Device) -> tuple[np.ndarray, np.ndarray]:
        """(forward, backward) of the casts and dequantisation, per average layer."""
        fp8 = dev.cast_bytes > 0
        dequantise = stream_seconds(dev, self.dequantised * (self.w.qlora_bytes + 2.0), self.dequantised > 0)
        forward = stream_seconds(dev, dev.cast_bytes * self.cast[0], fp8 * self.casts[0]) + dequantise
        return forward, stream_seconds(dev, dev.cast_bytes * self.cast[1], fp8 * self.casts[1]) + dequantise


def _moe_linears(table: GemmTable, a: Arch, share: float) -> None:
    """A MoE layer's matmuls: the router (16-bit, on the rank's sequence-parallel tokens), the routed
    experts as grouped GEMMs, the shared experts and a dense residual MLP (Snowflake Arctic). Each
    rank holds m / tp of the micro-batch's tokens (sequence parallel); the etp ranks of an expert
    group gather theirs and each computes 1/etp of every local expert's width (Megatron-Core's
    --expert-tensor-parallel-size, tp by default); the ep ranks of the group share their tokens' k
    copies over the E experts, E / ep each, so an expert receives ep x etp x (m / tp) x k / E rows on
    average (ep x m x k / E when etp = tp), the busiest rank `expert_load` times that."""
    w = table.w
    etp = w.expert_tp()
    table.linear(w.tokens / w.tp, a.experts, a.hidden, share=share, sixteen_bit=True, adapters=False)
    rows = w.ep * etp * w.tokens / w.tp * a.experts_per_token / a.experts * w.expert_load
    for n, k in mlp_linears(a, a.moe_ffn_hidden, etp):
        table.linear(rows, n, k, share=share, groups=a.experts / w.ep, adapters=False)
    width = a.shared_experts * a.moe_ffn_hidden
    for n, k in (mlp_linears(a, width, w.tp) if width else []) + (
        mlp_linears(a, a.residual_ffn_hidden, w.tp) if a.residual_ffn_hidden else []
    ):
        table.linear(w.tokens, n, k, share=share)


def _stream_forward_bytes(a: Arch, w: Work, moe: bool) -> tuple[np.ndarray, float]:
    """Bytes and kernels of a layer's memory-bound forward kernels (16-bit activations): two norms
    (read, write) and two residual adds (read two, write one) on the rank's 1/tp of the tokens
    (sequence parallelism), rotary embeddings on the queries' and keys' rotated dims, the MLP's
    activation (gated: read two, write one); in a MoE layer also the router's softmax and top-k
    (fp32), the permutation of each token's k copies and their weighted sum back."""
    sp, h, b = w.tokens / w.tp, a.hidden, 2.0
    nbytes = (2 * 2 + 2 * 3) * h * sp * b
    rotated = (a.heads + 1) * a.qk_rope_head_dim if a.is_mla else a.q_dim + a.kv_heads * a.head_dim
    nbytes = nbytes + 2 * rotated / w.tp * w.tokens * b
    act = 3.0 if a.gated else 2.0
    if not moe:
        return nbytes + act * a.ffn_hidden / w.tp * w.tokens * b, 6.0
    copies = w.tokens * a.experts_per_token * w.expert_load
    width = a.moe_ffn_hidden * (copies + a.shared_experts * w.tokens) + a.residual_ffn_hidden * w.tokens
    nbytes = nbytes + act * width / w.tp * b
    nbytes = nbytes + sp * h * b * (3 * a.experts_per_token + 1) + sp * a.experts * 4.0 * 2
    return nbytes, 10.0


@dataclass(frozen=True)
class LayerTime:
    forward: np.ndarray  # one micro-batch through an average layer
    backward: np.ndarray
    attention_forward: np.ndarray  # of which what selective recomputation repeats (_recomputed_forward)


@dataclass(frozen=True)
class MicroBatch:
    layer: LayerTime
    first: np.ndarray  # the first stage's embedding, forward and backward
    last: np.ndarray  # the last stage's final norm, output layer and loss, forward and backward


# Megatron-Core's vocab-parallel cross-entropy casts the bf16 logits to fp32 forward (read 2, write
# 4) and reads that copy to write the bf16 gradient backward (4 + 2): conventions.py
LOSS_BYTES_PER_LOGIT = 12.0


def _gemms(a: Arch, w: Work) -> GemmTable:
    """Every GEMM of a micro-batch: an average layer's (dense and MoE layers weighted by their
    counts) and the output layer's, 16-bit over the vocabulary split over tp."""
    table = GemmTable(w)
    for n, k in attention_linears(a, w.tp):
        table.linear(w.tokens, n, k)
    dense_share = 1.0 - a.moe_layers / a.layers
    if dense_share > 0:
        for n, k in mlp_linears(a, a.ffn_hidden, w.tp):
            table.linear(w.tokens, n, k, share=dense_share)
    if a.is_moe:
        _moe_linears(table, a, 1.0 - dense_share)
    table.linear(w.tokens, a.vocab / w.tp, a.hidden, sixteen_bit=True, head=True, adapters=False)
    return table


def _recomputed_forward(dev: Device, a: Arch, w: Work, attention: np.ndarray) -> np.ndarray:
    """What selective recomputation repeats of a layer's forward: the core attention (Megatron-Core's
    default recompute_modules, "core_attn") and, for MLA, the query and key-value up-projections
    ("mla_up_proj", as NeMo's DeepSeek-V3 recipes set it; memory.activation_elems_per_token_layer)."""
    if not a.is_mla:
        return attention
    table, nope = GemmTable(w), a.head_dim - a.qk_rope_head_dim
    if a.q_lora_rank:
        table.add(w.tokens, a.q_dim / w.tp, a.q_lora_rank)
    table.add(w.tokens, a.heads * (nope + a.v_head_dim) / w.tp, a.kv_lora_rank)
    return attention + table.seconds(dev)[FORWARD]


def micro_batch_seconds(dev: Device, a: Arch, w: Work) -> MicroBatch:
    """One micro-batch on one GPU: an average layer forward and backward (its GEMMs, FlashAttention,
    its memory-bound kernels, whose backward moves twice the forward's bytes: reads the saved input
    and the gradient, writes the gradient, an estimate), and the two ends of the model: the
    embedding's lookup and its gradient's scatter, the final norm, output layer and loss."""
    table = _gemms(a, w)
    gemms = table.seconds(dev)
    casts_f, casts_b = table.stream_seconds(dev)
    attn_f, attn_b = attention_seconds(dev, a, w.sequences, w.seq_len, tp=w.tp, cp=w.cp)
    dense_share = 1.0 - a.moe_layers / a.layers
    nbytes, kernels = _stream_forward_bytes(a, w, moe=False)
    streams_f = dense_share * stream_seconds(dev, nbytes, kernels)
    streams_b = dense_share * stream_seconds(dev, 2 * nbytes, 2 * kernels)
    if a.is_moe:
        nbytes, kernels = _stream_forward_bytes(a, w, moe=True)
        streams_f = streams_f + (1 - dense_share) * stream_seconds(dev, nbytes, kernels)
        streams_b = streams_b + (1 - dense_share) * stream_seconds(dev, 2 * nbytes, 2 * kernels)
    forward = gemms[FORWARD] + casts_f + attn_f + streams_f
    backward = gemms[BACKWARD] + casts_b + attn_b + streams_b
    first = stream_seconds(dev, 4 * w.tokens * a.hidden * 2.0, 2)
    loss = stream_seconds(dev, w.tokens * a.vocab / w.tp * LOSS_BYTES_PER_LOGIT, 2)
    norm = stream_seconds(dev, 3 * 2 * a.hidden * w.tokens / w.tp * 2.0, 2)
    recomputed = _recomputed_forward(dev, a, w, attn_f)
    return MicroBatch(LayerTime(forward, backward, recomputed), first, gemms[HEAD] + loss + norm)


# micro_batch_seconds and decode_seconds by their shapes: a few hundred models x GPU sets x shapes
SHAPE_CACHE_SIZE = 256
_MICRO_BATCHES = memo.ShapeCache(SHAPE_CACHE_SIZE)
_DECODE_STEPS = memo.ShapeCache(SHAPE_CACHE_SIZE)


def cached_micro_batch_seconds(dev: Device, a: Arch, w: Work) -> MicroBatch:
    """micro_batch_seconds, kept by its inputs (memo.ShapeCache): the GPU figures and the model
    shape by identity, the micro-batch shapes by value. The arrays are read-only, shared."""
    key = (id(dev), id(a), *map(memo.shape_key, vars(w).values()))
    return _MICRO_BATCHES.get(key, (dev, a), lambda: _read_only(micro_batch_seconds(dev, a, w)))


def _read_only(mb: MicroBatch) -> MicroBatch:
    for x in (*vars(mb.layer).values(), mb.first, mb.last):
        if isinstance(x, np.ndarray):
            x.setflags(write=False)
    return mb


def layer_seconds(dev: Device, a: Arch, w: Work) -> LayerTime:
    """An average layer forward and backward (micro_batch_seconds)."""
    return micro_batch_seconds(dev, a, w).layer


def optimizer_seconds(dev: Device, params, bytes_per_param) -> np.ndarray:
    """The optimizer step over the parameters this GPU updates: each state read and written, the
    gradient read, the 16-bit weight written (a fused multi-tensor kernel per few hundred tensors,
    counted as one)."""
    return stream_seconds(dev, params * bytes_per_param)


# --- a serving step ---------------------------------------------------------------------------


def cached_decode_seconds(dev: Device, a: Arch, **shapes) -> np.ndarray:
    """decode_seconds, kept by its inputs as cached_micro_batch_seconds is (read-only, shared)."""
    key = (id(dev), id(a), *((name, memo.shape_key(shapes[name])) for name in sorted(shapes)))

    def seconds() -> np.ndarray:
        step = np.asarray(decode_seconds(dev, a, **shapes))
        step.setflags(write=False)
        return step

    return _DECODE_STEPS.get(key, (dev, a), seconds)


def decode_seconds(dev: Device, a: Arch, *, tokens, tp, pp, ep, touched, slots=None) -> np.ndarray:
    """A serving step's GEMMs on one GPU, forward only over the step's `tokens` (generated ones and
    the prompt tokens chunked prefill adds): each layer's attention and MLP projections over tp,
    the routed experts as grouped GEMMs of tokens x k / E rows each, reading the share `touched` of
    their weights, a MoE layer's router, shared experts and dense residual MLP, the output layer.
    With ep > 1 attention and the dense parts are data-parallel (each GPU takes 1/ep of the
    tokens) and each GPU holds `slots` experts (E / ep; more where redundant copies fill them,
    memory.serving_expert_slots), the tokens' k copies spread evenly over the ep x slots (EPLB's
    aim); a pipeline stage runs 1/pp of the layers (the step counted as the stages' average, as a
    full pipeline runs)."""
    shape = np.broadcast_shapes(*(np.shape(x) for x in (tokens, tp, ep, touched, slots)))
    table, m, moe = GemmTable(None, shape), tokens / ep, a.moe_layers
    for n, k in attention_linears(a, tp):
        table.add(m, n, k, share=a.layers)
    for n, k in mlp_linears(a, a.ffn_hidden, tp) if a.layers > moe else []:
        table.add(m, n, k, share=a.layers - moe)
    if a.is_moe:
        table.add(m, a.experts, a.hidden, share=moe, sixteen_bit=True)
        slots = a.experts / ep if slots is None else slots
        rows = tokens * a.experts_per_token / (ep * slots)
        for n, k in mlp_linears(a, a.moe_ffn_hidden, tp):
            table.add(rows, n, k, share=moe, groups=slots, weights_read=touched)
        width = a.shared_experts * a.moe_ffn_hidden
        for n, k in (mlp_linears(a, width, tp) if width else []) + (
            mlp_linears(a, a.residual_ffn_hidden, tp) if a.residual_ffn_hidden else []
        ):
            table.add(m, n, k, share=moe)
    table.add(m, a.vocab / tp, a.hidden, sixteen_bit=True)
    return table.seconds(dev)[FORWARD] / pp
