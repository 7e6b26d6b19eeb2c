"""The question being read (`Scan`): the lower-cased question as written, never changed, and the
spans the Reader's steps took (claims), through which every step reads it."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from gpuplan.bot.language.compiled import compiled
from gpuplan.bot.language.patterns import literal_first

Spans = list[tuple[int, int]] | tuple[tuple[int, int], ...]


@functools.cache
def regex(pattern: str) -> re.Pattern:
    """Each extractor pattern compiled once per process, its leading guards after its first word
    (literal_first: the same matches, scanned for faster)."""
    return compiled(literal_first(pattern))


def _stretches(length: int, claimed: Spans) -> list[tuple[int, int]]:
    """The stretches of a text of `length` characters that no claim covers, in order."""
    found, pos = [], 0
    for a, b in sorted(claimed):
        if a > pos:
            found.append((pos, a))
        pos = max(pos, b)
    return [*found, (pos, length)] if pos < length else found


class Scan:
    """The lower-cased question as written (`original`, never changed) and where the steps so far
    took their words (`claimed`): a step reads the question through the claims, so no reading stands
    on words an earlier one took, and the order of the steps decides which takes a word first."""

    def __init__(self, text: str):
        self.original = text.lower()
        self.last_span = (0, 0)
        self.claimed: list[tuple[int, int]] = []  # where the steps so far took their words

    def unclaimed(self, pattern: re.Pattern | str, besides: Spans = ()) -> Iterator[re.Match]:
        """Matches in the question as written whose words stand on no claim, as a reading's may not
        (engine.find, unread.py), nor on the spans `besides`: each stretch between claims is searched
        on its own, a claim ending the words before it ("finetune出来的" of "finetune出来的13b结果" when
        "13b" was read). The claims are those made before the search; what the caller claims while
        iterating hides nothing."""
        found = regex(pattern) if isinstance(pattern, str) else pattern
        text = self.original
        for start, end in _stretches(len(text), [*self.claimed, *besides]):
            pos = start
            while pos <= end and (match := found.search(text, pos, end)):
                yield match
                pos = match.end() if match.end() > match.start() else match.end() + 1

    def unclaimed_search(self, pattern: re.Pattern | str, besides: Spans = ()) -> re.Match | None:
        """The first match in the question as written whose words stand on no claim (`unclaimed`)."""
        return next(self.unclaimed(pattern, besides), None)

    def claims_within(self, start: int, end: int, at: int = 0) -> list[tuple[int, int]]:
        """The claims over the question's [start, end), placed where those words stand in a view of
        the question that holds them from its position `at`."""
        within = [(max(a, start), min(b, end)) for a, b in self.claimed if a < end and start < b]
        return [(a - start + at, b - start + at) for a, b in within]

    def free_from(self, start: int, end: int) -> int:
        """Where the words before `end` that no claim covers begin, from `start` on (the end of the
        last claim in [start, end), else `start`)."""
        return max([start, *(b for a, b in self.claimed if start < b <= end)])

    def claimed_before(self, start: int) -> int:
        """Where the claims written right before `start` (with spaces alone between) begin; `start`
        when none is."""
        moved = True
        while moved:
            moved = False
            for a, b in self.claimed:
                if a < start <= b or (a < start and b < start and not self.original[b:start].strip()):
                    start, moved = a, True
        return start

    def claim(self, start: int, end: int) -> None:
        """Take the words at [start, end): no reading of the question as written stands there after
        (ReaderState._unclaimed, Scan.unclaimed)."""
        if end > start:
            self.claimed.append((start, end))

    def take(self, match: re.Match, group: int | str = 0) -> str:
        """Claim a match's words (or one group's) and return them as written."""
        start, end = match.span(group)
        self.last_span = (start, end)
        self.claim(start, end)
        return self.original[start:end].strip()
