"""The vocabulary's regular expressions, compiled once and kept on disk for the next process.

Python's `re` compiles in Python: it parses a pattern and writes the program its C matcher runs,
a list of integers. The parser's alternations (every method word, rule trigger and question word,
every model and GPU name) took about 0.25 s of each process's first answer to compile, the same
programs every time. `compiled(pattern)` keeps each program in one file per text of the knowledge
and of this parser (GPUPLAN_KNOWLEDGE_CACHE) and rebuilds the pattern with the call `re.compile`
itself ends with (`_sre.compile`), in microseconds. A process first checks that its `re` builds
patterns that way (a sample rebuilt must equal re.compile's: flags, groups and program); anything
unexpected (another Python, a damaged file) falls back to `re.compile`.
"""

from __future__ import annotations

import _sre
import atexit
import contextlib
import functools
import marshal
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from re import _compiler, _constants, _parser  # what re.compile runs; its programs are checked against it
from typing import Any

from gpuplan.knowledge import cache_path, write_cache

# (pattern, flags) -> (flags, program, groups, {group name: index}, (name or None by index)): the
# arguments of _sre.compile after the pattern
Program = tuple[int, list[int], int, dict[str, int], tuple[Any, ...]]
Call = tuple[str, tuple[Any, ...]]  # a pattern builder's module.name and its arguments
_compiled_here: dict[tuple[str, int], Program] = {}  # programs this process compiled, saved at its exit
_built_here: dict[Call, str] = {}  # pattern texts this process built, saved at its exit


def compiled(pattern: str, flags: int = 0) -> re.Pattern:
    """`re.compile(pattern, flags)`, rebuilt from the disk cache when it holds the pattern."""
    key = (pattern, int(flags))
    program = _stored()[0].get(key)
    if program is not None:
        with contextlib.suppress(TypeError, ValueError, RuntimeError):  # another Python's _sre: compile
            return _sre.compile(pattern, *program)
    if _cache_file() is None or not _checked():
        return re.compile(pattern, flags)
    program = _program(pattern, int(flags))
    _keep(_compiled_here, key, program)
    return _sre.compile(pattern, *program)


def built(builder: Callable[..., str], *args: Any) -> str:
    """`builder(*args)`: the text of a pattern made by a pure function of its arguments (strings,
    booleans, tuples of them), from the disk cache when it holds that call. Building the
    vocabulary's alternations and name tries took about 0.04 s of every process; the file is named
    by the parser's sources, so a changed builder never meets texts an older one built."""
    key = (f"{builder.__module__}.{builder.__qualname__}", args)
    text = _stored()[1].get(key)
    if isinstance(text, str):
        return text
    text = builder(*args)
    if _cache_file() is not None:
        _keep(_built_here, key, text)
    return text


def _keep(table: dict, key: Any, value: Any) -> None:
    """Note what this process made, for the file written at its exit."""
    if not _compiled_here and not _built_here:
        atexit.register(_save)
    table[key] = value


def _program(pattern: str, flags: int) -> Program:
    """What re.compile passes to _sre.compile for `pattern` (re/_compiler.py, `compile`)."""
    parsed = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]
    names = dict(parsed.state.groupdict)
    by_index: list[Any] = [None] * parsed.state.groups
    for name, index in names.items():
        by_index[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, names, tuple(by_index)


@functools.cache
def _checked() -> bool:
    """Whether this Python's `re` builds patterns as _program does: the pattern it rebuilds equals
    re.compile's (flags, groups and program compared), for a pattern with named and unnamed groups,
    a class, a lookbehind and an alternation."""
    sample = r"(?P<count>\d+)\s*(?:x|[×*])?\s*(?<![a-z])(h100|a100)(?:-(\d+)gb?)?$"
    try:
        return _sre.compile(sample, *_program(sample, 0)) == re.compile(sample)
    except Exception:  # re's internals changed: compile as re.compile does, uncached
        return False


@functools.cache
def _cache_file() -> Path | None:
    """One file per text of the knowledge and of the parser that builds the patterns from it, and per
    version of `re`'s programs: what it holds is then all this code can compile, and no more."""
    here = Path(__file__).resolve().parent
    try:
        sources = [path.read_bytes() for path in sorted(here.glob("*.py"))]
        knowledge = resources.files("gpuplan.knowledge")
        data = [p.read_bytes() for p in sorted(knowledge.iterdir(), key=lambda p: p.name) if p.name.endswith(".yaml")]
    except OSError:
        return None
    return cache_path("patterns", [str(_constants.MAGIC).encode(), *sources, *data], ".marshal")


@functools.cache
def _stored() -> tuple[dict[tuple[str, int], Program], dict[Call, str]]:
    """(programs, built texts) of the cache file; empty when there is none or it is damaged."""
    path = _cache_file()
    if path is None or not path.is_file():
        return {}, {}
    try:
        stored = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):  # damaged: compiled again, written again
        return {}, {}
    if not isinstance(stored, dict) or not all(isinstance(stored.get(k), dict) for k in ("programs", "texts")):
        return {}, {}
    return stored["programs"], stored["texts"]


def _save() -> None:
    """At exit: what the file held and what this process made, as one file."""
    path = _cache_file()
    programs, texts = _stored()
    if path is not None and (_compiled_here or _built_here):
        stored = {"programs": {**programs, **_compiled_here}, "texts": {**texts, **_built_here}}
        write_cache(path, marshal.dumps(stored))
