"""Writing config files: shell scripts with one flag per line, YAML with a comment beside each
value, JSON as tools read it. The comments come from templates/<lang>/configs.yaml."""

from __future__ import annotations

import functools
import json
import shlex
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2

from gpuplan.knowledge import read_yaml

# What marks a value the plan does not decide (a path, an address, a dataset)
CHANGE_ME = "CHANGE_ME"


@functools.cache
def _words(lang: str) -> dict[str, jinja2.Template]:
    text = resources.files("gpuplan.templates").joinpath(lang, "configs.yaml").read_text(encoding="utf-8")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    return {key: env.from_string(value) for key, value in read_yaml(text).items()}


@dataclass(frozen=True)
class Words:
    """The comments of one language."""

    lang: str

    def __call__(self, key: str, **params: Any) -> str:
        return _words(self.lang)[key].render(**params).strip()


@dataclass
class Script:
    """A shell script: a header, variables and exports (each with its comment), then commands."""

    header: list[str]
    variables: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value, comment)
    exports: list[tuple[str, str, str]] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)  # each: program words, then one item per line

    def text(self) -> str:
        lines = ["#!/usr/bin/env bash", *(f"# {h}" for h in self.header), "set -euo pipefail"]
        if self.variables:
            lines.append("")
            lines.extend(_commented(f"{name}={_default(name, value)}", note) for name, value, note in self.variables)
        if self.exports:  # kept when the site's environment already sets them
            lines.append("")
            lines.extend(
                _commented(f"export {name}={_default(name, value)}", note) for name, value, note in self.exports
            )
        for command in self.commands:
            lines.extend(["", " \\\n  ".join(command)])
        return "\n".join(lines) + "\n"


def _default(name: str, value: str) -> str:
    """`NAME="${NAME:-value}"`: the value unless the caller's environment already sets it."""
    return f'"${{{name}:-{value}}}"'


def _commented(line: str, comment: str) -> str:
    return f"{line}  # {comment}" if comment else line


def flag(name: str, value: Any = None) -> str:
    """`--name value` (a bare flag when value is None), shell-quoted."""
    if value is None:
        return name
    text = value if isinstance(value, str) and value.startswith("$") else shlex.quote(str(value))
    return f"{name} {text}"


def yaml_text(header: list[str], entries: list[tuple[str, Any, str]], indent: int = 0) -> str:
    """A YAML mapping with a comment beside each value. `entries` holds (key, value, comment);
    a value that is itself a list of entries becomes a nested mapping."""
    lines = [f"# {h}" for h in header] if header else []
    lines.extend(_yaml_lines(entries, indent))
    return "\n".join(lines) + "\n"


def _yaml_lines(entries: list[tuple[str, Any, str]], indent: int) -> list[str]:
    pad = " " * indent
    lines = []
    for key, value, comment in entries:
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            lines.append(_commented(f"{pad}{key}:", comment))
            lines.extend(_yaml_lines(value, indent + 2))
        else:
            lines.append(_commented(f"{pad}{key}: {_scalar(value)}", comment))
    return lines


def _scalar(value: Any) -> str:
    """A YAML scalar that reads back as the same value (json.dumps is valid YAML for these)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and 0 < abs(value) < 1e-3:
        return f"{value:.1e}"  # 1.0e-05: YAML 1.1 reads a float only with a dot and a signed exponent
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    plain = text and text[0].isalpha() and all(c.isalnum() or c in "._/-" for c in text)
    if plain and text.lower() not in ("true", "false", "null", "yes", "no", "on", "off", "none", "y", "n"):
        return text
    return json.dumps(text, ensure_ascii=False)


def json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
