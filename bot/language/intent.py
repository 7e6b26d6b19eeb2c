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

import contextlib
import functools
import io
import itertools
import math
import re
import zipfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from importlib.abc import Traversable
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplan.bot.language.artifacts import Artifacts
from gpuplan.bot.language.compiled import built, compiled
from gpuplan.bot.language.patterns import fast_alternation, literal_first
from gpuplan.bot.language.vocabulary import vocabulary
from gpuplan.knowledge import cache_path, read_yaml, write_cache

if TYPE_CHECKING:
    from gpuplan.bot.language.parser import Parsed

SECTIONS = ("resources", "why", "compare", "out_of_scope", "largest", "price", "first_person", "reference")
# read by the rules only, not classifier features
RULE_SECTIONS = (
    "choice",
    "worth",
    "yes_no",
    "earlier",
    "lacking",
    "also_seen",
    "prospective",
    "memory_ask",
    "ask_fit",
    "ask_time",
    "ask_cost",
    "ask_count",
)
# what a question asks to be told, most telling first: whether it fits, how long, what it costs, how
# many or which GPUs, how much memory (the answer's first line says that first)
QUESTION_KINDS = (
    ("yes_no", "fit"),
    ("ask_fit", "fit"),
    ("ask_time", "time"),
    ("ask_cost", "cost"),
    ("ask_count", "count"),
    ("choice", "choose"),  # "which network between nodes?": a choice, not a figure
)
INTENTS = ("plan", "troubleshoot", "compare", "other")
MAX_CODE_CHARS = 1500  # of a long pasted log, the first part says what it is
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
class Evidence:
    """What intent is judged on: the whole message, its prose and code, and what was pasted."""

    raw: str
    prose: str
    code: str
    found: Artifacts


@dataclass
class Verdict:
    intent: str
    topics: list[str] = field(default_factory=list)
    ask: str = "plan"
    scores: dict[str, float] = field(default_factory=dict)  # intent probabilities, for tests and logs


# --- the words ------------------------------------------------------------------------------------


@functools.cache
def question_words() -> dict[str, list[re.Pattern]]:
    """knowledge/questions.yaml, compiled: section -> its patterns (English and Chinese)."""
    data = _questions()
    return {
        name: [compiled(literal_first(p)) for p in data[name]["en"] + data[name]["zh"]]
        for name in SECTIONS + RULE_SECTIONS
    }


@functools.cache
def _questions() -> dict[str, Any]:
    return read_yaml(resources.files("gpuplan.knowledge").joinpath("questions.yaml").read_text(encoding="utf-8"))


def _alternations(named: dict[str, Iterable[re.Pattern]]) -> dict[str, re.Pattern]:
    """One alternation per entry: one search says whether an entry occurs at all (most questions
    touch few), and only those are then counted pattern by pattern. Entries repeat each other's
    words ("or" is a comparison and a choice word, "fsdp" a ZeRO stage and a framework), so each
    is searched on its own; one shared alternation would give a match to one entry only."""
    return {name: compiled(built(fast_alternation, tuple(p.pattern for p in ps))) for name, ps in named.items()}


@functools.cache
def _section_patterns() -> dict[str, re.Pattern]:
    return _alternations(question_words())


def section_pattern(name: str) -> re.Pattern:
    """One alternation of a section's patterns: whether any of them occurs."""
    return _section_patterns()[name]


@functools.lru_cache(maxsize=256)
def sections_in(text: str) -> frozenset[str]:
    """The sections of knowledge/questions.yaml that occur in (lower-cased) text."""
    return frozenset(name for name, pattern in _section_patterns().items() if pattern.search(text))


@functools.cache
def _kinds_present() -> dict[str, re.Pattern]:
    return _alternations({kind: options.values() for kind, options in contrasts().items()})


@functools.cache
def contrasts() -> dict[str, dict[str, re.Pattern]]:
    """knowledge/questions.yaml `contrasts`, compiled: kind -> option -> pattern."""
    data = _questions()["contrasts"]
    return {
        kind: {option: compiled(literal_first(p)) for option, p in options.items()} for kind, options in data.items()
    }


def contrasted(text: str, gpus_named: int) -> dict[str, int]:
    """How many different options of each kind the text names (two or more: a comparison's sign);
    the GPU types are the parser's count."""
    text = text.lower()
    present = {kind for kind, pattern in _kinds_present().items() if pattern.search(text)}
    out = {
        kind: sum(1 for p in options.values() if p.search(text)) if kind in present else 0
        for kind, options in contrasts().items()
    }
    out["gpu"] = gpus_named
    return out


def hits(section: str, text: str, most: int | None = None) -> int:
    """How many of a section's patterns occur in the text, counting up to `most` (the patterns are
    lower case; so is the text they are matched on, instead of the slower IGNORECASE)."""
    lowered = text.lower()
    if section not in sections_in(lowered):
        return 0
    if most == 1:
        return 1  # the section's one alternation has matched
    found = (1 for pattern in question_words()[section] if pattern.search(lowered))
    return sum(itertools.islice(found, most))


_URL = re.compile(r"(?:https?://|www\.)\S+")


@functools.lru_cache(maxsize=256)
def triggered(text: str) -> tuple[str, ...]:
    """Rule ids whose trigger phrases occur in the text, in the order they first occur (memoised:
    the features and the verdict both ask). A link's words are not the user's ("https" is no "tps")."""
    lowered = _URL.sub(" ", text.lower())
    found = []
    for rule_id, pattern in vocabulary().tables["symptoms"]:
        match = pattern.search(lowered)
        if match:
            found.append((match.start(), rule_id))
    return tuple(rule_id for _, rule_id in sorted(found))


# --- features ---------------------------------------------------------------------------------------


def text_for_ngrams(ev: Evidence) -> str:
    """The prose, then the start of the code: what the n-grams are counted over."""
    prose = " ".join(ev.prose.lower().split())
    code = " ".join(ev.code.lower().split())[:MAX_CODE_CHARS]
    return prose + " | " + code if code else prose


def ngrams(text: str) -> dict[str, int]:
    """Character 1-4-grams inside whitespace-separated words padded with a space (scikit-learn's
    `char_wb` analyser), counted."""
    grams: list[str] = []
    for word in text.split():
        padded = f" {word} "
        size = len(padded)
        grams += [padded[i : i + n] for n in (1, 2, 3, 4) for i in range(size - n + 1)]
    counts = Counter(grams)
    counts.pop(" ", None)
    return counts


def dense_names() -> list[str]:
    rules = [rule_id for rule_id, _ in vocabulary().tables["symptoms"]]
    return (
        [f"words:{s}" for s in SECTIONS]
        + [f"trigger:{r}" for r in rules]
        + ["pasted:oom", "pasted:nccl", "pasted:code", "pasted:launcher", "pasted:traceback"]
        + ["read:model", "read:size", "read:gpu", "read:gpus", "read:method", "read:infer", "read:compare"]
        + ["form:question_mark", "form:short", "form:long"]
        + [f"contrast:{kind}" for kind in [*contrasts(), "gpu"]]
    )


def dense(ev: Evidence, parsed: Parsed) -> np.ndarray:
    """The rule-read features, each in [0, 1], in `dense_names()` order."""
    text = ev.raw
    request = parsed.request
    fired = set(triggered(text))  # cached for judge()
    rules = [rule_id for rule_id, _ in vocabulary().tables["symptoms"]]
    values = [hits(s, ev.prose, most=3) / 3 for s in SECTIONS]  # the user's words, not a pasted config's
    values += [1.0 if r in fired else 0.0 for r in rules]
    lowered_code = ev.code.lower()
    values += [
        float(ev.found.oom is not None or "out of memory" in lowered_code),
        float(ev.found.nccl_timeout_s is not None or "nccl" in lowered_code),
        float(bool(ev.code.strip())),
        float(bool(ev.found.launchers)),
        float(bool(re.search(r"traceback|error:|exception", lowered_code))),
    ]
    values += [
        float(request.model is not None or parsed.hub_id is not None),
        float(request.params_b is not None),
        float(request.gpu is not None or request.gpu_memory_gib is not None),
        float(request.gpus is not None or request.nodes is not None),
        float(request.method is not None),
        float(request.method == "infer"),
        float(parsed.compare is not None),
    ]
    length = len(ev.prose.split())
    values += [float("?" in text or "？" in text), float(length < 12), float(length > 80)]
    named = contrasted(ev.prose + " " + ev.code[:MAX_CODE_CHARS], len(parsed.gpus_named))
    values += [float(named[kind] >= 2) for kind in [*contrasts(), "gpu"]]
    return np.array(values, dtype=np.float32)


# words whose n-gram columns a process keeps (a few MB; emptied when full)
WORDS_REMEMBERED = 50_000

# --- the trained model -----------------------------------------------------------------------------


def tfidf(grams: dict[str, int], index: dict[str, int], idf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(columns, values): sublinear tf-idf, 1 + log(count) times idf, L2-normalised, of the n-grams
    the vocabulary has (scikit-learn's TfidfVectorizer with sublinear_tf). Training uses it too."""
    return weighted({index[g]: c for g, c in grams.items() if g in index}, idf)


def weighted(counts: dict[int, int], idf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(columns, values) of tfidf from each column's count."""
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    idx = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    vals = idf[idx] * (1.0 + np.log(np.fromiter(counts.values(), dtype=np.float32, count=len(counts))))
    return idx, vals / float(np.sqrt(vals @ vals))


@dataclass
class Model:
    index: dict[str, int]  # n-gram -> column
    idf: np.ndarray
    dense_names: list[str]
    intents: list[str]
    intent_w: np.ndarray  # (intents, features)
    intent_b: np.ndarray
    topics: list[str]
    topic_w: np.ndarray  # (topics, features)
    topic_b: np.ndarray
    meta: dict[str, Any]
    _columns_seen: dict[str, tuple[int, ...]] = field(default_factory=dict, repr=False)

    @functools.cached_property
    def dense_columns(self) -> np.ndarray:
        return len(self.idf) + np.arange(len(self.dense_names))

    def vector(self, grams: dict[str, int], dense_values: np.ndarray) -> Vector:
        """tf-idf of the n-grams (1 + log tf, L2-normalised; only the columns present), and the
        dense features after them."""
        idx, vals = tfidf(grams, self.index, self.idf)
        return Vector(np.concatenate((idx, self.dense_columns)), np.concatenate((vals, dense_values)))

    def text_vector(self, text: str, dense_values: np.ndarray) -> Vector:
        """vector(ngrams(text), dense_values), counting each word's known n-gram columns, which are
        remembered per word: questions reuse most of their words, and cutting a word into n-grams
        is the slow part."""
        counts: Counter[int] = Counter()
        for word in text.split():
            counts.update(self._word_columns(word))
        idx, vals = weighted(counts, self.idf)
        return Vector(np.concatenate((idx, self.dense_columns)), np.concatenate((vals, dense_values)))

    def _word_columns(self, word: str) -> tuple[int, ...]:
        columns = self._columns_seen.get(word)
        if columns is None:
            if len(self._columns_seen) >= WORDS_REMEMBERED:
                self._columns_seen.clear()
            grams = ngrams(word)  # one word: its padded 1-4-grams, the lone space dropped
            columns = tuple(c for g, n in grams.items() if (c := self.index.get(g)) is not None for _ in range(n))
            self._columns_seen[word] = columns
        return columns

    @functools.cached_property
    def _weights(self) -> np.ndarray:
        """Intent and topic weights side by side, one row per feature: a question's few non-zero
        features gather a few rows, and one product gives every logit."""
        return np.ascontiguousarray(np.vstack([self.intent_w, self.topic_w]).T)

    @functools.cached_property
    def _biases(self) -> list[float]:
        return [*self.intent_b.tolist(), *self.topic_b.tolist()]

    def probabilities(self, x: Vector) -> tuple[dict[str, float], dict[str, float]]:
        """(intent -> softmax probability, topic -> one-vs-rest probability). One product gives the
        logits; the few probabilities are then cheaper in plain floats than as small arrays (the
        sigmoid as 1/2 + tanh(z/2)/2, which cannot overflow)."""
        logits = [z + b for z, b in zip((x.vals @ self._weights[x.idx]).tolist(), self._biases, strict=True)]
        k = len(self.intents)
        top = max(logits[:k])
        exp = [math.exp(z - top) for z in logits[:k]]
        total = sum(exp)
        return (
            dict(zip(self.intents, [e / total for e in exp], strict=True)),
            dict(zip(self.topics, [0.5 + 0.5 * math.tanh(z / 2) for z in logits[k:]], strict=True)),
        )


@dataclass(frozen=True)
class Vector:
    """A sparse feature vector: the columns that are not zero and their values."""

    idx: np.ndarray
    vals: np.ndarray


@functools.cache
def model() -> Model | None:
    """knowledge/classifier.npz, loaded once; None when it is absent or was trained on other features."""
    path = resources.files("gpuplan.knowledge").joinpath("classifier.npz")
    if not path.is_file():
        return None
    data = _classifier_arrays(path)
    names = [str(n) for n in data["dense_names"]]
    if names != dense_names():
        return None  # features changed since training: retrain (train/train_classifier.py)
    grams = data["vocabulary"].tolist()  # Python strings at once: 74k numpy scalars one by one took 0.03 s
    return Model(
        index=dict(zip(grams, range(len(grams)), strict=True)),
        idf=data["idf"].astype(np.float32, copy=False),
        dense_names=names,
        intents=[str(c) for c in data["intents"]],
        intent_w=data["intent_w"].astype(np.float32, copy=False),
        intent_b=data["intent_b"].astype(np.float32, copy=False),
        topics=[str(t) for t in data["topics"]],
        topic_w=data["topic_w"].astype(np.float32, copy=False),
        topic_b=data["topic_b"].astype(np.float32, copy=False),
        meta=read_yaml(str(data["meta"])),
    )


def _classifier_arrays(path: Traversable) -> dict[str, np.ndarray]:
    """classifier.npz's arrays, from an uncompressed copy in the knowledge cache when one holds these
    very members (the copy is named by their CRC-32s, which the zip's directory gives without inflating
    anything): inflating the 7 MB took 0.034 s of every process, reading the copy 0.009 s."""
    with path.open("rb") as fh, zipfile.ZipFile(fh) as archive:
        members = [f"{i.filename}:{i.CRC:08x}:{i.file_size}".encode() for i in archive.infolist()]
    copy = cache_path("classifier", members, ".npz")
    if copy is not None and copy.is_file():
        damaged = (OSError, ValueError, EOFError, zipfile.BadZipFile)  # a damaged copy: inflate again
        with contextlib.suppress(*damaged), np.load(copy, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    with path.open("rb") as fh, np.load(fh, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    if copy is not None:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        write_cache(copy, buffer.getvalue())
    return arrays


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


# notes of a model family named without a catalog size (extract.Reader.unknown_models)
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
    """What the question's own words ask to be told: fit | time | cost | count | choose | memory | plan
    (none of them: the plan itself)."""
    for section, kind in QUESTION_KINDS:
        if hits(section, text, most=1):
            return kind
    return "memory" if hits("memory_ask", text, most=1) else "plan"


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
