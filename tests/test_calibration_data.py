"""The calibration set in tests/data/calibration/: published throughputs with the layouts that
produced them, split into a part to fit on and a held-out part by a rule on each case's id
(tests/data/calibration/README.md).

These tests check the data: every field, that each query reads back as the layout its case states,
that the kinds agree with the catalog and the layout, and that the split follows the rule. They do
not judge the estimator: its speed ratio per case (gpuplan's throughput over the published one, or
published time over gpuplan's: above 1 when gpuplan is faster) and the median and worst ratio per
kind and split are printed (`pytest -s`), the same table as `python bench/calibration_table.py`.
"""

from __future__ import annotations

import hashlib
import math
import re
import statistics
from pathlib import Path

import pytest
import yaml

from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.language.parser import parse
from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.estimator import architecture
from gpuplan.estimator.errors import RequestError
from gpuplan.knowledge import catalog

CALIBRATION = Path(__file__).resolve().parent / "data" / "calibration"
KINDS = ("dense", "moe", "fp8", "serving")
SPLITS = ("fit", "held_out")
FIT_PERCENT = 60  # the README's rule: sha256(id), first 8 hex digits, mod 100 below this is "fit"
# a case's `layout` key -> the Request field its query must read as
LAYOUT_FIELDS = {
    "method": "method",
    "model": "model",
    "gpu": "gpu",
    "gpus": "gpus",
    "decode_gpus": "decode_gpus",
    "seq": "seq_len",
    "prompt": "prompt_tokens",
    "prefill": "prefill",
    "tokens": "train_tokens",
    "gbs": "global_batch",
    "mbs": "micro_batch",
    "tp": "tp",
    "ep_overlap": "ep_overlap",
    "pp": "pp",
    "cp": "cp",
    "ep": "ep",
    "zero": "zero",
    "precision": "precision",
    "kv": "kv_cache",
    "lora_r": "lora_rank",
    "ckpt": "ckpt",
    "framework": "framework",
    "vpp": "vpp",
}
FP8 = ("fp8-mixed", "fp8")
ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


def split_rule(case_id: str) -> str:
    """fit or held_out from the id alone, so the split never depends on how gpuplan does on a case."""
    return "fit" if int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % 100 < FIT_PERCENT else "held_out"


def load_files() -> dict[str, dict]:
    return {path.name: yaml.safe_load(path.read_text()) for path in sorted(CALIBRATION.glob("*.yaml"))}


def load_cases() -> list[dict]:
    return [{**case, "file": name} for name, data in load_files().items() for case in data["cases"]]


CASES = load_cases()
# the serving cases run attention data-parallel over the expert ranks with the prompts in the decode
# steps, on which inference.attention_dp_inflight_experts is fitted (bench/fit_inflight_dp.py)
INFLIGHT_DP = [c for c in CASES if c["layout"].get("ep", 1) > 1 and c["layout"].get("prefill") == "chunked"]


def _lookup(data: dict, path: str):
    for key in path.split("."):
        data = data[key]
    return data


def estimate(case: dict) -> float | str:
    """What gpuplan answers for the case's first expectation, or why it gives no figure."""
    try:
        got = _lookup(plan_json(answer(case["query"])), case["expect"][0]["path"])
    except (QuestionError, RequestError) as exc:
        return "refused: " + ", ".join(note.code for note in exc.notes)
    except (KeyError, TypeError):
        return "no figure"
    return float(got) if isinstance(got, int | float) else "no figure"


Row = tuple[dict, float | str]  # a case and its speed ratio (or why there is no figure)
TIME_PATHS = ("compute.gpu_hours", "compute.days", "compute.step_time_s")  # larger is slower


def speed_ratio(expect: dict, got: float) -> float:
    """gpuplan's speed over the published one: > 1 when gpuplan is faster, whichever the figure."""
    return expect["value"] / got if expect["path"] in TIME_PATHS else got / expect["value"]


def ratios(cases: list[dict]) -> list[Row]:
    """Each case with its speed ratio for its first expectation (or why there is none)."""
    rows = []
    for case in cases:
        got = estimate(case)
        rows.append((case, speed_ratio(case["expect"][0], got) if isinstance(got, float) else got))
    return rows


HEADER = "| kind | split | cases | with a figure | within tolerance | median | worst |"


def _as_published(case: dict, ratio: float) -> float:
    """Back to gpuplan / published, the quotient the tolerance is stated for."""
    return 1 / ratio if case["expect"][0]["path"] in TIME_PATHS else ratio


def stats(chosen: list[Row]) -> tuple[int, int, int, float | None, float | None]:
    """Cases, cases with a figure, within tolerance, median ratio, worst ratio (farthest from 1 either way)."""
    numbers = [(case, ratio) for case, ratio in chosen if isinstance(ratio, float)]
    within = sum(abs(_as_published(case, ratio) - 1) <= case["expect"][0]["tolerance"] for case, ratio in numbers)
    values = [ratio for _, ratio in numbers]
    if not values:
        return len(chosen), 0, 0, None, None
    return len(chosen), len(values), within, statistics.median(values), max(values, key=lambda r: abs(math.log(r)))


def summary(rows: list[Row]) -> list[tuple[str, str, tuple]]:
    """The stats per kind (and all cases) and per split (and both)."""
    out = []
    for kind in (*KINDS, "all"):
        for split in (*SPLITS, "both"):
            chosen = [(c, r) for c, r in rows if kind in (*c["kind"], "all") and split in (c["split"], "both")]
            out.append((kind, split, stats(chosen)))
    return out


def _shown(value: float | str | None) -> str:
    return f"{value:.2f}" if isinstance(value, float) else value or "-"


def table_lines(rows: list[Row]) -> list[str]:
    """Markdown: one row per case, a blank line, then the summary per kind and split."""
    lines = ["| case | kind | split | published | speed ratio |", "|---|---|---|---|---|"]
    for case, ratio in rows:
        kinds, value = ", ".join(case["kind"]), case["expect"][0]["value"]
        lines.append(f"| `{case['id']}` | {kinds} | {case['split']} | {value:,} | {_shown(ratio)} |")
    lines += ["", HEADER, "|---|---|---|---|---|---|---|"]
    for kind, split, (n, figured, within, median, worst) in summary(rows):
        lines.append(f"| {kind} | {split} | {n} | {figured} | {within} | {_shown(median)} | {_shown(worst)} |")
    return lines


def test_each_file_names_its_source_and_holds_cases():
    files = load_files()
    assert files, f"no calibration files in {CALIBRATION}"
    for name, data in files.items():
        assert set(data) == {"source", "cases"}, name
        assert isinstance(data["source"], str) and data["source"].strip(), name
        assert data["cases"], name


def test_ids_are_unique():
    ids = [case["id"] for case in CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_enough_cases_of_each_kind():
    assert len(CASES) >= 40
    for kind in ("moe", "fp8", "serving"):
        assert sum(kind in case["kind"] for case in CASES) >= 8, kind


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_case_fields(case):
    required = {"id", "url", "quote", "kind", "query", "layout", "expect", "split", "file"}
    assert required <= set(case) <= required | {"unstated", "note"}
    assert ID.match(case["id"])
    assert case["url"].startswith(("https://", "http://"))
    assert isinstance(case["quote"], str) and case["quote"].strip()
    assert case["kind"] and set(case["kind"]) <= set(KINDS) and len(set(case["kind"])) == len(case["kind"])
    assert set(case["layout"]) <= set(LAYOUT_FIELDS) and "method" in case["layout"] and "model" in case["layout"]
    assert isinstance(case.get("unstated", {}), dict) and isinstance(case.get("note", ""), str)
    for expect in case["expect"]:
        assert set(expect) == {"path", "value", "tolerance"}
        assert isinstance(expect["path"], str) and expect["value"] > 0 and 0 < expect["tolerance"] < 1


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_query_reads_as_its_layout(case):
    parsed = parse(case["query"])
    assert not parsed.errors and not parsed.unknown, (parsed.errors, parsed.unknown)
    fields = {LAYOUT_FIELDS[key]: value for key, value in case["layout"].items()}
    request = parsed.request
    assert {field: getattr(request, field) for field in fields} == fields
    assert parsed.fixed <= set(fields), f"the query sets {sorted(parsed.fixed - set(fields))} its layout does not state"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["id"])
def test_kinds_agree_with_the_layout(case):
    layout, kinds = case["layout"], set(case["kind"])
    moe = catalog().models[layout["model"]].experts > 1
    assert ("moe" in kinds, "dense" in kinds) == (moe, not moe)
    assert ("fp8" in kinds) == (layout.get("precision") in FP8)
    assert ("serving" in kinds) == (layout["method"] == "infer")


@pytest.mark.parametrize(
    "case", [case for case in CASES if "tflops_per_gpu" in case.get("unstated", {})], ids=lambda case: case["id"]
)
def test_published_tflops_agree_with_published_tokens(case):
    """A transcription check on rows that print both figures: model TFLOP/s per GPU over 6 x active
    weights x tokens/s is 1 to 1.3 (attention adds to 6N), about 2/3 for LoRA (no weight gradients)."""
    active = architecture.for_model(case["layout"]["model"]).active_params
    assert 0.6 <= case["unstated"]["tflops_per_gpu"] * 1e12 / (6 * active * case["expect"][0]["value"]) <= 1.35


def test_split_follows_the_rule():
    wrong = [case["id"] for case in CASES if case["split"] != split_rule(case["id"])]
    assert not wrong


def test_every_kind_has_both_splits():
    for kind in {kind for case in CASES for kind in case["kind"]}:
        of_kind = [case for case in CASES if kind in case["kind"]]
        assert {case["split"] for case in of_kind} == set(SPLITS), kind
    fit = sum(case["split"] == "fit" for case in CASES) / len(CASES)
    assert 0.5 <= fit <= 0.7


def test_baseline_is_printed_not_judged():
    rows = ratios(CASES)
    print("\n" + "\n".join(table_lines(rows)))
    assert len(rows) == len(CASES)
