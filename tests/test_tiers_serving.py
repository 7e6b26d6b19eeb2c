"""Tier matching by computation, and the serving plan: KV cache, MIG, region near users."""

import pytest

from gpuplan.estimator.advise import advise
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request
from gpuplan.estimator.tiers import best_tier


@pytest.mark.parametrize(
    "method, size, plan, starter",
    [
        ("qlora", 7, "plan-entry-finetune", "starter-mid-qlora"),
        ("full", 13, "plan-entry-finetune", "starter-small-full"),
        ("full", 70, "plan-growth-full-align", "starter-large-full"),
        ("ppo", 34, "plan-growth-full-align", "starter-large-full"),
        ("pretrain", 405, "plan-large-pretrain", "starter-xl-pretrain"),
    ],
)
def test_tier_match(cat, method, size, plan, starter):
    assert best_tier(cat, method, size, "plan").id == plan
    assert best_tier(cat, method, size, "starter").id == starter


def test_70b_full_start_configuration_cannot_hold_it(cat):
    plan = advise(Request(params_b=70, method="full"), "en")
    start = plan.tier["start"]
    assert start["tier"] == "starter-large-full" and start["gpus"] == 8 and not start["fits"]
    assert start["needed"]["fits"] and start["needed"]["gpus"] > 8
    assert start["with_offload"]["host_ram_gib"] > 1000
    assert plan.tier["url"].startswith("https://")


def test_small_qlora_start_configuration_holds_it(cat):
    plan = advise(Request(model="qwen2.5-7b", method="qlora"), "zh")
    assert plan.tier["start"]["fits"]
    assert "微调" in plan.tier["title"]


def test_serving_kv_and_throughput(cat):
    est = estimate(Request(model="llama-3-70b", method="infer", gpu="h100-80gb", micro_batch=8, seq_len=4096))
    s = est.serving.model_dump()
    assert s["kv_bytes_per_token"] == 80 * 2 * 8 * 128 * 2  # 327,680 bytes
    assert s["kv_cache_gib"] == pytest.approx(8 * 4096 * 327_680 / 2**30, rel=1e-6)
    assert s["tokens_per_s_per_sequence"] > 10
    assert est.compute.cost_per_million_tokens_usd > 0


def test_small_model_fits_a_mig_slice(cat):
    est = estimate(Request(model="qwen2.5-0.5b", method="infer", gpu="a100-80gb", micro_batch=4, seq_len=2048))
    mig = est.serving.mig
    assert mig.gpu == "a100-80gb" and mig.per_gpu >= 4
    assert mig.memory_gib >= est.memory.per_gpu_gib


def test_serving_region_near_users(cat):
    est = estimate(Request(model="llama-3-8b", method="infer", users="sea"))
    assert est.resolved.region in ("hk", "sg")
    assert "region_for_users" in [a.code for a in est.assumptions]


def test_interactive_speed_preferred(cat):
    est = estimate(Request(model="llama-3-70b", method="infer", micro_batch=16))
    assert est.serving.tokens_per_s_per_sequence >= 10


def test_serving_has_no_training_tier(cat):
    tier = advise(Request(model="llama-3-8b", method="infer"), "en").tier
    assert tier["kind"] == "deployment" and "start" not in tier  # no training configuration to check


def test_serving_plans_link_the_deployment_section(cat):
    from gpuplan.bot.pipeline import answer

    for question, lang, title in (
        ("serve llama-3-8b", "en", "From training to deployment"),
        ("llama-3-8b 推理", "zh", "从训练到部署"),
    ):
        plan = answer(question, lang)
        assert plan.tier["kind"] == "deployment" and plan.tier["title"] == title
        assert plan.tier["url"].endswith("#train-to-deploy") and "MIG" in plan.tier["summary"]
