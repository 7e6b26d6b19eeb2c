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
    any_method: re.Pattern  # every method's words in lexicon order, weak serving last
    method_patterns: list[re.Pattern]  # each method's words, in that order
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
    gpu_like: re.Pattern  # GPU names the catalog lacks
    family: re.Pattern
    stopwords: frozenset[str]
    model_alias: re.Pattern
    family_size: re.Pattern  # "qwen 14b", "Yi-34", "BLOOM 1.1B", "mistral 7"
    family_names: str  # the family words as one alternation ("qwen|llama|..."), longest first
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


# a word of letters, digits or Chinese characters at the start of what follows the guards
_WORD = re.compile(r"[a-z0-9\u4e00-\u9fff]+")
# a guard, then digits: `(?<![\d.])\d{1,2}`, `(?<![\d.])\d+`
_GUARDED_DIGITS = re.compile(r"^\(\?<!(\[[^\]]+\])\)\\d(?:(\+)|\{(\d+),(\d+)\})?(?![?*+{])")
_QUANTIFIER = "?*+{"


def literal_first(pattern: str) -> str:
    """`(?<![a-z])vllm(?![a-z])` -> `vllm(?<![a-z]vllm)(?![a-z])`, `\\bpod\\b` -> `pod(?<!\\wpod)\\b`:
    the same matches, but a pattern that starts with a literal lets `re` scan for its first
    letters (an alternation of such patterns, for any of their first letters), several times
    faster than testing the guard at every position. Any run of lookbehind guards and `\\b` goes
    after the word this way, each lookbehind taking the word into its own fixed width."""
    guards, rest = _leading_guards(pattern)
    if guards and rest.startswith("("):
        grouped = _guards_into_group(guards, rest)
        if grouped:
            return grouped
    word = _WORD.match(rest)
    if guards and word:
        text = word.group(0)
        if rest[word.end() : word.end() + 1] in tuple(_QUANTIFIER):
            text = text[:-1]  # "runs?": the quantifier's letter stays after the guards
        if text:
            moved = "".join(_after(guard, text) for guard in guards)
            return text + moved + rest[len(text) :]
    match = _GUARDED_DIGITS.match(pattern)
    if match:  # the first digit, then the guard before it, then the rest of the run
        guard, plus, low, high = match.groups()
        tail = r"\d*" if plus else (rf"\d{{{max(int(low) - 1, 0)},{int(high) - 1}}}" if high else "")
        return rf"\d(?<!{guard}\d){tail}" + pattern[match.end() :]
    return pattern


def _guards_into_group(guards: list[str], rest: str) -> str | None:
    """`(?<!x)(?:ab|cd)e` -> `(?:ab(?<!xab)|cd(?<!xcd))e`: the guards taken into each alternative
    of the group they stand before (plain or capturing), when every alternative then starts with
    its word; None otherwise."""
    opening = "(?:" if rest.startswith("(?:") else "(" if not rest.startswith("(?") else None
    end = _group_end(rest, 0) if opening else None
    if end is None or rest[end : end + 1] in tuple(_QUANTIFIER):
        return None
    prefix = "".join(guards)
    alternatives = [literal_first(prefix + a) for a in _top_level_split(rest[len(opening) : end - 1])]
    if not all(_WORD.match(a) or a.startswith("\\d(?<") for a in alternatives):
        return None
    return opening + "|".join(alternatives) + ")" + rest[end:]


def _after(guard: str, word: str) -> str:
    """A guard that stood before `word`, written to stand after it."""
    if guard == r"\b":
        return rf"(?<!\w{word})" if word[0].isalnum() or word[0] == "_" else guard
    return f"{guard[:4]}(?:{guard[4:-1]}){word})"  # "(?<!" or "(?<=", its body, the word


def _leading_guards(pattern: str) -> tuple[list[str], str]:
    """(the lookbehinds and `\\b` a pattern starts with, the rest)."""
    guards = []
    while True:
        if pattern.startswith(r"\b"):
            guards.append(r"\b")
            pattern = pattern[2:]
        elif pattern.startswith(("(?<!", "(?<=")):
            end = _group_end(pattern, 0)
            if end is None:
                return [], pattern
            guards.append(pattern[:end])
            pattern = pattern[end:]
        else:
            return guards, pattern


def _group_end(pattern: str, start: int) -> int | None:
    """The index after the `)` closing the group opened at `start` (escapes and classes skipped)."""
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1  # "[]...]": a "]" right after "[" is a member
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _top_level_split(body: str) -> list[str]:
    """The alternatives of a group's body, split at its own `|`."""
    parts, depth, i, in_class, start = [], 0, 0, False, 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    return parts + [body[start:]]


MAX_BRANCHES = 32  # a pattern spread into more alternatives than this is left as written


def literal_branches(pattern: str) -> list[str]:
    """`pattern` as alternatives that each start with a word where a leading group can be spread:
    `(?:io|i/o|disk) bottleneck` -> `io bottleneck`, `i/o bottleneck`, `disk bottleneck`, with the
    guards before the group going with each (`\\b(?:hdd|ssd)\\b` -> `\\bhdd\\b`, `\\bssd\\b`). An
    alternation whose every branch starts with a literal is scanned by `re` for those first
    characters only; one branch starting with a group makes it test every position."""
    alternatives = _top_level_split(pattern)
    if len(alternatives) > 1:  # "bus ?bw|busbw": each alternative on its own
        out = [branch for alternative in alternatives for branch in literal_branches(alternative)]
        return out if len(out) <= MAX_BRANCHES else [pattern]
    guards, rest = _leading_guards(pattern)
    prefix = "".join(guards)
    members = _plain_class(rest)
    if members:  # "[$¥]": one branch per member
        return [prefix + re.escape(ch) + rest[len(members[1]) :] for ch in members[0]]
    if not rest.startswith("(?:"):
        return [pattern]
    end = _group_end(rest, 0)
    if end is None:
        return [pattern]
    quantifier = rest[end : end + 1]
    if quantifier in tuple(_QUANTIFIER) and (quantifier != "?" or rest[end + 1 : end + 2] in tuple(_QUANTIFIER)):
        return [pattern]  # repeated, or a lazy "??": left as written
    after = rest[end + 1 :] if quantifier == "?" else rest[end:]
    alternatives = _top_level_split(rest[3 : end - 1]) + ([""] if quantifier == "?" else [])
    out: list[str] = []
    for alternative in alternatives:  # "(?:a)?b": "ab" first, as the greedy "?" tries it first
        out += literal_branches(prefix + alternative + after)
        if len(out) > MAX_BRANCHES:
            return [pattern]
    return out


def _plain_class(pattern: str) -> tuple[str, str] | None:
    """(the members, the class as written) of a leading class of a few plain characters ("[$¥￥]"),
    not negated, no ranges or escapes, no quantifier after it."""
    match = re.match(r"\[([^\]\\^\-]{1,8})\]", pattern)
    if not match or pattern[match.end() : match.end() + 1] in tuple(_QUANTIFIER):
        return None
    return match.group(1), match.group(0)


def _any(patterns: list[str]) -> re.Pattern:
    """One alternation, matched against lower-cased text: the vocabulary is lower case (checked), so
    no IGNORECASE, which makes Python's `re` about twice as slow on alternations."""
    for pattern in patterns:
        if re.search(r"[A-Z]", re.sub(r"\\.", "", pattern)):
            raise ValueError(f"vocabulary pattern {pattern!r} must be lower case (text is lower-cased first)")
    return re.compile(fast_alternation(patterns))


def fast_alternation(patterns: list[str]) -> str:
    """One alternation of `patterns`, each spread into branches that start with a literal where it
    can be (literal_branches, literal_first): the same matches, found faster."""
    firsts = [literal_first(branch) for p in patterns for branch in literal_branches(p)]
    return "|".join(f"(?:{branch})" for first in firsts for branch in _digits_spelt(first))


def _digits_spelt(pattern: str) -> list[str]:
    """A pattern that starts with `\\d` as ten that start with a digit each: the first character
    must be a literal for `re` to scan for it."""
    if pattern.startswith("\\d") and pattern[2:3] not in tuple(_QUANTIFIER):
        return [str(digit) + pattern[2:] for digit in range(10)]
    return [pattern]


_SEP, _END, _HYPHEN = object(), object(), object()


def _method_items(lex: Any) -> list[tuple[str, list[str]]]:
    """The methods in lexicon order, the weak words (`<method>_weak`) last: they lose ties."""
    strong = [(m, p) for m, p in lex.methods.items() if not m.endswith("_weak")]
    return strong + [(m, p) for m, p in lex.methods.items() if m.endswith("_weak")]


def _method_lists(lex: Any) -> list[list[str]]:
    return [patterns for _, patterns in _method_items(lex)]


def _trie_pattern(names: list[str], hyphen_before_digits: bool = False, guard: str = "") -> str:
    """One regex for many names, shared prefixes merged (a trie): Python's `re` tries the branches
    of an alternation one by one, so 800 aliases written side by side cost 800 attempts at every
    position, a trie a handful. Longer names win, as with the longest-first alternation it replaces.
    With `hyphen_before_digits`, a hyphen may stand between a name's letters and its number
    ("h-200", "a-100", as "h200", "a100"). A `guard` (lookbehinds, an alternation of them) that
    must hold where a name starts is written after each name's first character instead, each
    lookbehind taking that character into its width: the alternation then starts with literals,
    which `re` scans for, instead of testing the guard at every position."""
    trie: dict = {}
    for name in names:
        parts = [p for p in re.split(r"[\s\-_]+", name.lower()) if p]
        node = trie
        for i, part in enumerate(parts):
            atoms = list(part)
            if hyphen_before_digits:
                atoms = _hyphen_gaps(atoms)
            for atom in ([_SEP] if i else []) + atoms:
                node = node.setdefault(atom, {})
        node[_END] = True
    if not guard:
        return _emit(trie)
    branches = [re.escape(atom) + _guard_after(guard, re.escape(atom)) + _emit(child) for atom, child in trie.items()]
    return "(?:" + "|".join(branches) + ")"


def _guard_after(guard: str, first: str) -> str:
    """`guard`, an alternation of lookbehinds that held before `first`, written to hold after it."""
    return "(?:" + "|".join(f"{g[:4]}(?:{g[4:-1]}){first})" for g in _top_level_split(guard)) + ")"


def _hyphen_gaps(atoms: list) -> list:
    """The letters and digits of a name part with an optional hyphen where letters meet digits."""
    out: list = []
    for i, atom in enumerate(atoms):
        if i and atom.isdigit() and atoms[i - 1].isalpha() and atoms[i - 1].isascii():
            out.append(_HYPHEN)
        out.append(atom)
    return out


def _emit(node: dict) -> str:
    atom_text = {_SEP: r"[\s\-_]*", _HYPHEN: "-?"}
    branches = [
        (atom_text[atom] if atom in atom_text else re.escape(atom)) + _emit(child)
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
        any_method=_any([p for patterns in _method_lists(lex) for p in patterns]),
        method_patterns=[_any(patterns) for patterns in _method_lists(lex)],
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
        gpu_like=_any(lex.gpu_like_names),
        family=family,
        family_size=family_size,
        family_names="|".join(re.escape(f) for f in sorted(lex.model_families, key=len, reverse=True)),
        family_ids={k.lower(): tuple(v.split("|")) for k, v in lex.model_families.items()},
        instances=[(i, re.compile(rf"(?<![a-z0-9])(?:ml\.)?{i.pattern}(?![a-z0-9])")) for i in cat.instances],
        any_instance=re.compile(fast_alternation([i.pattern for i in cat.instances])),
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


# a GPU vendor's name written before the GPU's (not part of the catalog's names), or a server's
# ("DGX-A100", "nvidia dgx h100": a server of the type's usual size)
VENDOR_BEFORE = re.compile(r"(?<![a-z0-9])(?:(?:nvidia|英伟达|geforce|amd|tesla)\s*)*(?P<server>(?:dgx|hgx)[\s\-_]*)?$")
# an organisation's name written before a model's ("meta-llama/", "Meta ", "Qwen/")
ORG_BEFORE = re.compile(r"(?:meta-llama/|meta[\s\-_]*|qwen/|mistralai/|deepseek-ai/|google/|tiiuae/|01-ai/|thudm/)$")
_GPU_NAME_START = r"(?<=\d)|(?<=\d[x×*])|(?<=\dg)|(?<=\dgb)|(?<![a-z0-9])"


def _alias_patterns(cat: Catalog) -> tuple[dict[str, str], dict[str, str], re.Pattern, re.Pattern]:
    """(GPU by alias, model by alias, a pattern of every GPU name, one of every model name)."""
    gpu_by_alias = {name.lower(): gpu.id for gpu in cat.gpus.values() for name in [gpu.id, *gpu.aliases]}
    model_by_alias = {
        name.lower(): spec.id for spec in cat.models.values() for name in [spec.id, spec.name, *spec.aliases]
    }
    # longest names first so "a100 pcie 80g" wins over "a100"
    gpu_names = sorted(gpu_by_alias, key=len, reverse=True)
    model_names = sorted(model_by_alias, key=len, reverse=True)
    # a name starts a word, or follows a count glued to it ("8xa100", "24g4090", "24gb4090"); the
    # vendor's name before it ("nvidia a100", "英伟达 h800") is read by the extractor (VENDOR_BEFORE)
    # "tesla v100" is "v100" with the vendor before it, read so ("tesla v100-pcie-32gb" whole);
    # "tesla p4" stays a name ("p4" alone is not one)
    vendor_first = re.compile(r"^(?:nvidia|英伟达|geforce|amd|tesla)[\s\-_]+(.+)$")
    own = [n for n in gpu_names if not ((m := vendor_first.match(n)) and m.group(1) in gpu_by_alias)]
    gpu_alias = re.compile(
        "("
        + _trie_pattern(own, hyphen_before_digits=True, guard=_GPU_NAME_START)
        + r")(?:\s*s)?(?:(?![a-z0-9])|(?=gpus?(?![a-z])))",  # "4090gpu" glued
    )
    model_alias = re.compile(  # the organisation before a name ("meta-llama/") is ORG_BEFORE's
        "("
        + _trie_pattern(model_names, guard=r"(?<![a-z0-9])")
        # not inside a longer name or version ("qwen2" of "qwen2.5"), but a sentence's full stop ends it
        + r")(?:[\s\-_]*(?:instruct|chat|hf|base|it|awq|gptq))*(?![a-z0-9]|\.[a-z0-9])",
    )
    return gpu_by_alias, model_by_alias, gpu_alias, model_alias


def _family_patterns(lex: Lexicon) -> tuple[re.Pattern, re.Pattern]:
    """(a family's name, a family's name with a size: "qwen 14b", "llama2-chat 13b")."""
    families = "|".join(re.escape(f) for f in sorted(lex.model_families, key=len, reverse=True))
    family = re.compile(literal_first(rf"(?<![a-z0-9])(?:{families})[\w.\-]*"))
    family_size = re.compile(
        literal_first(
            rf"(?<![a-z0-9])({families})((?:[\s\-_]?v?\d+(?:\.\d+)?(?=[\s\-_]))?(?:[\s\-_]*(?:chat|base|instruct|it))?)"
            r"[\s\-_]*(\d+(?:\.\d+)?)\s*(b|m|亿)?(?![a-z0-9]|\.\d)"
        ),
    )
    return family, family_size
