"""Every figure of a few hundred estimates, to check that a speed-up changes none of them.

Run: python bench/estimate_snapshot.py dump /tmp/before.jsonl   (before the change)
     python bench/estimate_snapshot.py compare /tmp/before.jsonl  (after it: exit 1 on a difference)
The requests are bench_estimate.py's mix, every published query of tests/test_reference.py and of
tests/data/calibration (whole answers, parse to JSON), and a grid of catalog models x methods x GPU
types x sequence lengths. Each line is one request and its estimate's JSON (or the refusal), so a
difference is named by its request. Numbers may differ by rounding only: a relative difference up
to TOLERANCE passes (summing in another order moves the last bits), anything else fails.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
from pathlib import Path

import yaml

os.environ["GPUPLAN_CACHE"] = "0"  # compute every estimate, even one asked before in this process

from gpuplan.bot.jsonout import plan_json  # noqa: E402
from gpuplan.bot.pipeline import answer  # noqa: E402
from gpuplan.estimator.errors import RequestError  # noqa: E402
from gpuplan.estimator.estimate import estimate  # noqa: E402
from gpuplan.estimator.schema import Request  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_estimate import MIX  # noqa: E402
from test_reference import CASES  # noqa: E402

MODELS = ["llama-3-70b", "llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "qwen3-235b-a22b", "qwen2.5-7b"]
METHODS = ["full", "lora", "qlora", "pretrain", "infer"]
GPUS = [None, "h100-80gb", "a100-40gb", "rtx-4090-24gb", "mi300x-192gb"]
SEQS = [None, 32768]
# the largest relative difference taken for rounding: float64 sums in another order differ by ~1e-16
# per operation, far below any printed figure (three or four significant digits)
TOLERANCE = 1e-9


def grid_requests() -> list[dict]:
    combos = itertools.product(MODELS, METHODS, GPUS, SEQS)
    return [
        {k: v for k, v in dict(model=m, method=meth, gpu=g, seq_len=s).items() if v is not None}
        for m, meth, g, s in combos
    ]


def calibration_queries() -> list[str]:
    queries = []
    for path in sorted((HERE.parent / "tests" / "data" / "calibration").glob("*.yaml")):
        queries += [case["query"] for case in yaml.safe_load(path.read_text())["cases"]]
    return queries


def estimate_json(fields: dict) -> str:
    try:
        return estimate(Request(**fields)).model_dump_json()
    except RequestError as err:
        return json.dumps({"refused": [note.model_dump() for note in err.notes]}, default=str)


def answer_json(query: str) -> str:
    try:
        return json.dumps(plan_json(answer(query)), sort_keys=True, default=str)
    except Exception as err:  # noqa: BLE001 - a refusal is a figure too
        return json.dumps({"error": type(err).__name__, "text": str(err)})


def snapshot() -> dict[str, str]:
    out = {}
    for fields in [*MIX, *grid_requests()]:
        out["estimate " + json.dumps(fields, sort_keys=True)] = estimate_json(fields)
    queries = [param.values[0] for param in CASES] + calibration_queries()
    for query in dict.fromkeys(queries):
        out["answer " + query] = answer_json(query)
    return out


def main() -> None:
    action, path = sys.argv[1], Path(sys.argv[2])
    now = snapshot()
    if action == "dump":
        path.write_text("".join(json.dumps({"key": k, "json": v}) + "\n" for k, v in now.items()))
        print(f"{len(now)} estimates written to {path}")
        return
    before = {row["key"]: row["json"] for row in map(json.loads, path.read_text().splitlines())}
    moved = {key: _largest_difference(before[key], now.get(key)) for key in before if now.get(key) != before[key]}
    changed = {key: difference for key, difference in moved.items() if difference > TOLERANCE}
    for key, difference in sorted(changed.items(), key=lambda item: -item[1])[:20]:
        print(f"CHANGED (largest relative difference {difference:.1e})", key)
    largest = max(moved.values(), default=0.0)
    print(
        f"{len(before)} estimates compared, {len(moved) - len(changed)} within {TOLERANCE:.0e} "
        f"(largest relative difference {largest:.1e}), {len(changed)} changed"
    )
    sys.exit(1 if changed else 0)


def _largest_difference(before: str, after: str | None) -> float:
    """The largest relative difference between two answers' numbers; infinity where anything else
    (a text, a key, a list's length) differs."""
    if after is None:
        return math.inf
    return _difference(json.loads(before), json.loads(after))


def _difference(a, b) -> float:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return 0.0 if a == b else math.inf
    if isinstance(a, int | float) and isinstance(b, int | float):
        return 0.0 if a == b else abs(a - b) / max(abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return max((_difference(a[k], b[k]) for k in a), default=0.0)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return max((_difference(x, y) for x, y in zip(a, b, strict=True)), default=0.0)
    return 0.0 if a == b else math.inf


if __name__ == "__main__":
    main()
