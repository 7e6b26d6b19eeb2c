"""What the length rules (knowledge/rules/<lang>/sequence.yaml, ...) refer to by name: the converter
that reads a length in tokens ("4k" is 4,096, "1m" 1,048,576). The reading engine (engine.py) takes
them into its CONVERTERS."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpuplan.bot.language.values import length


def _length(match: re.Match, rule: Any) -> tuple[int, None]:
    """A length in tokens from the `value` group: "4096", "4k" (4,096), "1.5k", "1m" (1,048,576)."""
    return length(match["value"]), None


CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, None]]] = {"length": _length}
