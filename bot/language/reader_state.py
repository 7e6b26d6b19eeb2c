"""The question being read and what the Reader has read of it.

`Scan` (scan.py) holds the lower-cased question, never changed, and the spans the steps took (claims).
`ReaderState` holds the fields read, with their words and places, the readings that stand only
when nothing else reads the field (`weak`), the mentions that weigh models and sizes, and how two
readings of one field are settled (`set`: the first written stands unless the later one is the
target of a move, the user's own setup, no bound, a total, the card said more exactly or the setup
asked about)."""

from __future__ import annotations

import re
from typing import Any

from gpuplan.bot.language import engine
from gpuplan.bot.language.catalog_names import DESKTOP
from gpuplan.bot.language.scan import Scan
from gpuplan.bot.language.sentences import TOTAL_WORDS, in_question, moves_to, owner
from gpuplan.bot.language.vocabulary import vocabulary
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import Catalog

MAX_READ_NUMBER = 1e15  # larger numbers in prose are not read: no count, size or length is that big

# words before a count that make it what the user compares against ("slower than 1 node", "比单机慢")
_BASELINE = re.compile(
    r"(?:\bthan|compared (?:to|with)|\bvs\.?|\bversus|相比|比起?|对比)\s*(?:on|with|using|a|the|用|在)?\s*$"
)

_LINK = re.compile(r"https?://[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")  # up to a space or CJK text


def _asked_over(text: str, asked: tuple[int, int], other: tuple[int, int]) -> bool:
    """A count in the sentence that asks, against one in a statement that is no more the user's own
    ("One H100 will oom ... How to use two H100?"; not "我有4个gpu ... 应该选择多卡还是单卡？")."""
    return in_question(text, asked) and not in_question(text, other) and owner(text, asked) >= owner(text, other)


# a count given as a bound ("9 or more H100s", "at least 16 GPUs", "至少8张"): what is needed, which
# a setup written out ("I have two nodes, each with 8") says more about
_BOUND = re.compile(r"\bor (?:more|fewer|less)\b|\bat (?:least|most)\b|至少|最少|以上|以下")

_MEMORY_SAID = re.compile(r"\d\s*(?:g|gb|gib)\b")


def _refines(reading: tuple, other: tuple) -> bool:
    """Whether a GPU reading names the other's card with its memory ("v100 16gb" after "v100"): the
    same card, said more exactly."""
    (_, card, words), (_, other_card, other_words) = reading, other
    stem, other_stem = (re.sub(r"-\d+(?:\.\d+)?gb$", "", c) for c in (card, other_card))
    return stem == other_stem and bool(_MEMORY_SAID.search(words)) and not _MEMORY_SAID.search(other_words)


def _bounded(text: str, reading: tuple) -> bool:
    """Whether a (span, value, words) reading is a bound: its words, or the words right before it."""
    (start, _), _, words = reading
    return bool(_BOUND.search(words) or _BOUND.search(text, max(0, start - 12), start))


_TOTAL_BEFORE = re.compile(
    TOTAL_WORDS + r"\s*(?:需要|要|用|有)?\s*(?:\d{1,6}\s*(?:[x×*]|张|块|台|gpus?|cards?)?\s*)?$", re.I
)


def _totalled(text: str, reading: tuple) -> bool:
    """Whether a (span, value, words) count reading is said to be a total: in its words ("4 nodes with
    totally 32 gpus" sets both counts) or right before them."""
    (start, _), _, words = reading
    return bool(re.search(TOTAL_WORDS, words) or _TOTAL_BEFORE.search(text, max(0, start - 24), start))


# cards spoken of in the plural: a memory written with them is each card's, their number is open
_CARDS_PLURAL = re.compile(
    r"(?<![a-z])(?:gpus|cards|graphics cards)(?![a-z])|多张|多卡|多块|几张|几块|每张|每块|每个(?:卡|显卡|gpu)"
)


class ReaderState:
    """What one question's Reader has read so far, and how a reading is recorded."""

    def __init__(self, text: str, cat: Catalog):
        self.scan = Scan(text)
        self.cat = cat
        self.voc = vocabulary()
        self.fields: dict[str, Any] = {}
        self.words: dict[str, str] = {}  # field -> the words it was read from (to name them later)
        self.spans: dict[str, tuple[int, int]] = {}  # field -> where those words stand
        self.weak_fields: dict[str, tuple[Any, str]] = {}
        self.users_read: tuple[int, str] | None = None  # "for 32 users": concurrency if this is serving
        self.option_spans: dict[str, list[tuple[int, int]]] = {"gpu": [], "model": [], "method": []}
        self.mentions: dict[tuple[str, Any], int] = {}  # ("model", id) or ("params_b", size) -> weight
        self.notes: list[Note] = []
        self.unknown: list[str] = []  # words gpuplan did not understand
        self.set_aside: list[Note] = []  # second readings of a field that were not used
        self.aside_values: dict[tuple[str, str], Any] = {}  # (field, words) set aside -> the value read
        self.methods_named: list[str] = []
        self._method_spans: list[tuple[int, int]] = []  # every method word's place, negated or not
        self._prefix_tuning_at: set[int] = set()  # where P-Tuning v2's words stand (read as LoRA)
        self.adapter_negated = ""  # "非lora", "without LoRA": the words, when adapters are ruled out
        self.code_names: dict[str, list[str]] = {}
        self._links: list[tuple[int, int]] | None = None  # where the text holds URLs
        self.contradiction: Note | None = None
        self.gpu_ids: list[str] = []  # GPU types named, in order (instances first)
        self.said_less_exactly: set[str] = set()  # a bare type's default card, named with its memory too
        self.method_weak = False  # the method read from a weak training word only ("train a 2B")
        self.memory_written_with: set[str] = set()  # GPU types named with their memory beside them
        self.mixed_types: list[str] = []  # types the user has together ("一台A100 服务器 和 一台 A800 服务器")
        # GPU and node counts by ("gpus" | "nodes" | "weak", the span of the GPU name read with them)
        self.counts_at: dict[tuple[str, tuple[int, int]], int] = {}
        self.gpu_mentions: list[tuple[str, tuple[int, int], int | None, int | None]] = []  # id, span, GPUs, nodes
        self.gpus_lacked: set[str] = set()  # GPU types the user says they lack: no option to compare
        self.gpu_counts: dict[str, int] = {}  # GPU type -> the count first written with it ("2x 3090 vs 1x 4090")
        self.model_ids: list[str] = []  # catalog models named, in order
        self.size_readings: list[tuple[float, str]] = []  # sizes written alone: (billions, words)
        self.model_words: dict[str, str] = {}  # catalog model -> the words that first named it

    def set(self, name: str, value: Any, words: str) -> bool:
        """Record a reading. Of two different readings of one field the first written stands,
        unless the other is the target of "from X to Y" or the user's own setup against one they
        quote ("the paper used 8 A100, I have 4"); the one not used is named back. True when this
        reading is the field's value now."""
        span = self.scan.last_span
        if self._no_reading(name, value, words, span):
            return False
        if name not in self.fields:
            self.fields[name], self.words[name], self.spans[name] = value, words, span
            return True
        if self.fields[name] == value:  # said again: where the user's own setup says it counts most
            text = self.scan.original
            if name in ("gpu", "gpus") and owner(text, span) > owner(text, self.spans[name]):
                self.words[name], self.spans[name] = words, span
            return True
        old = (self.spans[name], self.fields[name], self.words[name])
        new = (span, value, words)
        first, second = sorted([old, new], key=lambda r: r[0])
        keep = second if self._later_wins(name, first, second) else first
        other = second if keep is first else first
        self.fields[name], self.words[name], self.spans[name] = keep[1], keep[2], keep[0]
        if name == "gpu" and _refines(keep, other):  # the same card said twice is nothing set aside,
            self.said_less_exactly.add(other[1])  # nor two cards to weigh ("on A100 ... GPU: A100 40GB")
        else:
            self._note_set_aside(name, keep, other, replaced=old[2] if keep is new else None)
        if name == "gpu" and keep is new:
            self._drop_counts_read_at(old[0])  # "needs 8xH100 ..., on a single 4090": the 8 went with the H100
        return keep is new

    def _note_set_aside(self, name: str, keep: tuple, other: tuple, replaced: str | None) -> None:
        """Name back the reading (span, value, words) of `name` set aside for `keep`. When `keep`
        replaced the field's value (words `replaced`), the notes that said those were used now say
        these are, and one that sets aside the value now kept goes ("单卡 ... 两张8g的卡 ... 1卡": 单卡
        used, 两张 set aside): no two notes contradict, none says a reading twice."""
        self.aside_values[(name, other[2])] = other[1]
        notes: list[Note] = []
        this = Note(code="set_aside", params={"field": name, "used": keep[2], "other": other[2]})
        for note in [*self.set_aside, this]:
            params = note.params
            if params["field"] == name and params["used"] == replaced:
                set_aside = replaced if params["other"] == keep[2] else params["other"]
                if set_aside != replaced and self.aside_values.get((name, set_aside), Ellipsis) == keep[1]:
                    continue  # "1卡" set aside for "两张", now the same count as "单卡" that is kept
                note = Note(code="set_aside", params={**params, "used": keep[2], "other": set_aside})
            if note not in notes:
                notes.append(note)
        self.set_aside = notes

    def _no_reading(self, name: str, value: Any, words: str, span: tuple[int, int]) -> bool:
        """A number that is no reading of the field: "0 GPUs", a pasted counter, a baseline's count."""
        if name in ("gpus", "nodes") and not 0 < value <= 200_000:
            return True  # "0 GPUs" or an unreadable count is not a count
        if name in ("gpus", "nodes"):
            self.counts_at.setdefault((name, span), value)  # a comparison's options keep their own counts
        if isinstance(value, int | float) and not abs(value) < MAX_READ_NUMBER:
            return True  # fifteen digits and more: a pasted counter or a hash, not a figure anyone means
        if name in ("gpus", "nodes") and _BASELINE.search(self.scan.original[max(0, span[0] - 16) : span[0]]):
            self.notes.append(Note(code="baseline_count", params={"words": words}))
            return True  # "4x slower than 1 node": the setup compared against, not the user's own
        return False

    def _later_wins(self, name: str, first: tuple, second: tuple) -> bool:
        """Of two readings (span, value, words) in text order, whether the later one is the field's."""
        text = self.scan.original
        return bool(
            moves_to(text, first[0], second[0])
            or owner(text, second[0]) > owner(text, first[0])
            or (_bounded(text, first) and not _bounded(text, second))  # "9 or more H100s ... I have 2x8"
            or (name in ("gpus", "nodes") and _totalled(text, second) and not _totalled(text, first))  # a total
            or (name == "gpu" and _refines(second, first))  # "v100 ... Gpu: Nvidia v100 16GB"
            # "One H100 will oom ... How to use two H100 to train llama2-70b?": the setup asked about
            or (name in ("gpus", "nodes") and _asked_over(text, second[0], first[0]))
        )

    def _counts_now(self) -> tuple[dict[str, tuple], tuple[Note, ...]]:
        """The GPU and node readings as they stand, and the set-aside notes."""
        table = (self.fields, self.words, self.spans)
        return {name: tuple(t.get(name) for t in table) for name in ("gpus", "nodes")}, tuple(self.set_aside)

    def _restore_counts(self, before: tuple[dict[str, tuple], tuple[Note, ...]]) -> None:
        """The GPU and node readings back as `_counts_now` saw them, their notes made or rewritten
        since dropped."""
        readings, notes = before
        for name, saved in readings.items():
            for table, value in zip((self.fields, self.words, self.spans), saved, strict=True):
                if value is None:
                    table.pop(name, None)
                else:
                    table[name] = value
        kept = [n for n in notes if n.params["field"] in readings or n in self.set_aside]
        self.set_aside = kept + [n for n in self.set_aside if n not in notes and n.params["field"] not in readings]

    def _drop_counts_read_at(self, span: tuple[int, int]) -> None:
        """Forget the GPU and node counts written with the GPU name at `span`, now set aside."""
        for name in ("gpus", "nodes"):
            if self.spans.get(name) == span:
                del self.fields[name], self.words[name], self.spans[name]

    def weak(self, name: str, value: Any, words: str) -> None:
        """A reading that stands only when nothing else reads the field ("my 4090": one card)."""
        self.weak_fields.setdefault(name, (value, words))
        if name == "gpus":
            self.counts_at.setdefault(("weak", self.scan.last_span), value)

    def settle_weak(self) -> None:
        """Weak readings where nothing else read the field; a desktop card named without a count
        ("4090能跑吗", "can a 3090 fine-tune it") is one card, unless the question asks how many."""
        gpu = self.cat.gpus.get(self.fields.get("gpu", ""))
        if (
            gpu
            and "gpus" not in self.fields
            and DESKTOP.search(gpu.name)
            and not self.scan.unclaimed_search(self.voc.asks_count)
        ):
            self.weak("gpus", 1, self.words.get("gpu", gpu.name))
            self.notes.append(Note(code="one_card_assumed", params={"gpu": gpu.name}))
        memory = self.fields.get("gpu_memory_gib")
        if memory and not gpu and "gpus" not in self.fields and not self._many_cards():
            self.weak("gpus", 1, self.words["gpu_memory_gib"])  # "24G显存能lora qwen 7b吗": the card one has
            self.notes.append(Note(code="one_card_of_memory_assumed", params={"gib": memory}))
        for name, (value, words) in self.weak_fields.items():
            if name not in self.fields:
                self.fields[name], self.words[name] = value, words

    def _many_cards(self) -> bool:
        """Whether the question asks how many cards, or speaks of cards in the plural ("24GB GPUs")."""
        return bool(self.scan.unclaimed_search(self.voc.asks_count) or _CARDS_PLURAL.search(self.scan.original))

    def conflict(self, name: str, first: str, second: str) -> None:
        """Two things named where one was expected: the first is used, the second set aside."""
        self.set_aside.append(Note(code="set_aside", params={"field": name, "used": first, "other": second}))

    def mention(self, key: tuple[str, Any], span: tuple[int, int], counts: bool = True) -> None:
        """One more mention of a model or size; one in a question sentence weighs double, one in a
        clause quoting another setup or an earlier one ("原来用1张A100训练7b") and a bare family name
        ("Llama-2", no size) weigh nothing."""
        text = self.scan.original
        # a size inside a link is a script's or a repository's name ("ds_pretrain_gpt_1.3B.sh"), not the
        # run's; a model a link names (a Hugging Face URL) still counts
        in_link = key[0] == "params_b" and any(a <= span[0] < b for a, b in self._link_spans())
        weight = (2 if in_question(text, span) else 1) if counts and owner(text, span) >= 0 and not in_link else 0
        self.mentions[key] = self.mentions.get(key, 0) + weight

    def _link_spans(self) -> list[tuple[int, int]]:
        if self._links is None:
            self._links = [m.span() for m in _LINK.finditer(self.scan.original)]
        return self._links

    def _take_span(self, span: engine.Span) -> str:
        """A reading's words, taken from the text as Scan.take takes a match's."""
        self.scan.last_span = (span.start, span.end)
        words = self.scan.original[span.start : span.end].strip()
        self.scan.claim(span.start, span.end)
        return words

    def _engine_readings(self, dimension: str) -> None:
        """The settled readings of a dimension whose rules are data (engine.py), each taken from
        the text and set, with its rule's note when the reading asks for one."""
        self._set_readings(self._unclaimed(dimension))

    def _unclaimed(self, dimension: str) -> list[engine.Span]:
        """A dimension's readings in the question as written, none where a step before took words
        (engine.read's `claimed`: what an earlier step read stands, explicitly)."""
        return engine.read(self.scan.original, dimension, claimed=self.scan.claimed)

    def _set_readings(self, spans: list[engine.Span]) -> None:
        """Each span taken from the text and its readings set, with its rule's note when it asks for one."""
        for span in spans:
            words = self._take_span(span)
            for name, value in span.readings:  # "2台8卡": the nodes, then the GPUs
                self.set(name, value, words)
            if span.rule.note and span.note_params is not None:
                params = span.note_params or {"words": words, "field": span.field, "value": span.value}
                self.notes.append(Note(code=span.rule.note, params=params))
