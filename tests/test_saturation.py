"""A serving replica at full load against hand-worked numbers."""

import math

import pytest

from gpuplan.estimator import network, saturation
from gpuplan.estimator.architecture import from_spec
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request

GIB = 2**30


def _full(cat, model, gpu_id, budget_gib, seq=2000, tp=1, precision="bf16"):
    gpu = cat.gpus[gpu_id]
    return saturation.saturation(
        from_spec(cat.models[model]),
        precision,
        seq=seq,
        tp=tp,
        pp=1,
        gpu=gpu,
        budget_bytes=budget_gib * GIB,
        links=network.decode_links([gpu], cat, None),
        defaults=cat.defaults,
    )


def test_llama2_7b_on_one_a100_by_hand(cat):
    """Llama 2 7B: 32 layers x 2 (K, V) x 4096 x 2 bytes = 512 KiB of KV per token. The engine
    admits a sequence of 2,000 tokens only when all 2,000 fit (TensorRT-LLM's GUARANTEED_NO_EVICT);
    it holds 1,500 on average (its 1,000-token prompt and half its output), what each step reads."""
    full = _full(cat, "llama-2-7b", "a100-80gb", budget_gib=40)
    reserved = 2000 * 32 * 2 * 4096 * 2
    per_sequence = 1500 * 32 * 2 * 4096 * 2
    assert full.concurrency == math.floor(40 * GIB / reserved)  # 40
    # 2 x 40 tokens a step (each generated one brings a prompt token) sit below A100's bf16 ridge
    # (271 TFLOP/s over 1,631 GB/s: 166 rows), so every GEMM streams its weight: the layers' and the
    # output layer's 6.607B parameters at 2 bytes, one launch each (4 x 32 + 1), then the KV cache;
    # within 2%: the gate-up and output GEMMs need a second wave of 128 x 128 tiles on 108 SMs
    hbm = 2039e9 * float(cat.kernels.hbm_efficiency.value)
    b = full.concurrency
    weights = 6.607e9 * 2 / hbm + 129 * 2e-6
    kv = b * per_sequence / hbm
    # and the prompts it prefills: 40 / 1,000 of a 1,000-token prompt a step, causal attention of 32
    # heads x (128 + 128) x 1000 x 500 x 2 FLOPs a layer at FlashAttention's A100 rate, 227.8 TFLOP/s
    # at length 1000 / (1000 + 410), one launch a layer
    prompt_attention = 32 * (b / 1000 * 2 * 32 * 256 * 1000 * 500 / (227.76e12 * 1000 / 1410) + 2e-6)
    step = weights + kv + prompt_attention
    assert full.tokens_per_s_per_gpu == pytest.approx(b / step, rel=0.02)
    assert full.tokens_per_s_per_sequence == pytest.approx(1 / step, rel=0.02)


@pytest.mark.parametrize(
    "prompt, seq, reserved_tokens",
    [
        (128, 2176, 2176),  # TensorRT-LLM's 128/2048 rows: 2,176 tokens set aside, 1,152 held on average
        (1024, 9216, 9216),  # 1k/8k: 9,216 set aside, 5,120 held
        (5000, 5500, 5500),  # a long prompt: 5,500 set aside, 5,250 held
    ],
)
def test_a_sequence_is_admitted_for_its_whole_output(cat, prompt, seq, reserved_tokens):
    """Llama 3.1 8B, 32 layers x 2 x 8 KV heads x 128 x 2 bytes = 128 KiB a token, in a 30 GiB
    budget: as many sequences as their prompt and whole output fit, not their average holding."""
    gpu = cat.gpus["h100-80gb"]
    full = saturation.saturation(
        from_spec(cat.models["llama-3.1-8b"]),
        "bf16",
        seq=seq,
        tp=1,
        pp=1,
        gpu=gpu,
        budget_bytes=30 * GIB,
        links=network.decode_links([gpu], cat, None),
        defaults=cat.defaults,
        prompt=prompt,
    )
    assert full.concurrency == math.floor(30 * GIB / (reserved_tokens * 128 * 1024))  # 112, 26, 44


def test_more_memory_more_sequences_and_throughput(cat):
    small, large = (_full(cat, "llama-2-7b", "a100-80gb", g) for g in (10, 40))
    assert large.concurrency > small.concurrency
    assert large.tokens_per_s_per_gpu > small.tokens_per_s_per_gpu
    assert large.tokens_per_s_per_sequence < small.tokens_per_s_per_sequence


def test_no_room_no_full_load_and_the_batch_limit(cat):
    assert _full(cat, "llama-2-7b", "a100-80gb", budget_gib=0.1) is None
    capped = _full(cat, "llama-2-7b", "h200-141gb", budget_gib=4000, seq=128)
    assert capped.concurrency == saturation.MAX_BATCH and capped.capped


def test_every_serving_plan_reports_its_full_load():
    est = estimate(Request(model="llama-3.1-70b", method="infer", gpu="h100-80gb", gpus=2, precision="fp8"))
    s = est.serving
    assert s.max_concurrency > s.concurrency
    assert s.max_tokens_per_s_per_gpu > est.compute.tokens_per_s_per_gpu
    assert s.max_tokens_per_s_per_sequence < s.tokens_per_s_per_sequence
    assert "full_load" in [n.code for n in est.assumptions]


def test_a_moe_full_load_is_said_to_be_a_ceiling():
    moe = estimate(Request(model="qwen3-235b-a22b", method="infer", gpu="h100-80gb", gpus=8, precision="fp8"))
    dense = estimate(Request(model="llama-3.1-70b", method="infer", gpu="h100-80gb", gpus=2, precision="fp8"))
    assert "moe_full_load" in [w.code for w in moe.warnings]
    assert "moe_full_load" not in [w.code for w in dense.warnings]


@pytest.mark.parametrize("layout, in_server_ep", [(dict(ep=8), 8), (dict(tp=8), 0)])
def test_expert_parallel_in_one_server_says_what_its_benchmarks_measured(layout, in_server_ep):
    """TensorRT-LLM's benchmarks run MoE models attention data-parallel with the experts over one
    server's GPUs (tests/data/calibration/serving.yaml): a plan of that layout says it is one."""
    est = estimate(Request(model="deepseek-r1", method="infer", gpu="h200-141gb", gpus=8, precision="fp8", **layout))
    warning = next(w for w in est.warnings if w.code == "moe_full_load")
    assert warning.params["in_server_ep"] == in_server_ep
