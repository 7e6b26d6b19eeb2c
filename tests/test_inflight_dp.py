"""Attention data-parallel serving with the prompts prefilled in the decode steps (in-flight
batching) is timed at inference.attention_dp_inflight_step times its kernels (compute.inflight_data_parallel),
fitted on the calibration split's fit cases of that layout (bench/fit_inflight_dp.py)."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from test_calibration_data import CASES, ratios

from gpuplan.estimator import compute
from gpuplan.estimator.architecture import for_model
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request
from gpuplan.knowledge import catalog

FACTOR = catalog().defaults.number("inference", "attention_dp_inflight_step")


def _step(ep: int, tp: int, chunked: bool) -> float:
    cat = catalog()
    speed = compute.decode_speed(
        for_model("qwen3-235b-a22b"),
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


def test_only_an_attention_data_parallel_step_with_prompts_in_it_is_slowed():
    with_factor = _step(8, 1, chunked=True)
    compute_factor = compute.inflight_data_parallel  # the kernels' own time, the factor left at 1
    try:
        compute.inflight_data_parallel = lambda ep, load: np.ones_like(np.asarray(ep, dtype=float))
        kernels_only = _step(8, 1, chunked=True)
        assert _step(8, 1, chunked=False) == pytest.approx(kernels_only * _step(8, 1, False) / kernels_only)
        tensor_parallel = _step(1, 8, chunked=True)
    finally:
        compute.inflight_data_parallel = compute_factor
    assert with_factor == pytest.approx(FACTOR * kernels_only, rel=1e-12)
    assert _step(1, 8, chunked=True) == pytest.approx(tensor_parallel, rel=1e-12)
    assert float(compute.inflight_data_parallel(8, compute.served(2000, 1000, chunked=False))) == 1.0


@pytest.mark.parametrize(
    "gpus, said",
    [(dict(gpus=8, prefill="chunked"), True), (dict(decode_gpus=8, prefill="disaggregated"), False)],
)
def test_the_answer_says_the_step_is_slowed(gpus, said):
    req = Request(model="qwen3-235b-a22b", method="infer", gpu="h100-80gb", ep=8, tp=1, precision="fp8", **gpus)
    notes = {n.code: n.params for n in estimate(req).assumptions}
    assert ("attention_dp_inflight" in notes) == said
    if said:
        assert notes["attention_dp_inflight"]["factor"] == pytest.approx(FACTOR)


def test_the_factor_is_what_the_fit_split_gives():
    """bench/fit_inflight_dp.py fits the value that puts the median speed ratio of the fit cases
    run attention data-parallel in-flight at 1; a change to the time model that moves them calls for
    a refit."""
    inflight = [c for c in CASES if c["layout"].get("ep", 1) > 1 and c["layout"].get("prefill") == "chunked"]
    fit = [case for case in inflight if case["split"] == "fit"]
    assert len(fit) >= 6 and len(inflight) > len(fit)
    median = statistics.median(r for _, r in ratios(fit) if isinstance(r, float))
    assert 0.97 <= median <= 1.03
