"""The published JSON schema of the answer (docs/json-schema.json) is the one the models generate,
and real answers, of every kind, are what it describes."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpuplan.bot.jsonout import JsonAnswer, json_schema, plan_json
from gpuplan.bot.pipeline import answer

PUBLISHED = Path(__file__).parent.parent / "docs" / "json-schema.json"

# one question per kind of answer: each part of the JSON filled at least once, in both languages
QUESTIONS = [
    "llama-3-70b lora gpu=a100 gpus=2",  # a plan that fits, the tier's starting configuration
    "700亿 全参微调 8张H100",  # one that does not fit, with remedies
    "70b full gpus=2",  # a tier's start that does not hold it: what does, with offload
    "serve llama-3.1-70b",  # serving: the deployment link, a serving report
    "qwen2.5-72b 推理 gpus=4 并发 64",
    "llama-3-70b lora: A100 or H100?",  # a comparison
    "how much VRAM does qwen2.5-7b need for lora",  # the least memory per method
    "largest model 8 H100 can train",  # the largest model, no plan
    "8 H100 for two weeks in Tokyo, how much?",  # a price
    "GPU utilization only 40% on 8 GPUs, dataloader is slow",  # diagnoses without a plan
    "8张卡还是喂不满怎么办",
    "how many GPUs do I need?",  # a question back
    "help",
    "what's the weather in Paris",  # outside gpuplan's field
]


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))


def test_published_schema_is_the_models(schema):
    """Regenerate with `python -m gpuplan.bot.jsonout > docs/json-schema.json` after changing a model."""
    assert schema == json_schema()


@pytest.mark.parametrize("question", QUESTIONS)
def test_answers_validate_against_the_published_schema(schema, question):
    printed = json.loads(json.dumps(plan_json(answer(question))))
    jsonschema.Draft202012Validator(schema).validate(printed)


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_model_prints_the_answer_as_it_is(question):
    """Read back into JsonAnswer and dumped, an answer is the same JSON: the same keys in the same
    order, nulls where they were, keys left out where they were."""
    printed = json.loads(json.dumps(plan_json(answer(question), configs={"train.sh": "echo"})))
    again = JsonAnswer.model_validate(printed).model_dump(mode="json")
    assert again == printed
    assert list(again) == list(printed)
    assert "configs" not in JsonAnswer.model_validate({**printed, "configs": None}).model_dump()


def test_an_answer_with_a_key_the_model_lacks_is_refused():
    printed = plan_json(answer("llama-3-70b lora gpu=a100 gpus=2"))
    with pytest.raises(ValueError):
        JsonAnswer.model_validate({**printed, "surprise": 1})
