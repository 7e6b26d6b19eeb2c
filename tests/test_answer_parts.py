"""An answer is two parts: the estimator's Plan (what it decided) and the bot's Reading of the question
(language, kind, notes, what to ask back, what was read from pastes, topics, words not understood)."""

from __future__ import annotations

import pytest

from gpuplan.bot.answer import Answer, Reading
from gpuplan.bot.pipeline import answer
from gpuplan.estimator.advise import advise
from gpuplan.estimator.schema import Plan, Request


def test_the_estimators_plan_holds_no_reading():
    assert not set(Plan.model_fields) & set(Reading.model_fields)
    assert not {"findings", "not_understood"} & set(dir(Plan))


def test_an_answer_is_the_plan_and_the_reading_together():
    plan = advise(Request(model="llama-3-8b", method="lora"), "zh")
    reading = Reading(intent="plan", lang="zh", unknown=["zorkle"])
    both = Answer.of(plan, reading)
    assert Plan.model_validate(both.model_dump(include=set(Plan.model_fields))) == plan
    assert Reading.model_validate(both.model_dump(include=set(Reading.model_fields))) == reading
    assert both.not_understood == ["zorkle"] and both.findings == []


@pytest.mark.parametrize(
    ("question", "lang", "intent", "findings", "clarify"),
    [
        ("8 H100 for two weeks in Tokyo, how much?", "en", "plan", ["price_line", "price_tier"], []),
        ("8张H100用两周多少钱", "zh", "plan", ["price_line", "price_tier"], []),
        ("largest model 8 H100 can train", "en", "plan", ["largest_heading"], []),
        ("8张H100最大能训练多大的模型", "zh", "plan", ["largest_heading"], []),
        ("how many GPUs do I need?", "en", "plan", [], ["need_model"]),
        ("需要几张卡？", "zh", "plan", [], ["need_model"]),
        ("GPU utilization only 40% on 8 GPUs, dataloader is slow", "en", "troubleshoot", [], []),
    ],
)
def test_the_pipeline_answers_with_its_reading(question, lang, intent, findings, clarify):
    got = answer(question)
    assert (got.lang, got.intent) == (lang, intent)
    assert [n.code for n in got.findings][: len(findings)] == findings
    assert [n.code for n in got.clarify] == clarify
