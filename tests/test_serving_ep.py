"""Expert-parallel serving of MoE models (data-parallel attention, routed experts split over the
replica's GPUs, as DeepSeek and SGLang deploy them): memory, decode speed, all-to-all, search."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.pipeline import answer
from gpuplan.estimator import compute, kernels, network, search
from gpuplan.estimator.architecture import for_model
from gpuplan.estimator.memory import kv_bytes_per_token, serving_memory
from gpuplan.knowledge import catalog


@pytest.fixture(scope="module")
def v2():
    return for_model("deepseek-v2")


def _overheads():
    from gpuplan.estimator.context import overheads

    return overheads(catalog())


def test_each_gpu_holds_all_but_the_routed_experts_and_its_own_sequences(v2):
    """DeepSeek-V2 in fp8, 64 sequences of 4,096 tokens on 8 GPUs with ep=8: 1/8 of the routed
    experts, every other weight, and the whole MLA latent of its 8 sequences."""
    over = _overheads()
    parts = serving_memory(v2, "fp8", seq_len=4096, batch=64, tp=1, pp=1, prefill_chunk=8192, over=over, ep=8)
    ends = (v2.embed_params + v2.head_params + v2.final_norm_params + v2.vision_params) * 2.0
    expected = (v2.layer_stack_params - v2.routed_expert_params * 7 / 8) * 1.0 + ends
    assert float(parts["weights"]) == pytest.approx(expected, rel=1e-9)
    assert float(parts["kv_cache"]) == pytest.approx(8 * 4096 * kv_bytes_per_token(v2, "fp8"), rel=1e-9)


def test_tensor_parallel_copies_the_latent_expert_parallel_does_not(v2):
    over = _overheads()
    tp8 = serving_memory(v2, "fp8", seq_len=4096, batch=64, tp=8, pp=1, prefill_chunk=8192, over=over)
    ep8 = serving_memory(v2, "fp8", seq_len=4096, batch=64, tp=1, pp=1, prefill_chunk=8192, over=over, ep=8)
    assert float(tp8["kv_cache"]) == pytest.approx(8 * float(ep8["kv_cache"]), rel=1e-9)


def test_all_to_all_bytes_by_hand(v2):
    """Per decode step and GPU: its 1/ep of the tokens, each to k=6 experts and back in 16 bits,
    7/8 of it to other GPUs, in every one of the 59 MoE layers."""
    batch, ep = 256, 8
    per_layer = batch / ep * 6 * 5120 * 2 * 2 * 7 / 8
    assert float(network.expert_all_to_all_bytes(v2, batch, ep)) == pytest.approx(59 * per_layer, rel=1e-9)
    assert float(network.expert_all_to_all_bytes(v2, batch, 1)) == 0.0
    assert float(network.expert_all_to_all_bytes(for_model("llama-3-8b"), batch, ep)) == 0.0


def test_experts_inside_one_server_gather_every_token_by_hand():
    """Llama 4 Maverick (top-1) on 8 H200: each of the 24 MoE layers all-gathers the step's 512
    tokens and reduce-scatters the outputs, 7/8 of 512 x 5,120 16-bit values each way: eight times
    what top-1 copies to other GPUs would send. An NVL72 rack and EP over two servers keep the
    all-to-all."""
    maverick, cat = for_model("llama-4-maverick"), catalog()
    links = network.decode_links([cat.gpus["h200-141gb"]], cat, None)
    assert bool(network.expert_collectives_gathered(8, links).ravel()[0])
    sent = float(network.expert_all_to_all_seconds(maverick, 512, 8, links).ravel()[0])
    per_layer = 2 * 512 * 5120 * 2.0 * 7 / 8
    by_hand = 24 * (per_layer / float(links.intra.ravel()[0]) + 2 * float(links.latency.ravel()[0]))
    assert sent == pytest.approx(by_hand, rel=1e-9)
    copies = network.expert_all_to_all_bytes(maverick, 512, 8)
    assert float(network.expert_all_to_all_bytes(maverick, 512, 8, True)) == pytest.approx(8 * float(copies))
    assert not network.expert_collectives_gathered(16, links).ravel()[0]
    rack = network.decode_links([cat.gpus["gb200-185gb"]], cat, None)
    assert not network.expert_collectives_gathered(8, rack).ravel()[0]


def test_decode_reads_one_eighth_of_the_touched_routed_experts_by_hand(v2):
    """The weights read per step, by hand: every layer's attention projections, the dense first
    layer's MLP and the shared experts at 1 byte (fp8), the router and the output layer at 2, and
    1/8 of the routed experts the step's tokens touch (1 - (1 - 6/160)^tokens of them), each GEMM
    memory-bound at 64 tokens a step and launched once; then the MoE activations this GPU stages for
    its 1/8 of the 64 x 6 routed copies in 59 layers (the copy in and out at 1 byte, FC1's 2 x 1536
    outputs in 16 bits, the 1536 activations at 1 byte) and attention over its own 8 sequences' KV
    cache: MLA's 128 heads over the 576-wide latent, 2 x 128 x (576 + 512) FLOPs a cached position
    and layer at FlashAttention-3's share of the bf16 peak (0.646), longer than streaming the fp8
    cache. Within 3%: the 8-row GEMMs narrower than the SMs split k, their fp32 partial sums
    another 0.2 ms."""
    cat = catalog()
    gpu = cat.gpus["h800-80gb"]
    batch = 64
    touched = 1 - (1 - 6 / 160) ** batch
    attention = sum(n * k for n, k in kernels.attention_linears(v2, 1))
    mlp = sum(n * k for n, k in kernels.mlp_linears(v2, v2.ffn_hidden, 1))
    shared = sum(n * k for n, k in kernels.mlp_linears(v2, 2 * 1536, 1))
    fp8 = 60 * attention + mlp + 59 * shared + v2.routed_expert_params * touched / 8
    sixteen_bit = 2 * (59 * 160 * 5120 + 102400 * 5120)
    gemms = 60 * 5 + 2 + 59 * 5 + 1
    hbm = gpu.hbm_gb_s * 1e9 * float(cat.kernels.hbm_efficiency.value)
    speed = compute.decode_speed(v2, gpu, "fp8", seq_len=4096, batch=batch, tp=1, pp=1, defaults=cat.defaults, ep=8)
    held = 8 * 4096 * compute.HELD_SHARE
    attention_rate = gpu.peak_16bit_tflops * 1e12 * 0.646
    kv = max(held * kv_bytes_per_token(v2, "fp8") / hbm, held * 60 * 2 * 128 * (576 + 512) / attention_rate)
    staged = 59 * batch * 6 / 8 * (2 * 5120 + 2 * 2 * 2 * 1536 + 2 * 1536)
    expected = (fp8 + sixteen_bit + staged) / hbm + gemms * 2e-6 + kv
    assert float(speed.step_seconds.ravel()[0]) == pytest.approx(expected, rel=0.03)


def test_full_load_fills_each_attention_ranks_budget(v2):
    from gpuplan.estimator import saturation

    cat = catalog()
    gpu = cat.gpus["h800-80gb"]
    links = network.decode_links([gpu], cat, None)
    per_rank = saturation.saturation(
        v2, "fp8", seq=4096, tp=1, pp=1, gpu=gpu, budget_bytes=20e9, links=links, defaults=cat.defaults, ep=1
    )
    eight = saturation.saturation(
        v2, "fp8", seq=4096, tp=1, pp=1, gpu=gpu, budget_bytes=20e9, links=links, defaults=cat.defaults, ep=8
    )
    assert eight.concurrency == 8 * per_rank.concurrency
    assert eight.tokens_per_s_per_sequence == pytest.approx(eight.tokens_per_s_per_gpu * 8 / eight.concurrency)


def test_the_replica_reports_its_cache_and_weights_once():
    """kv_cache_gib and weights_gib are the replica's data, whatever the layout copies."""
    ep = plan_json(answer("deepseek-v3 infer gpu=h200 gpus=8 mbs=512"))
    tp = plan_json(answer("deepseek-v3 infer gpu=h200 gpus=8 mbs=512 tp=8"))
    for field in ("kv_cache_gib", "weights_gib"):
        assert ep["serving"][field] == pytest.approx(tp["serving"][field], rel=1e-6)
    assert ep["serving"]["kv_cache_gib"] == pytest.approx(70272 / 2 * 512 * 4096 / 2**30, rel=1e-6)  # fp8 MLA


@pytest.mark.parametrize(
    "question, code",
    [
        ("deepseek-v3 infer gpu=h100 ep=16 mbs=256 fabric=eth-100", "serving_ep_beyond_node"),
        ("deepseek-v3 infer gpu=h200 tp=8 ep=8", "serving_ep_with_tp"),
    ],
)
def test_expert_parallel_serving_it_cannot_plan_is_refused(question, code):
    from gpuplan.bot.pipeline import QuestionError

    with pytest.raises(QuestionError) as err:
        answer(question)
    assert [n.code for n in err.value.notes] == [code]


def test_the_grid_offers_expert_parallel_replicas_for_moe_models_only(v2):
    tp, pp, ep = search.serving_grid(v2, search.Fixed())  # 160 routed experts: 32 divides them, 64 does not
    # beyond a server: over RDMA fabrics or inside NVL72 racks (expert_parallel_ok)
    assert set(ep[ep > 1]) == {2, 4, 8, 16, 32}
    assert np.all(tp[ep > 1] == 1) and np.all(pp[ep > 1] == 1)
    _, _, dense_ep = search.serving_grid(for_model("llama-3-8b"), search.Fixed())
    assert np.all(dense_ep == 1)
    _, _, fixed = search.serving_grid(v2, search.Fixed(tp=8))
    assert np.all(fixed == 1)  # a fixed tensor-parallel size keeps the replica tensor-parallel


def test_busy_deepseek_servers_are_planned_expert_parallel_and_hold_many_more_sequences():
    busy = plan_json(answer("deepseek-v3 infer gpu=h200 gpus=8 mbs=512"))
    tp8 = plan_json(answer("deepseek-v3 infer gpu=h200 gpus=8 mbs=512 tp=8"))
    assert busy["serving"]["replica_gpus"] == tp8["serving"]["replica_gpus"] == 8
    assert busy["request"]["ep"] == 8 and busy["request"]["tp"] == 1
    assert busy["serving"]["max_concurrency"] > 3 * tp8["serving"]["max_concurrency"]
    assert any("expert parallel 8" in a for a in busy["assumptions"])


def test_a_few_sequences_stay_tensor_parallel():
    """At 16 sequences, short prompts, each GPU would read every non-routed weight for two: tensor
    parallel wins (2,048-token prompts bring as many prompt tokens into each step, and expert parallel 8)."""
    calm = plan_json(answer("deepseek-v3 infer gpu=h200 prompt=256"))
    assert calm["request"]["ep"] == 1
