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
    assert best_tier(cat, method, size, ("plan",)).id == plan
    assert best_tier(cat, method, size, ("starter",)).id == starter


@pytest.mark.parametrize(
    "question, tier, exact, start_gpu",
    [
        # LoRA on one card: the entry plan, exactly when the card is one it lists
        ("qwen2.5-7b lora gpu=h100 gpus=1", "plan-entry-finetune", True, "h100-80gb"),
        ("用一张 4090 对 qwen2.5-7b 做 LoRA 微调", "plan-entry-finetune", False, "rtx-a6000-48gb"),
        ("8张4090 LoRA 微调 Qwen2.5-14B", "plan-entry-finetune", False, "rtx-a6000-48gb"),
        # a LoRA of a 72B on two cards: the mid-size LoRA row, not the 7B-13B entry plan
        ("qwen2.5-72b qlora gpu=h100 gpus=2", "starter-mid-qlora", False, "h100-80gb"),
        # full fine-tunes on 8-32 H100: the growth plan (1-2 servers of 4-8), not the one-card entry
        ("llama-3.1-70b full gpu=h100 gpus=8 offload=cpu", "plan-growth-full-align", True, "h100-80gb"),
        ("llama-3.1-70b 全参微调 gpu=h100 gpus=16", "plan-growth-full-align", True, "h100-80gb"),
        ("70b full gpu=h100 gpus=32", "plan-growth-full-align", False, "h100-80gb"),
        ("qwen2.5-14b full gpu=h100 gpus=8", "plan-growth-full-align", False, "h100-80gb"),
        ("13b full gpu=h100 gpus=4", "starter-small-full", True, "h100-80gb"),
        # pretraining at scale
        ("llama-3.1-405b pretrain gpu=h100 gpus=1024", "plan-large-pretrain", True, "h100-80gb"),
        ("预训练 7b tokens=1T gpu=h100 gpus=64", "plan-large-pretrain", False, "h100-80gb"),
    ],
)
def test_the_cited_tier_is_the_one_closest_to_the_plan(question, tier, exact, start_gpu):
    """The tier a plan cites is the one offering its own GPU type, count and servers among those
    listing its method, then the nearest size; 'exact' only when all of them match. A 14B full
    fine-tune on 8 H100 had cited the one-card entry plan, a 4090 LoRA an exact match of a tier
    that lists no 4090. The starting configuration is checked on the plan's GPU where the row
    lists it (8 x H100, not 8 x A100, for a plan on H100)."""
    from gpuplan.bot.pipeline import answer

    cited = answer(question).tier
    assert (cited.id, cited.exact) == (tier, exact)
    assert cited.start.gpu == start_gpu


@pytest.mark.parametrize("question", ["serve llama-3.1-70b", "qwen2.5-72b 推理 gpus=4", "70b infer"])
def test_a_serving_plan_cites_the_deployment_section(question):
    from gpuplan.bot.pipeline import answer

    assert answer(question).tier.id == "train-to-deploy"


@pytest.mark.parametrize(
    "question, lang, said",
    [
        ("8张4090 LoRA 微调 Qwen2.5-14B", "zh", '与之最接近的是我们的"入门微调方案（低成本）"'),
        ("qwen2.5-14b full gpu=h100 gpus=8", "en", 'The closest of our offerings is "Growth plan: full fine-tune'),
        ("qwen2.5-7b lora gpu=h100 gpus=1", "en", 'This matches our "Entry fine-tuning plan (low cost)" offering'),
        ("llama-3.1-70b 全参微调 gpu=h100 gpus=16", "zh", '对应我们的"成长型全参微调/对齐方案"'),
    ],
)
def test_a_ticket_says_when_the_tier_is_only_the_closest(question, lang, said):
    from gpuplan.bot.pipeline import answer
    from gpuplan.bot.render import ticket

    reply, _ = ticket(answer(question, lang), question)
    assert said in reply


def test_70b_full_start_configuration_cannot_hold_it(cat):
    plan = advise(Request(params_b=70, method="full"), "en")
    start = plan.tier.start
    assert start.tier == "starter-large-full" and start.gpus == 8 and not start.fits
    assert start.needed.fits and start.needed.gpus > 8
    assert start.with_offload.host_ram_gib > 1000
    assert plan.tier.url.startswith("https://")


def test_small_qlora_start_configuration_holds_it(cat):
    plan = advise(Request(model="qwen2.5-7b", method="qlora"), "zh")
    assert plan.tier.start.fits
    assert "微调" in plan.tier.title


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
    assert tier.kind == "deployment" and "start" not in tier.model_dump()  # no training configuration to check


def test_serving_plans_link_the_deployment_section(cat):
    from gpuplan.bot.pipeline import answer

    for question, lang, title in (
        ("serve llama-3-8b", "en", "From training to deployment"),
        ("llama-3-8b 推理", "zh", "从训练到部署"),
    ):
        plan = answer(question, lang)
        assert plan.tier.kind == "deployment" and plan.tier.title == title
        assert plan.tier.url.endswith("#train-to-deploy") and "MIG" in plan.tier.summary


@pytest.mark.parametrize(
    "question, said, not_said",
    [
        ("qwen2.5-14b full gpu=h100 gpus=8", "Growth plan: full fine-tune and alignment (closest match)", None),
        ("用一张 4090 对 qwen2.5-7b 做 LoRA 微调", "入门微调方案（低成本）（最接近的方案）", None),
        ("qwen2.5-7b lora gpu=h100 gpus=1", "Entry fine-tuning plan (low cost)", "closest match"),
    ],
)
def test_a_slack_plan_says_when_the_tier_is_only_the_closest(question, said, not_said):
    import json

    from gpuplan.bot.pipeline import answer
    from gpuplan.bot.slack import blocks

    text = json.dumps(blocks.plan_message(answer(question), with_actions=False), ensure_ascii=False)
    assert said in text and (not_said is None or not_said not in text)
