"""The question vocabulary, compiled once per process: method words, word tables, the GPU and
model names of the catalog (one trie-shaped pattern each), model families and cloud instances.

The words are data (knowledge/lexicon.yaml, the catalog); this module only compiles them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from gpuplan.knowledge import Catalog, catalog
from gpuplan.knowledge.schema import Lexicon


@dataclass(frozen=True)
class Vocabulary:
    methods: list[tuple[str, re.Pattern]]
    any_method: re.Pattern  # every method's words, a group per method (m0, m1, ...), weak serving last
    method_order: list[str]
    finetune: re.Pattern
    training: re.Pattern
    explicit_full: re.Pattern
    tables: dict[str, list[tuple[str, re.Pattern]]]
    users_context: re.Pattern
    pure_bf16: re.Pattern
    help: re.Pattern
    compare: re.Pattern
    unsupported: re.Pattern
    family: re.Pattern
    stopwords: frozenset[str]
    model_alias: re.Pattern
    family_size: re.Pattern  # "qwen 14b", "Yi-34", "BLOOM 1.1B", "mistral 7"
    family_ids: dict[str, tuple[str, ...]]  # family word -> catalog id prefixes
    instances: list[tuple[Any, re.Pattern]]  # cloud instance types
    any_instance: re.Pattern
    gpu_alias: re.Pattern
    gpu_by_alias: dict[str, str]
    model_by_alias: dict[str, str]
    frameworks: re.Pattern
    parallel: dict[str, str]  # tp/pp -> the words before the size, as one alternation
    asks_count: re.Pattern
    one_machine: re.Pattern
    concurrency: list[re.Pattern]
    triggers: dict[str, re.Pattern]
    topic_vetoes: dict[str, re.Pattern]  # a troubleshooting topic -> words that mean something else


# a guard, then a word whose last letter no quantifier applies to ("runs?" keeps "s?" after it)
_GUARDED_WORD = re.compile(r"^(?:\(\?<!(\[[^\]]+\])\)|\\b)([a-z0-9]+)(?![?*+{])")
# a guard, then digits: `(?<![\d.])\d{1,2}`, `(?<![\d.])\d+`
_GUARDED_DIGITS = re.compile(r"^\(\?<!(\[[^\]]+\])\)\\d(?:(\+)|\{(\d+),(\d+)\})?(?![?*+{])")


def literal_first(pattern: str) -> str:
    """`(?<![a-z])vllm(?![a-z])` -> `vllm(?<![a-z]vllm)(?![a-z])`, `\\bpod\\b` -> `pod(?<!\\wpod)\\b`:
    the same matches, but a pattern that starts with a literal lets `re` scan for its first
    letters (an alternation of such patterns, for any of their first letters), several times
    faster than testing the guard at every position."""
    match = _GUARDED_WORD.match(pattern)
    if match:
        guard, word = match.groups()
        return f"{word}(?<!{guard or chr(92) + 'w'}{word})" + pattern[match.end() :]
    match = _GUARDED_DIGITS.match(pattern)
    if match:  # the first digit, then the guard before it, then the rest of the run
        guard, plus, low, high = match.groups()
        rest = r"\d*" if plus else (rf"\d{{{max(int(low) - 1, 0)},{int(high) - 1}}}" if high else "")
        return rf"\d(?<!{guard}\d){rest}" + pattern[match.end() :]
    return pattern


def _any(patterns: list[str]) -> re.Pattern:
    """One alternation, matched against lower-cased text: the vocabulary is lower case (checked), so
    no IGNORECASE, which makes Python's `re` about twice as slow on alternations."""
    for pattern in patterns:
        if re.search(r"[A-Z]", re.sub(r"\\.", "", pattern)):
            raise ValueError(f"vocabulary pattern {pattern!r} must be lower case (text is lower-cased first)")
    return re.compile("|".join(f"(?:{literal_first(p)})" for p in patterns))


_SEP, _END = object(), object()


def _method_items(lex: Any) -> list[tuple[str, list[str]]]:
    """The methods in lexicon order, the weak words (`<method>_weak`) last: they lose ties."""
    strong = [(m, p) for m, p in lex.methods.items() if not m.endswith("_weak")]
    return strong + [(m, p) for m, p in lex.methods.items() if m.endswith("_weak")]


def _method_lists(lex: Any) -> list[list[str]]:
    return [patterns for _, patterns in _method_items(lex)]


def _trie_pattern(names: list[str]) -> str:
    """One regex for many names, shared prefixes merged (a trie): Python's `re` tries the branches
    of an alternation one by one, so 800 aliases written side by side cost 800 attempts at every
    position, a trie a handful. Longer names win, as with the longest-first alternation it replaces."""
    trie: dict = {}
    for name in names:
        parts = [p for p in re.split(r"[\s\-_]+", name.lower()) if p]
        node = trie
        for i, part in enumerate(parts):
            for atom in ([_SEP] if i else []) + list(part):
                node = node.setdefault(atom, {})
        node[_END] = True
    return _emit(trie)


def _emit(node: dict) -> str:
    branches = [
        (r"[\s\-_]*" if atom is _SEP else re.escape(atom)) + _emit(child)
        for atom, child in node.items()
        if atom is not _END
    ]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if _END in node else body


@functools.cache
def vocabulary() -> Vocabulary:
    cat = catalog()
    lex = cat.lexicon
    gpu_by_alias, model_by_alias, gpu_alias, model_alias = _alias_patterns(cat)
    family, family_size = _family_patterns(lex)
    return Vocabulary(
        methods=[(m, _any(p)) for m, p in lex.methods.items() if not m.endswith("_weak")],
        any_method=re.compile(
            "|".join(f"(?P<m{i}>{_any(patterns).pattern})" for i, patterns in enumerate(_method_lists(lex)))
        ),
        method_order=[name for name, _ in _method_items(lex)],
        finetune=_any(lex.finetune),
        training=_any(lex.training),
        explicit_full=_any(lex.explicit_full),
        tables=_tables(cat),
        users_context=_any(lex.users_context),
        pure_bf16=_any(lex.pure_bf16),
        help=_any(lex.help),
        compare=_any(lex.compare),
        unsupported=_any(lex.unsupported_hardware),
        family=family,
        family_size=family_size,
        family_ids={k.lower(): tuple(v.split("|")) for k, v in lex.model_families.items()},
        instances=[(i, re.compile(rf"(?<![a-z0-9])(?:ml\.)?{i.pattern}(?![a-z0-9])")) for i in cat.instances],
        any_instance=re.compile("|".join(f"(?:{i.pattern})" for i in cat.instances)),
        stopwords=frozenset(lex.stopwords_en),
        model_alias=model_alias,
        gpu_alias=gpu_alias,
        gpu_by_alias=gpu_by_alias,
        model_by_alias=model_by_alias,
        frameworks=_any(lex.frameworks),
        parallel={name: _any(words.en + words.zh).pattern for name, words in lex.parallel.items()},
        asks_count=_any(lex.asks_count.en + lex.asks_count.zh),
        one_machine=_any(lex.one_machine.en + lex.one_machine.zh),
        concurrency=[re.compile(p) for p in lex.concurrency.en + lex.concurrency.zh],
        triggers={name: _any(words.en + words.zh) for name, words in lex.triggers.items()},
        topic_vetoes={rule.topic: _any(rule.unless.en + rule.unless.zh) for rule in cat.rules if rule.unless},
    )


_TABLES = (
    "objectives",
    "regions",
    "fabrics",
    "user_areas",
    "data_kinds",
    "precisions",
    "checkpointing",
    "offload",
    "optimizers",
)


def _tables(cat: Catalog) -> dict[str, list[tuple[str, re.Pattern]]]:
    """The lexicon's word tables (value -> its words), and each troubleshooting rule's triggers."""
    tables = {name: [(key, _any(patterns)) for key, patterns in getattr(cat.lexicon, name).items()] for name in _TABLES}
    tables["symptoms"] = [(rule.id, _any(rule.triggers.en + rule.triggers.zh)) for rule in cat.rules]
    return tables


def _alias_patterns(cat: Catalog) -> tuple[dict[str, str], dict[str, str], re.Pattern, re.Pattern]:
    """(GPU by alias, model by alias, a pattern of every GPU name, one of every model name)."""
    gpu_by_alias = {name.lower(): gpu.id for gpu in cat.gpus.values() for name in [gpu.id, *gpu.aliases]}
    model_by_alias = {
        name.lower(): spec.id for spec in cat.models.values() for name in [spec.id, spec.name, *spec.aliases]
    }
    # longest names first so "a100 pcie 80g" wins over "a100"
    gpu_names = sorted(gpu_by_alias, key=len, reverse=True)
    model_names = sorted(model_by_alias, key=len, reverse=True)
    gpu_alias = re.compile(
        r"(?:(?<=\d)|(?<=\d[x×*])|(?<=\dg)|(?<=\dgb)|(?<![a-z0-9]))(?:nvidia\s*|英伟达\s*|geforce\s*|amd\s*|tesla\s*)?("
        + _trie_pattern(gpu_names)
        + r")(?:\s*s)?(?:(?![a-z0-9])|(?=gpus?(?![a-z])))",  # "4090gpu" glued
    )
    model_alias = re.compile(
        r"(?<![a-z0-9])(?:meta-llama/|meta[\s\-_]*|qwen/|mistralai/|deepseek-ai/|google/|tiiuae/|01-ai/|thudm/)?("
        + _trie_pattern(model_names)
        # not inside a longer name or version ("qwen2" of "qwen2.5"), but a sentence's full stop ends it
        + r")(?:[\s\-_]*(?:instruct|chat|hf|base|it|awq|gptq))*(?![a-z0-9]|\.[a-z0-9])",
    )
    return gpu_by_alias, model_by_alias, gpu_alias, model_alias


def _family_patterns(lex: Lexicon) -> tuple[re.Pattern, re.Pattern]:
    """(a family's name, a family's name with a size: "qwen 14b", "llama2-chat 13b")."""
    families = "|".join(re.escape(f) for f in sorted(lex.model_families, key=len, reverse=True))
    family = re.compile(rf"(?<![a-z0-9])(?:{families})[\w.\-]*")
    family_size = re.compile(
        rf"(?<![a-z0-9])({families})((?:[\s\-_]?v?\d+(?:\.\d+)?(?=[\s\-_]))?(?:[\s\-_]*(?:chat|base|instruct|it))?)"
        r"[\s\-_]*(\d+(?:\.\d+)?)\s*(b|m|亿)?(?![a-z0-9]|\.\d)",
    )
    return family, family_size
