"""The answers gpuplan gives stay the same across refactors: the README's examples and the
parser table's questions, as JSON and as text, compared with `golden/answers.json`.

A change that means to alter answers re-records the file (`python tests/test_answers_unchanged.py
--record`) and the diff shows what changed."""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import re
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "answers.json"
ROOT = Path(__file__).parent.parent


INTERNAL_ERROR = 1  # the CLI's exit code for an internal error (DESIGN.md's exit codes)


def answer(argv: list[str]) -> dict:
    """What `gpuplan argv` prints and returns, run in-process."""
    from gpuplan.bot import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    return {"argv": argv, "exit": code, "stdout": out.getvalue()}


def _readme_commands() -> list[list[str]]:
    import shlex

    commands = []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if re.match(r"gpuplan (?!.*&&)", line) and not line.startswith("gpuplan answers"):
            argv = shlex.split(line.split("  #")[0])[1:]
            commands.append(argv)
    return commands


def _table_questions() -> list[str]:
    from tests.test_parser_table import CASES

    return [case.values[0] for case in CASES]


def record() -> None:
    argvs = _readme_commands()
    for question in _table_questions():
        argvs += [[question], ["--json", question]]
    answers = [answer(a) for a in argvs]
    crashed = [a["argv"] for a in answers if a["exit"] == INTERNAL_ERROR]
    if crashed:  # an internal error is never an answer to keep
        raise SystemExit(f"not recorded: {len(crashed)} questions end in an internal error, e.g. {crashed[0]}")
    GOLDEN.write_text(json.dumps(answers, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _cases() -> list:
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else []
    return [pytest.param(case, id=f"{i}") for i, case in enumerate(recorded)]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_HF_LOOKUP", "0")


def test_golden_covers_readme_and_table() -> None:
    cases = json.loads(GOLDEN.read_text(encoding="utf-8"))
    recorded = [case["argv"] for case in cases]
    assert all(argv in recorded for argv in _readme_commands())
    assert len(recorded) >= 2 * 150
    assert not [case["argv"] for case in cases if case["exit"] == INTERNAL_ERROR]  # no crash kept as an answer


@pytest.mark.parametrize("case", _cases())
def test_answer_unchanged(case: dict) -> None:
    now = answer(case["argv"])
    diff = difflib.unified_diff(case["stdout"].splitlines(), now["stdout"].splitlines(), "recorded", "now", lineterm="")
    assert now["stdout"] == case["stdout"], "\n".join(diff)
    assert now["exit"] == case["exit"]


if __name__ == "__main__" and "--record" in sys.argv:
    import os

    os.environ["GPUPLAN_HF_LOOKUP"] = "0"
    sys.path.insert(0, str(ROOT))
    record()
