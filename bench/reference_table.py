"""The accuracy table of the README: every published case of tests/test_reference.py, what it
states, what gpuplan answers, their ratio and whether the case passes or is pending (an xfail in
tests/test_reference.py).

Run: python bench/reference_table.py > /tmp/table.md (Markdown rows, the README's format).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_reference import CASES, PENDING, _lookup  # noqa: E402

from gpuplan.bot.jsonout import plan_json  # noqa: E402
from gpuplan.bot.pipeline import answer  # noqa: E402


def stated(expect: dict) -> str:
    if "value" in expect:
        return f"{expect['value']:,} ±{expect['tolerance']:.0%}"
    if "max" in expect:
        return f"≤ {expect['max']:,}"
    if "min" in expect:
        return f"≥ {expect['min']:,}"
    return str(expect["equals"])


def meets(got, expect: dict) -> bool:
    if "value" in expect:
        return abs(got - expect["value"]) <= expect["tolerance"] * abs(expect["value"])
    if "max" in expect:
        return got <= expect["max"]
    if "min" in expect:
        return got >= expect["min"]
    return got == expect["equals"]


def row(case_id: str, query: str, expect: dict) -> str:
    got = _lookup(plan_json(answer(query)), expect["path"])
    ratio = f"{got / expect['value']:.2f}" if "value" in expect and isinstance(got, int | float) else ""
    shown = got if isinstance(got, bool) else f"{got:.3g}"
    status = "pass" if meets(got, expect) else "FAIL"
    if case_id in PENDING:
        status = "pending" if status == "FAIL" else "pass (marked pending)"
    figure = expect["path"].split(".")[-1]
    return f"| `{case_id}` | {figure} | {stated(expect)} | {shown} | {ratio} | {status} |"


def main() -> None:
    print("| case | figure | published | gpuplan | ratio | |")
    print("|---|---|---|---|---|---|")
    for param in CASES:
        query, expect = param.values
        print(row(param.id, query, expect))


if __name__ == "__main__":
    main()
