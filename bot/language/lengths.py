"""Lengths and amounts of data (steps of the Reader, extract.py): a prompt's and a response's
lengths, a served prompt and output, counts of tokens (training tokens, a sequence's or a sample's
length, told apart by the words around them), the dataset's samples, size and epochs, and the
sequence length."""

from __future__ import annotations

import contextlib
import functools

from gpuplan.bot.language import engine, values
from gpuplan.bot.language.reader_state import ReaderState

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
        """Counts of tokens: "2T tokens", "300B tokens", "1.4万亿token", "50M tokens of data", read as the
        training tokens, a sequence's length or a sample's by the words around them (token_count_kind;
        knowledge/rules/*/tokens.yaml)."""
        self._engine_readings("tokens")

    def dataset(self) -> None:
        """The dataset: samples ("50k samples", "5万条数据"), its size ("a 20GB dataset", "数据集约20g") and
        the epochs ("3 epochs", "训练3轮"; knowledge/rules/*/dataset.yaml). Set rule by rule, the highest
        priority first, as the step set them before the rules were data."""
        if self.voc.triggers["dataset"].search(self.scan.text):
            spans = engine.read(self.scan.text, "dataset", original=self.scan.original)
            self._set_readings(sorted(spans, key=lambda span: (-span.rule.priority, span.start)))

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
