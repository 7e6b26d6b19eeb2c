"""Helpers for the config exporter tests: run a shell script's commands through the tools' own
argument parsers (without a shell), and strip comments for the round trip."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

OPTIONS = Path(__file__).resolve().parent / "data" / "tool_options"
_DEFAULT = re.compile(r'^([A-Z_]+)="\$\{\1:-(.*)\}"')
_EXPORT = re.compile(r'^export ([A-Z_]+)="\$\{\1:-(.*)\}"')


def script_commands(text: str) -> list[list[str]]:
    """The commands of a generated script as argv lists, its variables substituted by their
    defaults (`NAME="${NAME:-value}"`), `A=1 B=2 tool ...` environment prefixes dropped."""
    env: dict[str, str] = {}
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if not line or line.startswith("#") or line.startswith("set "):
            continue
        if m := _DEFAULT.match(line):
            env[m.group(1)] = m.group(2)
            continue
        if m := _EXPORT.match(line):
            env[m.group(1)] = m.group(2)
            continue
        words = shlex.split(re.sub(r"\$\{?([A-Z_]+)\}?", lambda v: env.get(v.group(1), v.group(0)), line))
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words.pop(0)
        commands.append(words)
    return commands


def without_comments(text: str) -> str:
    """What a user pastes back, minus gpuplan's own comments (so the round trip reads the
    tools' settings, not the header that restates the plan)."""
    lines = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        lines.append(re.sub(r"\s+#\s.*$", "", line))
    return "\n".join(lines)


def names(file: str) -> set[str]:
    """The option names in one of tests/data/tool_options/ (comment lines skipped)."""
    text = (OPTIONS / file).read_text(encoding="utf-8")
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def flags(argv: list[str]) -> list[str]:
    """The long flags of an argv (`--name` or `--name=value`)."""
    return [word.split("=")[0] for word in argv if word.startswith("--")]
