"""Attention data-parallel serving with the prompts prefilled in the decode steps (in-flight
batching): the routed experts' share of a step takes inference.attention_dp_inflight_experts times
its kernels (compute.inflight_data_parallel), fitted on the calibration split's fit cases of that
layout (bench/fit_inflight_dp.py)."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from test_calibration_data import INFLIGHT_DP, ratios

from gpuplan.estimator import compute
from gpuplan.estimator.architecture import for_model
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request
from gpuplan.knowledge import catalog

EXPERTS = catalog().defaults.number("inference", "attention_dp_inflight_experts")
QWEN3 = for_model("qwen3-235b-a22b")


def _step(ep: int, tp: int, chunked: bool) -> float:
    cat = catalog()
    speed = compute.decode_speed(
        QWEN3,
        cat.gpus["h100-80gb"],
        "fp8",
        seq_len=2000,
        batch=512,
        tp=tp,
        pp=1,
        defaults=cat.defaults,
        prompt=1000,
        chunked=chunked,
        ep=ep,
    )
    return float(np.ravel(speed.step_seconds)[0])


def test_routed_share_by_hand():
    """Qwen3-235B-A22B: 8 of its 128 experts, gate, up and down of 4,096 x 1,536, in all 94 layers,
    over 22.2B active parameters; a dense model has none."""
    assert compute.routed_share(QWEN3) == pytest.approx(94 * 8 * 3 * 4096 * 1536 / QWEN3.active_params)
    assert 0.63 < compute.routed_share(QWEN3) < 0.65
    assert compute.routed_share(for_model("llama-3.1-70b")) == 0.0


def test_only_an_attention_data_parallel_step_with_prompts_in_it_is_slowed():
    with_factor = _step(8, 1, chunked=True)
    fitted = compute.experts_inflight
    try:
        compute.experts_inflight = lambda: 1.0  # the kernels' own time
        kernels_only, apart, tensor_parallel = _step(8, 1, True), _step(8, 1, False), _step(1, 8, True)
    finally:
        compute.experts_inflight = fitted
    slowed = 1 + (EXPERTS - 1) * compute.routed_share(QWEN3)
    assert with_factor == pytest.approx(slowed * kernels_only, rel=1e-12)
    assert _step(8, 1, chunked=False) == pytest.approx(apart, rel=1e-12)
    assert _step(1, 8, chunked=True) == pytest.approx(tensor_parallel, rel=1e-12)


@pytest.mark.parametrize(
    "gpus, said",
    [(dict(gpus=8, prefill="chunked"), True), (dict(decode_gpus=8, prefill="disaggregated"), False)],
)
def test_the_answer_says_the_step_is_slowed(gpus, said):
    req = Request(model="qwen3-235b-a22b", method="infer", gpu="h100-80gb", ep=8, tp=1, precision="fp8", **gpus)
    notes = {n.code: n.params for n in estimate(req).assumptions}
    assert ("attention_dp_inflight" in notes) == said
    if said:
        assert notes["attention_dp_inflight"]["factor"] == pytest.approx(
            1 + (EXPERTS - 1) * compute.routed_share(QWEN3)
        )


def test_the_factor_is_what_the_fit_split_gives():
    """bench/fit_inflight_dp.py fits the value that puts the median speed ratio of the fit cases
    run attention data-parallel in-flight at 1; a change to the time model that moves them calls for
    a refit."""
    inflight = INFLIGHT_DP
    fit = [case for case in inflight if case["split"] == "fit"]
    assert len(fit) >= 6 and len(inflight) > len(fit)
    median = statistics.median(r for _, r in ratios(fit) if isinstance(r, float))
    assert 0.97 <= median <= 1.03
