"""Fit inference.attention_dp_inflight_experts (knowledge/defaults.yaml) on the calibration split's fit cases.

Run: python bench/fit_inflight_dp.py

The figure is how many times what their kernels take the routed experts' share of a serving step
takes when attention is data-parallel over the expert-parallel ranks and the prompts are prefilled in
the same steps (compute.inflight_data_parallel). It is fitted on the `fit` cases of
tests/data/calibration/ with that layout (ep > 1, prefill=chunked) as the value that puts the median
of their speed ratios at 1, as fit_recipe_speed.py fits a framework's recipe speed; the `held_out`
cases are then reported with it, never used. Prints the fitted value and each split's figures at 1 and at the fit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["GPUPLAN_CACHE"] = "0"  # every estimate computed at the value being tried
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fit_recipe_speed import fit, report  # noqa: E402
from test_calibration_data import INFLIGHT_DP  # noqa: E402

from gpuplan.estimator import compute  # noqa: E402


def use_factor(factor: float) -> None:
    compute.experts_inflight = lambda: factor


def main() -> None:
    inflight = INFLIGHT_DP
    fitted = fit([c for c in inflight if c["split"] == "fit"], use_factor, 1.0, 4.0, rising=False)
    print(f"{len(inflight)} calibration cases run attention data-parallel in-flight; fitted on the fit split: {fitted}")
    report(inflight, use_factor, 1.0, "factor")
    report(inflight, use_factor, fitted, "factor")


if __name__ == "__main__":
    main()
