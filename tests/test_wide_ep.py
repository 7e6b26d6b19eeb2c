"""Serving MoE models the way the large deployments do: an expert-parallel size that does not divide
the routed experts (redundant copies fill the slots, DeepSeek's and SGLang's EPLB) and expert
parallelism across nodes (wide-EP decode on DeepEP's low-latency kernels over RDMA)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.estimator import kernels, memory
from gpuplan.estimator.architecture import for_model
from gpuplan.knowledge import catalog


@pytest.fixture(scope="module")
def v3():
    return for_model("deepseek-v3")


@pytest.mark.parametrize("ep, slots", [(8, 32), (72, 4), (48, 6), (128, 2), (320, 1)])
def test_each_gpu_holds_ceil_experts_over_ep(v3, ep, slots):
    """256 routed experts: EP72 holds 4 a GPU (288 slots, 32 redundant), EP48 6 (288), EP320 1."""
    assert float(memory.serving_expert_slots(v3, ep)) == slots


def test_redundant_slots_count_in_memory(v3):
    """EP72's weights per GPU: everything but the routed experts, plus 4 of the 256 experts, not 256 / 72."""
    per_gpu = float(memory.serving_weight_bytes(v3, "fp8", ep=72))
    dense = float(memory.serving_weight_bytes(v3, "fp8", ep=256))  # one expert a GPU
    expert_bytes = v3.routed_expert_params / v3.experts * memory.SERVE_WEIGHT_BYTES["fp8"]
    assert per_gpu - dense == pytest.approx(3 * expert_bytes, rel=1e-9)


def test_redundant_slots_share_the_rows(v3):
    """At 16 sequences a GPU the decode step's experts are memory-bound: 4 slots a GPU read 4 experts'
    weights for the rows 256 / 72 would have taken (1,152 x 8 / 288 = 32 each), so the step takes
    longer, by about the 0.44 extra expert's weights per MoE layer at HBM bandwidth."""
    cat = catalog()
    dev = kernels.device([cat.gpus["h100-80gb"]], "fp8", cat.kernels, [128.0], serving=True)
    args = dict(tokens=np.array([1152.0]), tp=np.array([1.0]), pp=np.array([1.0]), touched=np.array([1.0]))
    slots = kernels.decode_seconds(dev, v3, ep=np.array([72.0]), slots=np.array([4.0]), **args)
    exact = kernels.decode_seconds(dev, v3, ep=np.array([72.0]), slots=np.array([256 / 72]), **args)
    extra = (4 - 256 / 72) * v3.expert_params * 1.0 * v3.moe_layers / float(np.ravel(dev.hbm)[0])  # fp8: a byte each
    assert float(np.ravel(slots)[0] - np.ravel(exact)[0]) == pytest.approx(extra, rel=0.02)


@pytest.mark.parametrize(
    "question",
    [
        "infer model=deepseek-v3 gpu=h200 gpus=6 ep=6",
        "部署 deepseek-v3 gpu=h200 gpus=6 ep=6",
    ],
)
def test_serving_says_it_places_redundant_experts(question):
    plan = answer(question)
    notes = [n for n in plan.estimate.assumptions if n.code == "redundant_experts"]
    assert notes and notes[0].params == {"ep": 6, "experts": 256, "slots": 43, "redundant": 2}


@pytest.mark.parametrize(
    "question", ["pretrain deepseek-v3 gpu=h100 gpus=576 ep=72", "预训练 deepseek-v3 576张h100 ep=72"]
)
def test_training_still_needs_ep_to_divide_the_experts(question):
    with pytest.raises(QuestionError) as err:
        answer(question)
    assert "ep_not_dividing_experts" in [n.code for n in err.value.notes]
