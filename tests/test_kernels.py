"""The kernel model (estimator/kernels.py) against cases worked by hand from knowledge/kernels.yaml.

H100 SXM: 989.4 TFLOP/s dense bf16 x 0.803 (MAMF) = 794.49 TFLOP/s for a large GEMM, 6.0189 per SM
over 132 SMs; HBM 3,350 GB/s x 0.8 = 2,680 GB/s; tiles 128 x 256. A tile's output store costs
k_store = 2 x 794.49e12 / (2 x 2680e9) = 296.45 more of k. A100 SXM: 312 x 0.869 = 271.13 TFLOP/s,
2.5104 per SM over 108 SMs, 2,039 x 0.8 = 1,631.2 GB/s, tiles 256 x 128, k_store 166.21.
Every kernel adds a 2 us launch.
"""

import numpy as np
import pytest

from gpuplan.estimator import kernels
from gpuplan.estimator.architecture import from_spec

LAUNCH = 2e-6


def one(x) -> float:
    return float(np.asarray(x).ravel()[0])


@pytest.fixture
def h100(cat):
    return kernels.device([cat.gpus["h100-80gb"]], "bf16-mixed", cat.kernels)


@pytest.fixture
def a100(cat):
    return kernels.device([cat.gpus["a100-80gb"]], "bf16-mixed", cat.kernels)


def test_device_reads_the_generation_figures(h100, a100):
    assert one(h100.gemm) == pytest.approx(989.4e12 * 0.803)
    assert one(h100.hbm) == pytest.approx(3350e9 * 0.8)
    assert (one(h100.sms), one(h100.tile_m), one(h100.tile_n)) == (132, 128, 256)
    assert (one(a100.sms), one(a100.tile_m), one(a100.tile_n)) == (108, 256, 128)


@pytest.mark.parametrize(
    "gpu, seconds",
    [
        # 64 x 32 = 2,048 tiles in ceil(2048 / 132) = 16 waves; a tile: 2 x 128 x 256 x (8192 + 296.45)
        # FLOPs at 6.0189 TFLOP/s = 92.43 us; 16 x 92.43 us + 2 us = 1.4809 ms (742 TFLOP/s, 75% of peak)
        ("h100", 1.4809e-3),
        # 32 x 64 = 2,048 tiles in ceil(2048 / 108) = 19 waves; a tile: 2 x 256 x 128 x (8192 + 166.21)
        # at 2.5104 TFLOP/s = 218.19 us; 19 x 218.19 us + 2 us = 4.1477 ms (265 TFLOP/s, 85% of peak)
        ("a100", 4.1477e-3),
    ],
)
def test_large_bf16_gemm(request, gpu, seconds):
    dev = request.getfixturevalue(gpu)
    assert one(kernels.gemm_seconds(dev, 8192, 8192, 8192)) == pytest.approx(seconds, rel=1e-3)


def test_sixteen_rows_are_memory_bound(h100):
    """m = 16: 32 tiles leave 100 SMs idle, so k splits 4 ways (132 // 32): one wave of tiles over
    2,048 of k, 2 x 128 x 256 x (2048 + 296.45) / 6.0189e12 = 25.5 us. The bytes take longer: the
    weight 8192 x 8192 x 2 B, input and output 16 x 8192 x 2 B each, three fp32 partials written
    and read (3 x 16 x 8192 x 8 B): 137.89 MB / 2,680 GB/s = 51.45 us; + 2 us = 53.45 us, 40 TFLOP/s."""
    got = one(kernels.gemm_seconds(h100, 16, 8192, 8192))
    assert got == pytest.approx(53.45e-6, rel=1e-3)
    assert 2 * 16 * 8192 * 8192 / got < 0.05 * 989.4e12


def test_one_tile_more_than_the_sms_takes_a_second_wave(h100):
    """1536 x 2816 in 12 x 11 = 132 tiles fills the 132 SMs once: at k = 32,768 a tile takes
    2 x 128 x 256 x (32768 + 296.45) / 6.0189e12 = 360.0 us, + 2 us. 896 x 4864 (7 x 19 = 133
    tiles) has 0.8% more FLOPs but needs two waves: 722.0 us."""
    full = one(kernels.gemm_seconds(h100, 1536, 2816, 32768))
    over = one(kernels.gemm_seconds(h100, 896, 4864, 32768))
    assert full == pytest.approx(362.0e-6, rel=1e-3)
    assert over == pytest.approx(722.0e-6, rel=1e-3)
    flops_ratio = (896 * 4864) / (1536 * 2816)
    assert flops_ratio == pytest.approx(1.0076, rel=1e-4)


@pytest.mark.parametrize(
    "length, forward, backward",
    [
        # FLOPs forward: 2 x 32 heads x (128 + 128) x L x L / 2 (causal) = 8,192 L^2 = 1.3744e11 at 4k.
        # FlashAttention-3: 989.4 x 0.646 = 639.15 TFLOP/s x 4096 / (4096 + 610) = 556.3 -> 247.1 us
        # + 2 us; backward 2.5 x the FLOPs at 989.4 x 0.581 = 574.84 x 0.8704 = 500.3 -> 686.8 us + 2 us
        (4096, 249.1e-6, 688.8e-6),
        # 32k: 8.7961e12 FLOPs at 639.15 x 32768 / 33378 = 627.47 -> 14.018 ms; backward at 574.84 x
        # 0.98172 = 564.33 -> 38.967 ms
        (32768, 14.020e-3, 38.969e-3),
    ],
)
def test_flash_attention_by_length(cat, h100, length, forward, backward):
    a = from_spec(cat.models["llama-2-7b"])  # 32 heads of 128
    f, b = kernels.attention_seconds(h100, a, 1, length)
    assert one(f) == pytest.approx(forward, rel=2e-3)
    assert one(b) == pytest.approx(backward, rel=2e-3)


def test_ring_attention_through_pytorch_sdpa_on_hopper(cat):
    """Llama 3.1 8B (32 heads of 128), one 262,144-token sequence over cp = 8 as torchtitan ran it
    (framework=torchtitan: PyTorch's SDPA, FlashAttention-2 on Hopper). Each rank attends its 32,768
    queries over half the keys: 2 x 32 x (128 + 128) x 32,768 x 131,072 = 7.0369e13 FLOPs, the same
    in cp = 8 load-balanced ring steps of 32,768 x 16,384 pairs each. Forward at 989.4 x 0.347 =
    343.32 TFLOP/s x 32,768 / (32,768 + 410) = 339.08 -> 207.53 ms + 2 us; backward 2.5 x at
    989.4 x 0.334 = 330.46 x 0.98764 = 326.38 -> 539.01 ms + 2 us. FlashAttention-3 (no SDPA) takes
    the forward at 639.15 x 32,768 / 33,378 = 627.47 TFLOP/s: 112.15 ms."""
    gpu = cat.gpus["h100-80gb"]
    a = from_spec(cat.models["llama-3.1-8b"])
    sdpa = kernels.device([gpu], "fp8-mixed", cat.kernels, sdpa=True)
    f, b = kernels.attention_seconds(sdpa, a, 1, 262144, cp=8)
    assert one(f) == pytest.approx(207.53e-3, rel=2e-3)
    assert one(b) == pytest.approx(539.01e-3, rel=2e-3)
    default = kernels.device([gpu], "fp8-mixed", cat.kernels)
    assert one(kernels.attention_seconds(default, a, 1, 262144, cp=8)[0]) == pytest.approx(112.15e-3, rel=2e-3)


def test_pytorch_sdpa_changes_only_hopper_attention(cat):
    """Generations without an sdpa_attention kernel (Ampere: FlashAttention-2 already) time SDPA's
    attention as their own; on Hopper only the attention columns move."""
    a100, h100 = cat.gpus["a100-80gb"], cat.gpus["h100-80gb"]
    plain, sdpa = (kernels.device([a100, h100], "bf16-mixed", cat.kernels, sdpa=x) for x in (False, True))
    assert plain.attn_fwd[0, 0] == sdpa.attn_fwd[0, 0]
    assert sdpa.attn_fwd[1, 0] == pytest.approx(989.4e12 * 0.347)
    assert np.array_equal(plain.gemm, sdpa.gemm) and np.array_equal(plain.hbm, sdpa.hbm)


def test_attention_slows_for_narrow_heads(cat, h100):
    """Head dim 64 runs at (64 / 120) / (128 / 184) = 0.767 of head dim 128's rate per FLOP
    (FlashAttention-3's 497 vs 648 TFLOP/s at 16k)."""
    a = from_spec(cat.models["llama-2-7b"])
    narrow = a.changed(head_dim=64, heads=64)
    wide, thin = (one(kernels.attention_seconds(h100, x, 1, 16384)[0]) for x in (a, narrow))
    assert (wide - LAUNCH) / (thin - LAUNCH) == pytest.approx((64 / 120) / (128 / 184), rel=1e-3)


def test_grouped_expert_gemm_with_few_tokens_reads_every_expert(cat):
    """128 experts of a 2,048-wide model, 8 tokens each, gate and up (n = 1,536): 16-bit grouped
    GEMMs tile each expert's rows by 32 (TensorRT-LLM's smallest 16-bit tile), 128 x 1 x 6 = 768
    tiles in 6 waves, 6 x 2 x 32 x 256 x (2048 + 296.45) / 6.0189e12 = 38.3 us of compute. Every
    expert's weight is read for its 8 tokens: 128 x (8 x 2048 + 2048 x 1536 + 8 x 1536) x 2 B =
    812.6 MB / 2,680 GB/s = 303.2 us + 2 us, 18 times the same 1,024 tokens through one dense GEMM."""
    dev = kernels.device([cat.gpus["h100-80gb"]], "bf16-mixed", cat.kernels, group_rows=[32.0])
    grouped = one(kernels.gemm_seconds(dev, 8, 1536, 2048, groups=128))
    assert grouped == pytest.approx(305.2e-6, rel=1e-3)
    dense = one(kernels.gemm_seconds(dev, 1024, 1536, 2048))
    assert grouped / dense > 15


def test_backward_of_a_trained_linear_is_two_gemms(h100):
    f, b = kernels.linear_seconds(h100, 8192, 8192, 8192)
    _, frozen = kernels.linear_seconds(h100, 8192, 8192, 8192, trained=False)
    assert one(b) == pytest.approx(2 * one(f))  # square: input and weight gradients as long as the forward
    assert one(frozen) == pytest.approx(one(f))


def test_fp8_gemms_run_at_the_fp8_rate(cat):
    """FP8 on H100: 1,978.9 x 0.709 = 1,403 TFLOP/s and 1-byte operands."""
    dev = kernels.device([cat.gpus["h100-80gb"]], "fp8-mixed", cat.kernels)
    assert one(dev.gemm) == pytest.approx(1978.9e12 * 0.709)
    assert dev.matmul_bytes == 1.0
    assert one(dev.cast_bytes) == 4.0  # per-tensor: read bf16, write FP8 row-wise and transposed
    blackwell = kernels.device([cat.gpus["b200-180gb"]], "fp8-mixed", cat.kernels)
    assert one(blackwell.cast_bytes) == pytest.approx(4.0625)  # MXFP8's scale per 32 elements


def test_streaming_kernels_at_hbm_bandwidth(h100):
    assert one(kernels.stream_seconds(h100, 2.68e9, 3)) == pytest.approx(1e-3 + 3 * LAUNCH)


def test_short_dimensions_take_smaller_tiles(a100):
    """108 rows (a serving step of 54 sequences and their prompt tokens) through Llama 2 7B's gate-up
    weight (4096 -> 22016) on A100: a 128-row tile holds them (cuBLAS also tiles by 64 and 128), 172
    tiles in 2 waves of 2 x 128 x 128 x (4096 + 166.21) / 2.5104e12 = 55.6 us, 111 us; the bytes take
    longer, (108 x 4096 + 4096 x 22016 + 108 x 22016) x 2 B / 1,631.2 GB/s = 114.0 us, + 2 us. In the
    large 256-row tile the same GEMM would compute for 222 us."""
    assert one(kernels.gemm_seconds(a100, 108, 22016, 4096)) == pytest.approx(116.0e-6, rel=1e-3)


def test_device_figures_are_read_once_and_shared(cat):
    """kernels.device is memoised by its GPU objects: the same Device, read-only, for every caller."""
    gpus = [cat.gpus["h100-80gb"], cat.gpus["a100-80gb"]]
    first = kernels.device(gpus, "bf16-mixed", cat.kernels)
    assert kernels.device(list(gpus), "bf16-mixed", cat.kernels) is first
    assert kernels.device(gpus, "fp8-mixed", cat.kernels) is not first
    with pytest.raises(ValueError):
        first.gemm[0, 0] = 1.0
