"""Lengths and amounts of data (steps of the Reader, extract.py): a prompt's and a response's
lengths, a served prompt and output, counts of tokens (training tokens, a sequence's or a sample's
length, told apart by the words around them), the dataset's samples, size and epochs, and the
sequence length: each the engine's readings of its rules (knowledge/rules/<lang>/<dimension>.yaml)
taken from the text at the step's place in the Reader's order."""

from __future__ import annotations

from gpuplan.bot.language import engine
from gpuplan.bot.language.reader_state import ReaderState


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
        if self.voc.triggers["dataset"].search(self.scan.original):
            spans = self._unclaimed("dataset")
            self._set_readings(sorted(spans, key=lambda span: (-span.rule.priority, span.start)))

    def sequence(self) -> None:
        """The sequence length: "seq 2k", "seq_len=4096", "4k context", "上下文 32k", "序列长度8192", "8k",
        "7B 100k" (knowledge/rules/*/sequence.yaml). Set rule by rule, the highest priority first: of
        two different lengths the first set stands unless Reader.set says otherwise."""
        spans = self._unclaimed("sequence")
        self._set_readings(sorted(spans, key=lambda span: (-span.rule.priority, span.start)))

    def prompt_and_response(self) -> None:
        """A prompt's and a response's lengths written apart ("Prompt length: 40K tokens / Response
        length: 10K tokens", verl's max_prompt_length and max_response_length, 输入长度/输出长度;
        knowledge/rules/*/prompt_response.yaml): a sequence holds both, so its length is their sum,
        the first its prompt. The first of each is read, and only when both are written."""
        first: dict[str, engine.Span] = {}
        for span in self._unclaimed("prompt_response"):
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
        prompt alone in a serving question ("5000-token prompts", "prompts of 5k tokens";
        knowledge/rules/*/served_split.yaml); and where the prompts are prefilled ("disaggregated",
        "PD separation", "prefill/decode 分离"). Set rule by rule, the highest priority first."""
        self._engine_readings("prefill_mode")
        spans = self._unclaimed("served_split")
        self._set_readings(sorted(spans, key=lambda span: (-span.rule.priority, span.start)))
