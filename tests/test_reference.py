"""Every published case in ../shared/reference/ within the tolerance the file states.

The query goes through the same path as `gpuplan --json`: parse -> estimate -> JSON contract.
"""

from pathlib import Path

import pytest
import yaml

from bot.jsonout import plan_json
from bot.pipeline import answer

LIVE = Path(__file__).resolve().parents[2] / "shared" / "reference"
SNAPSHOT = Path(__file__).resolve().parent / "data" / "reference"
REFERENCE = LIVE if LIVE.is_dir() else SNAPSHOT


# Expert and context parallelism, frontier-scale clusters and serving capacity are the "any model,
# any scale" issue's work; until it lands, these cases report (xfail) rather than fail CI.
PENDING = {"moe_scale.yaml": "expert/context parallelism and serving capacity are not modelled yet"}


def _cases():
    cases = []
    for path in sorted(REFERENCE.glob("*.yaml")):
        marks = [pytest.mark.xfail(reason=PENDING[path.name], strict=False)] if path.name in PENDING else []
        for case in yaml.safe_load(path.read_text())["cases"]:
            for i, expect in enumerate(case["expect"]):
                cases.append(pytest.param(case["query"], expect, id=f"{case['id']}-{i}", marks=marks))
    return cases


CASES = _cases()


def test_reference_cases_present():
    assert len(CASES) >= 18, f"expected the shared reference cases in {REFERENCE}"


def _lookup(data: dict, path: str):
    aliases = {"tokens_per_s_per_gpu": "compute.tokens_per_s_per_gpu"}
    for key in aliases.get(path, path).split("."):
        data = data[key]
    return data


@pytest.mark.parametrize("query, expect", CASES)
def test_reference_case(query, expect):
    got = _lookup(plan_json(answer(query)), expect["path"])
    if "equals" in expect:
        assert got == expect["equals"]
    if "max" in expect:
        assert got <= expect["max"]
    if "min" in expect:
        assert got >= expect["min"]
    if "value" in expect:
        assert got == pytest.approx(expect["value"], rel=expect["tolerance"]), f"{query}: {got} vs {expect['value']}"
