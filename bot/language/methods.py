"""The method named (read after the Reader's steps, by the parser: it needs to know whether
options are compared) and a precision word in the request's terms."""

from __future__ import annotations

import re

from gpuplan.bot.language import engine
from gpuplan.bot.language.artifact_words import vocabulary as artifact_words
from gpuplan.bot.language.reader_state import ReaderState
from gpuplan.estimator.schema import Note

# what joins a method word to a negated one before it: negated too ("without PEFT and quantization")
_JOINED_TO_NEGATED = re.compile(r"\s*(?:and|or|nor|,|、|和|或|与|/)\s*")

# (position, order: the rule's priority negated, method: "infer" or a weak word's "infer_weak", words)
Mention = tuple[int, int, str, str]


def _weak(span: engine.Span) -> bool:
    """A weak word ("run", "Instruct", "train a 2B"): its rule is named `*_weak`."""
    return span.rule.name.endswith("_weak")


def _mention(span: engine.Span, text: str) -> Mention:
    method = f"{span.value}_weak" if _weak(span) else span.value
    return (span.start, -span.rule.priority, method, text[span.start : span.end])


def _one_pass(spans: list[engine.Span]) -> list[engine.Span]:
    """The method words one scan from the start takes: the first place any rule matches, the
    highest priority there, then on after its words (a word inside another is not taken twice)."""
    taken: list[engine.Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.rule.priority)):
        if not taken or span.start >= taken[-1].end:
            taken.append(span)
    return taken


def precision_for(word: str, method: str | None) -> str | None:
    """A precision word in the request's terms: serving keeps bf16/fp16/fp8/int8/int4; training
    maps bf16 to bf16-mixed (pure bf16 when said), fp16 to fp16-mixed, fp8 to fp8-mixed."""
    if method == "infer":
        return {"bf16-pure": "bf16"}.get(word, word)
    return {"bf16": "bf16-mixed", "bf16-pure": "bf16", "fp16": "fp16-mixed", "fp8": "fp8-mixed", "fp32": "fp32"}.get(
        word
    )


class MethodWords(ReaderState):
    """The Reader's reading of the method."""

    def method(self, comparing: bool = False) -> None:
        """The method named first (a word after "not"/"非"/"without" does not count), except that
        "full" beside DPO/PPO or (continued) pretraining is that method, and adapters that are only
        served are serving; a weak word ("run", "Instruct", "train a 2B") counts when nothing else
        is named and no training or fine-tuning word says otherwise; a bare "fine-tune" is full."""
        scan, voc = self.scan, self.voc
        mentions = self._method_mentions()
        strong = [m for m in mentions if not m[2].endswith("_weak")]
        chosen = min(strong or mentions, default=None)
        rl_tool = min((m for m in mentions if m[2] == "ppo_weak"), default=None)
        if chosen and chosen[2] == "pretrain_weak" and rl_tool:
            chosen = rl_tool  # "train a 7b model using verl": the RL framework says which training
        if chosen and chosen[2] == "full":
            chosen = self._whole_model_method(chosen, strong)
        serving = next((m for m in strong if m[2] == "infer"), None)
        if chosen and chosen[2] in ("lora", "qlora") and serving and not self._training_job():
            chosen = serving  # "中文lora 的 4-bit量化模型 ... 推理", "lora模型批量推理速度": serving adapters
        if chosen and chosen[2] == "infer_weak" and self._training_job():
            chosen = None  # "可以做34B模型sft吗？...运行脚本": the training word says more than "run"
        elif chosen and chosen[2] == "pretrain_weak" and self._finetune_elsewhere(chosen):
            chosen = None  # "fine-tuning the 32B model? I tried training the 32B model": a fine-tune
        if chosen:
            self.method_weak = chosen[2] == "pretrain_weak"  # "train a 70B": a pasted script's method wins
            self.fields["method"] = chosen[2].removesuffix("_weak")
            self.words["method"] = chosen[3]
            if chosen[0] in self._prefix_tuning_at:  # "ptv2": what the plan calls LoRA, said
                self.notes.append(Note(code="prefix_tuning_as_lora", params={"words": chosen[3]}))
            self._contradiction(strong, chosen, comparing)
            self.methods_named = list(dict.fromkeys(m[2] for m in strong))
        else:
            match = scan.unclaimed_search(voc.finetune)
            words = scan.take(match) if match else self.adapter_negated  # "在非lora的情况下": the whole model
            if words:
                self.fields["method"] = "full"
                self.words["method"] = words
                self.notes.append(Note(code="finetune_read_as_full", params={"words": words}))
        for start, end in self._method_spans:  # found by _method_mentions in the question as written
            scan.claim(start, end)
        for match in scan.unclaimed(voc.finetune):
            scan.take(match)

    def _training_job(self) -> bool:
        """A training word outside the names of what training made ("微调后的模型", "LoRA adapter")."""
        artifacts = [m.span() for m in self.scan.unclaimed(self.voc.trained_artifacts)]
        return self.scan.unclaimed_search(self.voc.training, besides=artifacts) is not None

    @staticmethod
    def _whole_model_method(full: tuple, strong: list[tuple]) -> tuple:
        """ "full ... DPO" anywhere is full-parameter DPO/PPO; "全参数增量预训练", "full-parameter
        continued pretraining" right beside it are (continued) pretraining, which trains every
        parameter anyway; otherwise the full fine-tune stands."""
        for m in strong:
            if m[2] in ("dpo", "ppo"):
                return m
            if m[2] in ("continue", "pretrain") and 0 <= m[0] - (full[0] + len(full[3])) <= 6:
                return m
        return full

    def _finetune_elsewhere(self, mention: tuple[int, int, str, str]) -> bool:
        """A fine-tuning word outside the words of `mention` ("训练" inside "训练7b" does not count)."""
        start = mention[0]
        text = self.scan.original
        outside = text[:start] + " " * len(mention[3]) + text[start + len(mention[3]) :]
        return bool(self.voc.finetune.search(outside))

    def _method_mentions(self) -> list[Mention]:
        """(position, order, method, words) of every method word not negated (knowledge/rules/*/method.yaml,
        read as one pass over the text would: at each place the highest priority, "qlora" before "lora",
        then on after its words). A weak phrase with a strong word inside is that word ("run PPO model")."""
        negation = artifact_words().negation
        found: list[Mention] = []
        self._method_spans = []
        text = self.scan.original
        spans = engine.found(text, "method")
        negated_end = -1
        for span in _one_pass(spans):  # "train 2B": a size read before
            self._method_spans.append((span.start, span.end))
            if span.rule.name == "prefix_tuning":  # method.yaml: P-Tuning v2, read as LoRA
                self._prefix_tuning_at.add(span.start)
            mention = _mention(span, text)
            negated = negation.search(text[max(0, span.start - 16) : span.start])
            if negated or (negated_end >= 0 and _JOINED_TO_NEGATED.fullmatch(text, negated_end, span.start)):
                negated_end = span.end  # "without any PEFT and Quantization": both
                if negated and mention[2] in ("lora", "qlora"):
                    self.adapter_negated = text[max(0, span.start - 16) + negated.start() : span.end]
                continue
            inside = [_mention(s, text) for s in spans if not _weak(s) and span.start < s.start and s.end <= span.end]
            found.append(min(inside) if _weak(span) and inside else mention)
        return found

    def _contradiction(self, strong: list[tuple[int, int, str, str]], chosen: tuple, comparing: bool) -> None:
        """ "QLoRA full fine-tune": the first is planned, the other named back."""
        full = next((m for m in strong if m[2] == "full" and self.voc.explicit_full.search(m[3])), None)
        adapter = next((m for m in strong if m[2] in ("lora", "qlora")), None)
        if full and adapter and not comparing:
            other = adapter if chosen[2] == "full" else full
            self.contradiction = Note(code="method_contradiction", params={"used": chosen[3], "other": other[3]})
