"""The answers gpuplan gives stay the same across refactors: the README's examples and the
parser table's questions, as text and as JSON, each question compared with its own file under
`golden/answers/` (what `gpuplan` printed and its exit code, for every command run on it).

A change that means to alter answers re-records them: `python tests/test_answers_unchanged.py
--record` rewrites only the files whose answers moved (and removes those of questions no longer
asked), so `git diff --stat tests/golden/answers` lists exactly the questions the change moved;
`--record PATTERN` re-records only the questions containing PATTERN."""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import io
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ANSWERS = Path(__file__).parent / "golden" / "answers"
ROOT = Path(__file__).parent.parent

INTERNAL_ERROR = 1  # the CLI's exit code for an internal error (DESIGN.md's exit codes)

if __name__ == "__main__":  # run as a script to record: the tests package is imported from the root
    sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Run:
    """One command on a question: its arguments, exit code and what it printed."""

    argv: list[str]
    exit: int | None
    stdout: str


def answer(argv: list[str]) -> Run:
    """What `gpuplan argv` prints and returns, run in-process."""
    from gpuplan.bot import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    return Run(argv, code, out.getvalue())


# --- what is recorded: each question and the commands run on it ----------------------------------


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


@functools.lru_cache(maxsize=1)
def questions() -> dict[str, list[list[str]]]:
    """Question -> the commands recorded on it: each README command as written, each parser-table
    question as text and as JSON."""
    asked: dict[str, list[list[str]]] = {}
    for argv in _readme_commands():
        asked.setdefault(" ".join(argv), []).append(argv)
    for question in _table_questions():
        runs = asked.setdefault(question, [])
        runs += [argv for argv in ([question], ["--json", question]) if argv not in runs]
    return asked


def file_for(question: str) -> Path:
    """`70b-full-3fa2c1d0.txt`: the question's ASCII words (none for Chinese) and a hash of it all."""
    words = re.sub(r"[^a-z0-9]+", "-", question.lower()).strip("-")[:60].rstrip("-")
    digest = hashlib.sha1(question.encode("utf-8")).hexdigest()[:8]
    return ANSWERS / f"{words + '-' if words else ''}{digest}.txt"


# --- the file format: a header per command, then its output verbatim -------------------------------

_HEADER = re.compile(r"^### argv: (?P<argv>\[.*\]) exit: (?P<exit>\S+) lines: (?P<lines>\d+)(?P<open> open)?$")


def dump(question: str, runs: list[Run]) -> str:
    """Each run as `### argv: [...] exit: N lines: L` and its L lines of output (` open` when the
    output does not end in a newline)."""
    parts = [f"# {json.dumps(question, ensure_ascii=False)}\n"]
    for run in runs:
        lines = run.stdout.splitlines(keepends=True)
        open_end = bool(lines) and not lines[-1].endswith("\n")
        argv, tail = json.dumps(run.argv, ensure_ascii=False), " open" if open_end else ""
        parts.append(f"### argv: {argv} exit: {json.dumps(run.exit)} lines: {len(lines)}{tail}\n")
        parts += lines[:-1] + [lines[-1] + "\n"] if open_end else lines
    return "".join(parts)


def load(text: str) -> list[Run]:
    lines = text.splitlines(keepends=True)[1:]  # the first line names the question (as JSON)
    runs, at = [], 0
    while at < len(lines):
        header = _HEADER.match(lines[at].rstrip("\n"))
        if header is None:
            raise ValueError(f"not a run header: {lines[at]!r}")
        count = int(header["lines"])
        stdout = "".join(lines[at + 1 : at + 1 + count])
        stdout = stdout[:-1] if header["open"] else stdout
        runs.append(Run(json.loads(header["argv"]), json.loads(header["exit"]), stdout))
        at += 1 + count
    return runs


def record(pattern: str | None = None) -> None:
    """Rewrite the files whose answers moved (of the questions containing `pattern`, if given) and,
    on a full record, remove the files of questions no longer asked."""
    asked = questions()
    ANSWERS.mkdir(parents=True, exist_ok=True)
    moved = 0
    for question, argvs in asked.items():
        if pattern and pattern not in question:
            continue
        runs = [answer(argv) for argv in argvs]
        crashed = [run.argv for run in runs if run.exit == INTERNAL_ERROR]
        if crashed:  # an internal error is never an answer to keep
            raise SystemExit(f"not recorded: {crashed[0]} ends in an internal error")
        path, text = file_for(question), dump(question, runs)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            moved += 1
    stale = [] if pattern else sorted(set(ANSWERS.glob("*.txt")) - {file_for(q) for q in asked})
    for path in stale:
        path.unlink()
    print(f"{moved} questions re-recorded, {len(stale)} removed, {len(asked)} asked")


# --- tests ---------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_HF_LOOKUP", "0")


def test_every_question_has_its_file_and_no_file_is_stale() -> None:
    expected = {file_for(question) for question in questions()}
    recorded = set(ANSWERS.glob("*.txt"))
    assert len(expected) >= 150
    assert not expected - recorded, f"not recorded (run --record): {sorted(p.name for p in expected - recorded)[:5]}"
    assert not recorded - expected, f"stale (run --record): {sorted(p.name for p in recorded - expected)[:5]}"


def test_the_file_format_round_trips() -> None:
    runs = [Run(["70b full"], 0, "a\nb\n"), Run(["--json", "x"], 2, "no newline"), Run(["y"], 0, "")]
    assert load(dump("70b full", runs)) == runs


@pytest.mark.parametrize("question", sorted(questions()), ids=lambda q: file_for(q).stem)
def test_answer_unchanged(question: str) -> None:
    path = file_for(question)
    assert path.exists(), f"{path.name} not recorded: run python tests/test_answers_unchanged.py --record"
    recorded = load(path.read_text(encoding="utf-8"))
    assert [run.argv for run in recorded] == questions()[question]
    for before in recorded:
        assert before.exit != INTERNAL_ERROR  # no crash kept as an answer
        now = answer(before.argv)
        diff = difflib.unified_diff(before.stdout.splitlines(), now.stdout.splitlines(), "recorded", "now", lineterm="")
        assert now.stdout == before.stdout or same_json(before.stdout, now.stdout), "\n".join(diff)
        assert now.exit == before.exit


def same_json(recorded: str, now: str) -> bool:
    """Two `--json` outputs that differ only in a float's last bits: numpy's exp, log and power take
    other SIMD paths on other CPUs (AVX-512 or not), so a figure printed in full may end 238 where it
    was recorded as 239. Everything else, key order included, must be equal."""
    try:
        return _close(json.loads(recorded), json.loads(now))
    except ValueError:
        return False  # text, not JSON: it must be equal


def _close(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def test_json_answers_may_differ_in_a_float_s_last_bits_only() -> None:
    assert same_json('{"a": [1.0000000000000002, "x"], "b": 2}', '{"a": [1.0, "x"], "b": 2}')
    assert not same_json('{"a": 1.0001}', '{"a": 1.0}')
    assert not same_json('{"a": 1, "b": 2}', '{"b": 2, "a": 1}')  # the order is the contract's
    assert not same_json('{"a": 1}', '{"a": 1.0}')
    assert not same_json("text 1.0", "text 1.0000000000000002")


if __name__ == "__main__" and "--record" in sys.argv:
    import os

    os.environ["GPUPLAN_HF_LOOKUP"] = "0"
    after = sys.argv[sys.argv.index("--record") + 1 :]
    record(after[0] if after else None)
