"""Asked the tokens per second, the first line gives them: generated in all when serving, trained
on per GPU when training."""

import pytest

from gpuplan.bot import render
from gpuplan.bot.pipeline import answer


def test_serving_throughput_is_generated_in_all_and_at_full_load():
    plan = answer("how many tokens per second can llama 3 70b generate on 8 H100?")
    v, est = plan.verdict, plan.estimate
    assert v.kind == "throughput" and v.tokens_per_s == pytest.approx(est.compute.tokens_per_s_per_gpu * 8)
    assert v.full_load_tokens_per_s > v.tokens_per_s  # more sequences at once, more tokens in all
    said = render.headline(plan)
    assert said.startswith(f"About {render.num(v.tokens_per_s)} tokens/s generated in all") and "at full load" in said


def test_training_throughput_is_per_gpu_with_the_mfu():
    plan = answer("8张H100训练llama 3 8b 吞吐能到多少")
    v = plan.verdict
    assert v.kind == "throughput" and v.tokens_per_s == pytest.approx(v.tokens_per_s_per_gpu * 8)
    assert 0.2 < v.mfu < 0.7
    assert render.headline(plan).startswith(f"每卡每秒约 {render.num(v.tokens_per_s_per_gpu)} token")


def test_the_gpu_hours_asked_are_the_whole_runs():
    plan = answer("how many GPU hours to pretrain a 1B model on 20B tokens?")
    v, c = plan.verdict, plan.estimate.compute
    assert v.kind == "gpu_hours" and v.gpu_hours == c.gpu_hours == pytest.approx(c.days * 24 * v.gpus)
    said = render.headline(plan)
    assert said.startswith(f"About {render.num(v.gpu_hours)} GPU-hours") and "assumed" not in said
    assumed = answer("how many gpu hours for a 70b lora")
    assert "(assumed: say how much data you train on)" in render.headline(assumed)


def test_a_service_asked_by_the_month_is_priced_around_the_clock():
    plan = answer("serving llama 3 8b, how much per month?")
    v = plan.verdict
    assert v.kind == "price" and v.asked == "cost" and v.usd_per_month == pytest.approx(v.usd_per_hour * 730)
    assert render.headline(plan).startswith(f"About {render.usd(v.usd_per_month)} a month")
    hourly = answer("how much per hour to serve llama 3 8b").verdict
    assert hourly.kind == "price" and hourly.usd_per_month is None
