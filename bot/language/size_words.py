"""What the model-size rules (knowledge/rules/<lang>/size.yaml) refer to by name: the converters of a
size ("70b", "700亿", "1.5T parameters") and of an MoE's active parameters ("32B active", "A22B"), the
named predicate that a size is no count of tokens ("10B 说的是 token 数", "1B * 8 epochs = 8B"), and the
piece {FAMILY}, the lexicon's model family words ("72Bqwen": a family glued after a size). The reading
engine (engine.py) takes them into its CONVERTERS, CONDITIONS and pieces."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpuplan.bot.language.values import model_size_b
from gpuplan.knowledge import catalog

# a size that counts tokens: "10B 说的是 token 数", "1B tokens", "1B * 8 epochs = 8B" (data times
# passes, worked out; "7b x 3 epochs" alone stays a model trained three times over its data)
_TOKENS_AFTER = re.compile(
    r"\s*(?:(?:说的是|指的是|是指|是|指|of|的)?\s*tokens?(?![a-z])|[*x×]\s*\d+\s*(?:epochs?|epoches|轮|个\s*epoch)\s*[=≈])"
)


def _size_b(match: re.Match, rule: Any) -> tuple[float, None]:
    """A size in billions from its `number` and `unit` groups: "70" "b" is 70, "700" "亿" 70, "1.5" "t" 1,500."""
    return model_size_b(match["number"] + match["unit"]), None


def _billions(match: re.Match, rule: Any) -> tuple[float, None]:
    """A number of billions written without its unit in the `value` group ("A22B": 22)."""
    return float(match["value"]), None


def _not_tokens(text: str, match: re.Match) -> bool:
    """A size unless words after it make it a count of tokens ("1B tokens", "10B 说的是 token 数"): those
    are the tokens step's to read, else nothing."""
    return not _TOKENS_AFTER.match(text, match.end())


def pieces() -> dict[str, str]:
    """FAMILY: the lexicon's model family words (knowledge/lexicon.yaml `model_families`) as one
    alternation, the longest first, as the vocabulary writes them."""
    families = catalog().lexicon.model_families
    return {"FAMILY": "|".join(re.escape(f) for f in sorted(families, key=len, reverse=True))}


CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, None]]] = {"size_b": _size_b, "billions": _billions}
CONDITIONS: dict[str, Callable[[str, re.Match], bool]] = {"not_tokens": _not_tokens}
