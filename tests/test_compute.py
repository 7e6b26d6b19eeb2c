"""FLOPs, utilisation and time against hand-worked numbers."""

import dataclasses

import numpy as np
import pytest

from gpuplan.estimator import compute, kernels
from gpuplan.estimator.architecture import from_spec
from gpuplan.estimator.compute import (
    attention_flops_forward,
    decode_matmul_seconds,
    decode_speed,
    experts_touched,
    hardware_for,
    kernel_time,
    moe_staging_bytes,
    moe_tile_rows,
    optimizer_step_seconds,
    serving_device,
    slowest_stage,
    token_flops,
    training_step,
)
from gpuplan.estimator.memory import Job, Layout
from gpuplan.estimator.network import links_for_types


def test_training_flops_per_token_palm(cat):
    a = from_spec(cat.models["llama-2-7b"])
    n = a.matmul_params_per_token
    attention = 12 * 32 * 4096 * (32 * 128)  # PaLM: 12 * L * T * H * Q
    assert token_flops(a, "pretrain", 4096).model == pytest.approx(6 * n + attention)
    assert 6 * n == pytest.approx(6 * 6.607e9, rel=1e-3)


def test_lora_skips_weight_gradients(cat):
    a = from_spec(cat.models["llama-2-7b"])
    attn = attention_flops_forward(a, 2048)
    expected = 4 * a.matmul_params_per_token + 3 * attn + 6 * a.lora_params(16)
    assert token_flops(a, "lora", 2048, 16).model == pytest.approx(expected)
    assert token_flops(a, "lora", 2048).model < 0.7 * token_flops(a, "full", 2048).model


def test_moe_counts_active_parameters(cat):
    a = from_spec(cat.models["mixtral-8x7b"])
    flops = token_flops(a, "pretrain", 4096).model
    assert flops < 7 * 13e9 * 1.15  # ~6 x 12.9B active plus attention, not 6 x 46.7B


def test_full_recompute_costs_one_forward(
    cat,
):
    a = from_spec(cat.models["llama-2-7b"])
    t = token_flops(a, "full", 2048)
    assert t.forward == pytest.approx(t.model / 3)


def one(x) -> float:
    """The single value of a (1, 1) result."""
    return float(np.asarray(x).ravel()[0])


def _hw(cat, gpu_id, method="full", precision="bf16-mixed"):
    gpu = cat.gpus[gpu_id]
    return hardware_for([gpu], method, precision, cat, links_for_types([gpu], [cat.fabrics["ib-ndr400"]], 0.8))


def _step(cat, gpu_id, **layout):
    a = from_spec(cat.models["llama-2-7b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 2048)
    lay = Layout(**{"gpus": 8, "zero": 1, "micro_batches": 8, **layout})
    return training_step(job, _hw(cat, gpu_id), lay, 64, cat.defaults)


def test_mfu_override_sets_throughput(cat):
    step = _step(cat, "a100-80gb")
    a = from_spec(cat.models["llama-2-7b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 2048)
    hw = _hw(cat, "a100-80gb")
    fixed = training_step(job, hw, Layout(8, zero=1, micro_batches=8), 64, cat.defaults, mfu_override=0.4)
    flops = 64 * 2048 * token_flops(a, "full", 2048).model / 8
    assert one(fixed.seconds) == pytest.approx(flops / (312e12 * 0.4))
    assert one(step.mfu) > 0


def _kernels(cat, gpu_id, **layout):
    a = from_spec(cat.models["llama-2-7b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 2048)
    lay = Layout(**{"gpus": 8, "zero": 1, "micro_batches": 8, **layout})
    hw = _hw(cat, gpu_id)
    return job, lay, hw, kernel_time(job, hw, lay, cat.defaults)


def test_recomputation_repeats_forward_kernels(cat):
    """Full checkpointing repeats every layer's forward kernels, selective only the core attention
    (Megatron-Core's core_attn): 8 micro-batches x 32 layers of each, over A100's step share."""
    job, lay, hw, none = _kernels(cat, "a100-80gb", ckpt=0)
    work = kernels.Work(np.asarray(2048.0), np.asarray(1.0), 2048.0, *(np.asarray(1.0),) * 3)
    layer = kernels.layer_seconds(hw.device, job.arch, work)
    share = one(hw.device.step_share)
    full, selective = (_kernels(cat, "a100-80gb", ckpt=c)[3] for c in (2, 1))
    assert one(full.compute - none.compute) == pytest.approx(8 * 32 * one(layer.forward) / share)
    assert one(selective.compute - none.compute) == pytest.approx(8 * 32 * one(layer.attention_forward) / share)


def test_pipeline_bubble_formula(cat):
    step = _step(cat, "a100-80gb", gpus=8, pp=4, zero=0, micro_batches=16)
    kt = _kernels(cat, "a100-80gb", gpus=8, pp=4, zero=0, micro_batches=16)[3]
    # Narayanan et al. 2021: bubble = (p - 1) / m of the micro-batches' time (not the optimizer step's)
    assert one(step.bubble) == pytest.approx(one(kt.pipelined) * 3 / 16)


def test_slowest_stage_counts_whole_layers_and_the_ends(cat):
    """96 layers over 16 stages: 6 each; the first adds the embedding, the last the head and loss.
    61 layers over 16: the first stages hold 4, the last 3 and the head."""
    gpt3 = from_spec(cat.models["gpt-3-175b"])
    assert float(slowest_stage(gpt3, np.array(16.0), 1.0, 0.2, 3.0)) == pytest.approx(6 + 3.0)
    assert float(slowest_stage(gpt3, np.array(1.0), 1.0, 0.2, 3.0)) == pytest.approx(96 + 3.2)
    deep = gpt3.changed(layers=61)
    assert float(slowest_stage(deep, np.array(16.0), 1.0, 0.5, 0.4)) == pytest.approx(4 + 0.5)


def test_optimizer_step_moves_its_state_once(cat):
    """Llama 2 7B, AdamW mixed precision on 8 GPUs under ZeRO-1: each GPU updates 1/8 of the
    weights, reading and writing 12 bytes of state and reading 2 of gradient, writing 2 of weight
    (28 B a parameter) at 2,039 GB/s x 0.8; nothing on the GPU when the optimizer is offloaded."""
    job, lay, hw, _ = _kernels(cat, "a100-80gb")
    expected = job.arch.params / 8 * 28 / (2039e9 * 0.8) + 2e-6
    assert one(optimizer_step_seconds(job, lay, hw.device)) == pytest.approx(expected)
    offloaded = dataclasses.replace(lay, offload=1)
    assert one(optimizer_step_seconds(job, offloaded, hw.device)) == 0.0


def test_h100_faster_than_a100(cat):
    assert one(_step(cat, "h100-80gb").seconds) < one(_step(cat, "a100-80gb").seconds)


def test_decode_is_memory_bound_at_small_batch(cat):
    """One token per step: every GEMM streams its weight (the layers' 6.47B and the output layer's
    0.13B parameters, 2 bytes each) at 3,350 GB/s x 0.8, one launch each (4 x 32 + 1); the KV
    cache adds the sequence's 1,024-token prompt and on average half its 1,024-token output."""
    a = from_spec(cat.models["llama-2-7b"])
    gpu = cat.gpus["h100-80gb"]
    speed = decode_speed(a, gpu, "bf16", seq_len=2048, batch=1, tp=1, pp=1, defaults=cat.defaults)
    kv = 1 * 1536 * 32 * 2 * 32 * 128 * 2
    step = (a.matmul_params_per_token * 2 + kv) / (3350e9 * 0.8) + 129 * 2e-6
    assert bool(one(speed.memory_bound))
    assert one(speed.tokens_per_s_per_gpu) == pytest.approx(1 / step, rel=2e-3)


def test_moe_decode_reads_only_touched_experts(cat):
    a = from_spec(cat.models["mixtral-8x7b"])
    gpu = cat.gpus["h100-80gb"]
    speed = decode_speed(a, gpu, "bf16", seq_len=2048, batch=1, tp=2, pp=1, defaults=cat.defaults)
    dense_like = a.params * 2 / 2 / (3350e9 * 0.8)
    assert one(speed.step_seconds) < 0.5 * dense_like  # top-2 of 8 experts per token


@pytest.mark.parametrize("model_id", ["llama-2-7b", "llama-3-70b", "qwen2.5-72b", "gpt-3-175b"])
def test_six_n_d_sanity_check(cat, model_id):
    """Kaplan et al. 2020: training costs about 6 FLOPs per parameter per token; attention adds
    a few percent at 2k context, and untied output heads count in N."""
    a = from_spec(cat.models[model_id])
    ratio = token_flops(a, "pretrain", 2048).model / (6 * a.params)
    assert 0.97 < ratio < 1.12


def test_interleaving_divides_the_pipeline_bubble(cat):
    """Narayanan et al. 2021, Sec. 2.2.2: v chunks per GPU cut the 1F1B bubble (p-1)/m by v."""
    plain = _step(cat, "a100-80gb", pp=4, micro_batches=8)
    interleaved = _step(cat, "a100-80gb", pp=4, micro_batches=8, vpp=4)
    assert one(interleaved.bubble) == pytest.approx(one(plain.bubble) / 4)
    kt = _kernels(cat, "a100-80gb", pp=4, micro_batches=8)[3]
    assert one(plain.bubble) == pytest.approx(one(kt.pipelined) * 3 / 8)
    assert one(interleaved.traffic["pp"]) == pytest.approx(4 * one(plain.traffic["pp"]))


def test_interleaved_point_to_point_waits_only_for_the_bubbles_share(cat):
    """Llama 2 7B on 8 A100 in 4 stages of 2 GPUs, 8 micro-batches of 2,048 tokens: each hop carries
    2,048 x 4,096 x 2 bytes / tp 2 over NVLink (300 GB/s x 0.8 a direction); plain 1F1B waits on all
    2 x 8 hops, interleaved over 4 chunks on (p-1)/(v m) = 3/32 of its 4 x 16."""
    plain = _step(cat, "a100-80gb", tp=2, pp=4, zero=0, micro_batches=8)
    interleaved = _step(cat, "a100-80gb", tp=2, pp=4, zero=0, micro_batches=8, vpp=4)
    hop = 2048 * 4096 * 2 / 2 / (600e9 / 2 * 0.8)
    tp_seconds = one(plain.comm_exposed) - 2 * 8 * hop
    assert one(interleaved.comm_exposed) - tp_seconds == pytest.approx(4 * 16 * hop * 3 / 32)


# --- serving decode: the step's GEMMs by their kernels, staged MoE activations -----------------


def test_experts_touched_by_a_step(cat):
    """4 tokens reach 1 - (15/16)^4 of Qwen3's 128 experts (top-8, uniform routing); a dense model
    touches all of its weights."""
    qwen = from_spec(cat.models["qwen3-235b-a22b"])
    assert float(experts_touched(qwen, 4)) == pytest.approx(1 - (15 / 16) ** 4)
    assert float(experts_touched(from_spec(cat.models["llama-2-7b"]), 4)) == 1.0


def test_moe_staging_bytes_by_hand(cat):
    """Qwen3-235B in FP8 over TP8, 1,000 tokens: each of the 8,000 routed copies in each of the 94
    MoE layers is copied in and read back at 1 byte (2 x 4096), FC1 writes and the activation kernel
    reads its gate and up outputs in 16 bits (2 x 2 x 2 x 192, the expert width 1536 over 8 ranks),
    the activation is written and read at 1 byte (2 x 192). Expert parallel over 8 instead: an
    eighth of the copies at the full width; bf16 doubles the activation bytes; dense models none."""
    a = from_spec(cat.models["qwen3-235b-a22b"])
    tp8 = 94 * 1000 * 8 * (2 * 4096 + 2 * 2 * 2 * 192 + 2 * 192)
    assert float(moe_staging_bytes(a, "fp8", 1000, 8, 1, 1)) == pytest.approx(tp8)
    ep8 = 94 * 1000 * 8 / 8 * (2 * 4096 + 2 * 2 * 2 * 1536 + 2 * 1536)
    assert float(moe_staging_bytes(a, "fp8", 1000, 1, 1, 8)) == pytest.approx(ep8)
    bf16 = 94 * 1000 * 8 * (4 * 4096 + 2 * 2 * 2 * 192 + 4 * 192)
    assert float(moe_staging_bytes(a, "bf16", 1000, 8, 1, 1)) == pytest.approx(bf16)
    assert float(moe_staging_bytes(a, "fp8", 1000, 8, 2, 1)) == pytest.approx(tp8 / 2)  # 47 layers a stage
    assert float(moe_staging_bytes(from_spec(cat.models["llama-2-7b"]), "fp8", 1000, 8, 1, 1)) == 0.0


def test_a_dense_decode_step_is_its_gemms(cat):
    """Llama 3.1 70B in FP8 over TP2 at 600 tokens a step: 80 layers of QKV (10,240 / 2 wide), output
    (8,192 by 4,096), gate-up (2 x 28,672 / 2) and down (8,192 by 14,336) GEMMs at the FP8 rate, and
    the 16-bit output layer over half the 128,256-token vocabulary, each timed by kernels.gemm_seconds;
    600 rows sit above the FP8 ridge, so the wide GEMMs are compute-bound, the step longer than
    its weights at HBM bandwidth."""
    a = from_spec(cat.models["llama-3.1-70b"])
    dev = serving_device([cat.gpus["h100-80gb"]], "fp8", cat)
    got = decode_matmul_seconds(a, "fp8", tokens=600.0, tp=2.0, pp=1.0, ep=1.0, dev=dev)
    shapes = [(10240 / 2, 8192), (8192, 4096), (2 * 28672 / 2, 8192), (8192, 14336)]
    layer = sum(one(kernels.gemm_seconds(dev, 600, n, k)) for n, k in shapes)
    head = one(kernels.gemm_seconds(dev, 600, 128256 / 2, 8192, rate=dev.gemm16, in_bytes=2.0))
    assert one(got) == pytest.approx(80 * layer + head, rel=1e-9)
    assert one(got) > a.matmul_params_per_token / 2 / one(dev.hbm)


def test_moe_decode_step_adds_its_staged_activations(cat):
    """Qwen3-235B in FP8 over TP8 at 2,000 tokens: the step's GEMMs (kernels.decode_seconds, the
    routed experts reading the share of their weights the tokens touch) plus the MoE activations
    staged between the expert kernels at HBM bandwidth; the routed experts' weights alone stream
    for 10.6 ms."""
    a = from_spec(cat.models["qwen3-235b-a22b"])
    dev = serving_device([cat.gpus["h100-80gb"]], "fp8", cat)
    got = decode_matmul_seconds(a, "fp8", tokens=2000.0, tp=8.0, pp=1.0, ep=1.0, dev=dev)
    touched = experts_touched(a, 2000.0)
    gemms = kernels.decode_seconds(dev, a, tokens=2000.0, tp=8.0, pp=1.0, ep=1.0, touched=touched)
    staged = float(moe_staging_bytes(a, "fp8", 2000, 8, 1, 1)) / one(dev.hbm)
    assert one(got) == pytest.approx(one(gemms) + staged, rel=1e-9)
    routed = 94 * 128 * 3 * 4096 * 1536 / 8 / one(dev.hbm)
    assert routed == pytest.approx(10.6e-3, rel=0.01)
    assert one(got) > routed


def test_moe_tile_rows_follow_the_kernels_each_gpu_has(cat):
    """TensorRT-LLM's grouped GEMM tiles (cutlass_heuristic.cpp): FP8 on Hopper only the 128-row TMA
    tiles, on Blackwell 64-row ones; 16-bit GEMMs also the Ampere-style 32-row tile; weight-only
    int4 and Ampere's weight-only FP8 the 16-row one."""
    gpus, d = cat.gpus, cat.defaults
    assert moe_tile_rows(gpus["h100-80gb"], "fp8", d) == 128
    assert moe_tile_rows(gpus["h200-141gb"], "fp8", d) == 128
    assert moe_tile_rows(gpus["b200-180gb"], "fp8", d) == 64
    assert moe_tile_rows(gpus["h100-80gb"], "bf16", d) == 32
    assert moe_tile_rows(gpus["a100-80gb"], "bf16", d) == 32
    assert moe_tile_rows(gpus["a100-80gb"], "fp8", d) == 16
    assert moe_tile_rows(gpus["h100-80gb"], "int4", d) == 16


def test_column_parallel_share_of_gpt3_and_nemotron(cat):
    """GPT-3: QKV 3h^2 and FC1 4h^2 of 12h^2 per layer; Nemotron-4 15B (GQA with 8 KV heads of 128,
    squared-ReLU MLP 4h): QKV (6,144 + 2,048)h and FC1 24,576h of 63,488h."""
    assert from_spec(cat.models["gpt-3-175b"]).column_parallel_share == pytest.approx(7 / 12, rel=1e-3)
    nemotron = from_spec(cat.models["nemotron-4-15b"])
    assert nemotron.column_parallel_share == pytest.approx((8192 + 24576) / 63488, rel=1e-3)


def test_tensor_parallel_waits_on_six_of_ten_collectives_when_gemms_hide_the_rest(cat):
    """Llama 2 7B on 8 A100 with tp 8, no recomputation: 10 collectives per layer and micro-batch of
    7/8 x 2,048 x 4,096 x 2 bytes over NVLink (300 GB/s x 0.8); the 4 asynchronous ones hide behind
    the column-parallel backward GEMMs (the backward passes' share of the kernels x the column
    share), which are longer."""
    step = _step(cat, "a100-80gb", tp=8, zero=0, micro_batches=8)
    kt = _kernels(cat, "a100-80gb", tp=8, zero=0, micro_batches=8)[3]
    collective = 7 / 8 * 2048 * 4096 * 2 / (600e9 / 2 * 0.8)
    tp_seconds = 10 * collective * 32 * 8
    a = from_spec(cat.models["llama-2-7b"])
    hidden = one(step.compute) * one(kt.backward_share) * a.column_parallel_share
    assert one(step.overlap.tp_hidden) == pytest.approx(hidden)
    assert 0.6 < one(kt.backward_share) < 0.7
    assert one(step.overlap.tp_hidden) > 0.4 * tp_seconds
    assert one(step.comm_exposed) == pytest.approx(0.6 * tp_seconds)
    assert one(step.comm_total) == pytest.approx(tp_seconds)


def test_grid_times_each_distinct_micro_batch_once_and_spreads_it_back(cat):
    """kernel_time over a grid of layouts (timed on their distinct micro-batch, tp, ep and cp) gives
    what each layout timed alone gives."""
    from gpuplan.estimator import search
    from gpuplan.estimator.architecture import for_model

    a = for_model("mixtral-8x7b")
    job = Job(a, "full", "bf16-mixed", "adamw", 4096)
    grid = search.training_grid(a, "full", search.Fixed(), 64, 8, 64, 4096)
    lay = search.layout_of(grid, 64)
    hw = _hw(cat, "h100-80gb")
    assert grid.size > compute.DISTINCT_FROM
    together = kernel_time(job, hw, lay, cat.defaults).compute
    for i in range(0, grid.size, 37):
        alone = kernel_time(job, hw, search.layout_of(grid.subset(np.array([i])), 64), cat.defaults).compute
        assert one(together[..., i]) == pytest.approx(one(alone), rel=1e-9)


def test_a_grids_numbered_shapes_pick_what_sorting_them_picks():
    """distinct_numbered over a pruned grid's shape numbers gives the shapes distinct_layouts finds
    by sorting the fields: the same ranks, and layouts of the same shapes."""
    from gpuplan.estimator import search
    from gpuplan.estimator.architecture import for_model

    a = for_model("mixtral-8x7b")
    grid = search.training_grid(a, "full", search.Fixed(), 64, 8, 64, 4096)
    pruned = grid.subset((grid.gpus > 8) & (grid.micro_batch != 2))
    fields = (pruned.micro_batch, pruned.tp, pruned.ep, pruned.cp, pruned.etp)
    firsts, inverse = compute.distinct_numbered(pruned.shapes)
    sorted_firsts, sorted_inverse = compute.distinct_layouts(*fields)
    assert (inverse == sorted_inverse).all()
    for f in fields:
        assert (f[firsts] == f[sorted_firsts]).all()


def test_no_layouts_have_no_distinct_combinations():
    """An empty grid (65 GPUs: no tp x pp x dp divides them for a batch of 64) sorts out to nothing,
    and the estimate refuses the request, naming it, instead of failing on an empty maximum."""
    from gpuplan.estimator.errors import RequestError
    from gpuplan.estimator.estimate import estimate
    from gpuplan.estimator.schema import Request

    empty = np.zeros(0)
    firsts, inverse = compute.distinct_layouts(empty, empty, empty)
    assert firsts.size == 0 and inverse.size == 0
    with pytest.raises(RequestError):
        estimate(Request(gpus=65))
