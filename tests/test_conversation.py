"""Thread follow-ups change the previous request (table-driven)."""

import pytest

from gpuplan.bot.language.conversation import change, follow_up
from gpuplan.bot.pipeline import answer_parsed
from gpuplan.estimator.schema import Request

BASE = Request(model="llama-3.1-70b", method="full", gpu="a100-80gb", gpus=16, seq_len=4096, zero=3)

CASES = [
    # text, expected changes, expected kept, expected dropped
    ("what about 16k context?", {"seq_len": 16384}, {"gpu": "a100-80gb", "gpus": 16, "zero": 3}, []),
    ("上下文改成32k呢", {"seq_len": 32768}, {"method": "full"}, []),
    ("用H800呢？", {"gpu": "h800-80gb"}, {"gpus": 16, "zero": 3}, []),
    ("and with QLoRA", {"method": "qlora"}, {"gpus": 16, "seq_len": 4096}, []),
    ("换成LoRA呢", {"method": "lora"}, {"gpu": "a100-80gb"}, []),
    ("那推理呢", {"method": "infer"}, {"model": "llama-3.1-70b", "gpu": "a100-80gb"}, ["gpus", "zero"]),
    ("what if we use 32 GPUs", {"gpus": 32}, {"zero": 3}, []),
    ("2 nodes instead", {"nodes": 2}, {}, ["gpus"]),
    ("and for llama 3 8b?", {"model": "llama-3-8b"}, {"gpus": 16}, []),
    ("what about a 13b", {"params_b": 13.0}, {"method": "full"}, ["model"]),
    ("model=qwen2.5-72b", {"model": "qwen2.5-72b"}, {"seq_len": 4096}, []),
    ("in two weeks", {"deadline_days": 14.0}, {"gpus": 16}, []),
    ("with a 24GB card", {"gpu_memory_gib": 24.0, "gpus": 1}, {"zero": 3}, ["gpu"]),
]


@pytest.mark.parametrize("text,changed,kept,dropped", CASES, ids=[c[0] for c in CASES])
def test_follow_up_changes_only_what_it_states(text, changed, kept, dropped):
    parsed = follow_up(BASE, text)
    got = parsed.request.model_dump(exclude_none=True)
    for key, value in {**changed, **kept}.items():
        assert got.get(key) == value, (key, got)
    for key in dropped:
        assert key not in got
    assert parsed.notes[0].code == "follow_up_changed"
    assert set(parsed.notes[0].params["fields"]) == set(changed)


def test_follow_up_answers_with_the_merged_request():
    parsed = follow_up(BASE, "what about 16k context?")
    plan = answer_parsed(parsed, parsed.lang)
    assert plan.estimate.resolved.seq_len == 16384 and plan.estimate.resolved.gpus == 16


def test_a_symptom_keeps_the_plan_and_raises_the_topic():
    parsed = follow_up(BASE, "GPU utilization is only 40%, why?")
    assert parsed.request == BASE and parsed.notes[0].code == "follow_up_same"
    assert "gpu_starved_io" in parsed.topics


def test_precision_words_read_against_the_thread_method():
    serving = Request(model="llama-3.1-70b", method="infer")
    assert follow_up(serving, "how about int4").request.precision == "int4"


def test_reopened_fields_are_reported():
    _, notes = change(BASE, {"method": "infer"})
    assert notes[1].code == "follow_up_reopened" and "gpus" in notes[1].params["fields"]


def test_no_change_says_so():
    _, notes = change(BASE, {"gpus": 16})
    assert [n.code for n in notes] == ["follow_up_same"]


POOL = Request(model="deepseek-v3", method="infer", gpu="h100-80gb", decode_gpus=72)


@pytest.mark.parametrize(
    "text, gpus, pool",
    [
        ("what about on 16 GPUs?", 16, None),  # the deployment asked replaces the pool it cannot hold
        ("用16张卡呢", 16, None),
        ("and with 128 GPUs in all", 128, 72),  # room for the pool's prefill: both kept
    ],
)
def test_a_count_that_leaves_the_pool_no_room_reopens_it(text, gpus, pool):
    parsed = follow_up(POOL, text)
    assert (parsed.request.gpus, parsed.request.decode_gpus) == (gpus, pool)
    reopened = [n for n in parsed.notes if n.code == "follow_up_reopened"]
    assert bool(reopened) == (pool is None)
    plan = answer_parsed(parsed, parsed.lang)  # answered: within the GPUs given (a pool's need not fill them)
    assert plan.estimate is not None and plan.estimate.resolved.gpus <= gpus


def test_a_pool_larger_than_the_gpus_reopens_them():
    request, notes = change(POOL.model_copy(update={"decode_gpus": None, "gpus": 16}), {"decode_gpus": 72})
    assert (request.decode_gpus, request.gpus) == (72, None)
    assert notes[1].params["fields"] == ["gpus"]
