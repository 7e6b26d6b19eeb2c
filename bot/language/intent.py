"""What a question asks for, and which troubleshooting topics it raises.

Intent is one of plan, troubleshoot, compare or other (help is decided by the parser). It is judged
by a linear classifier trained on labelled real questions (train/train_classifier.py writes
knowledge/classifier.npz; its cross-validated accuracy is in the file and the README). Its inputs
are character n-grams of the question (1-4 characters inside words, so English and Chinese are
read alike) plus features the rules read well: the troubleshooting rules' trigger phrases, the
question words of knowledge/questions.yaml, what was pasted (an OOM message, an NCCL log, a
command line) and what the parser found (a model, GPUs, two options compared). Topics are ranked
by one-vs-rest classifiers on the same inputs, with the trigger phrases as a floor. Without the
model file the rules alone decide, as they did before it existed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuplan.bot.language.classifier import (
    MAX_CODE_CHARS,
    Evidence,
    Model,
    Vector,
    _classifier_arrays,
    dense,
    dense_names,
    model,
    ngrams,
    text_for_ngrams,
    tfidf,
)
from gpuplan.bot.language.sections import (
    RULE_SECTIONS,
    SECTIONS,
    _section_patterns,
    contrasts,
    hits,
    question_words,
    section_pattern,
    sections_in,
    sections_of,
    triggered,
)
from gpuplan.bot.language.vocabulary import vocabulary

if TYPE_CHECKING:
    from gpuplan.bot.language.parser import Parsed

# the classifier's and the question words' names, read through this module by the parser, the
# training script and the tests
__all__ = [
    "MAX_CODE_CHARS", "RULE_SECTIONS", "SECTIONS", "Evidence", "Model", "Vector", "Verdict", "_classifier_arrays",
    "_section_patterns", "asked", "contrasts", "dense", "dense_names", "either_enough", "hits", "judge", "model",
    "ngrams", "overruled", "question_kind", "question_words", "section_pattern", "sections_in", "text_for_ngrams",
    "tfidf", "triggered", "verdict",
]  # fmt: skip

# what a question asks to be told, most telling first: whether it fits, how long, what it costs, how
# many or which GPUs, how much memory (the answer's first line says that first)
QUESTION_KINDS = (
    ("ask_concurrency", "concurrency"),  # "how many users can 8 A100 serve": the number, even after "can"
    ("ask_storage", "storage"),  # "is a 500 GB disk enough": the disk it needs
    ("ask_host_ram", "host_ram"),  # "how much CPU RAM for ZeRO-3 offload": the servers' memory
    ("ask_longest", "longest"),  # "how long a context can 8 H100 serve": one sequence's tokens
    ("ask_batch", "batch"),  # "what batch size can I use": the largest micro-batch
    ("ask_throughput", "throughput"),  # "how many tokens per second": generated or trained on
    ("ask_gpu_hours", "gpu_hours"),  # "how many GPU hours to pretrain a 1B model"
    ("yes_no", "fit"),
    ("ask_fit", "fit"),
    ("ask_time", "time"),
    ("ask_monthly", "cost_month"),  # "how much per month to serve it": a service's month
    ("ask_cost", "cost"),
    ("ask_count", "count"),
    ("choice", "choose"),  # "which network between nodes?": a choice, not a figure
)
INTENTS = ("plan", "troubleshoot", "compare", "other")
TOPIC_FLOOR = 0.35  # a topic below this probability is raised only by its own trigger phrase
# a verdict the classifier gives more than half its probability is not overruled by the weak rules
# (a family named in a question about templates or licences stays outside gpuplan's field): in the
# labelled questions that rule was wrong 13 times in 14, each time against an "other" of 0.87 or more
SURE = 0.5
# how short a bare command is: "mixtral 8x22b full finetune" has 27 characters (32: our choice, not sourced;
# Chinese writes no spaces, so characters, not words)
COMMAND_CHARS = 32
TRIGGER_BONUS = 0.45  # a trigger phrase in the question adds this to its topic's probability


@dataclass
class Verdict:
    intent: str
    topics: list[str] = field(default_factory=list)
    ask: str = "plan"
    scores: dict[str, float] = field(default_factory=dict)  # intent probabilities, for tests and logs


# --- the verdict -------------------------------------------------------------------------------------


def judge(ev: Evidence, parsed: Parsed) -> Verdict:
    """Intent, topics (most likely first) and what kind of plan is asked for."""
    fired = triggered(ev.raw)
    ask = asked(ev.prose, parsed)  # the question's own words, not a pasted log's
    trained = model()
    if trained is None:
        intent = overruled(_rules(parsed, fired), parsed, ask, ev.prose, fired=fired)
        return Verdict(intent=intent, topics=list(fired), ask=ask, scores={})
    scores, topic_scores = trained.probabilities(trained.text_vector(text_for_ngrams(ev), dense(ev, parsed)))
    return verdict(scores, topic_scores, fired, parsed, ask, ev.prose)


def verdict(
    scores: dict[str, float],
    topic_scores: dict[str, float],
    fired: tuple[str, ...],
    parsed: Parsed,
    ask: str,
    prose: str = "",
) -> Verdict:
    """The classifier's probabilities made an answer's kind: what judge returns at run time and
    what training measures."""
    best = max(scores, key=scores.get)
    intent = overruled(best, parsed, ask, prose, sure=scores[best] >= SURE, fired=fired)
    topics = [t for t in _rank_topics(topic_scores, fired, intent) if t in fired or not _vetoed(t, prose)]
    return Verdict(intent=intent, topics=topics, ask=ask, scores=scores)


def _vetoed(topic: str, prose: str) -> bool:
    """The classifier's guess of a topic whose words here mean something else (faq.yaml `unless`)."""
    veto = vocabulary().topic_vetoes.get(topic)
    return bool(veto and veto.search(prose.lower()))


# notes of a model family named without a catalog size (model_names.ModelNames.unknown_models)
MODEL_FAMILY_NOTES = ("model_family_sizes", "unknown_model_name")


def overruled(
    intent: str, parsed: Parsed, ask: str, prose: str = "", sure: bool = False, fired: tuple[str, ...] = ()
) -> str:
    """Where the form of a question says more than its words: rules over the classifier (`sure`:
    the classifier gives its verdict a majority of the probability)."""
    if parsed.compare and parsed.compare_direct:
        return "compare"  # "A100 vs H100 for 13b"
    if intent == "plan" and parsed.compare and parsed.compare["kind"] == "gpu" and hits("worth", prose, most=1):
        return "compare"  # "从A100换到H100值得吗": two cards and whether the change is worth it
    if intent == "compare" and either_enough(prose):
        return "plan"  # "8张V100或者8张3090够用吗": is either enough, not which is better
    if intent == "compare" and not parsed.compare and _SLOWER_THAN_ONE.search(prose):
        return "troubleshoot"  # "8卡比单卡慢了": a complaint, not a choice
    if intent == "compare" and not parsed.compare and any(n.code == "mixed_gpus" for n in parsed.notes):
        return "plan"  # "2x A100 + 2x A6000": cards one has together are one setup (one label says so)
    if intent == "other" and parsed.fixed:
        return "plan"  # a gpuplan setting is written: the question is ours
    if intent == "other" and _command_form(parsed, prose):
        return "plan"  # "mixtral 8x7b lora": a model and a method and little else, /gpuplan's own form
    nothing_compared = not parsed.compare and not hits("choice", prose, most=1)
    if intent == "compare" and nothing_compared and _command_form(parsed, prose):
        return "plan"  # "mpt7 lora" has nothing to compare; "H100上用fp8训练70b值得吗" asks a choice
    unsized = parsed.request.model is None and parsed.request.params_b is None
    if intent == "other" and not sure and unsized and any(n.code in MODEL_FAMILY_NOTES for n in parsed.notes):
        return "plan"  # only a model family is named ("LLaMA 3", "mistral"): ours, asked back for its size
    if ask != "plan" and intent != "compare":
        return "plan"  # the hardware itself asked about: a plan of its own kind
    outside = not sure and not fired and hits("out_of_scope", prose, most=1) > 0
    if outside and (intent == "troubleshoot" or (intent == "compare" and not parsed.compare)):
        return "other"  # a symptom outside gpuplan's field ("the answers are much worse after gptq")
    return intent


# more GPUs or machines slower than one: of the 13 labelled questions that say it, 12 are troubleshooting,
# one a plan, none a comparison (narrower than faq.yaml's scaling triggers on purpose: of the 56 labelled
# questions those raise without compared options, 10 are comparisons)
_SLOWER_THAN_ONE = re.compile(
    r"比(?:单|一)(?:卡|机|台|张)\S{0,6}(?:慢|还慢)|slower than (?:a |on )?(?:single|one|1)\b", re.I
)


def _command_form(parsed: Parsed, prose: str) -> bool:
    """A model (a size, a family) and a method in a few characters, nothing outside gpuplan's field:
    the form of the command itself ("70b full", "mixtral 8x7b lora")."""
    request = parsed.request
    named = request.model is not None or request.params_b is not None
    named = named or any(n.code in MODEL_FAMILY_NOTES for n in parsed.notes)  # "用qwen3做lora微调"
    few = len(prose.strip()) <= COMMAND_CHARS
    return named and request.method is not None and few and hits("out_of_scope", prose, most=1) == 0


def either_enough(prose: str) -> bool:
    """A yes-or-no question ("够用吗", "can I") whose only comparison word is a bare "or" / "还是"."""
    return bool(prose) and hits("yes_no", prose, most=1) > 0 and hits("choice", prose, most=1) == 0


def _rules(parsed: Parsed, fired: tuple[str, ...]) -> str:
    if parsed.compare:
        return "compare"
    return "troubleshoot" if fired else "plan"


def _rank_topics(probabilities: dict[str, float], fired: tuple[str, ...], intent: str) -> list[str]:
    """Topics by probability, a trigger phrase adding to its own; a troubleshooting or comparison
    question always gets its most likely topic, other questions only topics they name."""
    score = {t: p + (TRIGGER_BONUS if t in fired else 0.0) for t, p in probabilities.items()}
    score.update({t: TRIGGER_BONUS for t in fired if t not in score})
    ranked = sorted(score, key=lambda t: -score[t])
    floor = TOPIC_FLOOR if intent in ("troubleshoot", "compare") else TOPIC_FLOOR + 0.3
    chosen = [t for t in ranked if score[t] >= floor or (t in fired and score[t] >= TOPIC_FLOOR)]
    if not chosen and intent == "troubleshoot" and ranked:
        chosen = ranked[:1]
    return chosen[:3]


def question_kind(text: str) -> str:
    """What the question's own words ask to be told: concurrency | storage | host_ram | longest | batch
    | throughput | gpu_hours | fit | time | cost | count | choose | memory | plan (none of them: the plan itself)."""
    said = sections_of(text)  # one look-up, not a `hits` per kind: most questions say none of them
    for section, kind in QUESTION_KINDS:
        if section in said:
            return kind
    return "memory" if "memory_ask" in said else "plan"


def asked(text: str, parsed: Parsed) -> str:
    """ "What is the largest model we could train on 32 L40S" and "how much do 8 H100 cost for
    two weeks" are plans of their own kind, decided by rules before the classifier's intent: they
    read them well (no model or size, GPUs named, the question's own words)."""
    request = parsed.request
    has_model = request.model or request.params_b or parsed.hub_id
    has_gpus = request.gpu or request.gpu_memory_gib or request.gpus
    if has_model or not has_gpus or parsed.compare:
        return "plan"
    if hits("largest", text, most=1):
        return "largest"
    if hits("price", text, most=1) or (request.deadline_days and re.search(r"how much|多少钱|多少费用", text, re.I)):
        return "price"
    return "plan"
