"""What the length rules (knowledge/rules/<lang>/sequence.yaml, served_split.yaml, ...) refer to by
name: the converters that read a length in tokens ("4k" is 4,096, "1m" 1,048,576) and a served
prompt and output ("ISL 1k OSL 8k": a prompt of 1,024 in a sequence of 9,216), and the named
condition `serving` (the question serves a model). The reading engine (engine.py) takes them into its
CONVERTERS and CONDITIONS."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from gpuplan.bot.language.values import length
from gpuplan.bot.language.vocabulary import vocabulary

# the longest sequence read from a prompt and an output (not sourced: beyond any published context,
# a bound against pasted counters)
LONGEST_SERVED_SEQUENCE = 100_000_000


def _length(match: re.Match, rule: Any) -> tuple[int, None]:
    """A length in tokens from the `value` group: "4096", "4k" (4,096), "1.5k", "1m" (1,048,576)."""
    return length(match["value"]), None


def _served_split(match: re.Match, rule: Any) -> tuple[tuple[int, int], None]:
    """(the prompt, the sequence) from the `prompt` and `output` groups: "input 2048 output 128" is a
    prompt of 2,048 in a sequence of 2,176; a prompt under 16 tokens or no output is none."""
    prompt, output = length(match["prompt"]), length(match["output"])
    if prompt < 16 or output < 1 or prompt + output > LONGEST_SERVED_SEQUENCE:
        raise ValueError(f"no prompt and output: {match.group(0)!r}")
    return (prompt, prompt + output), None


def _serving(text: str, match: re.Match) -> bool:
    """Whether the question serves a model (a serving word in the text as the earlier steps left it):
    a bare "1k/1k" or "5000-token prompts" is a served split only then."""
    return bool(_serving_words().search(match.string))


@functools.cache
def _serving_words() -> re.Pattern:
    """The serving method's words, looked up once (the vocabulary keeps the methods as a list)."""
    return dict(vocabulary().methods)["infer"]


CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, None]]] = {
    "length": _length,
    "served_split": _served_split,
}
CONDITIONS: dict[str, Callable[[str, re.Match], bool]] = {"serving": _serving}
