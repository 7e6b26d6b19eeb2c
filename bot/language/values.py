"""Read the numbers people write: sizes, token counts, lengths, durations and money.

Each reader returns a number or raises ValueError; both `key=value` tokens and the free-text
parser use them, so "700亿", "70b" and "70 billion" mean the same thing everywhere.
"""

from __future__ import annotations

import functools
import math
import re

from gpuplan.knowledge import catalog

CJK = re.compile(r"[\u4e00-\u9fff]")  # a Chinese character: the text is (partly) Chinese

_CN_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "双": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000}
CN_NUMERALS = "".join([*_CN_DIGITS, *_CN_UNITS])  # every character of a number written in Chinese
NUMBER = rf"(\d+(?:[.,]\d+)*(?:\.\d+)?|[{CN_NUMERALS}]+)"

EN_NUMBERS = {
    "one": 1,
    "a": 1,
    "an": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "sixteen": 16,
    "twenty": 20,
    "thirty": 30,
    "sixty": 60,
    "ninety": 90,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
    "a single": 1,
    "dual": 2,
    "a pair of": 2,
    "pair of": 2,
    "quad": 4,
}
_NUMERALS = CN_NUMERALS.replace("零", "")  # no count starts with 零
_COUNT_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
_COUNT_WORDS += ["sixteen", "twenty", "thirty", "sixty", "ninety", "a couple of", "a few", "a single", "a pair of"]
_COUNT_WORDS += ["dual", "quad", "a", "an"]
# a count: digits ("1,024", "2.5", "5千"), Chinese numerals ("两千", "万"), English words; each
# branch starts with its first character written out, so that `re` scans for those instead of
# trying every position
NUM = (
    "("
    + "|".join(
        [rf"{d}\d*(?:,\d{{3}})*(?:\.\d+)?(?:[百千万](?!兆))?" for d in "0123456789"]
        + [f"{c}[{_NUMERALS}]*(?!兆)" for c in _NUMERALS]  # "万兆" is 10 GbE
        + _COUNT_WORDS
    )
    + ")"
)


def count_value(text: str) -> float:
    """A small count written as digits, in Chinese or in English words; 0 when it is none."""
    text = text.strip().lower()
    if text in EN_NUMBERS:
        return float(EN_NUMBERS[text])
    try:
        return number(text)
    except ValueError:
        return 0.0


@functools.cache
def multipliers() -> dict[str, float]:
    """The multiplier words of knowledge/lexicon.yaml: 'b' -> 1e9, '亿' -> 1e8, '万亿' -> 1e12."""
    words = catalog().lexicon.multipliers
    return {**words.en, **words.zh}


@functools.cache
def multiplier_pattern() -> str:
    """The multiplier words as one optional group, the longest first ('万亿' before '万')."""
    return "(" + "|".join(re.escape(w) for w in sorted(multipliers(), key=len, reverse=True)) + ")?"


@functools.cache
def _quantity() -> re.Pattern:
    return re.compile(NUMBER + r"\s*" + multiplier_pattern() + "$", re.IGNORECASE)


def cn_number(text: str) -> float:
    """'八' -> 8, '十六' -> 16, '三百' -> 300, '一千二百' -> 1200, '两万' -> 20000, and the spoken
    short form '一千二' -> 1200 (a last digit after 百/千/万 counts in the unit below it)."""
    if text.isdigit():
        return float(text)
    total, section, current, unit = 0, 0, 0, 0
    for ch in text:
        if ch == "万":  # a myriad closes what came before it: "十万" 100000, "两万五" 25000
            total += ((section + current) or 1) * 10_000
            section, current, unit = 0, 0, 10_000
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
            section += (current or 1) * unit
            current = 0
        elif ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
            if ch == "零":
                unit = 0  # "一千零八": the 8 is units, not hundreds
        else:
            raise ValueError(text)
    if current and unit >= 100 and text[-2] in "百千万":
        current *= unit // 10  # "一千二" is 1200, "两万五" 25000
    return float(total + section + current)


# what number() tells apart, compiled once: it reads a number on most questions, some more than once
_CN_NUMBER = re.compile(rf"[{CN_NUMERALS}]+")
_DIGITS_CN_UNIT = re.compile(r"\d[\d,.]*[百千万]")
_THOUSANDS = re.compile(r"\d{1,3}(,\d{3})+(\.\d+)?")


def number(text: str) -> float:
    """A plain number: '1,024' -> 1024, '1.5' -> 1.5, '八' -> 8, '两千' -> 2000, '1.2万' -> 12000."""
    text = text.strip()
    if _CN_NUMBER.fullmatch(text):
        return cn_number(text)
    if _DIGITS_CN_UNIT.fullmatch(text):
        return number(text[:-1]) * _CN_UNITS[text[-1]]  # "5千", "1.2万"
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def quantity(text: str, default_unit: float = 1.0) -> float:
    """A count with an optional multiplier: '2T' -> 2e12, '300B' -> 3e11, '1.4万亿' -> 1.4e12."""
    match = _quantity().match(text.strip().lower().replace(" ", ""))
    if not match:
        raise ValueError(text)
    value = number(match.group(1)) * (multipliers()[match.group(2)] if match.group(2) else default_unit)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


_PARAMS_AFTER = re.compile(r"(参数|params?|parameters?)$")
_BARE_NUMBER = re.compile(r"\d+(\.\d+)?")


def model_size_b(text: str) -> float:
    """A model size in billions: '70b' -> 70, '700亿' -> 70, '0.5B' -> 0.5, '1.5万亿' -> 1500, '7 billion' -> 7."""
    cleaned = text.strip().lower().replace(" ", "")
    cleaned = _PARAMS_AFTER.sub("", cleaned)
    if cleaned.startswith("-"):
        raise ValueError(text)
    if _BARE_NUMBER.fullmatch(cleaned):
        return number(cleaned)  # a bare number in a size field is in billions
    return quantity(cleaned) / 1e9


def length(text: str) -> int:
    """A sequence length: '4k' -> 4096, '32k' -> 32768, '8192' -> 8192, '128K' -> 131072, '1M' -> 1048576."""
    cleaned = text.strip().lower().replace(" ", "").removesuffix("tokens").removesuffix("token")
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([km]?)", cleaned)
    if not match:
        raise ValueError(text)
    value = float(match.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[match.group(2)]
    if not math.isfinite(value) or value > 1e15:
        raise ValueError(text)  # no sequence is that long; float('9'*400) is infinite
    return int(round(value))


def duration_days(text: str) -> float:
    """A deadline: '14d', '2w', '2周', '30天', '3 months', '36h', '两周'."""
    cleaned = text.strip().lower().replace(" ", "")
    match = re.fullmatch(
        NUMBER + r"?(d|days?|天|日|w|weeks?|wks?|周|星期|个星期|h|hours?|hrs?|小时|个小时|"
        r"m|months?|mo|个月|月)",
        cleaned,
    )
    if not match:
        raise ValueError(text)
    value = number(match.group(1)) if match.group(1) else 1.0
    unit = match.group(2)
    if unit in ("h", "hour", "hours", "hr", "hrs", "小时", "个小时"):
        return value / 24
    if unit.startswith("w") or unit in ("周", "星期", "个星期"):
        return value * 7
    if unit in ("m", "month", "months", "mo", "个月", "月"):
        return value * 30
    return value


# exchange rate used when someone budgets in RMB: stated as an assumption in the answer
CNY_PER_USD = 7.2


def money_usd(text: str) -> tuple[float, str]:
    """A budget in USD and the currency it was written in: '$50k' -> (50000, 'USD'),
    '5万美元' -> (50000, 'USD'), '50万人民币' -> (69444, 'CNY'), '¥500000' -> (69444, 'CNY'),
    '5万块' -> (6944, 'CNY')."""
    cleaned = text.strip().lower().replace(" ", "").replace(",", "")
    currency = "USD"
    if re.search(r"人民币|元|块|rmb|cny|￥|¥", cleaned) and "美元" not in cleaned:
        currency = "CNY"  # 块 / 块钱: yuan, colloquially
    cleaned = re.sub(r"美元|美金|人民币|元|块钱|块|rmb|cny|usd|dollars?|bucks|[$￥¥]", "", cleaned)
    value = quantity(cleaned)
    if currency == "CNY":
        value /= CNY_PER_USD
    return value, currency


def ratio(text: str) -> float:
    """A fraction: '0.4' -> 0.4, '40%' -> 0.4."""
    cleaned = text.strip()
    if cleaned.endswith("%"):
        return number(cleaned[:-1]) / 100
    return number(cleaned)
