"""Estimates per second for a fixed mix of 1,000 requests (target: under 1 ms each on one core).

Run: python bench/bench_estimate.py
The mix repeats 20 representative requests (open layouts, fixed layouts, serving, errors) 50
times, with the memo of repeated requests off (estimator/memo.py). The baseline measured in
the same run is the cost of building the Request objects
alone, so the figure printed is the estimator's own cost and its ratio to that baseline.

Two figures: "warm", the kernel timings by shape (memo.ShapeCache) kept from the requests before,
as a serving process keeps them for the models asked over and over; and "cold", those caches
emptied before every request, so each computes everything it needs (the first question about
a model on a GPU set). The target is the warm figure's; the cold one is what a new question costs.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time

os.environ["GPUPLAN_CACHE"] = "0"  # measure the estimator, not the per-process memo of repeated requests

from gpuplan.estimator import memo
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request

MIX = [
    dict(params_b=70, method="full"),
    dict(params_b=7, method="qlora"),
    dict(params_b=13, method="lora", gpu="rtx-4090-24gb"),
    dict(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=8, zero=3, seq_len=4096),
    dict(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=8, zero=3, seq_len=4096, offload="cpu"),
    dict(model="llama-3.1-8b", method="lora", gpu="rtx-4090-24gb", gpus=1, micro_batch=2, seq_len=2048, ckpt="full"),
    dict(model="qwen2.5-72b", method="infer"),
    dict(model="deepseek-v3", method="infer", gpu="h200-141gb"),
    dict(model="mixtral-8x7b", method="lora", gpu="a100-80gb"),
    dict(params_b=7, method="pretrain", train_tokens=1e12, gpu="a100-80gb"),
    dict(model="llama-2-70b", method="pretrain", seq_len=4096, train_tokens=2e12, gpu="a100-80gb"),
    dict(model="gpt-3-175b", method="pretrain", gpu="a100-80gb", gpus=1024, tp=8, pp=16, global_batch=1536),
    dict(params_b=34, method="full", deadline_days=7),
    dict(model="llama-3-8b", method="dpo", gpu="a100-80gb"),
    dict(model="llama-3-8b", method="ppo", gpu="a100-80gb"),
    dict(params_b=405, method="pretrain", gpus=2048),
    dict(model="gemma-2-27b", method="qlora", gpu="l40s-48gb"),
    dict(params_b=7, method="full", gpu="v100-32gb"),
    dict(params_b=-5),  # refused
    dict(model="llama-2-7b", seq_len=10_000_000),  # refused
]
REQUESTS = [MIX[i % len(MIX)] for i in range(1000)]


def run_once(cold: bool) -> tuple[float, float]:
    start = time.perf_counter()
    built = [Request(**fields) for fields in REQUESTS]
    baseline = time.perf_counter() - start
    start = time.perf_counter()
    for req in built:
        if cold:
            memo.clear_shape_caches()
        with contextlib.suppress(RequestError):
            estimate(req)
    return time.perf_counter() - start, baseline


def main() -> None:
    estimate(Request(params_b=7))  # load the knowledge base and warm numpy once
    print(f"requests per run          {len(REQUESTS)}")
    for label, cold in (("warm", False), ("cold", True)):
        runs = [run_once(cold) for _ in range(5)]
        best, median = min(r[0] for r in runs), statistics.median(r[0] for r in runs)
        baseline = min(r[1] for r in runs)
        per_ms = best / len(REQUESTS) * 1e3
        print(f"{label}: shape caches {'emptied before every request' if cold else 'kept from the requests before'}")
        per_s = f"{len(REQUESTS) / best:,.0f} (best of 5), {len(REQUESTS) / median:,.0f} (median)"
        print(f"  estimates per second    {per_s}")
        print(f"  {label} time per estimate  {per_ms:.3f} ms  (target < 1 ms)  {'OK' if per_ms < 1 else 'SLOW'}")
        print(
            f"  baseline: building the Request objects alone {baseline / len(REQUESTS) * 1e6:.1f} us each; "
            f"estimate / baseline = {best / baseline:.0f}x"
        )


if __name__ == "__main__":
    main()
