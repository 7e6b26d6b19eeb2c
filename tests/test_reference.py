"""Every published case in ../shared/reference/ within the tolerance the file states.

The query goes through the same path as `gpuplan --json`: parse -> estimate -> JSON contract.
"""

from pathlib import Path

import pytest
import yaml

from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.pipeline import answer

LIVE = Path(__file__).resolve().parents[2] / "shared" / "reference"
SNAPSHOT = Path(__file__).resolve().parent / "data" / "reference"
REFERENCE = LIVE if LIVE.is_dir() else SNAPSHOT


# Cases of moe_scale.yaml the estimator does not meet yet: expert and context parallelism,
# frontier-scale clusters and serving throughput are the "any model, any scale" issue's work.
# Each is marked on its own and strictly, so a case that starts passing must be unmarked here.
PENDING_REASON = "expert/context parallelism, frontier-scale clusters and serving throughput are not modelled yet"
PENDING = frozenset(
    {
        "deepseek-v2-gpu-hours-per-trillion-0",
        "llama4-maverick-gpu-hours-0",
        "megascale-175b-12288-gpus-0",
        "megascale-175b-12288-gpus-1",
        "megatron-lm-175b-12288-gpus-0",
        "megatron-lm-175b-12288-gpus-1",
        "megatron-lm-175b-12288-gpus-2",
        "nemotron4-15b-2304-h100-1",
        "unsloth-qwen3-30b-a3b-qlora-0",
        "ms-swift-qwen25-7b-32k-full-4xa100-0",
        "ms-swift-qwen25-7b-32k-full-4xa100-1",
        "trtllm-qwen3-235b-a22b-h100-tp8-fp8-1k1k-0",
        "trtllm-llama4-maverick-h100-tp8-fp8-1k1k-0",
        "trtllm-llama4-scout-h100-tp4-fp8-1k1k-0",
        "trtllm-llama31-405b-h100-tp8-fp8-1k1k-0",
        "trtllm-llama33-70b-h100-tp2-fp8-1k1k-0",
        "deepseek-v2-8xh800-generation-min-0",
    }
)


def _cases():
    cases = []
    for path in sorted(REFERENCE.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text())["cases"]:
            for i, expect in enumerate(case["expect"]):
                case_id = f"{case['id']}-{i}"
                marks = [pytest.mark.xfail(reason=PENDING_REASON, strict=True)] if case_id in PENDING else []
                cases.append(pytest.param(case["query"], expect, id=case_id, marks=marks))
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
