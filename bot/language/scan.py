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
        (engine.find, unread.py), nor on the spans `besides`. A match that runs onto a claim is looked
        for again in the words before the claim, which end there ("finetune出来的" of "finetune出来的13b结果"
        when "13b" was read); one that starts on a claim is none, the search going on after it. The
        claims are those made before the search; what the caller claims while iterating hides nothing."""
        found = regex(pattern) if isinstance(pattern, str) else pattern
        claims, pos = [*self.claimed, *besides], 0  # the claims as they are now
        if not claims:
            yield from found.finditer(self.original)  # nothing claimed: every match stands
            return
        while match := self._free_match(found, pos, claims):
            yield match
            pos = match.end() if match.end() > match.start() else match.end() + 1

    def unclaimed_search(self, pattern: re.Pattern | str, besides: Spans = ()) -> re.Match | None:
        """The first match in the question as written whose words stand on no claim (`unclaimed`)."""
        found = regex(pattern) if isinstance(pattern, str) else pattern
        return self._free_match(found, 0, [*self.claimed, *besides] if besides else self.claimed)

    def between_claims(self, pattern: re.Pattern | str) -> Iterator[re.Match]:
        """Matches inside the stretches no claim covers, each stretch searched on its own: what
        `unclaimed` finds for a pattern that looks at nothing beyond its own words (no lookaround,
        anchor or \\b, as the words nothing read: "lama3-" of "lama3-70b" when "70b" was read),
        found with one search a stretch."""
        found = regex(pattern) if isinstance(pattern, str) else pattern
        text, pos = self.original, 0
        for start, end in [*sorted(self.claimed), (len(text), len(text))]:
            if start > pos:
                yield from found.finditer(text, pos, start)
            pos = max(pos, end)

    def unread_words(self, pattern: re.Pattern) -> list[str]:
        """The words of a pattern without groups found between claims (`between_claims`), as text."""
        text, pos, found = self.original, 0, []
        for start, end in [*sorted(self.claimed), (len(text), len(text))]:
            if start > pos:
                found += pattern.findall(text, pos, start)
            pos = max(pos, end)
        return found

    def _free_match(self, found: re.Pattern, pos: int, claims: Spans) -> re.Match | None:
        """The first match from `pos` on that stands on none of the `claims` (`unclaimed`)."""
        text = self.original
        while pos <= len(text) and (match := found.search(text, pos)):
            start, end = match.span()
            on, ahead = None, end  # the claim the match starts on; where the first it runs onto starts
            for a, b in claims:
                if a <= start < b:
                    on = b
                    break
                if start < a < ahead:
                    ahead = a
            if on is not None:
                pos = on  # the match starts on a claim: none, the search goes on after it
                continue
            if ahead == end:
                return match
            if before := found.search(text, start, ahead):  # it runs onto a claim: the words before it
                return before
            pos = ahead  # on the claim from there: the next search skips it
        return None

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

    def unclaim(self, since: int, count: int) -> None:
        """Give back `count` claims made from the `since`-th on (what a step claimed after them stays)."""
        del self.claimed[since : since + count]

    def take(self, match: re.Match, group: int | str = 0) -> str:
        """Claim a match's words (or one group's) and return them as written."""
        start, end = match.span(group)
        self.last_span = (start, end)
        self.claim(start, end)
        return self.original[start:end].strip()
