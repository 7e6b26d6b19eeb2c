"""The question words of knowledge/questions.yaml, by section ("why", "compare", "which", "how
long", ...), and the troubleshooting rules' trigger phrases: whether and how often a text says them.
Read by the classifier's features (classifier.py), the verdict (intent.py) and the reader."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

from gpuplan.bot.language.compiled import built, compiled
from gpuplan.bot.language.patterns import fast_alternation, literal_first
from gpuplan.bot.language.vocabulary import vocabulary
from gpuplan.knowledge import read_yaml

SECTIONS = ("resources", "why", "compare", "out_of_scope", "largest", "price", "first_person", "reference")
# read by the rules only, not classifier features
RULE_SECTIONS = (
    "choice",
    "worth",
    "yes_no",
    "ask_concurrency",
    "ask_storage",
    "ask_host_ram",
    "ask_longest",
    "ask_batch",
    "ask_throughput",
    "ask_gpu_hours",
    "earlier",
    "lacking",
    "also_seen",
    "prospective",
    "memory_ask",
    "ask_fit",
    "ask_time",
    "ask_monthly",
    "ask_cost",
    "ask_count",
)


# --- the words ------------------------------------------------------------------------------------


@functools.cache
def question_words() -> dict[str, list[re.Pattern]]:
    """knowledge/questions.yaml, compiled: section -> its patterns (English and Chinese)."""
    data = _questions()
    return {
        name: [compiled(literal_first(p)) for p in data[name]["en"] + data[name]["zh"]]
        for name in SECTIONS + RULE_SECTIONS
    }


@functools.cache
def _questions() -> dict[str, Any]:
    return read_yaml(resources.files("gpuplan.knowledge").joinpath("questions.yaml").read_text(encoding="utf-8"))


def _alternations(named: dict[str, Iterable[re.Pattern]]) -> dict[str, re.Pattern]:
    """One alternation per entry: one search says whether an entry occurs at all (most questions
    touch few), and only those are then counted pattern by pattern. Entries repeat each other's
    words ("or" is a comparison and a choice word, "fsdp" a ZeRO stage and a framework), so each
    is searched on its own; one shared alternation would give a match to one entry only."""
    return {name: compiled(built(fast_alternation, tuple(p.pattern for p in ps))) for name, ps in named.items()}


@functools.cache
def _section_patterns() -> dict[str, re.Pattern]:
    return _alternations(question_words())


def section_pattern(name: str) -> re.Pattern:
    """One alternation of a section's patterns: whether any of them occurs."""
    return _section_patterns()[name]


@functools.lru_cache(maxsize=256)
def sections_in(text: str) -> frozenset[str]:
    """The sections of knowledge/questions.yaml that occur in (lower-cased) text."""
    return frozenset(name for name, pattern in _section_patterns().items() if pattern.search(text))


@functools.cache
def _kinds_present() -> dict[str, re.Pattern]:
    return _alternations({kind: options.values() for kind, options in contrasts().items()})


@functools.cache
def contrasts() -> dict[str, dict[str, re.Pattern]]:
    """knowledge/questions.yaml `contrasts`, compiled: kind -> option -> pattern."""
    data = _questions()["contrasts"]
    return {
        kind: {option: compiled(literal_first(p)) for option, p in options.items()} for kind, options in data.items()
    }


def contrasted(text: str, gpus_named: int) -> dict[str, int]:
    """How many different options of each kind the text names (two or more: a comparison's sign);
    the GPU types are the parser's count."""
    text = text.lower()
    present = {kind for kind, pattern in _kinds_present().items() if pattern.search(text)}
    out = {
        kind: sum(1 for p in options.values() if p.search(text)) if kind in present else 0
        for kind, options in contrasts().items()
    }
    out["gpu"] = gpus_named
    return out


@functools.lru_cache(maxsize=256)
def sections_of(text: str) -> frozenset[str]:
    """sections_in of a text as given, in any case (`hits`, question_kind): a question's prose is asked
    about some 24 times, each a lower-cased copy to hash again when sections_in's memo is asked with it."""
    return sections_in(text.lower())


def hits(section: str, text: str, most: int | None = None) -> int:
    """How many of a section's patterns occur in the text, counting up to `most` (the patterns are
    lower case; so is the text they are matched on, instead of the slower IGNORECASE)."""
    if section not in sections_of(text):
        return 0
    if most == 1:
        return 1  # the section's one alternation has matched
    lowered = text.lower()
    found = (1 for pattern in question_words()[section] if pattern.search(lowered))
    return sum(itertools.islice(found, most))


_URL = re.compile(r"(?:https?://|www\.)\S+")


@functools.lru_cache(maxsize=256)
def triggered(text: str) -> tuple[str, ...]:
    """Rule ids whose trigger phrases occur in the text, in the order they first occur (memoised:
    the features and the verdict both ask). A link's words are not the user's ("https" is no "tps")."""
    lowered = _URL.sub(" ", text.lower())
    found = []
    for rule_id, pattern in vocabulary().tables["symptoms"]:
        match = pattern.search(lowered)
        if match:
            found.append((match.start(), rule_id))
    return tuple(rule_id for _, rule_id in sorted(found))
