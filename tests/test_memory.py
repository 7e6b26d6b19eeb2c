"""Memory formulas against hand-worked numbers (the arithmetic is in each test)."""

import numpy as np
import pytest

from gpuplan.estimator.architecture import for_model, from_spec
from gpuplan.estimator.memory import (
    GIB,
    NF4_BYTES_PER_PARAM,
    Job,
    Layout,
    Overheads,
    activation_elems_per_token_layer,
    kv_bytes_per_token,
    loaded_model_bytes,
    per_gpu_total,
    serving_memory,
    state_bytes,
    training_memory,
)

NO_OVERHEAD = Overheads(0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "precision, optimizer, expected",
    [
        ("bf16-mixed", "adamw", (2, 2, 12)),  # ZeRO paper: fp16 params + grads, fp32 master + m + v
        ("fp16-mixed", "adamw", (2, 2, 12)),
        ("bf16", "adamw", (2, 2, 4)),  # pure bf16: m and v in bf16, no master copy
        ("fp32", "adamw", (4, 4, 8)),
        ("bf16-mixed", "adamw8bit", (2, 2, 6)),  # master 4 + two 1-byte states
        ("bf16-mixed", "sgd", (2, 2, 8)),  # master 4 + momentum 4
        ("bf16-mixed", "adafactor", (2, 2, 4)),  # master only; factored moments counted separately
        ("fp8-mixed", "adamw", (3, 2, 12)),  # plus an fp8 copy of each weight
    ],
)
def test_state_bytes(precision, optimizer, expected):
    assert state_bytes(precision, optimizer) == expected


def test_full_finetune_model_states_are_16_bytes_per_param(cat):
    a = from_spec(cat.models["llama-2-7b"])
    parts = training_memory(Job(a, "full", "bf16-mixed", "adamw", 2048), Layout(1), NO_OVERHEAD)
    states = parts["weights"] + parts["gradients"] + parts["optimizer"]
    assert float(states) == pytest.approx(16 * a.params)


@pytest.mark.parametrize(
    "zero, weights, grads, opt",
    [
        (0, 1, 1, 1),
        (1, 1, 1, 1 / 8),
        (2, 1, 1 / 8, 1 / 8),
        (3, 1 / 8, 1 / 8, 1 / 8),
    ],
)
def test_zero_stages_shard_what_the_paper_says(cat, zero, weights, grads, opt):
    a = from_spec(cat.models["llama-2-13b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 2048)
    parts = training_memory(job, Layout(8, zero=zero), NO_OVERHEAD)
    # Llama 2 13B: embedding and head 32,000 x 5,120 each, final norm 5,120; a layer holds
    # 4 x 5,120^2 attention + 3 x 5,120 x 13,824 MLP + 2 x 5,120 norm = 317,204,480 parameters
    root, layer = 2 * 32_000 * 5_120 + 5_120, 4 * 5_120**2 + 3 * 5_120 * 13_824 + 2 * 5_120
    gathered = (root + 2 * layer) * 2.0 if zero == 3 else 0.0  # FSDP's root unit, running + prefetched layer
    unit_grads = (root + layer) * 2.0 if zero == 3 else 0.0  # the root's and the running layer's, unsharded
    assert float(parts["weights"]) == pytest.approx(2 * a.params * weights + gathered)
    assert float(parts["gradients"]) == pytest.approx(2 * a.params * grads + unit_grads)
    assert float(parts["optimizer"]) == pytest.approx(12 * a.params * opt)


def test_cpu_offload_moves_optimizer_to_host(cat):
    a = from_spec(cat.models["llama-3-70b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 4096)
    parts = training_memory(job, Layout(8, zero=3, offload=1, ckpt=2), NO_OVERHEAD)
    assert float(parts["optimizer"]) == 0.0
    # host keeps fp32 master + m + v (12 B) and fp32 gradients (4 B) for every parameter of the node
    assert float(parts["host_offload"]) == pytest.approx(16 * a.params, rel=1e-6)


def test_qlora_weights_are_nf4_except_embeddings(cat):
    a = from_spec(cat.models["llama-3.1-8b"])
    job = Job(a, "qlora", "bf16-mixed", "paged-adamw8bit", 2048, lora_rank=8)
    parts = training_memory(job, Layout(1, ckpt=2, micro_batch=2), NO_OVERHEAD)
    norms = 32 * 2 * 4096
    linear = a.layer_stack_params - norms
    kept16 = a.params - linear  # embeddings, head, norms
    dequant = 4096 * 14336 * 2.0  # one MLP matrix in bf16 at a time
    expected = linear * NF4_BYTES_PER_PARAM + kept16 * 2 + dequant
    assert float(parts["weights"]) == pytest.approx(expected)
    assert pytest.approx(0.5159, abs=1e-4) == NF4_BYTES_PER_PARAM  # 4.127 bits


def test_lora_adapters_hold_the_training_state(cat):
    a = from_spec(cat.models["llama-3.1-8b"])
    parts = training_memory(Job(a, "lora", "bf16-mixed", "adamw", 2048, lora_rank=8), Layout(1), NO_OVERHEAD)
    assert float(parts["gradients"]) == 0.0 and float(parts["optimizer"]) == 0.0
    assert float(parts["adapters"]) == pytest.approx(16 * a.lora_params(8))


def test_activation_elements_per_layer_llama2_7b(cat):
    a = from_spec(cat.models["llama-2-7b"])
    h, f = 4096, 11008
    e = activation_elems_per_token_layer(a)
    # norm inputs+outputs 4h, q k v o 4h, fp32 LSE 2 x 32 heads, gate/up/product 3f
    assert e["none"] == 4 * h + 4 * h + 2 * 32 + 3 * f
    assert e["selective"] == e["none"] - 2 * h - f
    assert e["full"] == h


def test_checkpointing_orders_activation_memory(cat):
    a = from_spec(cat.models["llama-3-8b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 4096)
    acts = training_memory(job, Layout(8, zero=3, ckpt=np.array([0, 1, 2])), NO_OVERHEAD)["activations"]
    assert acts[0] > acts[1] > acts[2]


def test_full_checkpointing_stores_layer_inputs_plus_one_layer(cat):
    a = from_spec(cat.models["llama-2-7b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 2048)
    parts = training_memory(job, Layout(1, ckpt=2), NO_OVERHEAD)
    tokens = 2048
    inputs = 32 * tokens * 4096 * 2
    loss = tokens * (32000 * 3 + 4096 * 2)  # bf16 logits + one fp32 chunk, final norm output
    layer = activation_elems_per_token_layer(a)["none"] * tokens * 2
    assert float(parts["activations"]) == pytest.approx(inputs + max(loss, layer))


def test_pipeline_first_stage_holds_pp_microbatches(cat):
    a = from_spec(cat.models["llama-2-70b"])
    job = Job(a, "pretrain", "bf16-mixed", "adamw", 4096)
    one = training_memory(job, Layout(8, pp=1, ckpt=2, micro_batches=16), NO_OVERHEAD)["activations"]
    eight = training_memory(job, Layout(8, pp=8, ckpt=2, micro_batches=16), NO_OVERHEAD)["activations"]
    # 1F1B: first stage keeps 8 micro-batches of L/8 layers = the same L layers' inputs
    stored = 80 * 4096 * 8192 * 2
    assert float(one) - float(eight) == pytest.approx(0, abs=0.02 * stored)


def test_more_gpus_never_need_more_memory_under_zero3(cat):
    a = from_spec(cat.models["llama-3-70b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 4096)
    gpus = np.array([8, 16, 32, 64, 128])
    totals = per_gpu_total(training_memory(job, Layout(gpus, zero=3, ckpt=2), NO_OVERHEAD))
    assert np.all(np.diff(totals) < 0)


def test_vllm_kv_cache_13b(cat):
    # Kwon et al. 2023: 13B (40 layers, hidden 5120, fp16): 2 x 40 x 5120 x 2 B = 800 KiB per token;
    # a shape without grouped-query attention, as Llama 2 13B's (a bare 13b is a current GQA model)
    a = from_spec(cat.models["llama-2-13b"])
    assert kv_bytes_per_token(a, "bf16") == 2 * 40 * 5120 * 2 == 819_200
    parts = serving_memory(a, "bf16", seq_len=2048, batch=1, tp=1, pp=1, prefill_chunk=8192, over=NO_OVERHEAD)
    assert float(parts["kv_cache"]) / GIB == pytest.approx(1.5625)


def test_serving_tensor_parallel_splits_weights_and_kv(cat):
    a = from_spec(cat.models["llama-3-70b"])
    one = serving_memory(a, "bf16", seq_len=4096, batch=8, tp=1, pp=1, prefill_chunk=8192, over=NO_OVERHEAD)
    four = serving_memory(a, "bf16", seq_len=4096, batch=8, tp=4, pp=1, prefill_chunk=8192, over=NO_OVERHEAD)
    assert float(four["weights"]) == pytest.approx(float(one["weights"]) / 4)
    assert float(four["kv_cache"]) == pytest.approx(float(one["kv_cache"]) / 4)


def test_kv_heads_replicate_when_tp_exceeds_them(cat):
    a = from_spec(cat.models["glm-4-9b"])  # 2 kv heads
    two = serving_memory(a, "bf16", seq_len=4096, batch=8, tp=2, pp=1, prefill_chunk=8192, over=NO_OVERHEAD)["kv_cache"]
    eight = serving_memory(a, "bf16", seq_len=4096, batch=8, tp=8, pp=1, prefill_chunk=8192, over=NO_OVERHEAD)[
        "kv_cache"
    ]
    assert float(eight) == pytest.approx(float(two))  # each rank still holds one whole kv head


def test_int4_weights_quarter_of_bf16(cat):
    a = from_spec(cat.models["llama-2-70b"])
    bf16 = serving_memory(a, "bf16", seq_len=2048, batch=1, tp=1, pp=1, prefill_chunk=8192, over=NO_OVERHEAD)["weights"]
    int4 = serving_memory(a, "int4", seq_len=2048, batch=1, tp=1, pp=1, prefill_chunk=8192, over=NO_OVERHEAD)["weights"]
    ends = (a.embed_params + a.head_params + a.final_norm_params) * 2
    assert float(int4) == pytest.approx(a.layer_stack_params * (0.5 + 4 / 128) + ends)
    assert float(int4) < 0.3 * float(bf16)


def test_overhead_is_context_comm_and_fragmentation(cat):
    a = from_spec(cat.models["llama-2-7b"])
    over = Overheads(0.5, 0.5, 0.03)
    job = Job(a, "full", "bf16-mixed", "adamw", 2048)
    single = training_memory(job, Layout(1), over)
    subtotal = sum(
        float(single[k]) for k in ("weights", "gradients", "optimizer", "activations", "adapters", "kv_cache")
    )
    assert float(single["overhead"]) == pytest.approx(0.5 * GIB + 0.03 * subtotal)
    multi = training_memory(job, Layout(2, zero=1), over)
    sub2 = sum(float(multi[k]) for k in ("weights", "gradients", "optimizer", "activations", "adapters", "kv_cache"))
    assert float(multi["overhead"]) == pytest.approx(1.0 * GIB + 0.03 * sub2)


def test_interleaving_keeps_more_activations_in_flight(cat):
    """Korthikanti et al. 2022, Sec. 4.2.3: interleaved over v chunks the first stage holds
    1 + (p-1)/(p v) times the activations of plain 1F1B (Megatron's 2(p-1) + (v-1)p warm-up)."""
    a = from_spec(cat.models["llama-2-70b"])
    job = Job(a, "pretrain", "bf16-mixed", "adamw", 4096)
    plain = training_memory(job, Layout(32, tp=4, pp=8, ckpt=1, micro_batches=16), NO_OVERHEAD)["activations"]
    inter = training_memory(job, Layout(32, tp=4, pp=8, ckpt=1, micro_batches=16, vpp=5), NO_OVERHEAD)["activations"]
    stored = float(plain)  # the first stage sets the peak in both
    assert float(inter) == pytest.approx(stored * (1 + 7 / 40), rel=0.02)


def test_expert_parallel_splits_the_routed_experts(cat):
    """Mixtral 8x7B, 8 GPUs, ZeRO-1: with ep=8 each GPU keeps one of the 8 routed experts of every
    layer in 16-bit weights and, Megatron-Core's way, fp32 gradients; the optimizer state is
    sharded over all 8 either way."""
    a = for_model("mixtral-8x7b")
    job = Job(a, "full", "bf16-mixed", "adamw", 4096)
    one = training_memory(job, Layout(8, zero=1, ckpt=2), NO_OVERHEAD)
    eight = training_memory(job, Layout(8, zero=1, ckpt=2, ep=8), NO_OVERHEAD)
    held = a.params - a.routed_expert_params * 7 / 8  # parameters a GPU still holds with ep=8
    assert float(one["weights"]) - float(eight["weights"]) == pytest.approx((a.params - held) * 2, rel=0.01)
    assert float(one["gradients"]) == pytest.approx(a.params * 2, rel=1e-6)
    assert float(eight["gradients"]) == pytest.approx(held * 4, rel=1e-6)
    assert float(eight["optimizer"]) == pytest.approx(float(one["optimizer"]), rel=1e-6)


def test_megatron_layouts_keep_fp32_gradients_and_an_unchunked_loss(cat):
    """Qwen2.5-7B at 32k tokens, 4 GPUs: tp=4 (Megatron-Core) holds 4-byte gradients of its quarter
    of the model, ZeRO-1 over 4 data-parallel ranks holds 2-byte gradients of all of it; the tp=4
    loss peak holds 6 bytes per logit of its quarter of the vocabulary."""
    a = for_model("qwen2.5-7b")
    job = Job(a, "full", "bf16-mixed", "adamw", 32768)
    tp4 = training_memory(job, Layout(4, tp=4, ckpt=2), NO_OVERHEAD)
    dp4 = training_memory(job, Layout(4, zero=1, ckpt=2), NO_OVERHEAD)
    assert float(tp4["gradients"]) == pytest.approx(a.params / 4 * 4, rel=1e-6)
    assert float(dp4["gradients"]) == pytest.approx(a.params * 2, rel=1e-6)
    logits_tp4 = 32768 * a.vocab / 4 * 6
    assert float(tp4["activations"]) >= logits_tp4


def test_context_parallel_splits_the_activations(cat):
    """Each of cp ranks keeps 1/cp of every sequence's activations (Megatron-Core context parallel)."""
    a = for_model("llama-3-8b")
    job = Job(a, "full", "bf16-mixed", "adamw", 65536)
    two = training_memory(job, Layout(8, zero=3, ckpt=1, cp=2), NO_OVERHEAD)["activations"]
    four = training_memory(job, Layout(8, zero=3, ckpt=1, cp=4), NO_OVERHEAD)["activations"]
    assert float(four) == pytest.approx(float(two) / 2, rel=1e-6)


# --- adapters under ZeRO-3 / FSDP, with and without offload ------------------------------------
# Llama 3 70B: hidden 8,192, 80 layers, MLP 28,672, 8 KV heads of 128 (k and v 1,024 wide), vocabulary
# 128,256, untied head. One layer's linear weights: q and o 8,192^2 each, k and v 8,192 x 1,024 each,
# gate, up and down 8,192 x 28,672 each.
L3_LAYER_LINEAR = 2 * 8_192**2 + 2 * 8_192 * 1_024 + 3 * 8_192 * 28_672  # 855,638,016
L3_LINEAR = 80 * L3_LAYER_LINEAR  # 68,451,041,280
L3_ROOT = 2 * 128_256 * 8_192 + 8_192  # embedding + head + final norm: 2,101,354,496
L3_REST = L3_ROOT + 80 * 2 * 8_192  # everything kept 16-bit in QLoRA: the root and the layer norms
L3_DEQUANT = 8_192 * 28_672 * 2.0  # one MLP matrix dequantised to bf16


def _qlora_70b(**layout):
    a = for_model("llama-3-70b")
    job = Job(a, "qlora", "bf16-mixed", "adamw", 3072, lora_rank=16)
    return a, training_memory(job, Layout(4, zero=3, ckpt=2, **layout), NO_OVERHEAD)


def test_llama3_70b_shape_matches_the_hand_count():
    a = for_model("llama-3-70b")
    assert a.params == L3_LINEAR + L3_REST == 70_553_706_496


def test_qlora_under_zero3_shards_the_4bit_data_and_gathers_4bit_layers():
    """Four GPUs, ZeRO-3: each keeps a quarter of the NF4 data and of the 16-bit rest, all of the
    quantisation constants (bitsandbytes keeps them on the module, FSDP shards only parameters),
    the root unit gathered in 16-bit, two layers gathered in 4 bits and one dequantised matrix."""
    _, parts = _qlora_70b()
    resident = (L3_LINEAR * 0.5 + L3_REST * 2.0) / 4 + L3_LINEAR * 0.127 / 8
    gathered = L3_ROOT * 2.0 + 2 * (L3_LAYER_LINEAR * 0.5 + 2 * 8_192 * 2.0)
    assert float(parts["weights"]) == pytest.approx(resident + gathered + L3_DEQUANT)


def test_parameter_offload_keeps_base_and_adapters_in_host_ram():
    """offload=cpu-all (FSDP CPUOffload(offload_params=True)): the GPU keeps the constants, the gathered
    units and the dequantised matrix; the node's host RAM keeps the sharded NF4 base of all four GPUs
    and the adapters' 16-bit weights plus fp32 gradients and Adam state (2 + 4 + 12 bytes)."""
    a, parts = _qlora_70b(offload=3)
    gpu = L3_LINEAR * 0.127 / 8 + L3_ROOT * 2.0 + 2 * (L3_LAYER_LINEAR * 0.5 + 2 * 8_192 * 2.0) + L3_DEQUANT
    assert float(parts["weights"]) == pytest.approx(gpu)
    assert float(parts["adapters"]) == 0.0
    lora = a.lora_params(16)
    host = L3_LINEAR * 0.5 + L3_REST * 2.0 + lora * (2 + 4 + 12)
    assert float(parts["host_offload"]) == pytest.approx(host)


# Llama 2 70B with a 16-bit base: one decoder layer (8,192 wide, MLP 28,672, 8 KV heads of 128,
# two norms) outweighs the root (32,000-token embedding and head, final norm)
L2_LAYER = 2 * 8_192**2 + 2 * 8_192 * 1_024 + 3 * 8_192 * 28_672 + 2 * 8_192
L2_ROOT = 2 * 32_000 * 8_192 + 8_192


@pytest.mark.parametrize(
    "model, method, gpus, offload, copy",
    [
        ("llama-3-70b", "qlora", 4, 3, L3_ROOT * 2.0 / 4),  # the root's 16-bit shard outweighs a 4-bit layer's
        ("llama-2-70b", "lora", 2, 3, L2_LAYER * 2.0 / 2),  # a 16-bit layer's shard outweighs the root's
        ("llama-2-70b", "qlora", 2, 3, L2_ROOT * 2.0 / 2),
        ("llama-3-70b", "qlora", 4, 1, 0.0),  # optimizer offload: the weights stay on the GPU
        ("llama-3-70b", "qlora", 4, 0, 0.0),
    ],
)
def test_parameter_offload_keeps_a_shard_sized_copy_block(model, method, gpus, offload, copy):
    """offload=cpu-all: FSDP copies each unit's shard to the GPU on its own stream before gathering it;
    the allocator keeps that stream's block, one shard of the largest unit, beside the step's tensors."""
    job = Job(for_model(model), method, "bf16-mixed", "adamw", 2048, lora_rank=16)
    parts = training_memory(job, Layout(gpus, zero=3, ckpt=2, offload=offload), NO_OVERHEAD)
    assert float(parts["overhead"]) == pytest.approx(copy)


def test_optimizer_offload_keeps_adapter_weights_and_moves_their_state():
    """offload=cpu (ZeRO-Offload): the adapters' 16-bit weights stay, sharded, on the GPU; their
    fp32 gradients and Adam state (4 + 12 bytes) go to the host."""
    a, parts = _qlora_70b(offload=1)
    lora = a.lora_params(16)
    assert float(parts["adapters"]) == pytest.approx(lora * 2.0 / 4)
    assert float(parts["host_offload"]) == pytest.approx(lora * (4 + 12))


def test_lora_adapters_shard_by_zero_stage():
    """ZeRO-1 shards only the adapters' optimizer state, ZeRO-3 their weights and gradients too."""
    a = for_model("llama-3.1-8b")
    job = Job(a, "lora", "bf16-mixed", "adamw", 2048, lora_rank=8)
    n = a.lora_params(8)
    one = training_memory(job, Layout(8, zero=1), NO_OVERHEAD)["adapters"]
    three = training_memory(job, Layout(8, zero=3), NO_OVERHEAD)["adapters"]
    assert float(one) == pytest.approx(n * (2 + 2 + 12 / 8))
    assert float(three) == pytest.approx(n * 16 / 8)


def test_unchunked_loss_holds_twelve_bytes_per_logit():
    """loss=unchunked: the backward of log-softmax holds its saved fp32 output, the gradient it gets
    and the one it returns: 3 x 4 bytes for each of 2,048 x 128,256 logits, beside the final norm's
    bf16 output; the chunked loss holds 2 + 8/8 bytes."""
    a = for_model("llama-3.1-8b")
    tokens, vocab = 2048, 128_256
    inputs = 32 * tokens * 4096 * 2.0  # full checkpointing: each layer's input
    for loss, per_logit in (("unchunked", 12), ("chunked", 3)):
        job = Job(a, "lora", "bf16-mixed", "adamw", tokens, lora_rank=8, loss=loss)
        acts = training_memory(job, Layout(1, ckpt=2), NO_OVERHEAD)["activations"]
        assert float(acts) == pytest.approx(inputs + tokens * (vocab * per_logit + 4096 * 2.0))


def test_qlora_loads_the_nf4_model_into_host_ram():
    """Transformers quantises each weight on the GPU and keeps the NF4 result on the CPU (FSDP,
    ZeRO-3): the loader's copy is the 4-bit model, not the 16-bit checkpoint."""
    a = for_model("llama-3-70b")
    qlora = Job(a, "qlora", "bf16-mixed", "adamw", 2048)
    lora = Job(a, "lora", "bf16-mixed", "adamw", 2048)
    assert loaded_model_bytes(qlora) == pytest.approx(L3_LINEAR * 4.127 / 8 + L3_REST * 2.0)
    assert loaded_model_bytes(lora) == pytest.approx(a.params * 2.0)


def test_an_uneven_pipeline_sizes_its_deepest_stage():
    """61 layers on 16 stages: the first holds ceil(61/16) = 4 decoder layers, the last 3, as the
    Megatron export lays them out; an even split has 61/16 on both."""
    from gpuplan.estimator.architecture import for_model
    from gpuplan.estimator.memory import stage_layers

    first, last = stage_layers(for_model("deepseek-v3"), np.array([16.0, 1.0]))
    assert first.tolist() == [4.0, 61.0] and last.tolist() == [3.0, 61.0]
