"""A framework whose attention runs through PyTorch's SDPA (knowledge/frameworks.yaml attention):
torchtitan, torchtune and the Transformers stacks, whose SDPA takes FlashAttention-2 on Hopper where
gpuplan otherwise times FlashAttention-3 (knowledge/kernels.yaml sdpa_attention)."""

import pytest

from gpuplan.bot.language.parser import parse
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request

LONG = dict(
    model="llama-3.1-8b",
    method="pretrain",
    gpus=8,
    seq_len=131072,
    global_batch=2,
    micro_batch=1,
    tp=1,
    pp=1,
    cp=4,
    zero=3,
    ckpt="full",
    precision="fp8-mixed",
    train_tokens=1e10,
)


@pytest.mark.parametrize(
    "text, framework",
    [
        ("pretrain llama 3.1 8b with torchtitan on 8 h100", "torchtitan"),
        ("torch titan llama 3 8b on 8 h100", "torchtitan"),
    ],
)
def test_torchtitan_read_from_the_question(text, framework):
    assert parse(text).request.framework == framework


def test_sdpa_attention_slows_long_context_on_hopper_and_says_so():
    plain = estimate(Request(**LONG, gpu="h100-80gb"))
    titan = estimate(Request(**LONG, gpu="h100-80gb", framework="torchtitan"))
    slower = plain.compute.tokens_per_s_per_gpu / titan.compute.tokens_per_s_per_gpu
    # attention is most of a 128k-token step; FlashAttention-2 runs it at 0.347 / 0.646 of FA3's rate
    assert 1.4 < slower < 0.646 / 0.347
    assert titan.memory.per_gpu_gib == plain.memory.per_gpu_gib
    said = {n.code: n.params for n in titan.assumptions}["sdpa_attention"]
    assert said == {"framework": "torchtitan", "family": "hopper", "share": 0.347, "usual": 0.646}
    assert "sdpa_attention" not in {n.code for n in plain.assumptions}


def test_sdpa_attention_leaves_ampere_alone():
    bf16 = {**LONG, "precision": "bf16-mixed"}  # no FP8 on Ampere
    plain = estimate(Request(**bf16, gpu="a100-80gb"))
    titan = estimate(Request(**bf16, gpu="a100-80gb", framework="torchtitan"))
    assert titan.compute.tokens_per_s_per_gpu == plain.compute.tokens_per_s_per_gpu
    assert "sdpa_attention" not in {n.code for n in titan.assumptions}


@pytest.mark.parametrize("framework", ["torchtune", "hf-trainer", "llama-factory", "ms-swift"])
def test_the_transformers_stacks_run_sdpa_too(framework):
    """torchtune (unpacked), the Transformers Trainer and what builds on it (LLaMA-Factory's and
    ms-swift's defaults) load models with Transformers' default attention, SDPA: FlashAttention-2 on
    Hopper, a little slower than FA3 at 2k tokens, and said; Megatron keeps its own kernels."""
    ask = dict(model="qwen2.5-7b", method="lora", gpu="h100-80gb", gpus=8, seq_len=2048, train_tokens=1e9)
    plain, named = estimate(Request(**ask)), estimate(Request(**ask, framework=framework))
    assert named.compute.days > plain.compute.days
    assert "sdpa_attention" in {n.code for n in named.assumptions}
    megatron = estimate(Request(**ask, framework="megatron"))
    assert "sdpa_attention" not in {n.code for n in megatron.assumptions}
