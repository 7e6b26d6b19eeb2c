"""Regular expressions rewritten to be found faster, with the same matches.

Python's `re` scans quickly for the first characters of a pattern only when it starts with a
literal (or every branch of an alternation does); a pattern that starts with a lookbehind guard,
a group or a class is tried at every position of the text. These rewrites move guards after the
first word and spread leading groups into branches, so the vocabulary's alternations start with
literals. Each keeps the matches of the pattern as written (tests/test_intent.py checks them with
hypothesis).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from re import _constants, _parser  # the parsed pattern that required_words reads
from typing import Any

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


# the guards go into no group of more alternatives than this: each alternative would then test them
# where its first letter stands, which costs more than testing them once everywhere ({NUM}'s 50 digit
# and numeral branches scanned a third slower so; a group of 9 words twice as fast); a look-ahead for
# the first characters goes before them instead
MOST_GUARDED_BRANCHES = 16


def _guards_into_group(guards: list[str], rest: str) -> str | None:
    """`(?<!x)(?:ab|cd)e` -> `(?:ab(?<!xab)|cd(?<!xcd))e`: the guards taken into each alternative
    of the group they stand before (plain, capturing or named), when every alternative then starts
    with its word; before a group of too many alternatives, a look-ahead for their first characters
    (`_first_characters_ahead`); None otherwise."""
    opening = _opening(rest)
    end = _group_end(rest, 0) if opening else None
    if end is None or rest[end : end + 1] in tuple(_QUANTIFIER):
        return None
    prefix = "".join(guards)
    branches = top_level_split(rest[len(opening) : end - 1])
    if len(branches) > MOST_GUARDED_BRANCHES:
        return _first_characters_ahead(branches, prefix + rest)
    alternatives = [literal_first(prefix + a) for a in branches]
    if not all(_WORD.match(a) or a.startswith("\\d(?<") for a in alternatives):
        return None
    return opening + "|".join(alternatives) + ")" + rest[end:]


def _first_characters_ahead(branches: list[str], guarded: str) -> str | None:
    """`guarded` behind a look-ahead for its group's first characters, when every branch starts with
    one it cannot leave out: a place none stands at fails at once, where `re` would otherwise test
    the guards, then each branch in turn ({NUM} after {COUNT_START}: 50 branches)."""
    if any(not _WORD.match(branch) or branch[1:2] in ("?", "*", "{") for branch in branches):
        return None
    return "(?=[" + "".join(sorted({branch[0] for branch in branches})) + "])" + guarded


def _opening(rest: str) -> str | None:
    """How the group `rest` starts with opens, when it is plain, capturing or named ("(?P<gpus>")."""
    if rest.startswith("(?:"):
        return "(?:"
    if rest.startswith("(?P<"):
        return rest[: rest.index(">") + 1]
    return "(" if rest.startswith("(") and not rest.startswith("(?") else None


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
        elif inner := _grouped_guards(pattern):  # "(?:(?<![a-z0-9_.])(?<![a-z_.]-))": a piece of guards
            guards += inner[0]
            pattern = pattern[inner[1] :]
        else:
            return guards, pattern


def _grouped_guards(pattern: str) -> tuple[list[str], int] | None:
    """(the guards, the index after the group) of a plain group the pattern starts with that holds
    guards alone, as a piece of them expands to; None otherwise."""
    end = _group_end(pattern, 0) if pattern.startswith("(?:") else None
    if end is None or pattern[end : end + 1] in tuple(_QUANTIFIER):
        return None
    guards, rest = _leading_guards(pattern[3 : end - 1])
    return (guards, end) if guards and not rest else None


def _structure(pattern: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, depth) of each character of `pattern` from `start` that is neither
    escaped nor inside a character class; the depth of nesting in groups is the one it stands at
    (a group's "(" and ")" at the depth around the group)."""
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
        else:
            depth -= ch == ")"
            yield i, ch, depth
            depth += ch == "("
        i += 1


def _group_end(pattern: str, start: int) -> int | None:
    """The index after the `)` closing the group opened at `start`."""
    return next((i + 1 for i, ch, depth in _structure(pattern, start) if ch == ")" and depth == 0), None)


def top_level_split(body: str) -> list[str]:
    """The alternatives of a group's body, split at its own `|`."""
    cuts = [i for i, ch, depth in _structure(body) if ch == "|" and depth == 0]
    return [body[a + 1 : b] for a, b in zip([-1, *cuts], [*cuts, len(body)], strict=True)]


MAX_BRANCHES = 32  # a pattern spread into more alternatives than this is left as written


def literal_branches(pattern: str) -> list[str]:
    """`pattern` as alternatives that each start with a word where a leading group can be spread:
    `(?:io|i/o|disk) bottleneck` -> `io bottleneck`, `i/o bottleneck`, `disk bottleneck`, with the
    guards before the group going with each (`\\b(?:hdd|ssd)\\b` -> `\\bhdd\\b`, `\\bssd\\b`). An
    alternation whose every branch starts with a literal is scanned by `re` for those first
    characters only; one branch starting with a group makes it test every position."""
    alternatives = top_level_split(pattern)
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
    alternatives = top_level_split(rest[3 : end - 1]) + ([""] if quantifier == "?" else [])
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


def fast_alternation(patterns: Sequence[str]) -> str:
    """One alternation of `patterns`, each spread into branches that start with a literal where it
    can be (literal_branches, literal_first), their shared first letters written once (_prefix_tree):
    the same matches, found faster."""
    firsts = [literal_first(branch) for p in patterns for branch in literal_branches(p)]
    return word_tree(tuple(branch for first in firsts for branch in _digits_spelt(first)))


def word_tree(branches: Sequence[str]) -> str:
    """One alternation of `branches`, tried in the order given, the first letters they share written
    once (_prefix_tree): the same matches, found faster. Branches with capturing groups are joined as
    written, so that the groups keep their order and numbers."""
    if _parser.parse("|".join(branches)).state.groups > 1:
        return "|".join(f"(?:{branch})" for branch in branches)
    return _prefix_tree([(_leading_letters(branch), branch) for branch in branches])


# a character a pattern matches as itself: a plain one, or a punctuation mark escaped (not a class
# such as \d, nor an upper-case letter, which IGNORECASE would make another's too)
_LETTER = re.compile(r"\\(\W)|([^\\.^$*+?{}\[\]|()A-Z])")


def _leading_letters(branch: str) -> list[tuple[str, str]]:
    """(the character matched, as written) of each character a branch starts with that matches only
    itself, up to the first that is not or that a quantifier repeats."""
    letters, at = [], 0
    while (match := _LETTER.match(branch, at)) and branch[match.end() : match.end() + 1] not in tuple(_QUANTIFIER):
        letters.append((match.group(1) or match.group(2), match.group(0)))
        at = match.end()
    return letters


def _prefix_tree(branches: list[tuple[list[tuple[str, str]], str]]) -> str:
    """An alternation of branches (their leading letters, the branch as written) in the order given,
    branches that start with the same letter joined under it once: `(?:abc)|(?:abd)|(?:x)` is
    `ab(?:c|d)|x`. `re` tries the branches of an alternation one by one at each place, so a word list
    costs a test per word there; joined, a test per first letter. The first branch to match stays the
    first: branches with other first letters cannot match at one place, and a branch whose letters end
    (it goes on with a class, a group, ...) is never passed by one written after it."""
    parts: list[str | tuple[str, list]] = []
    open_letters: dict[str, int] = {}  # a letter -> the part that gathers the branches it starts
    for letters, branch in branches:
        if not letters:
            parts.append(branch)
            open_letters = {}  # it may match where those after it do: none joins a part before it
            continue
        (letter, written), rest = letters[0], (letters[1:], branch[len(letters[0][1]) :])
        if letter in open_letters:
            parts[open_letters[letter]][1].append(rest)  # type: ignore[index]
        else:
            open_letters[letter] = len(parts)
            parts.append((written, [rest]))
    return "|".join(_one(part) if isinstance(part, str) else _under(*part) for part in parts)


def _under(written: str, rests: list[tuple[list[tuple[str, str]], str]]) -> str:
    """A letter followed by the alternation of what follows it in each branch it starts."""
    return written + _one(rests[0][1] if len(rests) == 1 else _prefix_tree(rests))


def _one(pattern: str) -> str:
    """`pattern` as one item of a sequence: in a group where it is an alternation."""
    return f"(?:{pattern})" if len(top_level_split(pattern)) > 1 else pattern


def _digits_spelt(pattern: str) -> list[str]:
    """A pattern that starts with `\\d` as ten that start with a digit each: the first character
    must be a literal for `re` to scan for it."""
    if pattern.startswith("\\d") and pattern[2:3] not in tuple(_QUANTIFIER):
        return [str(digit) + pattern[2:] for digit in range(10)]
    return [pattern]


def guard_after_first(guard: str, first: str) -> str:
    """`guard`, an alternation of lookbehinds that held before the character `first`, written to
    hold after it (each lookbehind taking that character into its width)."""
    return "(?:" + "|".join(f"{g[:4]}(?:{g[4:-1]}){first})" for g in top_level_split(guard)) + ")"


# --- the words a pattern's every match holds -------------------------------------------------------

_REPEATS = (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT)
_MOST_WORDS = 16  # a requirement of more alternatives than this costs more to test than it saves


def required_words(pattern: str) -> str:
    """An alternation of literal words one of which every match of `pattern` holds ("billion|bn" of
    `{NUM}\\s*(?:billion|bn)`), or "" when no such words are found: a text holding none of them cannot
    match, so it need not be scanned. Read off the parsed pattern: a run of literals in sequence, a
    class of a few literal characters, a group, a repeat taken at least once, an alternation whose every
    branch requires words (their union); lookarounds, case-folded parts and back-references none."""
    parsed = _parser.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return ""
    words = _sequence_words(list(parsed))
    return "|".join(re.escape(word) for word in sorted(words, key=lambda w: (-len(w), w))) if words else ""


def words_of(alternation: str) -> tuple[str, ...]:
    """The words of an alternation `required_words` wrote ("billion|bn"), as text."""
    return tuple(re.sub(r"(?s)\\(.)", r"\1", word) for word in top_level_split(alternation)) if alternation else ()


def _sequence_words(items: list, joined: bool = True) -> frozenset[str] | None:
    """The best requirement of a sequence: its longest literal run or the most selective of its items;
    `joined`: or a run with the words the item after it starts with ("g(?:pt|lm)": "gpt" or "glm")."""
    found: list[frozenset[str]] = []
    run = ""
    for op, arg in items:
        if op is _constants.LITERAL:
            run += chr(arg)
            continue
        if run:
            found.append(frozenset({run}))
            starts = _start_words(op, arg) if joined else None
            if starts is not None and len(starts) <= _MOST_WORDS:
                found.append(_fewest(run + start for start in starts))
            run = ""
        if (words := _item_words(op, arg, joined)) is not None:
            found.append(words)
    if run:
        found.append(frozenset({run}))
    return max(found, key=lambda words: (min(map(len, words)), -len(words)), default=None)


def _branch_words(branches: list, joined: bool) -> frozenset[str] | None:
    """The union of the requirements of an alternation's branches, when each has one and they are few
    (the longer words of `joined` runs, `_sequence_words`, may be too many where the runs alone are not)."""
    found = [_sequence_words(list(branch), joined) for branch in branches]
    if any(words is None for words in found):
        return None
    union = _fewest(frozenset().union(*found))
    return union if len(union) <= _MOST_WORDS else None


def _fewest(words: Iterable[str]) -> frozenset[str]:
    """The words without those that hold another of them ("rl" of "rl", "rlhf"): a text holds one of
    these where it holds one of all."""
    words = set(words)
    return frozenset(word for word in words if not any(other != word and other in word for other in words))


def _start_words(op: Any, arg: Any) -> frozenset[str] | None:
    """The literal words one of which every match of an item starts with ("" where a branch starts
    with none), for a group or an alternation whose branches start with letters (patterns.word_tree's
    trees); None for anything else."""
    if op is _constants.SUBPATTERN and not arg[1] & re.IGNORECASE:
        return _sequence_start(list(arg[3]))
    if op is _constants.IN:
        return _item_words(op, arg)  # a class of a few letters: one of them
    if op is not _constants.BRANCH:
        return None
    branches = [_sequence_start(list(branch)) for branch in arg[1]]
    return None if any(words is None for words in branches) else frozenset().union(*branches)


def _sequence_start(items: list) -> frozenset[str] | None:
    """The literal words one of which every match of a sequence starts with (`_start_words`)."""
    run = ""
    for op, arg in items:
        if op is not _constants.LITERAL:
            starts = _start_words(op, arg)
            if starts is None or len(starts) > _MOST_WORDS:
                return frozenset({run})
            return frozenset(run + start for start in starts)
        run += chr(arg)
    return frozenset({run})


def _item_words(op: Any, arg: Any, joined: bool = True) -> frozenset[str] | None:
    if op is _constants.IN:
        if len(arg) <= _MOST_WORDS and all(kind is _constants.LITERAL for kind, _ in arg):
            return frozenset(chr(code) for _, code in arg)
        return None
    if op is _constants.BRANCH:
        return (joined and _branch_words(arg[1], joined=True)) or _branch_words(arg[1], joined=False)
    if op is _constants.SUBPATTERN:
        _group, add_flags, _del_flags, body = arg
        return None if add_flags & re.IGNORECASE else _sequence_words(list(body), joined)
    if op is _constants.ATOMIC_GROUP:
        return _sequence_words(list(arg), joined)
    if op in _REPEATS and arg[0] >= 1:
        return _sequence_words(list(arg[2]), joined)
    return None
