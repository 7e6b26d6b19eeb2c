"""The README tells the truth: at most 200 lines, no link outside the repository, every example's
first line is what gpuplan answers today, and every command it shows runs."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from gpuplan.bot import cli

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MOST_LINES = 200


def _examples() -> list[tuple[str, str]]:
    """(`$ gpuplan ...` command, the line printed under it) from the README's examples."""
    lines = README.splitlines()
    return [(line[2:], lines[i + 1]) for i, line in enumerate(lines) if line.startswith("$ gpuplan ")]


def _commands() -> list[str]:
    """The gpuplan commands the README shows, in code blocks or inline, that need no server or Slack
    credentials (`gpuplan serve` is started by tests/test_serve.py and tests/test_e2e.py)."""
    code = "\n".join(re.findall(r"```(?:bash)?\n(.*?)```", README, re.S))
    found = [
        part.strip() for line in code.splitlines() for part in line.split("&&") if part.strip().startswith("gpuplan ")
    ]
    found += re.findall(r"`(gpuplan [^`]+)`", README)
    placeholder = re.compile(r'\.\.\.|\b[A-Z]{3,}\b|"question"')  # gpuplan config FORMAT "question"
    return [c for c in dict.fromkeys(found) if not placeholder.search(c) and not c.startswith("gpuplan serve")]


def _run(command: str) -> tuple[int, str]:
    argv = shlex.split(command.split(" > ")[0])[1:]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    return code, out.getvalue()


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_HF_LOOKUP", "0")


def test_the_readme_is_short_and_stays_inside_the_repository():
    assert len(README.splitlines()) <= MOST_LINES
    assert "../" not in README
    for path in re.findall(r"`((?:docs|eval|tests|bot|estimator|knowledge|templates|bench)/[\w./-]+)`", README):
        assert (ROOT / path).exists(), path
    assert "## Quick start" in README


def test_the_readme_has_eight_kinds_of_example():
    assert len(_examples()) >= 8


@pytest.mark.parametrize("command, first_line", _examples(), ids=[c[:50] for c, _ in _examples()])
def test_each_example_prints_the_first_line_the_readme_shows(command, first_line):
    code, out = _run(command)
    assert code == 0 and out.splitlines()[0] == first_line


@pytest.mark.parametrize("command", _commands())
def test_every_command_the_readme_shows_runs(command):
    code, out = _run(command)
    assert code == 0 and out.strip(), command


def test_the_serve_command_is_the_procfiles():
    """`gpuplan serve` runs exactly the Procfile's web command (bot/slack/serve.py), which the
    end-to-end tests start."""
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert "gunicorn" in web and cli.is_serve(["serve"])
