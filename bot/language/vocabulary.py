"""The question vocabulary, compiled once per process: method words, word tables, the GPU and
model names of the catalog (one trie-shaped pattern each), model families and cloud instances.

The words are data (knowledge/lexicon.yaml, the catalog); this module only compiles them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from gpuplan.bot.language import rule_files
from gpuplan.bot.language.catalog_names import model_aliases, trie_pattern
from gpuplan.bot.language.compiled import built, compiled
from gpuplan.bot.language.patterns import fast_alternation
from gpuplan.knowledge import Catalog, catalog


@dataclass(frozen=True)
class Vocabulary:
    methods: list[tuple[str, re.Pattern]]  # each method's words (its rules'), "qlora" before "lora"; no weak words
    any_method: re.Pattern  # every method's words in that order, the weak ones last
    finetune: re.Pattern
    training: re.Pattern
    trained_artifacts: re.Pattern
    explicit_full: re.Pattern
    tables: dict[str, list[tuple[str, re.Pattern]]]
    users_context: re.Pattern
    pure_bf16: re.Pattern
    help: re.Pattern
    compare: re.Pattern
    unsupported: re.Pattern
    gpu_like: re.Pattern  # GPU names the catalog lacks
    stopwords: frozenset[str]
    model_alias: re.Pattern
    instances: list[tuple[Any, re.Pattern]]  # cloud instance types
    any_instance: re.Pattern
    gpu_alias: re.Pattern
    gpu_by_alias: dict[str, str]
    model_by_alias: dict[str, str]
    frameworks: re.Pattern  # frameworks without memory habits of their own (serving engines, launchers)
    framework_ids: list[tuple[str, re.Pattern]]  # frameworks.yaml id -> its names
    served_split: dict[str, str]  # prompt/output -> the words of its length, as one alternation
    asks_count: re.Pattern
    asks_machines: re.Pattern  # "how many nodes", "需要几台": the number of machines is the question
    sample_nouns: str  # what a count of samples counts, as one alternation ("samples?|examples?|...")
    token_total: re.Pattern  # words that make a token count the whole data's ("in total", "总共")
    triggers: dict[str, re.Pattern]
    topic_vetoes: dict[str, re.Pattern]  # a troubleshooting topic -> words that mean something else
    serving_symptoms: frozenset[str]  # rule ids whose symptom a served model shows too


def _any(patterns: list[str]) -> re.Pattern:
    """One alternation, matched against lower-cased text: the vocabulary is lower case (checked), so
    no IGNORECASE, which makes Python's `re` about twice as slow on alternations."""
    for pattern in patterns:
        if re.search(r"[A-Z]", re.sub(r"\\.", "", pattern)):
            raise ValueError(f"vocabulary pattern {pattern!r} must be lower case (text is lower-cased first)")
    return compiled(built(fast_alternation, tuple(patterns)))


def _method_words() -> list[tuple[str, list[str]]]:
    """Each method's ways of writing it, as the method rules (knowledge/rules/<lang>/method.yaml) have
    them, by priority ("qlora" before "lora"), the weak words (`<method>_weak`) last."""
    entries = [
        (entry, {**rule_files.pieces(), **(table.get("pieces") or {})})
        for _, table in rule_files.files("method")
        for entry in table["rules"]
    ]
    words: dict[str, list[str]] = {}
    for entry, table in sorted(entries, key=lambda pair: -int(pair[0].get("priority", 0))):  # stable: English first
        name = f"{entry['value']}_weak" if entry["name"].endswith("_weak") else entry["value"]
        words.setdefault(name, []).append(rule_files.rule_pattern(entry["pattern"], table).pattern)
    return list(words.items())


@functools.cache
def vocabulary() -> Vocabulary:
    cat = catalog()
    lex = cat.lexicon
    gpu_by_alias, model_by_alias, gpu_alias, model_alias = _alias_patterns(cat)
    methods = _method_words()
    return Vocabulary(
        methods=[(name, _any(patterns)) for name, patterns in methods if not name.endswith("_weak")],
        any_method=_any([pattern for _, patterns in methods for pattern in patterns]),
        finetune=_any(lex.finetune),
        training=_any(lex.training),
        trained_artifacts=_any(lex.trained_artifacts),
        explicit_full=_any(lex.explicit_full),
        tables=_tables(cat),
        users_context=_any(lex.users_context),
        pure_bf16=_any(lex.pure_bf16),
        help=_any(lex.help),
        compare=_any(lex.compare),
        unsupported=_any(lex.unsupported_hardware),
        gpu_like=_any(lex.gpu_like_names),
        instances=[(i, compiled(rf"(?<![a-z0-9])(?:ml\.)?{i.pattern}(?![a-z0-9])")) for i in cat.instances],
        any_instance=compiled(built(fast_alternation, tuple(i.pattern for i in cat.instances))),
        stopwords=frozenset(lex.stopwords_en),
        model_alias=model_alias,
        gpu_alias=gpu_alias,
        gpu_by_alias=gpu_by_alias,
        model_by_alias=model_by_alias,
        frameworks=_any(lex.frameworks),
        framework_ids=[(f.id, _any(f.names.en + f.names.zh)) for f in cat.frameworks.values()],
        served_split={name: _any(words.en + words.zh).pattern for name, words in lex.served_split.items()},
        asks_count=_any(lex.asks_count.en + lex.asks_count.zh),
        asks_machines=_any(lex.asks_machines.en + lex.asks_machines.zh),
        sample_nouns=_any(lex.sample_nouns.en + lex.sample_nouns.zh).pattern,
        token_total=_any(lex.token_total.en + lex.token_total.zh),
        triggers={name: _any(words.en + words.zh) for name, words in lex.triggers.items()},
        topic_vetoes={rule.topic: _any(rule.unless.en + rule.unless.zh) for rule in cat.rules if rule.unless},
        serving_symptoms=frozenset(rule.id for rule in cat.rules if rule.serving_symptom),
    )


def _tables(cat: Catalog) -> dict[str, list[tuple[str, re.Pattern]]]:
    """The lexicon's word tables (value -> its words), and each troubleshooting rule's triggers."""
    tables: dict[str, list[tuple[str, re.Pattern]]] = {}
    tables["symptoms"] = [
        (rule.id, _any([_word_start(p) for p in rule.triggers.en + rule.triggers.zh])) for rule in cat.rules
    ]
    return tables


def _word_start(trigger: str) -> str:
    """A trigger that starts with a Latin letter starts a word: 'oom' is not in "bloom", 'roce' not
    in "process" (the end stays open: 'num_work' is meant to find num_workers)."""
    return "(?<![a-z])" + trigger if re.match(r"[a-z]", trigger) else trigger


# a GPU vendor's name written before the GPU's (not part of the catalog's names), or a server's
# ("DGX-A100", "nvidia dgx h100": a server of the type's usual size)
VENDOR_BEFORE = re.compile(r"(?<![a-z0-9])(?:(?:nvidia|英伟达|geforce|amd|tesla)\s*)*(?P<server>(?:dgx|hgx)[\s\-_]*)?$")
_GPU_NAME_START = r"(?<=\d)|(?<=\d[x×*])|(?<=\dg)|(?<=\dgb)|(?<![a-z0-9])"


def _alias_patterns(cat: Catalog) -> tuple[dict[str, str], dict[str, str], re.Pattern, re.Pattern]:
    """(GPU by alias, model by alias, a pattern of every GPU name, one of every model name: the rule
    `catalog_name`'s, knowledge/rules/en/model_name.yaml)."""
    gpu_by_alias = {name.lower(): gpu.id for gpu in cat.gpus.values() for name in [gpu.id, *gpu.aliases]}
    # longest names first so "a100 pcie 80g" wins over "a100"
    gpu_names = sorted(gpu_by_alias, key=len, reverse=True)
    # a name starts a word, or follows a count glued to it ("8xa100", "24g4090", "24gb4090"); the
    # vendor's name before it ("nvidia a100", "英伟达 h800") is read by the extractor (VENDOR_BEFORE)
    # "tesla v100" is "v100" with the vendor before it, read so ("tesla v100-pcie-32gb" whole);
    # "tesla p4" stays a name ("p4" alone is not one)
    vendor_first = re.compile(r"^(?:nvidia|英伟达|geforce|amd|tesla)[\s\-_]+(.+)$")
    own = [n for n in gpu_names if not ((m := vendor_first.match(n)) and m.group(1) in gpu_by_alias)]
    gpu_alias = compiled(
        "("
        + built(trie_pattern, tuple(own), True, _GPU_NAME_START)
        + r")(?:\s*s)?(?:(?![a-z0-9])|(?=gpus?(?![a-z])))",  # "4090gpu" glued
    )
    return gpu_by_alias, model_aliases(cat), gpu_alias, _model_name_rule_pattern()


def _model_name_rule_pattern() -> re.Pattern:
    """A catalog model's name with the words that may follow it, as the rule `catalog_name` writes it."""
    for _, table in rule_files.files("model_name"):
        for entry in table["rules"]:
            if entry["name"] == "catalog_name":
                return rule_files.rule_pattern(entry["pattern"], {**rule_files.pieces(), **(table.get("pieces") or {})})
    raise ValueError("model_name.yaml has no rule catalog_name")


def method_word(text: str) -> str | None:
    """The method a word names ("QLoRA", "全参", "fine-tune" -> full), or None."""
    lowered = text.lower()
    voc = vocabulary()
    found = [method for method, pattern in voc.methods if pattern.search(lowered)]
    if found:
        return found[0]
    return "full" if voc.finetune.search(lowered) else None
