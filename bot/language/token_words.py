"""What the token-count and dataset rules (knowledge/rules/<lang>/tokens.yaml, dataset.yaml) refer to
by name: what "N tokens" counts, told from the words around it (`token_count_kind`: training tokens, a
sequence's length or a sample's), as the named conditions of the rules that read each; the converters
of a count of tokens ("2T" is 2e12 tokens; "128k", as a length, 131,072), of samples ("5万条" 50,000),
of a dataset's size in GB ("2t" 2,000) and of a plain number (epochs). The reading engine (engine.py)
takes them into its CONVERTERS and CONDITIONS."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable
from typing import Any

from gpuplan.bot.language import values
from gpuplan.bot.language.sentences import sentence_around
from gpuplan.bot.language.values import NUM
from gpuplan.bot.language.vocabulary import vocabulary

# fewer tokens than this, written as a bare number, are a length, never a training set (not sourced:
# the smallest fine-tuning sets people plan for are thousands of samples of hundreds of tokens)
SHORTEST_DATASET_TOKENS = 100_000

# more tokens than this are no one sample's length (Llama 4 Scout's 10M-token context, the longest published)
LONGEST_SAMPLE_TOKENS = 10_000_000

# how many characters before and after "N tokens" its words are looked for
AROUND = 24

# after "N tokens": a rate, or a length per item ("2048 tokens each", "4096 tokens per sample")
_RATE = re.compile(r"\s*(?:/\s*s|per second|a second|每秒|/秒)")

# an average length per sample: "averaging 1500 tokens", "平均每条800 token", "1500 tokens on average"
_AVERAGE_BEFORE = re.compile(
    r"(?:averag(?:e|ing)|avg\.?|mean|平均|每条|每个样本|per (?:sample|example|conversation)|each (?:sample|example))"
    r"(?: (?:length|size))?(?: of| is| was| about| around| roughly|长度|每条|为|是|约|大约|平均)*\s*~?\s*$"
)

_AVERAGE_AFTER = re.compile(r"\s*(?:on average|in average|avg|average|平均)")

_DATA_BEFORE = re.compile(r"(?:data(?:set)?|corpus|语料|数据)")

_CONTEXT_AFTER = re.compile(r"\s*(?:context|window|ctx|上下文|窗口|长度|length)")

_PER_ITEM = re.compile(r"\s*(?:each|long|per (?:sample|example|sequence|request|prompt|conversation|row|item)|每条)")

# before a token count: the top of a range or a bound ("16-32k tokens", "up to 32k tokens", "最长32k token"),
# as lengths are written; the longest sequence is the one to plan for
_LONGEST_BEFORE = re.compile(r"(?:(?<![\d.])\d+(?:\.\d+)?\s*k?\s*(?:-|~|to|至|到)|up to|upto|at most|最长|至多)\s*$")

_DATA_AFTER = re.compile(r"\s*(?:of\s+)?(?:training\s+)?(?:data|dataset|corpus|text|pre-?training|training|数据|语料)")


def token_count_kind(
    value: float, multiplied: bool, before: str, after: str, beside_samples: bool = False
) -> str | None:
    """What "N tokens" counts, from the words around it: nothing for a rate ("2000 tokens/s"), a
    sequence length ("128k token context", "2048 tokens each", "prompts of 1500 tokens": no dataset
    is that small), a sample's length ("samples averaging 1500 tokens"; "20k samples of 2k tokens"
    when a count of samples stands in its sentence), else the training tokens ("2T tokens",
    "training data is 50000 tokens")."""
    if _RATE.match(after):
        return None
    if _CONTEXT_AFTER.match(after) or (
        value <= 1_048_576 and _LONGEST_BEFORE.search(before) and not _DATA_AFTER.match(after)
    ):
        return "seq_len"
    if _sample_length(value, before, after, beside_samples):
        return "sample_tokens"
    if multiplied:
        return "train_tokens"
    if 64 <= value <= 131_072 and (_PER_ITEM.match(after) or _power_of_two(value)):
        return "seq_len"
    if 16 <= value < SHORTEST_DATASET_TOKENS and not _DATA_BEFORE.search(before):
        return "seq_len"
    return "train_tokens"


def _sample_length(value: float, before: str, after: str, beside_samples: bool) -> bool:
    """Whether "N tokens" is each sample's length: said to be an average or each one's ("averaging
    1500 tokens", "每条2k token"), or written beside a count of samples ("20k samples of 2k tokens",
    "10k examples, 4k tokens each") when too few tokens for a dataset or said per sample; never when
    the words make it a total ("80k tokens in total") or no sample is that long."""
    of_samples, total_before, total_after = _sample_length_words()
    if not 16 <= value <= LONGEST_SAMPLE_TOKENS or total_before.search(before) or total_after.match(after):
        return False
    if _AVERAGE_BEFORE.search(before) or _AVERAGE_AFTER.match(after):
        return True
    per_sample = of_samples.search(before) or _PER_ITEM.match(after)
    return beside_samples and (value < SHORTEST_DATASET_TOKENS or bool(per_sample))


@functools.cache
def samples_counted() -> re.Pattern:
    """A count of samples, the number in groups 1 and 2: "20k samples", "1M conversations", "2万条样本"."""
    return re.compile(
        NUM
        + r"\s*"
        + values.multiplier_pattern()
        + r"\s*(?:training\s+|support\s+|customer\s+|labell?ed\s+)?(?:"
        + vocabulary().sample_nouns
        + ")"
    )


@functools.cache
def _sample_length_words() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(samples "of" a length before it, a total's words before a token count, and after it)."""
    voc = vocabulary()
    total = voc.token_total.pattern
    return (
        re.compile(rf"(?:{voc.sample_nouns})\s+(?:of|with)\s*(?:about|around|roughly|approximately|~)?\s*~?\s*$"),
        re.compile(rf"(?:{total})\s*(?:of|is|was|:|：|约|大约|有|是|为)?\s*(?:about|around|~)?\s*$"),
        re.compile(rf"\s*(?:{total})"),
    )


def _power_of_two(value: float) -> bool:
    return value == int(value) and int(value) & (int(value) - 1) == 0


def _count(match: re.Match) -> float:
    """The tokens counted by a match's `count` and `scale` groups: "2t" 2e12, "1.4万亿" 1.4e12."""
    return values.quantity(match["count"] + (match["scale"] or ""))


@functools.lru_cache(maxsize=64)
def _kind_at(original: str, text: str, start: int, end: int, count: str, scale: str | None) -> str | None:
    """`token_count_kind` of the count at [start, end): the words before it in the whole question
    (`original`), those after it in the text as the earlier steps left it (`text`), and whether a count
    of samples stands in its sentence. Cached: the three rules of a count ask the same."""
    try:
        value = values.quantity(count + (scale or ""))
    except ValueError:
        return None
    before = original[max(0, start - AROUND) : start]
    beside_samples = bool(samples_counted().search(sentence_around(original, (start, end))))
    return token_count_kind(value, bool(scale), before, text[end : end + AROUND], beside_samples)


def _counts(kind: str) -> Callable[[str, re.Match], bool]:
    def condition(text: str, match: re.Match) -> bool:
        return _kind_at(text, match.string, match.start(), match.end(), match["count"], match["scale"]) == kind

    condition.__doc__ = f'Whether "N tokens" counts {kind}, by token_count_kind.'
    return condition


def _token_total(match: re.Match, rule: Any) -> tuple[float, None]:
    """Training tokens: "2T tokens" 2e12, "300B tokens" 3e11, "1.4万亿token" 1.4e12."""
    return _count(match), None


def _token_length(match: re.Match, rule: Any) -> tuple[int, None]:
    """A length in tokens: "128k token context" is 128 x 1,024; a multiplier no length has ("2b")
    or a number values.length does not read counts as written."""
    value = _count(match)
    if match["scale"]:
        with contextlib.suppress(ValueError):
            value = values.length(match["count"] + match["scale"])
    return int(value), None


def _sample_count(match: re.Match, rule: Any) -> tuple[int, None]:
    """A count of samples: "50k samples" 50,000, "5万条数据" 50,000."""
    return int(_count(match)), None


def _dataset_gb(match: re.Match, rule: Any) -> tuple[float, None]:
    """A dataset's size in GB from its `value` and `unit`: "20gb" 20, "2t" 2,000 (decimal units)."""
    return float(match["value"]) * (1000.0 if match["unit"].startswith("t") else 1.0), None


def _number(match: re.Match, rule: Any) -> tuple[float, None]:
    """A plain number from the `value` group: "3" 3.0, "两" 2.0 (values.number)."""
    return values.number(match["value"]), None


CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, None]]] = {
    "token_total": _token_total,
    "token_length": _token_length,
    "sample_count": _sample_count,
    "dataset_gb": _dataset_gb,
    "number": _number,
}
CONDITIONS: dict[str, Callable[[str, re.Match], bool]] = {
    "counts_training_tokens": _counts("train_tokens"),
    "counts_a_sequence": _counts("seq_len"),
    "counts_a_sample": _counts("sample_tokens"),
}
