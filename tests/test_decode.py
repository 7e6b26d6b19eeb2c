"""A serving decode step's attention over the KV cache against cases worked by hand.

H100 SXM: HBM 3,350 GB/s x 0.8 = 2,680 GB/s for a streaming kernel; attention at FlashAttention-3's
long-length share of the 989.4 TFLOP/s bf16 peak, 0.646 = 639.2 TFLOP/s (knowledge/kernels.yaml).
The attention ridge is then 639.2e12 / 2,680e9 = 238.5 FLOPs a byte.
"""

import numpy as np
import pytest

from gpuplan.estimator import compute, kernels
from gpuplan.estimator.architecture import from_spec
from gpuplan.estimator.memory import kv_bytes_per_token

HBM = 3350e9 * 0.8
ATTENTION = 989.4e12 * 0.646


def one(x) -> float:
    return float(np.asarray(x).ravel()[0])


@pytest.fixture
def h100(cat):
    return compute.serving_device([cat.gpus["h100-80gb"]], "fp8", cat)


@pytest.mark.parametrize(
    "model, flops_per_position_layer",
    [
        # 32 query heads x (128 + 128) x 2: QK^T and AV over each cached position
        ("llama-3.1-8b", 2 * 32 * 256),
        # 128 heads over the absorbed latent: scores on 512 + 64, values on 512
        ("deepseek-v3", 2 * 128 * (576 + 512)),
    ],
)
def test_decode_attention_flops(cat, model, flops_per_position_layer):
    a = from_spec(cat.models[model])
    assert one(kernels.decode_attention_flops(a, 3, 1000)) == 3 * 1000 * flops_per_position_layer


@pytest.mark.parametrize(
    "model, kv, bound",
    [
        # GQA, 8 KV heads of 128 in fp8: 2 x 8 x 128 = 2,048 bytes and 16,384 FLOPs a position and
        # layer, 8 FLOPs a byte: the cache streams
        ("llama-3.1-8b", "fp8", "memory"),
        # MLA, one 576-wide fp8 latent a position and layer: 576 bytes, 278,528 FLOPs, 483.6 a byte,
        # twice the ridge: the heads' arithmetic takes longer than reading the cache
        ("deepseek-v3", "fp8", "compute"),
    ],
)
def test_decode_attention_is_bound_by_its_cache_or_its_heads(cat, h100, model, kv, bound):
    """128 sequences holding 2,000 tokens each on one H100, every layer."""
    a = from_spec(cat.models[model])
    kv_bytes = 128 * 2000 * kv_bytes_per_token(a, "fp8", kv)
    flops = kernels.decode_attention_flops(a, 128, 2000) * a.layers
    expected = kv_bytes / HBM if bound == "memory" else flops / ATTENTION
    got = one(kernels.decode_attention_seconds(h100, a, 128, 2000, kv_bytes))
    assert got == pytest.approx(expected, rel=1e-9)
    if a.is_mla:
        # DeepSeek-V3 at 61 layers: 128 x 2,000 x 61 x 278,528 = 4.349 TFLOP, 6.80 ms, where the
        # 128 x 2,000 x 61 x 576 = 8.99 GB of cache streams in 3.36 ms
        assert got == pytest.approx(4.349e12 / ATTENTION, rel=1e-3)
        assert kv_bytes / HBM == pytest.approx(3.356e-3, rel=1e-3)


def test_mla_decode_step_counts_its_attention_arithmetic(cat, h100):
    """The step of an MLA model at full batch takes at least its attention's FLOPs at the attention
    rate: the whole step (matmuls, attention, prefill) exceeds the cache's streaming time by more
    than the attention's compute-bound excess."""
    a = from_spec(cat.models["deepseek-v3"])
    load = compute.served(2000, 1000, chunked=False)
    speed = compute.decode_speed_arrays(a, "fp8", load=load, batch=1024, tp=1, pp=1, dev=h100, ep=8, kv_cache="fp8")
    matmuls = compute.decode_matmul_seconds(a, "fp8", tokens=1024.0, tp=1.0, pp=1.0, ep=8.0, dev=h100)
    attention = kernels.decode_attention_flops(a, 128, load.held) * a.layers / ATTENTION
    assert one(speed.step_seconds) == pytest.approx(one(matmuls) + one(attention), rel=1e-6)
