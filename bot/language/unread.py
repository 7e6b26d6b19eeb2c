"""A rule's match seen through the claims of the readings before it (engine.find).

A match's own words are its named groups up to its end; a group a pattern reads ahead of its end,
in a lookahead, only places it ("Qwen72b 910B": model_name.yaml's {SIZE_AFTER_NAME} looks at the size
written after a catalog name). Where such a group stands on words another reading took ("910b", a
card read as unsupported hardware), the match stands and the group reads as if it had not matched.
"""

from __future__ import annotations

import re
from typing import Any

Spans = list[tuple[int, int]]


def _on(span: tuple[int, int], claimed: Spans) -> bool:
    start, end = span
    for a, b in claimed:  # noqa: SIM110 (a loop, not any() over a generator: asked of every match)
        if start < b and a < end:
            return True
    return False


def seen(match: re.Match, claimed: Spans) -> re.Match | Unread | None:
    """`match` as the claims leave it: None when its own words stand on one, the match with the
    groups it read ahead hidden where they do, else the match itself."""
    low, high = match.span()
    for start, stop in match.regs:  # where the match and all its groups stand, lookarounds too
        if 0 <= start < low:
            low = start
        if stop > high:  # a group that did not match stands at (-1, -1)
            high = stop
    if not _on((low, high), claimed):
        return match  # no claim anywhere near: the most common answer, found at once
    end = match.end()
    groups = [name for name in match.re.groupindex if match.start(name) >= 0]
    if _on(match.span(), claimed) and not groups:
        return None
    hidden = []  # the groups read ahead of the match's end that stand on a claim
    for name in groups:
        if _on(match.span(name), claimed):
            if match.start(name) < end:
                return None  # one of its own words is another's
            hidden.append(name)
    return Unread(match, frozenset(hidden)) if hidden else match


class Unread:
    """A match whose `hidden` named groups read as unmatched; everything else is the match's."""

    def __init__(self, match: re.Match, hidden: frozenset[str]) -> None:
        self._match, self._hidden = match, hidden

    def __getattr__(self, name: str) -> Any:
        return getattr(self._match, name)

    def __getitem__(self, group: int | str) -> str | None:
        return None if group in self._hidden else self._match[group]

    def group(self, *groups: int | str) -> Any:
        found = tuple(self[g] for g in groups or (0,))
        return found[0] if len(found) == 1 else found

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        return {k: default if k in self._hidden else v for k, v in self._match.groupdict(default).items()}

    def start(self, group: int | str = 0) -> int:
        return -1 if group in self._hidden else self._match.start(group)

    def end(self, group: int | str = 0) -> int:
        return -1 if group in self._hidden else self._match.end(group)

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return (-1, -1) if group in self._hidden else self._match.span(group)
