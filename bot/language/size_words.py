"""What the model rules (knowledge/rules/<lang>/size.yaml, family_size.yaml, family_name.yaml) refer to
by name: the converters of a size ("70b", "700亿", "1.5T parameters") and of an MoE's active parameters
("32B active", "A22B"), the named predicate that a size is no count of tokens ("10B 说的是 token 数",
"1B * 8 epochs = 8B"), the catalog lookup of a family and a size ("qwen 14b", "Yi-34", "千问140亿": the
catalog's model), a family name the catalog lacks and the size after it ("pythia 410m"), and the pieces
{FAMILY} and {FAMILY_START}, the lexicon's model family words ("72Bqwen": a family glued after a size).
The reading engine (engine.py) takes them into its CONVERTERS, CONDITIONS and pieces."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from gpuplan.bot.language.catalog_names import family_model, model_name_pattern, named_here, size_in_name
from gpuplan.bot.language.compiled import built
from gpuplan.bot.language.patterns import literal_first, word_tree
from gpuplan.bot.language.values import model_size_b
from gpuplan.knowledge import catalog

# a size that counts tokens: "10B 说的是 token 数", "1B tokens", "1B * 8 epochs = 8B" (data times
# passes, worked out; "7b x 3 epochs" alone stays a model trained three times over its data)
_TOKENS_AFTER = re.compile(
    r"\s*(?:(?:说的是|指的是|是指|是|指|of|的)?\s*tokens?(?![a-z])|[*x×]\s*\d+\s*(?:epochs?|epoches|轮|个\s*epoch)\s*[=≈])"
)

# a number written after a family without its unit is a version below this ("llama 3", "qwen 2.5"), a
# size in billions from it up ("mistral 7", "Yi-34")
LEAST_BARE_SIZE = 6
# a number without its unit from this up is millions when no model of that many billions fits ("mpt125")
LEAST_BARE_MILLIONS = 100
# the catalog model's size may differ from the one written by this much before the answer says so
SAID_BACK_OFF_BY = 0.05

# the divisor from a size's unit to billions: "410m" is 0.41, "70亿" 7
_PER_BILLION = {"b": 1.0, "m": 1000.0, "亿": 10.0}


def _size_b(match: re.Match, rule: Any) -> tuple[float, None]:
    """A size in billions from its `number` and `unit` groups: "70" "b" is 70, "700" "亿" 70, "1.5" "t" 1,500."""
    return model_size_b(match["number"] + match["unit"]), None


def _billions(match: re.Match, rule: Any) -> tuple[float, None]:
    """A number of billions written without its unit in the `value` group ("A22B": 22)."""
    return float(match["value"]), None


@functools.cache
def _family_ids() -> dict[str, tuple[str, ...]]:
    """Each family word (lower case) -> the catalog id prefixes it names (knowledge/lexicon.yaml)."""
    return {k.lower(): tuple(v.split("|")) for k, v in catalog().lexicon.model_families.items()}


# the parameters a MoE activates, glued after its size in its name ("qwen3-30b-a3b")
_ACTIVE_AFTER = re.compile(r"[\-_]?a(\d+(?:\.\d+)?)b(?![a-z0-9])")


def _family_spec(match: re.Match, size: float) -> str | None:
    """The family's catalog model of about `size`; with the parameters it activates written after
    the size ("Qwen3-16B-A3B"), only a Mixture-of-Experts one (Qwen3 14B is dense: none)."""
    spec = family_model(_family_ids().get(match["family"], ()), size, match["version"] or "", catalog())
    if spec and _ACTIVE_AFTER.match(match.string, match.end()) and catalog().models[spec].experts <= 1:
        return None
    return spec


def _said_back(match: re.Match, spec: str | None, size: float) -> tuple[str | None, dict[str, Any] | None]:
    """The model, with the note's parameters when its size is not the one written ("qwen 13b": Qwen3 14B)."""
    if spec and abs(catalog().models[spec].params_b - size) > SAID_BACK_OFF_BY * size:
        return spec, {"value": match.group(0).strip(), "model": spec}
    return spec, None


def _family_model(match: re.Match, rule: Any) -> tuple[str | None, dict[str, Any] | None]:
    """The catalog model of a `family`, its `version` and a `number` with its `unit` ("qwen 14b",
    "千问140亿") or without ("Yi-34": billions from LEAST_BARE_SIZE up, a version below; "mpt125":
    millions from LEAST_BARE_MILLIONS up when no billions fit); None, words that read nothing, when
    the catalog has none of about that size."""
    number, unit = float(match["number"]), match["unit"]
    if unit is None and number < LEAST_BARE_SIZE:
        return None, None  # "llama 3": a version
    size = number / _PER_BILLION[unit or "b"]
    spec = _family_spec(match, size)
    if not spec and unit is None and number >= LEAST_BARE_MILLIONS:  # "mpt125", "pythia-410"
        size = number / 1000
        spec = _family_spec(match, size)
    return _said_back(match, spec, size)


def _catalog_model(match: re.Match, rule: Any) -> tuple[str | None, None]:
    """The catalog model a `name` written is ("Llama-3.1-70B-Instruct"); None, words that read nothing,
    when its numbers are not the model's ("internvl 38b") or a size right after it is another model's
    ("BLOOM 1.1B", "starcoder:1b"; catalog_names.named_here)."""
    return named_here(match, catalog()), None


def _family_and_size(match: re.Match, rule: Any) -> tuple[tuple[str, float | None], None]:
    """(a family's `name` as written, the `size` written after it: "pythia 410m" 0.41); the size None
    when none is written or the name carries its own ("pythia-70m 410m": the name's)."""
    written, after = match["name"], match.groupdict().get("size")
    if not after or size_in_name(written.strip("-_. ")) is not None:
        return (written, None), None
    return (written, size_in_name(after)), None


def _long_name(text: str, match: re.Match) -> bool:
    """A family's name of three characters or more: a shorter one ("yi", "千问" alone) names no model."""
    return len(match["name"].strip("-_. ")) >= 3


def _not_tokens(text: str, match: re.Match) -> bool:
    """A size unless words after it make it a count of tokens ("1B tokens", "10B 说的是 token 数"): those
    are the tokens step's to read, else nothing."""
    return not _TOKENS_AFTER.match(text, match.end())


def pieces() -> dict[str, str]:
    """FAMILY: the lexicon's model family words (knowledge/lexicon.yaml `model_families`) as one
    alternation, the longest first, as the vocabulary writes them; FAMILY_START: one of them starting a
    word ("qwen 14b", not "xqwen"), each word's guard written after it (patterns.literal_first: the same
    matches, scanned for by the words' first characters instead of tried at every position); both with
    the first letters the words share written once (patterns.word_tree: "qwen|qwq" is "q(?:wen|wq)",
    one test where a "q" stands instead of one a word); MODEL_NAME:
    one of the catalog's model names starting a word, as one trie (catalog_names.model_name_pattern)."""
    words = tuple(re.escape(f) for f in sorted(catalog().lexicon.model_families, key=len, reverse=True))
    return {
        "FAMILY": built(word_tree, words),  # the words' shared first letters written once (patterns.py)
        "FAMILY_START": built(word_tree, tuple(literal_first(rf"(?<![a-z0-9]){word}") for word in words)),
        "MODEL_NAME": model_name_pattern(catalog()),
    }


CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, Any]]] = {
    "size_b": _size_b,
    "billions": _billions,
    "family_model": _family_model,
    "catalog_model": _catalog_model,
    "family_and_size": _family_and_size,
}
CONDITIONS: dict[str, Callable[[str, re.Match], bool]] = {
    "not_tokens": _not_tokens,
    "long_name": _long_name,
}
