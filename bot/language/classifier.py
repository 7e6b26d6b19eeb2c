"""The linear classifier behind intent and topics: its inputs (character n-grams of the question
and the rule-read features) and the trained model (knowledge/classifier.npz, written by
train/train_classifier.py with the same functions)."""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import math
import re
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from importlib.abc import Traversable
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplan.bot.language.artifacts import Artifacts
from gpuplan.bot.language.sections import SECTIONS, contrasted, contrasts, hits, triggered
from gpuplan.bot.language.vocabulary import vocabulary
from gpuplan.knowledge import cache_path, read_yaml, write_cache

if TYPE_CHECKING:  # the parser calls the classifier; it needs the type only
    from gpuplan.bot.language.parser import Parsed

MAX_CODE_CHARS = 1500  # of a long pasted log, the first part says what it is


@dataclass
class Evidence:
    """What intent is judged on: the whole message, its prose and code, and what was pasted."""

    raw: str
    prose: str
    code: str
    found: Artifacts


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
        # one Counter over all the words' columns: Counter.update is Python code, slow to call once a word
        counts = Counter(itertools.chain.from_iterable(map(self._word_columns, text.split())))
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
