"""What the rules of plain values refer to by name (knowledge/rules/<lang>/batch.yaml, budget.yaml,
schedule.yaml, ...): the converters of an integer, an amount of money, a duration in days, a period,
counts and a rule's own constant, and the named predicate that a duration is the time one has
(`time_had`). The reading engine (engine.py) takes them into its CONVERTERS and CONDITIONS."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from gpuplan.bot.language import values
from gpuplan.bot.language.rule_files import piece_pattern

# --- converters: a match and its rule -> (value, the note's parameters or None) --------------------


def _int(match: re.Match, rule: Any) -> tuple[int, None]:
    return int(match["value"]), None


def _int_said(match: re.Match, rule: Any) -> tuple[int, dict[str, Any]]:
    """An integer whose reading the answer says back (a plain "batch size 8" read as per GPU)."""
    return int(match["value"]), {}


def _money(match: re.Match, rule: Any, suffix: str = "") -> tuple[float, dict[str, Any] | None]:
    """USD, with a note when the amount was written in yuan and converted."""
    raw = match["value"]
    usd, currency = values.money_usd(raw + suffix)
    if currency == "USD":
        return usd, None
    return usd, {"value": (raw + suffix).strip(), "usd": usd, "rate": values.CNY_PER_USD}


def _days(match: re.Match, rule: Any) -> tuple[float, None]:
    """A duration in days from its `count` and `unit` ("two weeks", "10天", "36 hours")."""
    return values.duration_days(f"{values.count_value(match['count'])}{match['unit']}"), None


def _const(match: re.Match, rule: Any) -> tuple[Any, None]:
    """The rule's own value, whatever the words ("fsdp" is ZeRO-3, "ddp" ZeRO-0)."""
    return rule.value, None


def _period_days(match: re.Match, rule: Any) -> tuple[float, None]:
    """ "this week", "next month", "一个月内": a week is 7 days, a month 30."""
    return (7.0 if match["unit"] in ("week", "周") else 30.0), None


def _counts(match: re.Match, rule: Any) -> tuple[Any, None]:
    """Counts in the groups named after the rule's fields ("{gpus:NUM} GPUs across {nodes:NUM} nodes"),
    in digits, Chinese numerals or English words, whole (int: "1.5 nodes" is 1)."""
    found = tuple(int(values.count_value(match[name])) for name in rule.fields)
    return (found if rule.more_fields else found[0]), None


def _whole_count(match: re.Match, rule: Any) -> tuple[int, None]:
    """A count of the rule's field that must be a whole number ("1.5 GPUs" is none)."""
    count = values.count_value(match[rule.field])
    if count != int(count):
        raise ValueError(f"not a whole count: {match[rule.field]!r}")
    return int(count), None


CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, dict[str, Any] | None]]] = {
    "int": _int,
    "int_said": _int_said,
    "money": _money,
    "money_usd": functools.partial(_money, suffix=" usd"),  # "budget 50k": dollars when none is written
    "money_cny": functools.partial(_money, suffix="元"),  # "预算50万": yuan when none is written
    "days": _days,
    "period_days": _period_days,
    "const": _const,
    "counts": _counts,
    "whole_count": _whole_count,
}


# --- conditions: (the whole lower-cased question, a match) -> whether the reading holds ----------

_CLAUSE_END = re.compile(r"[.。!?！？;；\n,，:：]|\s{2,}|\s(?=我)")


def _time_had(text: str, match: re.Match) -> bool:
    """A duration followed by what is to be done in it is the time one has when its clause says
    so before it ("we have $30k and 10 days to pretrain") or opens with it ("3 months to train")."""
    clause = max((m.end() for m in _CLAUSE_END.finditer(text, 0, match.start())), default=0)
    before = text[clause : match.start()]
    return not before.strip(" ~(") or bool(piece_pattern("HAVE").search(before))


CONDITIONS: dict[str, Callable[[str, re.Match], bool]] = {"time_had": _time_had}
