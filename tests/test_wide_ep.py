"""Serving MoE models the way the large deployments do: an expert-parallel size that does not divide
the routed experts (redundant copies fill the slots, DeepSeek's and SGLang's EPLB) and expert
parallelism across nodes (wide-EP decode on DeepEP's low-latency kernels over RDMA)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.estimator import kernels, memory, network
from gpuplan.estimator.architecture import for_model
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request
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
    "question, slots",
    [
        ("infer model=deepseek-v3 gpu=h200 gpus=6 ep=6", {"ep": 6, "experts": 256, "slots": 43, "redundant": 2}),
        ("部署 deepseek-v3 gpu=h200 gpus=6 ep=6", {"ep": 6, "experts": 256, "slots": 43, "redundant": 2}),
        (
            "infer model=deepseek-v3 gpu=h100 gpus=72 seq=2000 mbs=18432 ep=72 precision=fp8",
            {"ep": 72, "experts": 256, "slots": 4, "redundant": 32},
        ),
        (
            "部署 deepseek-v3 gpu=h100 gpus=72 seq=2000 mbs=18432 ep=72 precision=fp8",
            {"ep": 72, "experts": 256, "slots": 4, "redundant": 32},
        ),
    ],
)
def test_serving_says_it_places_redundant_experts(question, slots):
    plan = answer(question)
    notes = [n for n in plan.estimate.assumptions if n.code == "redundant_experts"]
    assert notes and notes[0].params == slots


@pytest.mark.parametrize(
    "question", ["pretrain deepseek-v3 gpu=h100 gpus=576 ep=72", "预训练 deepseek-v3 576张h100 ep=72"]
)
def test_training_still_needs_ep_to_divide_the_experts(question):
    with pytest.raises(QuestionError) as err:
        answer(question)
    assert "ep_not_dividing_experts" in [n.code for n in err.value.notes]


@pytest.mark.parametrize(
    "fields, ep",
    [
        # SGLang's large-scale EP blog: 9 x 8 H100, EP72, 256 sequences a GPU
        (dict(gpu="h100-80gb", gpus=72, seq_len=2000, micro_batch=18432, ep=72), 72),
        # DeepSeek's decode profile: EP128 on H800, 128 sequences a GPU
        (dict(gpu="h800-80gb", gpus=128, seq_len=4096, micro_batch=16384, ep=128), 128),
    ],
)
def test_published_wide_ep_decode_is_planned(fields, ep):
    est = estimate(Request(model="deepseek-v3", method="infer", precision="fp8", tp=1, **fields))
    assert est.resolved.ep == ep and est.memory.fits
    assert est.network.between_nodes_gb > 0 and not est.network.single_node
    assert "serving_expert_parallel_nodes" in [n.code for n in est.assumptions]


def test_the_fabric_times_the_copies_bound_for_other_nodes(v3):
    """EP128 over 16 nodes of 8 at 128 sequences a GPU: 120 / 128 of each GPU's 128 x 8 copies of
    7,168 16-bit values cross InfiniBand NDR (50 GB/s x 0.8) each way, 2 all-to-alls a MoE layer,
    each paying its latency; the rest goes over NVLink at the same time."""
    cat = catalog()
    links = network.decode_links([cat.gpus["h800-80gb"]], cat, None)
    seconds = float(network.expert_all_to_all_seconds(v3, 16384, 128, links).ravel()[0])
    per_layer = 2 * 128 * 8 * 7168 * 2.0 * 127 / 128 * (120 / 128)
    by_hand = v3.moe_layers * (per_layer / 40e9 + 2 * 2e-6)
    assert seconds == pytest.approx(by_hand, rel=1e-9)


@pytest.mark.parametrize("fabric", ["eth-100", "eth-25"])
def test_serving_ep_across_nodes_is_refused_without_rdma(fabric):
    request = Request(model="deepseek-v3", method="infer", gpu="h100-80gb", gpus=16, ep=16, fabric=fabric)
    with pytest.raises(RequestError) as err:
        estimate(request)
    note = err.value.notes[0]
    assert note.code == "serving_ep_beyond_node" and note.params["rdma"] is False


@pytest.mark.parametrize(
    "fabric, wide",
    [(None, True), ("ib-ndr400", True), ("eth-100", False)],
)
def test_the_search_picks_wide_ep_for_many_sequences_on_rdma(fabric, wide):
    """DeepSeek-V3 in fp8 on H100 at 2,048 sequences, prefilled on GPUs apart as wide-EP deployments
    run: expert parallel over several servers is the cheapest per token on InfiniBand (EP32 decoding,
    $1.02 a million); over TCP the search keeps tensor x pipeline parallelism ($1.63). With the prompts
    in the decode steps the busiest expert rank sets every step (attention_dp_inflight_experts), and
    tp8 x pp6 is cheaper ($0.83)."""
    request = Request(
        model="deepseek-v3", method="infer", gpu="h100-80gb", micro_batch=2048, precision="fp8", prefill="disaggregated"
    )
    est = estimate(request.model_copy(update={"fabric": fabric}))
    assert (est.resolved.ep > 8) == wide
    assert wide or est.resolved.ep == 1
