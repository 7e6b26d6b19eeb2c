"""ep_overlap: whether a MoE training step times one micro-batch's expert all-to-all beside an adjacent
one's compute (Megatron-Core's --overlap-moe-expert-parallel-comm, combined 1F1B), as a recipe states it.
Megatron-Core leaves it off by default; gpuplan pairs where the layout allows unless the question says
off (its Megatron export sets the flag where the plan pairs)."""

from __future__ import annotations

import pytest

from gpuplan.bot.pipeline import answer
from gpuplan.bot.render import plan_text
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request

ASK = dict(
    model="deepseek-v3", method="pretrain", gpu="b200-180gb", gpus=256, tp=1, pp=8, vpp=2, ep=32, train_tokens=1e12
)


def test_off_waits_for_the_all_to_all_and_takes_longer():
    paired, waited = estimate(Request(**ASK)), estimate(Request(**ASK, ep_overlap=False))
    assert waited.network.comm_fraction > paired.network.comm_fraction
    assert waited.compute.days > paired.compute.days


def test_on_is_the_default_where_the_layout_allows_it():
    assert estimate(Request(**ASK, ep_overlap=True)).compute.days == estimate(Request(**ASK)).compute.days


def test_a_dense_model_has_nothing_to_pair():
    dense = dict(model="llama-3.1-70b", method="pretrain", gpu="h100-80gb", gpus=64, tp=8, pp=2, train_tokens=1e11)
    assert estimate(Request(**dense, ep_overlap=False)).compute.days == estimate(Request(**dense)).compute.days


@pytest.mark.parametrize("lang, words", [("en", "ep_overlap=off"), ("zh", "ep_overlap=off")])
def test_the_answer_says_the_pairing_was_turned_off(lang, words):
    question = "pretrain deepseek-v3 on 256 b200 ep=32 pp=8 vpp=2 tokens=1T ep_overlap=off"
    assert words in plan_text(answer(question, lang=lang), details=True)
