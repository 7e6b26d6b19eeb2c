"""Memoised answers (estimator/memo.py) are the same answers: on and off agree, and nothing a
caller does with a memoised plan changes what the next caller gets."""

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from gpuplan.bot.pipeline import answer
from gpuplan.bot.slack import blocks, replies
from gpuplan.estimator import estimate as estimate_module
from gpuplan.estimator import memo
from gpuplan.estimator.schema import Request
from gpuplan.knowledge import catalog

QUESTIONS = [
    "llama-3-70b full fine-tune on H100, 8k context",
    "700亿 全参微调 8张H100",
    "qwen2.5-72b infer mbs=32 seq=8k",
    "8张卡还是喂不满怎么办",
    "A100 vs H100 for 13b full fine-tune",
]


@pytest.fixture
def memo_off(monkeypatch):
    monkeypatch.setenv("GPUPLAN_CACHE", "0")
    memo.enabled.cache_clear()
    yield
    memo.enabled.cache_clear()


def fresh(question):
    return answer(question)


@pytest.mark.parametrize("question", QUESTIONS)
def test_memo_on_and_off_agree(question, monkeypatch):
    memo.enabled.cache_clear()
    with_memo = replies.answer_text(question)
    monkeypatch.setenv("GPUPLAN_CACHE", "0")
    memo.enabled.cache_clear()
    without = replies.answer_text(question)
    memo.enabled.cache_clear()
    assert with_memo.plan == without.plan
    assert with_memo.body == without.body and with_memo.summary == without.summary


def test_callers_cannot_change_a_memoised_answer():
    memo.enabled.cache_clear()
    first = replies.answer_text(QUESTIONS[0])
    message = blocks.message_from_body(first.plan, first.fallback, first.body, "a2b3c4d5")
    message["blocks"][0]["text"]["text"] = "changed by a caller"
    message["blocks"].clear()
    again = replies.answer_text(QUESTIONS[0])
    assert json.loads(again.body)[0]["text"]["text"] != "changed by a caller"
    assert again.plan == fresh(QUESTIONS[0])


def test_estimates_are_memoised_by_request(memo_off):
    estimate_module._estimate_memo.cache_clear()
    answer(QUESTIONS[0])
    assert estimate_module._estimate_memo.cache_info().currsize == 0  # off means off


# requests whose kernel timings and candidate GPU types the shape caches keep: open and fixed
# layouts, MoE, serving, QLoRA, a memory class and a region asked for
SHAPE_REQUESTS = [
    dict(params_b=13, method="lora", gpu_memory_gib=80),
    dict(params_b=7, method="full", region="hk"),
    dict(model="llama-3-70b", method="full", gpu="h100-80gb"),
    dict(model="mixtral-8x7b", method="lora", gpu="a100-80gb"),
    dict(model="deepseek-v3", method="infer", gpu="h200-141gb"),
    dict(model="qwen2.5-72b", method="infer"),
    dict(params_b=7, method="qlora"),
    dict(model="llama-3.1-8b", method="lora", gpu="rtx-4090-24gb", gpus=1, micro_batch=2, ckpt="full"),
]


@pytest.mark.parametrize("fields", SHAPE_REQUESTS)
def test_kernel_timings_kept_by_shape_change_no_figure(fields, memo_off):
    memo.clear_shape_caches()
    cold = estimate_module.estimate(Request(**fields)).model_dump_json()
    warm = estimate_module.estimate(Request(**fields)).model_dump_json()
    memo.clear_shape_caches()
    assert warm == cold == estimate_module.estimate(Request(**fields)).model_dump_json()


def test_shape_cache_keeps_the_latest_entries():
    cache = memo.ShapeCache(2)
    for i in range(3):
        assert cache.get((i,), (), lambda i=i: i * 10) == i * 10
    assert cache.get((2,), (), lambda: "computed again") == 20
    assert cache.get((0,), (), lambda: "computed again") == "computed again"  # the oldest went
    memo.clear_shape_caches()
    assert cache.get((2,), (), lambda: "after clearing") == "after clearing"


@pytest.mark.parametrize("gpu, count, region", [("rtx-4090-24gb", 100, None), ("v100-32gb", 8, "hk")])
def test_a_catalog_stocking_a_type_is_made_once(gpu, count, region):
    cat = catalog()
    stocked = cat.with_stock(gpu, count, region)
    assert stocked is cat.with_stock(gpu, count, region)  # what is kept by catalog comes back
    assert stocked is not cat.with_stock(gpu, count + 1, region)
    assert stocked.stock(gpu, region)[0] == count


def test_shape_cache_holds_a_bounded_number_of_bytes(monkeypatch):
    monkeypatch.setattr(memo, "SHAPE_CACHE_BYTES", 4000)
    cache = memo.ShapeCache(100)
    for i in range(10):  # 800 bytes each: five fit
        cache.get((i,), (), lambda: np.zeros(100))
    assert len(cache._entries) == 5 and cache._bytes == 4000
    big = cache.get(("big",), (), lambda: np.zeros(200))  # over a quarter of the bound: not kept
    assert big.size == 200 and ("big",) not in cache._entries and len(cache._entries) == 5
    memo.clear_shape_caches()
    assert cache._bytes == 0


def test_shape_cache_stays_whole_under_threads():
    """The Slack server answers on several threads: concurrent gets that evict one another neither
    raise nor leave the byte count off from the entries kept."""
    cache = memo.ShapeCache(maxsize=4)

    def work(i: int) -> int:
        for j in range(300):
            key = ((i + j) % 9,)
            assert cache.get(key, (), lambda key=key: np.full(8, key[0]))[0] == key[0]
        return i

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sorted(pool.map(work, range(16))) == list(range(16))
    assert len(cache._entries) <= 4
    assert cache._bytes == sum(size for _, _, size in cache._entries.values())
