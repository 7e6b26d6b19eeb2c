"""Asked how many sequences a deployment serves at once, the plan is made at the most its GPUs hold
and the first line says that number."""

import pytest

from gpuplan.bot import render
from gpuplan.bot.language.conversation import follow_up
from gpuplan.bot.language.parser import parse
from gpuplan.bot.pipeline import answer


def test_a_serving_question_asking_how_many_is_planned_at_full_load():
    assert parse("how many concurrent users can 8 A100 serve llama 3 70b").request.full_load
    assert not parse("serve llama 3 70b on 8 A100 for 64 users, how many concurrent users is that").request.full_load
    assert not parse("how many concurrent users can a 70b full fine-tune have").request.full_load


@pytest.mark.parametrize(
    "question, lang",
    [
        ("how many concurrent users can 8 A100 serve llama 3 70b", "en"),
        ("8卡A100部署llama 3 70b最多支持多少并发", "zh"),
    ],
)
def test_the_first_line_gives_the_most_the_gpus_hold_with_headroom(question, lang):
    plan = answer(question)
    est, v = plan.estimate, plan.verdict
    assert v.kind == "capacity" and est.resolved.gpus == 8
    served = est.resolved.global_batch
    assert 16 < served <= est.serving.max_concurrency * est.resolved.dp  # beyond the default, within full load
    assert est.memory.fits and not est.memory.tight  # not at the last gigabyte
    first = render.headline(plan)
    assert first.startswith(f"About {served:,} sequences" if lang == "en" else f"约可同时服务 {served:,} 条")
    notes = [n.code for n in est.assumptions]
    assert "asked_full_load" in notes and "default_concurrency" not in notes


def test_a_deployment_without_gpus_is_sized_on_the_type_its_sequences_were_counted_on():
    plan = answer("how many concurrent users can llama 3 70b serve")
    assert plan.verdict.kind == "capacity" and not plan.estimate.memory.tight


def test_a_follow_up_asking_how_many_asks_it_of_the_service_it_follows():
    previous = parse("serve llama 3 70b on 8 A100").request
    asked = follow_up(previous, "how many concurrent users can it serve?")
    assert asked.question == "concurrency" and asked.request.full_load and asked.request.gpus == 8
    assert not follow_up(previous, "and for 64 concurrent users?").request.full_load
