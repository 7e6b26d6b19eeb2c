"""Fit a framework's recipe_speed (knowledge/frameworks.yaml) on the calibration split's fit cases.

Run: python bench/fit_recipe_speed.py [FRAMEWORK]      (default: nemo)

recipe_speed is the step rate of a framework's published performance recipes over what gpuplan
plans for the same layout on a stack without their tuning. It is fitted on the `fit` cases of
tests/data/calibration/ whose query names the framework, as the value that puts the median of their
speed ratios (gpuplan's throughput over the published one) at 1; the `held_out` cases are then
reported with it, never used. Prints the fitted value and each split's figures at 1 and at the fit.
"""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

os.environ["GPUPLAN_CACHE"] = "0"  # every estimate computed at the speed being tried
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_calibration_data import CASES, ratios, stats  # noqa: E402

from gpuplan.estimator import training  # noqa: E402


def median_ratio(cases: list[dict], use: Callable[[float], None], value: float) -> float:
    """The median speed ratio of `cases` with the fitted figure at `value` (`use` sets it)."""
    use(value)
    return statistics.median(r for _, r in ratios(cases) if isinstance(r, float))


def fit(
    cases: list[dict], use: Callable[[float], None], low: float, high: float, rising: bool, steps: int = 14
) -> float:
    """Bisection for the value at which the median ratio of `cases` is 1 (`rising`: the ratio grows
    with the value)."""
    for _ in range(steps):
        middle = (low + high) / 2
        below = median_ratio(cases, use, middle) < 1
        low, high = (middle, high) if below == rising else (low, middle)
    return round((low + high) / 2, 3)


def report(cases: list[dict], use: Callable[[float], None], value: float, name: str) -> None:
    use(value)
    rows = ratios(cases)
    for split in ("fit", "held_out"):
        chosen = [(c, r) for c, r in rows if c["split"] == split]
        n, _, within, median, worst = stats(chosen)
        figures = f"{n:2d} cases  {within:2d} within tolerance  median {median:.2f}  worst {worst:.2f}"
        print(f"  {name} {value:.3f}  {split:8s}  {figures}")


def use_recipe_speed(speed: float) -> None:
    training.recipe_speed = lambda ctx: speed


def main(framework: str) -> None:
    named = [case for case in CASES if case["layout"].get("framework") == framework]
    fitted = fit([case for case in named if case["split"] == "fit"], use_recipe_speed, 1.0, 2.5, rising=True)
    print(f"{framework}: {len(named)} calibration cases name it; recipe_speed fitted on the fit split: {fitted}")
    report(named, use_recipe_speed, 1.0, "speed")
    report(named, use_recipe_speed, fitted, "speed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "nemo")
