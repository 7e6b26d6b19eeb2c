"""The estimator end to end: table-driven requests and the choices it makes."""

import pytest

from gpuplan.estimator.context import overheads
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate, friendly_count
from gpuplan.estimator.schema import Request

CASES = [
    # (request, expectations on the resolved request / memory / compute)
    (dict(params_b=7, method="qlora"), dict(gpus=1, fits=True, method="qlora", optimizer="paged-adamw8bit")),
    # one card would hold 23.2 GiB, over the 22.8 GiB a plan may fill of its 24.0: two share it at the same GPU-hours
    (dict(params_b=7, method="lora", gpu="rtx-4090-24gb"), dict(gpus=2, fits=True)),
    (dict(model="llama-3-8b", method="full", gpu="a100-80gb"), dict(fits=True, max_gpus=8)),
    (dict(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=8, zero=3, seq_len=4096), dict(fits=False)),
    (
        dict(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=8, zero=3, seq_len=4096, offload="cpu"),
        dict(fits=True, offload="cpu", min_host=1000),
    ),
    (dict(model="llama-3-70b", method="qlora", gpu="a100-80gb", gpus=1), dict(fits=True)),
    (dict(model="llama-3-70b", method="infer", gpu="h100-80gb"), dict(fits=True, gpus=4)),  # 16 x 4k sequences
    (dict(model="llama-3-70b", method="infer", gpu="h100-80gb", micro_batch=1), dict(fits=True, gpus=2)),
    (dict(model="deepseek-v3", method="infer", gpu="h100-80gb"), dict(fits=True, gpus=16, precision="fp8")),
    (  # 65.7 GiB of fp8 weights and 4 x 4k of KV cache pass the 71.6 GiB vLLM takes of one card
        dict(model="llama-3-70b", method="infer", gpu="h100-80gb", precision="fp8", micro_batch=4),
        dict(fits=True, gpus=2),
    ),
    (dict(model="llama-3-70b", method="infer", gpu="h100-80gb", precision="fp8"), dict(fits=True, gpus=2)),
    (dict(model="llama-3.1-405b", method="infer", gpu="h100-80gb", precision="fp8"), dict(fits=True, gpus=8)),
    (dict(model="deepseek-v3", method="infer", gpu="h200-141gb", precision="fp8"), dict(fits=True, gpus=8)),
    # Moonshot's deploy guidance: 16 H200 is the smallest unit for Kimi K2's FP8 weights (1.03 TB)
    (dict(model="kimi-k2", method="infer", gpu="h200-141gb", precision="fp8"), dict(fits=True, gpus=16)),
    (dict(model="mixtral-8x7b", method="lora", gpu="a100-80gb"), dict(fits=True)),
    (dict(params_b=175, method="pretrain", train_tokens=300e9, gpu="a100-80gb"), dict(fits=True, min_gpus=512)),
    (dict(model="qwen2.5-7b", method="dpo", gpu="a100-80gb"), dict(fits=True)),
    (dict(model="llama-3-8b", method="ppo", gpu="a100-80gb"), dict(fits=True, min_gpus=2)),
    (dict(model="llama-2-7b", method="full", gpu="v100-32gb"), dict(fits=True, precision="fp16-mixed")),
]


@pytest.mark.parametrize("fields, expect", CASES)
def test_estimate_table(fields, expect):
    est = estimate(Request(**fields))
    r, m = est.resolved, est.memory
    if "fits" in expect:
        assert m.fits is expect["fits"], (m.per_gpu_gib, m.capacity_gib)
    for key in ("gpus", "method", "optimizer", "offload", "precision"):
        if key in expect:
            assert getattr(r, key) == expect[key]
    if "max_gpus" in expect:
        assert r.gpus <= expect["max_gpus"]
    if "min_gpus" in expect:
        assert r.gpus >= expect["min_gpus"]
    if "min_host" in expect:
        assert m.host_ram_gib >= expect["min_host"]
    assert m.per_gpu_gib == pytest.approx(sum(m.breakdown_gib.model_dump().values()))
    assert est.compute.days > 0 and est.compute.cost_usd > 0


def test_unfit_plan_says_how_to_fit():
    est = estimate(Request(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=8, zero=3, seq_len=4096))
    codes = [w.code for w in est.warnings]
    assert codes[0] == "does_not_fit"
    assert "fits_with_offload" in codes and "fits_with_more_gpus" in codes


def test_every_default_is_stated():
    est = estimate(Request(params_b=13))
    codes = {a.code for a in est.assumptions}
    assert {
        "generic_arch",
        "default_method",
        "chosen_gpu",
        "default_seq",
        "default_precision",
        "default_optimizer",
        "default_global_batch",
        "tokens_default",
        "chosen_layout",
        "mfu_model",
        "price_default",
    } <= codes


def test_given_values_are_kept():
    est = estimate(
        Request(
            params_b=13,
            method="full",
            gpus=4,
            zero=2,
            ckpt="selective",
            micro_batch=2,
            seq_len=1024,
            precision="bf16",
            optimizer="adamw8bit",
        )
    )
    r = est.resolved
    assert (r.gpus, r.zero, r.ckpt, r.micro_batch, r.seq_len, r.precision, r.optimizer) == (
        4,
        2,
        "selective",
        2,
        1024,
        "bf16",
        "adamw8bit",
    )
    assert "chosen_layout" in {a.code for a in est.assumptions}  # tp was still open


def test_deadline_drives_gpu_count():
    slow = estimate(Request(params_b=7, method="pretrain", train_tokens=1e12, deadline_days=60))
    fast = estimate(Request(params_b=7, method="pretrain", train_tokens=1e12, deadline_days=7))
    assert fast.resolved.gpus > slow.resolved.gpus
    assert fast.compute.days <= 7 and slow.compute.days <= 60


def test_tokens_from_samples_and_epochs():
    est = estimate(Request(params_b=7, method="lora", samples=50_000, epochs=2, seq_len=1024))
    assert est.compute.train_tokens == 50_000 * 1024 * 2


@pytest.mark.parametrize(
    "sample_tokens, seq_len, tokens_per_sample, seq_used",
    [
        (800, None, 800, 2048),  # packed at the average length; the default sequence holds it
        (3000, None, 3000, 4096),  # the default sequence grows to the next power of two
        (3000, 1024, 1024, 1024),  # a sequence the user fixed cuts longer samples
    ],
)
def test_tokens_from_samples_at_their_average_length(sample_tokens, seq_len, tokens_per_sample, seq_used):
    est = estimate(
        Request(params_b=7, method="lora", samples=10_000, sample_tokens=sample_tokens, seq_len=seq_len, epochs=1)
    )
    assert est.compute.train_tokens == 10_000 * tokens_per_sample
    assert est.resolved.seq_len == seq_used


def test_chinchilla_tokens_for_pretraining():
    est = estimate(Request(model="llama-2-7b", method="pretrain"))
    assert est.compute.train_tokens == pytest.approx(20 * 6.738e9, rel=1e-3)


@pytest.mark.parametrize(
    "fields, code",
    [
        (dict(params_b=-5), "bad_model_size"),
        (dict(params_b=7, gpus=0), "bad_gpus"),
        (dict(model="llama-2-7b", seq_len=10 * 2**20), "seq_over_limit"),
        (dict(params_b=7, seq_len=10 * 2**20), "seq_over_limit"),
        (dict(params_b=7, zero=5), "bad_zero"),
        (dict(params_b=7, mfu=1.5), "bad_mfu"),
        (dict(params_b=7, gpus=8, tp=3, pp=1), "tp_pp_not_dividing"),
        (dict(model="llama-2-7b", tp=3), "tp_not_dividing_heads"),
        (dict(model="llama-2-7b", pp=64), "pp_over_layers"),
        (dict(params_b=7, gpu="v100-32gb", precision="bf16-mixed"), "no_bf16"),
        (dict(params_b=7, gpu="a100-80gb", precision="fp8-mixed"), "no_fp8"),
        (dict(params_b=7, method="infer", precision="bf16-mixed"), "bad_precision"),
        (dict(params_b=7, zero=0, offload="cpu"), "offload_needs_zero"),
        (dict(params_b=7, gpus=12, nodes=5), "gpus_nodes_mismatch"),
        (dict(params_b=7, gpu="a10-24gb", gpus=20, nodes=1), "too_many_per_node"),
        (dict(), "model_missing"),
    ],
)
def test_impossible_requests_name_the_value(fields, code):
    with pytest.raises(RequestError) as err:
        estimate(Request(**fields))
    assert code in [n.code for n in err.value.notes]


def test_training_beyond_the_native_context_is_sized_with_a_warning():
    """LongLoRA fine-tuned Llama 2 at 32k and more: a length beyond the model's own is planned as
    asked, and the answer says it takes extending the positions."""
    est = estimate(Request(model="llama-2-7b", method="lora", seq_len=32768))
    assert est.resolved.seq_len == 32768
    assert "seq_beyond_context" in [w.code for w in est.warnings]
    shorter = estimate(Request(model="llama-2-7b", method="lora", seq_len=4096))
    assert est.memory.breakdown_gib.activations > shorter.memory.breakdown_gib.activations


def test_a_machine_denser_than_the_usual_server_is_planned_as_written():
    """ "16 A10 in one machine": one node of 16 (DGX-2 held 16 GPUs), said in the assumptions; the
    usual A10 server holds 8, so the same job on two machines crosses the fabric."""
    one = estimate(Request(params_b=13, method="lora", gpu="a10-24gb", gpus=16, nodes=1))
    two = estimate(Request(params_b=13, method="lora", gpu="a10-24gb", gpus=16, nodes=2))
    assert one.resolved.nodes == 1 and two.resolved.nodes == 2
    assert "dense_node" in [n.code for n in one.assumptions]
    assert "dense_node" not in [n.code for n in two.assumptions]


def test_model_parallel_layouts_recompute_only_what_memory_needs():
    """Megatron has recomputed selectively since Korthikanti et al. 2022: tp/pp given without a
    checkpointing choice leave it to the search, which recomputes every layer only when needed."""
    fields = dict(model="gpt-3-175b", method="pretrain", gpu="a100-80gb", gpus=1024, tp=8, pp=16, global_batch=1536)
    est = estimate(Request(**fields))
    assert est.resolved.ckpt != "full"
    assert est.resolved.vpp > 1  # 96 layers on 16 stages interleave in 3 chunks of 2
    full = estimate(Request(**fields, ckpt="full"))
    assert full.compute.tokens_per_s_per_gpu < est.compute.tokens_per_s_per_gpu


def test_a_large_pretraining_cluster_gets_a_batch_that_keeps_it_busy():
    """At least one sequence per 8 GPUs (Llama 3 405B: 2,048 x 8,192 tokens on 16,384 H100)."""
    fields = dict(params_b=70, method="pretrain", gpu="h100-80gb", seq_len=8192, train_tokens=1e9)
    small = estimate(Request(**fields, gpus=64))
    large = estimate(Request(**fields, gpus=16384))
    assert small.resolved.global_batch == 192  # the scaling law's 1.6M tokens, to 3 x 2^6 sequences
    assert large.resolved.global_batch == 2048


def test_pretraining_batch_follows_the_compute_optimal_law():
    """DeepSeek LLM: B = 0.292 C^0.3271 tokens; 70B x 2T tokens is C = 8.4e23, B = 19.5M tokens,
    4,767 sequences of 4,096, rounded to the nearest 2^k or 3 x 2^k: 4,096."""
    est = estimate(Request(model="llama-2-70b", method="pretrain", seq_len=4096, train_tokens=2e12))
    c = 6 * est.resolved.active_params_b * 1e9 * 2e12
    assert 0.292 * c**0.3271 / 4096 == pytest.approx(4767, rel=0.02)
    assert est.resolved.global_batch == 4096


def test_a_vision_language_model_counts_its_image_encoder():
    """Qwen-VL: Qwen-7B (7.7B) + a 1.9B ViT and 0.08B adapter = 9.6B (arXiv:2308.12966); the encoder
    is held frozen in 16-bit: 2 bytes a parameter beside the language model's weights."""
    vl = estimate(Request(model="qwen-vl", method="lora", gpu="a100-80gb", gpus=1))
    text = estimate(Request(model="qwen-7b", method="lora", gpu="a100-80gb", gpus=1))
    assert vl.resolved.params_b == pytest.approx(9.7, abs=0.1)
    extra = vl.memory.breakdown_gib.weights - text.memory.breakdown_gib.weights
    assert extra == pytest.approx(1.98e9 * 2 / 2**30, rel=0.01)
    assert "vision_encoder" in [n.code for n in vl.assumptions]
    served = estimate(Request(model="qwen-vl", method="infer", gpu="a100-80gb", gpus=1, micro_batch=1))
    plain = estimate(Request(model="qwen-7b", method="infer", gpu="a100-80gb", gpus=1, micro_batch=1))
    assert served.memory.breakdown_gib.weights - plain.memory.breakdown_gib.weights == pytest.approx(extra, rel=0.01)


def test_an_expert_layout_the_search_can_choose_can_be_asked_for():
    """Expert ranks come from a pipeline stage's GPUs (Megatron-Core's parallel folding): ep=8 with
    cp=4 on 16 GPUs is a layout, as the search would build it; ep=8 with expert tensor parallel 4
    (32 GPUs of experts) on 16 is not."""
    ok = estimate(Request(model="mixtral-8x7b", method="full", gpus=16, ep=8, cp=4, seq_len=65536))
    assert (ok.resolved.ep, ok.resolved.cp) == (8, 4)
    with pytest.raises(RequestError) as err:
        estimate(Request(model="mixtral-8x7b", method="full", gpus=16, tp=4, ep=8, etp=4))
    assert "parallel_not_dividing" in [n.code for n in err.value.notes]


def test_the_users_own_sparser_servers_are_taken_as_written():
    """Two machines with two RTX 3090 each: the plan spans two nodes (communication over the
    network between them) instead of packing the four GPUs into one usual 8-GPU server."""
    est = estimate(Request(model="qwen2.5-7b", method="lora", gpu="rtx-3090-24gb", gpus=4, nodes=2, fabric="eth-1"))
    assert est.resolved.nodes == 2
    assert "sparse_node" in [n.code for n in est.assumptions]
    assert not est.network.single_node and est.network.per_step_gb > 0  # the adapters' gradients


@pytest.mark.parametrize("gpu", [None, "a100-80gb"])
def test_servers_written_with_the_type_left_open_are_the_users_too(gpu):
    """'2 nodes with 4 gpus each' names no type: whichever type the search picks, it is planned in
    two machines of four (it had packed the eight into one usual server), as with a named type."""
    est = estimate(Request(model="llama-3-8b", method="full", gpu=gpu, gpus=8, nodes=2))
    assert (est.resolved.gpus, est.resolved.nodes) == (8, 2)
    assert not est.network.single_node
    codes = [n.code for n in est.assumptions]
    assert ("servers_as_written" in codes) == (gpu is None) and ("sparse_node" in codes) == (gpu is not None)
    usual = estimate(Request(model="llama-3-8b", method="full", gpus=8, nodes=1))
    assert usual.resolved.nodes == 1 and "servers_as_written" not in [n.code for n in usual.assumptions]


def test_the_users_network_is_compared_with_the_ones_a_cluster_could_have():
    """A network the user names is what the plan's time runs on; the report still lists the
    others, recommends a faster one when theirs holds the GPUs up, and keeps theirs when it is
    good enough (no switch between equal speeds)."""
    slow = estimate(Request(model="qwen2.5-7b", method="full", gpu="a100-80gb", gpus=16, nodes=2, fabric="eth-1"))
    assert slow.network.assumed_fabric == "eth-1" and slow.network.assumed_comm_fraction > 0.5
    assert slow.network.fabric != "eth-1" and slow.network.comm_fraction < slow.network.assumed_comm_fraction
    assert {"eth-1", "ib-ndr400"} <= {o.fabric for o in slow.network.options}
    fine = estimate(Request(model="llama-3-8b", method="full", gpu="a100-80gb", gpus=16, nodes=2, fabric="eth-100"))
    assert fine.network.fabric == fine.network.assumed_fabric == "eth-100"


def test_host_ram_is_checked_against_the_users_own_servers():
    """ "内存 256G": a plan that needs more host RAM per node than the user's servers have says so."""
    req = Request(model="qwen2.5-14b", method="full", gpu="rtx-3090-24gb", gpus=8, zero=3, offload="cpu")
    est = estimate(req.model_copy(update={"host_ram_gib": 256}))
    assert est.memory.host_ram_gib > 256
    assert "host_ram_short" in [w.code for w in est.warnings]
    roomy = estimate(req.model_copy(update={"host_ram_gib": 2048}))
    assert "host_ram_short" not in [w.code for w in roomy.warnings]


def test_serving_beyond_the_native_context_is_planned_with_a_warning():
    """Llama 2 has 4,096 positions: serving 8k takes RoPE scaling or a long-context variant, which
    the answer says, and the KV cache is sized for the 8k asked."""
    est = estimate(Request(model="llama-2-7b", method="infer", seq_len=8192))
    assert "seq_beyond_context_serving" in [n.code for n in est.warnings]
    assert est.resolved.seq_len == 8192


def _fsdp_qlora_70b(**fields):
    """Llama 3 70B QLoRA, FSDP with CPU offload on four 24 GB GPUs at 3,072 tokens (Schmid's run)."""
    return Request(
        model="llama-3-70b",
        method="qlora",
        gpu="a10g-24gb",
        gpus=4,
        zero=3,
        offload="cpu-all",
        tp=1,
        seq_len=3072,
        micro_batch=1,
        ckpt="full",
        **fields,
    )


def test_the_unchunked_loss_is_counted_when_asked():
    """loss=unchunked adds (12 - 3) bytes for each of 3,072 x 128,256 logits to the activations, and
    the answer says which loss it counted."""
    chunked, unchunked = estimate(_fsdp_qlora_70b()), estimate(_fsdp_qlora_70b(loss="unchunked"))
    extra = 3072 * 128_256 * (12 - 3) / 2**30
    gap = unchunked.memory.breakdown_gib.activations - chunked.memory.breakdown_gib.activations
    assert gap == pytest.approx(extra)
    assert (chunked.resolved.loss, unchunked.resolved.loss) == ("chunked", "unchunked")
    assert "activation_conventions" in {a.code for a in chunked.assumptions}
    assert "activation_conventions_unchunked" in {a.code for a in unchunked.assumptions}


def test_sharded_plans_say_what_stays_gathered_and_what_goes_to_the_host(cat):
    est = estimate(_fsdp_qlora_70b())
    note = next(a for a in est.assumptions if a.code == "sharded_gathers")
    assert note.params["root_gib"] == pytest.approx((2 * 128_256 * 8_192 + 8_192) * 2 / 2**30)
    assert note.params["constants_gib"] > 0 and note.params["offload_all"] and note.params["adapters"]
    # the host-to-device copy block: one of the 4 GPUs' shards of that root, in the overhead
    assert note.params["copy_gib"] == pytest.approx(note.params["root_gib"] / 4)
    parts = est.memory.breakdown_gib
    held = sum(getattr(parts, k) for k in ("weights", "gradients", "optimizer", "activations", "adapters", "kv_cache"))
    over = overheads(cat)
    fixed = over.cuda_context_gib + over.comm_buffers_gib + over.fragmentation * held
    assert parts.overhead == pytest.approx(fixed + note.params["copy_gib"], abs=0.01)
    assert est.memory.breakdown_gib.adapters == 0.0
    unsharded = estimate(Request(model="llama-3-8b", method="lora", gpu="a100-80gb", gpus=1))
    assert "sharded_gathers" not in {a.code for a in unsharded.assumptions}


def test_serving_fits_in_the_share_an_engine_takes():
    """Llama 3 70B in fp8 on one H100 (79.6 GiB): 65.7 GiB of weights, one sequence's KV cache and
    the overhead pass the 71.6 GiB vLLM takes by default (0.9) but not the whole card: no fit,
    and the answer says how far gpu_memory_utilization would have to go."""
    one = estimate(
        Request(model="llama-3-70b", method="infer", gpu="h100-80gb", gpus=1, precision="fp8", micro_batch=1)
    )
    assert one.memory.engine_limit_gib == pytest.approx(0.9 * one.memory.capacity_gib)
    assert one.memory.engine_limit_gib < one.memory.per_gpu_gib < one.memory.capacity_gib
    assert not one.memory.fits
    warning = next(w for w in one.warnings if w.code == "does_not_fit_engine")
    assert 0.9 < warning.params["needed"] <= 0.98
    training = estimate(Request(model="llama-3-8b", method="full", gpu="h100-80gb", gpus=8))
    assert training.memory.engine_limit_gib is None  # training fits in the whole card


def test_default_concurrency_shrinks_to_the_gpus_the_question_fixes():
    """Llama 3.1 8B in bf16 on one L4 (22.5 GiB, of which a serving engine takes 20.25): 15 GiB of
    weights leave room for four 4k sequences (0.5 GiB of KV cache each), not the default sixteen;
    said, and a fixed mbs stays."""
    one_l4 = estimate(Request(model="llama-3.1-8b", method="infer", gpu="l4-24gb", gpus=1))
    assert one_l4.memory.fits and one_l4.resolved.micro_batch == 4
    assert "fitted_concurrency" in [a.code for a in one_l4.assumptions]
    fixed = estimate(Request(model="llama-3.1-8b", method="infer", gpu="l4-24gb", gpus=1, micro_batch=16))
    assert not fixed.memory.fits and fixed.resolved.micro_batch == 16
    open_count = estimate(Request(model="llama-3.1-8b", method="infer", gpu="l4-24gb"))
    assert open_count.resolved.micro_batch == 16 and "default_concurrency" in [a.code for a in open_count.assumptions]


def test_model_parallel_plans_say_how_the_step_is_scheduled():
    """Llama 3 405B on 8,192 H100 (TP 8, PP 16, 2,048 sequences of 8k): 32 micro-batches a replica,
    interleaved over 8 chunks (126 layers + embedding + loss on 16 stages), so the bubble is
    (16 - 1) / (8 x 32) of the compute; a data-parallel plan says nothing of it."""
    est = estimate(
        Request(
            model="llama-3.1-405b",
            method="pretrain",
            gpu="h100-80gb",
            gpus=8192,
            tp=8,
            pp=16,
            seq_len=8192,
            global_batch=2048,
            train_tokens=15.6e12,
        )
    )
    note = next(a for a in est.assumptions if a.code == "megatron_schedule")
    assert (note.params["tp"], note.params["pp"], note.params["vpp"], note.params["micro_batches"]) == (8, 16, 8, 32)
    compute = 1 - note.params["bubble"] - note.params["waiting"]  # shares of the step
    # of the micro-batches' compute: the optimizer step runs once, outside the pipeline (0.1%)
    assert note.params["bubble"] == pytest.approx(15 / 256 * compute, rel=1e-3)
    plain = estimate(Request(model="llama-3-8b", method="full", gpu="a100-80gb", gpus=8, tp=1))
    assert "megatron_schedule" not in {a.code for a in plain.assumptions}


def test_kv_cache_type_sizes_the_cache_and_the_full_load():
    """kv=fp8 halves the bytes per token (Llama 3.1 70B: 80 layers x 8 KV heads x 128 x 2 x 2 bytes
    = 320 KiB in 16-bit, 160 KiB in fp8, 80 KiB in int4) and so holds about twice the sequences
    at full load; the resolved request says which it counted."""
    base = dict(model="llama-3.1-70b", method="infer", gpu="h100-80gb", gpus=2, tp=2, micro_batch=4)
    bf16, fp8, int4 = (estimate(Request(**base, kv_cache=kv)) for kv in (None, "fp8", "int4"))
    assert bf16.serving.kv_bytes_per_token == 80 * 8 * 128 * 2 * 2
    assert fp8.serving.kv_bytes_per_token * 2 == bf16.serving.kv_bytes_per_token == int4.serving.kv_bytes_per_token * 4
    assert (bf16.resolved.kv_cache, fp8.resolved.kv_cache, int4.resolved.kv_cache) == ("bf16", "fp8", "int4")
    assert fp8.serving.max_concurrency >= 1.8 * bf16.serving.max_concurrency
    assert estimate(Request(**{**base, "precision": "fp8"})).resolved.kv_cache == "fp8"  # beside fp8 weights


def test_a_model_released_in_4_bits_is_served_in_4_bits():
    """gpt-oss ships its experts in MXFP4 (a checkpoint of about 65 GB for the 120B): served as
    published, not at 16 bits (234 GB)."""
    est = estimate(Request(model="gpt-oss-120b", method="infer"))
    assert est.resolved.precision == "int4"
    assert 50 < est.serving.weights_gib < 70


@pytest.mark.parametrize(
    "question, named, said",
    [
        (
            "70b infer",
            "llama-3.1-70b infer",
            ["64 heads sharing 8 key-value heads", "Llama 3 70B", "128,256-token vocabulary"],
        ),
        ("8b infer", "llama-3.1-8b infer", ["32 heads sharing 8 key-value heads", "128,256-token vocabulary"]),
        ("70b 推理 seq=32k mbs=16", "llama-3.1-70b 推理 seq=32k mbs=16", ["共用 8 组 KV", "词表 128,256"]),
        ("405b 推理", "llama-3.1-405b 推理", ["126 层", "共用 8 组 KV", "Llama 3.1 405B"]),
    ],
)
def test_a_bare_size_is_served_as_the_current_model_of_that_size(question, named, said):
    """A bare size is planned on as many GPUs as the Llama 3.1 model of that size and says its
    shape; as a 2022-style model without grouped-query attention '70b infer' had taken 8 A100
    where Llama 3.1 70B takes 4, and '70b 推理 seq=32k mbs=16' 24 where it takes 8."""
    from gpuplan.bot.jsonout import plan_json
    from gpuplan.bot.pipeline import answer

    bare, catalog_model = plan_json(answer(question)), plan_json(answer(named))
    assert bare["request"]["gpus"] == catalog_model["request"]["gpus"]
    assert all(words in bare["assumptions"][0] for words in said), bare["assumptions"][0]


@pytest.mark.parametrize(
    "question, said",
    [
        ("0.5b full", "128,256-token vocabulary whose embedding doubles as the output layer"),
        ("0.1b 全参微调", "词表 49,152（输出层与词嵌入共用权重）"),
    ],
)
def test_a_small_bare_size_says_its_tied_vocabulary(question, said):
    from gpuplan.bot.jsonout import plan_json
    from gpuplan.bot.pipeline import answer

    assert said in plan_json(answer(question))["assumptions"][0]


def test_a_generic_moe_is_planned_as_one():
    """1T parameters with 32B active: the generic MoE (said), its FLOPs those of the active size,
    far fewer than a dense 1T model's on the same GPUs."""
    moe = estimate(Request(params_b=1000, active_params_b=32, method="pretrain", gpu="h100-80gb", gpus=1024))
    dense = estimate(
        Request(params_b=1000, method="pretrain", gpu="h100-80gb", gpus=1024, train_tokens=moe.compute.train_tokens)
    )
    assert "generic_moe_arch" in [a.code for a in moe.assumptions]
    assert moe.resolved.active_params_b == pytest.approx(32, rel=0.05)
    assert moe.compute.flops_per_token < dense.compute.flops_per_token / 10


def test_a_serving_plan_that_does_not_fit_is_not_called_slow():
    """Qwen3-235B in bf16 with 200 sequences on 8 H100 fits nowhere; its 30+ tokens/s per sequence
    had been reported as 'below the 10 tokens/s an interactive chat needs'."""
    est = estimate(Request(model="qwen3-235b-a22b", method="infer", gpu="h100-80gb", gpus=8, micro_batch=200))
    codes = [w.code for w in est.warnings]
    assert not est.memory.fits and "does_not_fit_engine" in codes and "slow_serving" not in codes


def test_a_count_parallel_sizes_hardly_divide_gets_the_count_they_do():
    """100,000 H100 (2^5 x 5^5) leave a 1T MoE expert parallelism 4 at most; 98,304 of them
    (3 x 2^15) divide into far better layouts, and the plan says how much sooner they finish."""
    req = Request(
        params_b=1000, active_params_b=32, method="pretrain", gpu="h100-80gb", gpus=100_000, train_tokens=15e12
    )
    est = estimate(req)
    note = next(w for w in est.warnings if w.code == "friendlier_count")
    assert note.params["fewer"] == 98_304 and note.params["days"] < 0.8 * est.compute.days
    assert friendly_count(98_304) == 98_304 and friendly_count(1_000) == 768 and friendly_count(16_384) == 16_384
    power_of_two = estimate(req.model_copy(update={"gpus": 65_536}))
    assert "friendlier_count" not in [w.code for w in power_of_two.warnings]


@pytest.mark.parametrize(
    "gpu, precision, fp8_offered",
    [("v100-32gb", "fp16", False), ("gtx-1080ti-11gb", "fp16", False), ("a100-80gb", "bf16", True)],
)
def test_serving_on_a_gpu_without_bf16_is_fp16_and_offers_no_fp8(gpu, precision, fp8_offered):
    """A bf16 checkpoint is served in fp16 on a GPU without bf16 (the same bytes: what vLLM's dtype
    auto does), and FP8 is suggested only where FP8 kernels exist."""
    est = estimate(Request(model="llama-2-7b", method="infer", gpu=gpu, gpus=1))
    assert est.resolved.precision == precision
    said = [a for a in est.assumptions if a.code == "default_serve_precision"]
    assert said and said[0].params["fp8"] is fp8_offered


def test_a_card_named_by_its_memory_keeps_bf16():
    """A card given only by its memory ('24G显存') is modelled on a stand-in that may lack bf16; the
    user's card may not, so its weights keep the published bf16."""
    from gpuplan.bot.pipeline import answer

    assert answer("7b推理需要24G显存吗").estimate.resolved.precision == "bf16"


@pytest.mark.parametrize("sequences", [0.0, 1.0, 1.4, 1.5, 2.9, 100.0, 1228.0, 1254.0, 1255.0, 2.5e6, 1e9])
def test_divisible_batch_is_the_nearest_of_all_in_log_distance(sequences):
    """training._divisible looks at the two batches either side of `sequences`: the nearest in log
    distance of all of them (ties: the smaller), as a scan of the whole list finds."""
    import math

    from gpuplan.estimator import training

    wanted = max(sequences, 1.0)
    scan = min(training.DIVISIBLE_BATCHES, key=lambda n: (abs(math.log(n / wanted)), n))
    assert training._divisible(sequences) == scan


def test_constructed_note_is_model_constructs():
    """Context.assume's Note is the one Note.model_construct builds: fields, fields set, JSON."""
    from gpuplan.estimator.context import constructed_note
    from gpuplan.estimator.schema import Note

    params = {"gpus": 8, "fields": ["tp", "zero"], "fits": True, "price": 2.5}
    ours = constructed_note("chosen_layout", dict(params))
    theirs = Note.model_construct(code="chosen_layout", params=dict(params))
    assert ours == theirs
    assert ours.model_fields_set == theirs.model_fields_set
    assert ours.model_dump_json() == theirs.model_dump_json()
    for name in ("__pydantic_extra__", "__pydantic_private__"):
        assert getattr(ours, name) == getattr(theirs, name)
