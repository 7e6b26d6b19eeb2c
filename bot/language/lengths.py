"""Lengths and amounts of data (steps of the Reader, extract.py): a prompt's and a response's
lengths, a served prompt and output, counts of tokens (training tokens, a sequence's or a sample's
length, told apart by the words around them), the dataset's samples, size and epochs, and the
sequence length."""

from __future__ import annotations

import contextlib
import functools
import re

from gpuplan.bot.language import engine, values
from gpuplan.bot.language.reader_state import ReaderState
from gpuplan.bot.language.sentences import sentence_around
from gpuplan.bot.language.values import NUM
from gpuplan.bot.language.vocabulary import vocabulary

# fewer tokens than this, written as a bare number, are a length, never a training set (not sourced:
# the smallest fine-tuning sets people plan for are thousands of samples of hundreds of tokens)
SHORTEST_DATASET_TOKENS = 100_000

# more tokens than this are no one sample's length (Llama 4 Scout's 10M-token context, the longest published)
LONGEST_SAMPLE_TOKENS = 10_000_000

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
def _samples_counted() -> re.Pattern:
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


# before a token count: the top of a range or a bound ("16-32k tokens", "up to 32k tokens", "最长32k token"),
# as lengths are written; the longest sequence is the one to plan for
_LONGEST_BEFORE = re.compile(r"(?:(?<![\d.])\d+(?:\.\d+)?\s*k?\s*(?:-|~|to|至|到)|up to|upto|at most|最长|至多)\s*$")

_DATA_AFTER = re.compile(r"\s*(?:of\s+)?(?:training\s+)?(?:data|dataset|corpus|text|pre-?training|training|数据|语料)")


def _power_of_two(value: float) -> bool:
    return value == int(value) and int(value) & (int(value) - 1) == 0


# a length in a prompt/output split: digits, a "k" of 1,024 ("1k/1k", "ISL 1k"), no letter after
_SPLIT_LENGTH = r"(\d+(?:\.\d+)?\s*k?)(?![\d.]|[a-jl-z])"

_SPLIT_JOIN = r"\s*(?:tokens?|token)?\s*[,，;；/、]?\s*(?:and\s+|和|,)?\s*"

_LABEL_VALUE = r"\s*(?:length|len)?\s*(?:of|=|:|is|are|为|是|：)?\s*(?:about\s*|around\s*|~)?"


@functools.cache
def _split_patterns(prompt_words: str, output_words: str, serving: bool) -> tuple[str, ...]:
    """The prompt-and-output patterns: labels before the lengths ("input 2048 output 128"), after
    them ("2048 input / 128 output tokens"), a labelled ratio ("ISL/OSL 1000/1000") and, in a serving
    question, a bare ratio of lengths in k ("1k/1k")."""
    p, o = (rf"(?<![a-z])(?:{w})" for w in (prompt_words, output_words))
    n = _SPLIT_LENGTH
    found = (
        p + _LABEL_VALUE + n + _SPLIT_JOIN + o + _LABEL_VALUE + n,
        n + r"\s*(?:tokens?\s*)?" + p + _SPLIT_JOIN + n + r"\s*(?:tokens?\s*)?" + o,
        p + r"\s*/\s*" + o + _LABEL_VALUE + n + r"\s*/\s*" + n,
    )
    bare = r"(?<![\w./$])(\d+(?:\.\d+)?\s*k)\s*/\s*(\d+(?:\.\d+)?\s*k)(?![\w./])"
    return found + ((bare,) if serving else ())


@functools.cache
def _prompt_patterns(prompt_words: str) -> tuple[str, ...]:
    """A prompt's length said alone: "5000-token prompts", "5k token input", "prompts of 5000 tokens",
    "输入5000 token"."""
    p = rf"(?<![a-z])(?:{prompt_words})"
    return (
        _SPLIT_LENGTH + r"\s*[- ]?\s*(?:tokens?|token)[- ]?\s*(?:long\s+)?(?:of\s+)?" + p,
        p + _LABEL_VALUE + _SPLIT_LENGTH + r"\s*(?:tokens?|token)?",
    )


class Lengths(ReaderState):
    """The Reader's steps that read lengths, tokens and the dataset."""

    def tokens(self) -> None:
        pattern = NUM + r"\s*" + values.multiplier_pattern() + r"\s*(?:training\s+)?(?:tokens?|个\s*token|词元|token)"
        for match in self.scan.finditer(pattern):
            try:
                value = values.quantity(match.group(1) + (match.group(2) or ""))
            except ValueError:
                continue
            before = self.scan.original[max(0, match.start() - 24) : match.start()]
            after = self.scan.text[match.end() : match.end() + 24]
            beside_samples = bool(_samples_counted().search(sentence_around(self.scan.original, match.span())))
            field = token_count_kind(value, bool(match.group(2)), before, after, beside_samples)
            if field in ("seq_len", "sample_tokens") and match.group(2):  # "128k token context": 128 x 1024
                with contextlib.suppress(ValueError):  # a length beyond what values.length reads: not one
                    value = values.length(match.group(1) + match.group(2))
            if field:
                self.set(field, int(value) if field != "train_tokens" else value, self.scan.take(match))

    def dataset(self) -> None:
        if not self.voc.triggers["dataset"].search(self.scan.text):
            return
        for match in self.scan.finditer(_samples_counted()):
            try:
                self.set(
                    "samples", int(values.quantity(match.group(1) + (match.group(2) or ""))), self.scan.take(match)
                )
            except ValueError:
                continue
        size = (
            r"(\d+(?:\.\d+)?)\s*(tb|gb|t|g)\s*(?:of\s+)?(?:raw\s+|training\s+)?(?:data|text|corpus|dataset|"
            r"语料|数据|文本|训练数据)"
        )
        before = (
            r"(?:data(?:set)?|corpus|语料|数据集?)\s*(?:is|of|about|around|约|大约|有|共)?\s*"
            r"(\d+(?:\.\d+)?)\s*(tb|gb|t|g)"
        )
        for pattern in (size, before):
            for match in self.scan.finditer(pattern):
                scale = 1000.0 if match.group(2).startswith("t") else 1.0
                self.set("dataset_gb", float(match.group(1)) * scale, self.scan.take(match))
        for match in self.scan.finditer(r"(\d+(?:\.\d+)?|[一二两三四五六七八九十]+)\s*(?:epochs?|轮|个\s*epoch|遍)"):
            try:
                self.set("epochs", values.number(match.group(1)), self.scan.take(match))
            except ValueError:  # more digits than a float holds: not a count anyone meant
                continue

    def sequence(self) -> None:
        """The sequence length: "seq 2k", "seq_len=4096", "4k context", "上下文 32k", "序列长度8192", "8k",
        "7B 100k" (knowledge/rules/*/sequence.yaml). Set rule by rule, the highest priority first: of
        two different lengths the first set stands unless Reader.set says otherwise."""
        spans = engine.read(self.scan.text, "sequence", original=self.scan.original)
        self._set_readings(sorted(spans, key=lambda span: (-span.rule.priority, span.start)))

    def prompt_and_response(self) -> None:
        """A prompt's and a response's lengths written apart ("Prompt length: 40K tokens / Response
        length: 10K tokens", verl's max_prompt_length and max_response_length, 输入长度/输出长度;
        knowledge/rules/*/prompt_response.yaml): a sequence holds both, so its length is their sum,
        the first its prompt. The first of each is read, and only when both are written."""
        first: dict[str, engine.Span] = {}
        for span in engine.read(self.scan.text, "prompt_response", original=self.scan.original):
            first.setdefault(span.field, span)
        prompt, response = first.get("prompt_tokens"), first.get("response_tokens")
        if not (prompt and response):
            return
        words = self._take_span(prompt) + " + " + self._take_span(response)
        self.set("seq_len", prompt.value + response.value, words)
        self.set("prompt_tokens", prompt.value, words)  # a served sequence's prompt

    def served_split(self) -> None:
        """A served sequence's prompt and output ("input 2048 output 128", "ISL 1k OSL 8k", "1k/1k",
        "2048 input / 128 output tokens", "输入2000输出500"): the prompt, and the sequence as both; a
        prompt alone in a serving question ("5000-token prompts", "prompts of 5k tokens"); and where the
        prompts are prefilled ("disaggregated", "PD separation", "prefill/decode 分离")."""
        self._engine_readings("prefill_mode")
        serving = bool(dict(self.voc.methods)["infer"].search(self.scan.text))
        split = self.voc.served_split
        for pattern in _split_patterns(split["prompt"], split["output"], serving):
            for match in self.scan.finditer(pattern):
                with contextlib.suppress(ValueError):
                    prompt, output = (values.length(g) for g in match.groups())
                    if prompt >= 16 and output >= 1 and prompt + output <= 100_000_000:
                        words = self.scan.take(match)
                        self.set("prompt_tokens", prompt, words)
                        self.set("seq_len", prompt + output, words)
        if not serving:
            return  # a training question's "prompts of 1500 tokens" are its samples' length (tokens())
        for pattern in _prompt_patterns(split["prompt"]):
            for match in self.scan.finditer(pattern):
                with contextlib.suppress(ValueError):
                    prompt = values.length(match.group(1))
                    if 16 <= prompt <= 100_000_000:
                        self.set("prompt_tokens", prompt, self.scan.take(match))
