"""The failure model: goodput and Young's checkpoint interval against hand-worked numbers."""

import math

import numpy as np
import pytest

from gpuplan.estimator import reliability
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request


def test_llama3_scale_by_hand(cat):
    """16,384 GPUs at Llama 3's 466 interruptions per 54 days x 16,384 GPUs, a 1 s checkpoint write,
    a 15-minute restart: about 90% of wall-clock trains, as Llama 3 reported."""
    rel = reliability.reliability(16384, 1.0, cat.defaults)
    mtbi = 86400 / (466 / (54 * 16384) * 16384)  # 54 days / 466 interruptions, in seconds
    interval = math.sqrt(2 * 1.0 * mtbi)  # Young 1974
    goodput = (1 - (15 * 60 + interval / 2) / mtbi) * interval / (interval + 1.0)
    assert float(rel.mtbi_s) == pytest.approx(mtbi, rel=0.01)
    assert float(rel.interval_s) == pytest.approx(interval, rel=0.01)
    assert float(rel.goodput) == pytest.approx(goodput, rel=0.01)
    assert 0.88 < float(rel.goodput) < 0.92


def test_more_gpus_interrupt_more_and_save_more_often(cat):
    gpus = np.array([8, 512, 4096, 32768, 131072])
    rel = reliability.reliability(gpus, 2.0, cat.defaults)
    assert np.all(np.diff(rel.goodput) < 0)
    assert np.all(np.diff(rel.interval_s) < 0)
    assert float(rel.goodput[0]) > 0.99


def test_a_slower_checkpoint_costs_goodput_and_lengthens_the_interval(cat):
    fast, slow = (reliability.reliability(4096, w, cat.defaults) for w in (1.0, 100.0))
    assert float(slow.goodput) < float(fast.goodput)
    assert float(slow.interval_s) == pytest.approx(float(fast.interval_s) * 10)


def test_goodput_has_a_floor(cat):
    """A job interrupted faster than it restarts makes next to no progress, never negative."""
    rel = reliability.reliability(10**9, 1.0, cat.defaults)
    assert float(rel.goodput) == reliability.MIN_GOODPUT


def test_the_plan_states_the_interval_and_uses_its_goodput():
    est = estimate(Request(model="llama-2-70b", method="pretrain", gpu="h100-80gb", gpus=2048, train_tokens=2e12))
    c = est.compute
    assert c.checkpoint_interval_min and 0 < c.checkpoint_interval_min < c.days * 24 * 60
    assert c.interruptions == pytest.approx(c.days * 2048 * 466 / (54 * 16384), rel=0.01)  # Llama 3's rate
    train_seconds = 2e12 / (c.tokens_per_s_per_gpu * 2048)
    assert c.days * 86400 == pytest.approx(train_seconds / c.goodput, rel=1e-6)
    assert "reliability" in [n.code for n in est.assumptions]


def test_a_short_run_says_an_interruption_is_unlikely():
    est = estimate(Request(model="llama-2-7b", method="lora", gpu="a100-80gb", gpus=1))
    assert est.compute.checkpoint_interval_min is None
    assert "reliability_short" in [n.code for n in est.assumptions]
