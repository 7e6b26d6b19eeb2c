"""The reading rules' files: knowledge/rules/<lang>/<dimension>.yaml read once, their named pieces
(knowledge/rules/pieces.yaml, a file's own `pieces`, the lexicon's word lists) and their patterns
with the pieces expanded. Data only: the reading engine (engine.py) builds its rules from these, and
the vocabulary (vocabulary.py) takes the method words from them without the engine's converters."""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Any

from gpuplan.bot.language import size_words, values
from gpuplan.bot.language.compiled import built, compiled
from gpuplan.bot.language.patterns import fast_alternation, literal_first
from gpuplan.knowledge import catalog, read_yaml

LANGS = ("en", "zh")
_PIECE = re.compile(r"\{(?:(?P<group>[a-z_]+):)?(?P<piece>[A-Z_][A-Z0-9_]*)\}")


def _text(*parts: str) -> str:
    return resources.files("gpuplan.knowledge").joinpath("rules", *parts).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def pieces() -> dict[str, str]:
    """knowledge/rules/pieces.yaml, NUM (a count in digits, Chinese numerals or English words:
    values.NUM, built from the number words) and the lexicon's word lists rules refer to."""
    shared = read_yaml(_text("pieces.yaml"))["pieces"]
    named = {**_lexicon_pieces(), **size_words.pieces()}  # FAMILY: the model family words (size_words.py)
    return {**shared, "NUM": values.NUM[1:-1], **named}  # NUM's group is the rules' to name


def _lexicon_pieces() -> dict[str, str]:
    """Word lists of knowledge/lexicon.yaml that rules refer to, per language: ONE_MACHINE_EN ("a single
    node"), ONE_MACHINE_ZH ("单机"), what a count of samples counts, SAMPLE_NOUNS_EN ("samples"),
    SAMPLE_NOUNS_ZH ("条数据"), the labels of a served prompt and output, SERVED_PROMPT_EN ("isl"),
    SERVED_OUTPUT_ZH ("输出"), ...; and the multipliers of either, MULTIPLIER ("2t", "1.4万亿")."""
    words = catalog().lexicon.one_machine
    return {
        "ONE_MACHINE_EN": fast_alternation(words.en),
        "ONE_MACHINE_ZH": fast_alternation(words.zh),
        "MULTIPLIER": values.multiplier_pattern()[1:-2],  # "k", "b", "万亿" (the longest first), ungrouped
        "SAMPLE_NOUNS_EN": fast_alternation(catalog().lexicon.sample_nouns.en),  # "samples", "conversations"
        "SAMPLE_NOUNS_ZH": fast_alternation(catalog().lexicon.sample_nouns.zh),  # "条数据", "组对话"
        **{
            f"SERVED_{part.upper()}_{lang.upper()}": fast_alternation(getattr(labels, lang))  # "isl", "输出"
            for part, labels in catalog().lexicon.served_split.items()
            for lang in LANGS
        },
    }


@functools.cache
def piece_pattern(name: str) -> re.Pattern:
    return compiled(expand("{" + name + "}"))


def expand(pattern: str, table: dict[str, str] | None = None) -> str:
    """`{INT}` -> the piece as a non-capturing group; `{value:INT}` -> captured as `value`."""
    table = pieces() if table is None else table

    def piece(match: re.Match) -> str:
        body = expand(table[match["piece"]], table)
        return f"(?P<{match['group']}>{body})" if match["group"] else f"(?:{body})"

    return _PIECE.sub(piece, pattern)


def rule_pattern(written: str | list[str], table: dict[str, str]) -> re.Pattern:
    """A rule's pattern, its pieces expanded; a list is the ways of writing one thing, tried in order
    ("qlora", "4-bit lora", ...). One that captures nothing is rewritten to start with literals
    (patterns.fast_alternation: the same matches, found faster, as the lexicon's word lists are); one
    that captures, each way with its leading guards after its first words (patterns.literal_first)."""
    ways = tuple(expand(way, table) for way in ([written] if isinstance(written, str) else written))
    joined = compiled("|".join(ways))
    if joined.groups:
        return compiled("|".join(built(literal_first, way) for way in ways))
    return compiled(built(fast_alternation, ways))


@functools.cache
def files(dimension: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    """(language, its YAML) of every knowledge/rules/<lang>/<dimension>.yaml, read once."""
    found = []
    for lang in LANGS:
        try:
            found.append((lang, read_yaml(_text(lang, f"{dimension}.yaml"))))
        except FileNotFoundError:
            continue
    if not found:
        raise ValueError(f"no rules for the dimension {dimension!r}")
    return tuple(found)


@functools.cache
def reads_one(dimension: str) -> bool:
    """Whether a dimension reads one value (its files say `reads: one`): a table of words, the most
    specific first ("paged adamw 8bit" before "adamw"), of which the question names one."""
    return any(table.get("reads") == "one" for _, table in files(dimension))


def dimensions() -> list[str]:
    folder = resources.files("gpuplan.knowledge").joinpath("rules")
    names = {path.name[: -len(".yaml")] for lang in LANGS for path in folder.joinpath(lang).iterdir()}
    return sorted(name for name in names if not name.startswith("_"))
