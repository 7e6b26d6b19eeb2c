"""The reading engine: rules as data, one small mechanism.

Each dimension of a question (batch sizes, budget, ...) has its rules in per-language YAML under
knowledge/rules/<lang>/<dimension>.yaml: a name, a pattern built from named pieces
(knowledge/rules/pieces.yaml: `{INT}` is a piece, `{value:MONEY}` the piece captured as the value),
the field it reads, how its value is converted, a priority and examples with their expected
reading. `find` lists every rule's matches over the text as candidate spans; `settle` keeps, by
priority, then length, then position, the candidates that overlap no kept one. Rules never edit
the text, so no rule depends on what another consumed. Every rule applies to every question: a
Chinese question may say "batch size 8", an English one "预算50万".

Modelled on Duckling (rules per dimension and language, composed from parsed pieces, examples
beside them) and spaCy's SpanRuler (patterns as data, overlaps settled by one explicit filter).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuplan.bot.language import count_words, length_words, memory_words, size_words, token_words, unread, value_words
from gpuplan.bot.language.compiled import built, compiled
from gpuplan.bot.language.patterns import required_words, top_level_split, words_of
from gpuplan.bot.language.rule_files import dimensions, expand, files, pieces, reads_one, rule_pattern

__all__ = [
    "dimensions",
    "expand",
    "files",
    "pieces",
    "reads_one",
    "rules",
    "worth_trying",
    "find",
    "found",
    "settle",
    "first",
    "read",
]


@dataclass(frozen=True)
class Rule:
    """One way of writing a reading: `pattern` (compiled, pieces expanded) whose `value` group
    `convert` turns into the value of `field`, when it lies within [`least`, `most`]; a rule that
    reads several fields from one span ("2台8卡": nodes and GPUs) names the others in `more_fields`
    and its converter returns one value per field."""

    name: str
    dimension: str
    lang: str
    pattern: re.Pattern
    field: str
    convert: str = "int"
    priority: int = 0
    least: float | None = None
    most: float | None = None
    note: str | None = None  # a note code said back when the conversion asks for it
    # no reading where `unless_before` ends right before the match or its first group, or
    # `unless_after` starts right after its last group ("took 10 days", "8 hours per day")
    unless_before: re.Pattern | None = None
    unless_after: re.Pattern | None = None
    when: tuple[str, ...] = ()  # named conditions (CONDITIONS) that must all hold
    facts: tuple[str, ...] = ()  # facts the caller states (FACTS: "several_cards") that must all hold
    # a claim (`reads: nothing`): its span takes its words, so a weaker rule cannot read them, and reads
    # no field ("占用了20G显存": what a run uses, no card's memory)
    claims: bool = False
    value: Any = None  # the value a `convert: const` rule reads ("fsdp": ZeRO stage 3)
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    more_fields: tuple[str, ...] = ()
    # words of which the text holds one wherever the pattern matches ("node|server|machine"): a text
    # without any is not scanned (a pattern that starts with a number is tried at every digit)
    needs: re.Pattern | None = None
    # literal words one of which every match of `needs` holds: tested with `in` before `needs` is searched
    needed: tuple[str, ...] = ()
    # literal words one of which every match holds, read off the pattern itself (patterns.required_words):
    # a text without any is not scanned (tested with `in`: re's search for an alternation of words tests
    # its first letters at every place of the text)
    required: tuple[str, ...] = ()
    # whether a text of ASCII characters alone can hold a match: False when every word the rule
    # requires or needs has a character beyond ASCII ("并发", "显存"), so an English question skips it
    # (str.isascii is a flag CPython keeps, no scan)
    ascii_text: bool = True

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.field, *self.more_fields)


@dataclass(frozen=True)
class Span:
    """A candidate reading: where it stands, what it reads, which rule read it, and the
    parameters of its note (None: no note)."""

    start: int
    end: int
    field: str
    value: Any
    rule: Rule
    note_params: dict[str, Any] | None = None
    # where the match's named groups stand (what it reads: the value, a count and its unit), or the
    # whole match where it names none; the words between them only place it
    read_at: tuple[tuple[int, int], ...] = ()

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def readings(self) -> tuple[tuple[str, Any], ...]:
        """(field, value) of each field the span reads, in the rule's order; none for a claim."""
        if self.rule.claims:
            return ()
        if self.rule.more_fields:
            return tuple(zip(self.rule.fields, self.value, strict=True))
        return ((self.field, self.value),)


# --- converters: a match -> (value, the note's parameters or None); conditions: (the whole lower-cased
# question, a match) -> whether the reading holds. Plain values (value_words.py): "8", "$50k", "10天" ----

CONVERTERS: dict[str, Callable[[re.Match, Rule], tuple[Any, dict[str, Any] | None]]] = {
    **value_words.CONVERTERS,
    **count_words.CONVERTERS,
}
CONDITIONS: dict[str, Callable[[str, re.Match], bool]] = {
    **value_words.CONDITIONS,
    **count_words.CONDITIONS,
    **size_words.CONDITIONS,
}

# --- lengths (length_words.py): "4k" is 4,096 tokens; model sizes (size_words.py): "70b", "700亿" ----
CONVERTERS.update(length_words.CONVERTERS)
CONDITIONS.update(length_words.CONDITIONS)
CONVERTERS.update(size_words.CONVERTERS)

# --- counts of tokens and the dataset (token_words.py): "2T tokens", "50k samples", "20GB" ------------
CONVERTERS.update(token_words.CONVERTERS)
CONDITIONS.update(token_words.CONDITIONS)

# --- a card's memory (memory_words.py): "A100 (40G)" is 40 GiB --------------------------------------
CONVERTERS.update(memory_words.CONVERTERS)

# facts about what was read before, which the caller states to `find` (the rules' `when` may name them)
FACTS: dict[str, str] = {**memory_words.FACTS}

# --- loading --------------------------------------------------------------------------------------


def _rule(entry: dict[str, Any], dimension: str, lang: str, table: dict[str, str]) -> Rule:
    if entry.get("convert", "int") not in CONVERTERS:
        raise ValueError(f"rule {entry['name']}: unknown converter {entry['convert']!r}")
    when = tuple(entry.get("when", ()))
    if unknown := set(when) - set(CONDITIONS) - set(FACTS):
        raise ValueError(f"rule {entry['name']}: unknown conditions {sorted(unknown)}")
    claims = _claims(entry)
    before, after = entry.get("unless_before"), entry.get("unless_after")
    fields = [""] if claims else entry["fields"] if "fields" in entry else [entry["field"]]
    pattern = rule_pattern(entry["pattern"], table)
    required = built(required_words, pattern.pattern)
    needed = built(required_words, entry.get("needs", ""))
    return Rule(
        name=entry["name"],
        dimension=dimension,
        lang=lang,
        pattern=pattern,
        field=fields[0],
        more_fields=tuple(fields[1:]),
        convert=entry.get("convert", "int"),
        priority=int(entry.get("priority", 0)),
        least=entry.get("least"),
        most=entry.get("most"),
        note=entry.get("note"),
        unless_before=compiled(rf"(?:{expand(before, table)})\s*$") if before else None,
        unless_after=compiled(rf"\s*(?:{expand(after, table)})") if after else None,
        when=tuple(name for name in when if name in CONDITIONS),
        facts=tuple(name for name in when if name in FACTS),
        claims=claims,
        value=entry.get("value"),
        examples=entry.get("examples") or {},
        needs=compiled(entry["needs"]) if "needs" in entry else None,
        needed=words_of(needed),
        required=words_of(required) if required and not _implied(needed, required) else (),
        ascii_text=_ascii_text(required) and _ascii_text(needed),
    )


def _implied(needed: str, required: str) -> bool:
    """Whether a text that holds a match of a rule's `needs` holds one of its required words too (every
    word the needs require is one of them: "token" of `needs: token`), so that one search is enough."""
    return bool(needed) and set(top_level_split(needed)) <= set(top_level_split(required))


def _claims(entry: dict[str, Any]) -> bool:
    """Whether a rule is a claim (`reads: nothing`), which names no field and converts nothing."""
    reads = entry.get("reads")
    if reads not in (None, "nothing"):
        raise ValueError(f"rule {entry['name']}: `reads` is 'nothing' or unsaid, not {reads!r}")
    if reads and {"field", "fields", "convert"} & set(entry):
        raise ValueError(f"rule {entry['name']}: a claim (reads: nothing) names no field and converts nothing")
    return reads == "nothing"


def _ascii_text(required: str) -> bool:
    """Whether a text of ASCII characters alone may hold one of the `required` words (an alternation,
    patterns.required_words; "" when none is known)."""
    return not required or any(word.isascii() for word in top_level_split(required))


@functools.cache
def rules(dimension: str) -> tuple[Rule, ...]:
    """Every language's rules for one dimension (knowledge/rules/<lang>/<dimension>.yaml, whose
    `pieces` add to the shared ones for its own rules)."""
    found: list[Rule] = []
    for lang, table in files(dimension):
        own = table.get("pieces") or {}  # pieces of this file's own, beside the shared ones
        if clash := set(own) & set(pieces()):
            raise ValueError(f"{lang}/{dimension}.yaml redefines the shared pieces {sorted(clash)}")
        found += [_rule(entry, dimension, lang, {**pieces(), **own}) for entry in table["rules"]]
    return tuple(found)


@functools.cache
def ascii_rules(dimension: str) -> tuple[Rule, ...]:
    """A dimension's rules that a text of ASCII characters alone may match (Rule.ascii_text)."""
    return tuple(rule for rule in rules(dimension) if rule.ascii_text)


@dataclass(frozen=True)
class _Gate:
    """A dimension's rules as a question is checked against them (one for ASCII texts, one for any):
    each word some rules require (Rule.required) or need (the words of their `needs`), with those
    rules as bits of an int, the i-th bit the i-th rule; and the bits of the rules no such word gates."""

    rules: tuple[Rule, ...]
    words: tuple[tuple[str, int, int], ...]  # (word, the rules requiring it, the rules needing it)
    unrequired: int
    unneeded: int


@functools.cache
def _gate(dimension: str, ascii_only: bool) -> _Gate:
    """The gate of a dimension's rules for a text of ASCII characters alone, or for any text."""
    candidates = ascii_rules(dimension) if ascii_only else rules(dimension)
    bits: dict[str, list[int]] = {}
    unrequired = unneeded = 0
    for i, rule in enumerate(candidates):
        for word in rule.required:
            bits.setdefault(word, [0, 0])[0] |= 1 << i
        for word in rule.needed:
            bits.setdefault(word, [0, 0])[1] |= 1 << i
        unrequired |= 0 if rule.required else 1 << i
        unneeded |= 0 if rule.needed else 1 << i
    return _Gate(candidates, tuple((word, r, n) for word, (r, n) in bits.items()), unrequired, unneeded)


def worth_trying(text: str, dimension: str) -> list[Rule]:
    """A dimension's rules, in their order, that the text holds a required word and a needed word of
    (each word looked for once for all the rules that name it, not once a rule), or none is named."""
    dimension_gate = _gate(dimension, text.isascii())
    required, needed = dimension_gate.unrequired, dimension_gate.unneeded
    for word, requiring, needing in dimension_gate.words:
        if word in text:
            required |= requiring
            needed |= needing
    found = required & needed
    out = []
    while found:
        lowest = found & -found
        out.append(dimension_gate.rules[lowest.bit_length() - 1])
        found ^= lowest
    return out


# --- finding and settling -------------------------------------------------------------------------


# how far before a match its `unless_before` words are looked for
CONTEXT_WINDOW = 24


def _in_context(rule: Rule, original: str, match: re.Match) -> bool:
    """Whether the words around the match let it stand (`original`: the question before any
    reading took words from it)."""
    if rule.unless_before is not None:
        for at in {match.start(), match.start(1)}:
            if rule.unless_before.search(original, max(0, at - CONTEXT_WINDOW), at):
                return False
    if rule.unless_after is not None and rule.unless_after.match(original, match.end(match.lastindex or 0)):
        return False
    return all(CONDITIONS[name](original, match) for name in rule.when)


def find(
    text: str,
    candidates: Iterable[Rule],
    original: str | None = None,
    facts: frozenset[str] = frozenset(),
    claimed: list[tuple[int, int]] | None = None,
) -> list[Span]:
    """Every match of the `candidates` (a dimension's rules worth_trying on the text) whose value
    converts, lies within the rule's bounds and stands in its context (`original`, the whole
    question, where it differs from `text`); a rule whose `when` names a fact (FACTS) only where
    the caller states it in `facts`; none whose own words stand on a span `claimed` (looked at
    before converting). A claim's span reads nothing."""
    spans = []
    for rule in candidates:
        if rule.facts and not facts.issuperset(rule.facts):
            continue
        if rule.needs is not None and not rule.needs.search(text):
            continue
        for found in rule.pattern.finditer(text):
            # a reading's own words must be free; the words that only place it may be another's
            match = unread.seen(found, claimed) if claimed else found
            if match is None:
                continue
            read_at = _read_at(match)
            if not _in_context(rule, text if original is None else original, match):
                continue
            if rule.claims:
                spans.append(Span(match.start(), match.end(), rule.field, None, rule, None, read_at))
                continue
            try:
                value, note_params = CONVERTERS[rule.convert](match, rule)
            except (ValueError, IndexError):
                continue
            if not _within(rule, value):
                continue
            spans.append(Span(match.start(), match.end(), rule.field, value, rule, note_params, read_at))
    return spans


def found(
    text: str,
    dimension: str,
    original: str | None = None,
    facts: frozenset[str] = frozenset(),
    claimed: list[tuple[int, int]] | None = None,
) -> list[Span]:
    """`find` over a dimension's rules worth trying on the text: its candidates, not yet settled."""
    return find(text, worth_trying(text, dimension), original, facts, claimed)


def _read_at(match: re.Match) -> tuple[tuple[int, int], ...]:
    """The spans of a match's named groups that matched, else the whole match's."""
    named = tuple(match.span(name) for name in match.re.groupindex if match.start(name) >= 0)
    return named or (match.span(),)


def _within(rule: Rule, value: Any) -> bool:
    """Whether a value lies within the rule's bounds (each value of a rule that reads several)."""
    for each in value if rule.more_fields else (value,):
        if (rule.least is not None and each < rule.least) or (rule.most is not None and each > rule.most):
            return False
    return True


def settle(spans: list[Span]) -> list[Span]:
    """Of overlapping candidates the one of highest priority stands, then the longest, then the
    first; the kept spans in the order they are written."""
    if len(spans) < 2:
        return list(spans)  # most dimensions find nothing in a question: nothing to sort
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (-s.rule.priority, -s.length, s.start)):
        if all(span.end <= other.start or other.end <= span.start for other in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: s.start)


def first(text: str, dimension: str, original: str | None = None, facts: frozenset[str] = frozenset()) -> Span | None:
    """A dimension that reads one value: the highest-priority rule that matches anywhere, at its
    first place (a table of words, the most specific first: "paged adamw 8bit" before "adamw")."""
    return _first_of(found(text, dimension, original, facts))


def _first_of(spans: list[Span]) -> Span | None:
    """Of one dimension's candidates, the highest-priority rule's at its first place."""
    return min(spans, key=lambda span: (-span.rule.priority, span.start)) if spans else None


def read(
    text: str,
    dimension: str,
    original: str | None = None,
    facts: frozenset[str] = frozenset(),
    claimed: list[tuple[int, int]] | None = None,
) -> list[Span]:
    """The settled readings of one dimension in lower-cased `text` (`original`: the whole question,
    for the rules that look at the words around a match; `facts`: what the caller states, FACTS;
    `claimed`: spans an earlier reading took, where no candidate may stand); of a dimension that
    reads one value, the first (`first`)."""
    spans = found(text, dimension, original, facts, claimed)
    if len(spans) < 2:
        return spans  # nothing to choose from or settle (most dimensions find nothing in a question)
    if reads_one(dimension):
        return [span] if (span := _first_of(spans)) else []
    return settle(spans)
