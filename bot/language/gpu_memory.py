"""GPU memory (a step of the Reader, extract.py): the memory written beside a card's name ("A100
(40G)", "40G的A100": knowledge/rules/<lang>/card_memory.yaml, read around the card), and a GPU given
by its memory only ("单卡48G", "a 24GB card", "8*24G": gpu_memory.yaml), told apart from the servers'
RAM (host_ram.yaml, read first); what a run uses and all the cards' memory together are claimed by
gpu_memory.yaml's rules that read nothing, what a model needs is read as such and judged here."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from gpuplan.bot.language import engine
from gpuplan.bot.language.catalog_names import DESKTOP, variant_with_memory
from gpuplan.bot.language.compiled import compiled
from gpuplan.bot.language.gpu_counts import CARD_MARK, COUNTED_MARK, GpuCounts
from gpuplan.bot.language.values import count_value
from gpuplan.estimator.hardware import could_have
from gpuplan.estimator.schema import Note

_FORM_FIRST = re.compile(r"[-\s]*(?:sxm\d?|pcie|nvl)(?![a-z])(?=[-\s]*\d)", re.I)

# how far before and after a card's name its memory is read (card_memory.yaml): the longest, "40G显存的
# 英伟达 " before and "(4* 24GB VRAM)" after, fit
MEMORY_HEAD, MEMORY_TAIL = 14, 16


@functools.cache
def _any_needed(dimension: str) -> re.Pattern:
    """The words one of which every rule of a dimension needs (its rules' `needs`, all of them; a
    gpu_memory.yaml rule without them reads a memory only as those with them do, MEMORY_READ)."""
    return compiled("|".join(f"(?:{rule.needs.pattern})" for rule in engine.rules(dimension) if rule.needs))


@functools.cache
def _priorities(dimension: str) -> tuple[int, ...]:
    """The priorities of a dimension's rules, the highest first."""
    return tuple(sorted({rule.priority for rule in engine.rules(dimension)}, reverse=True))


def _by_priority(
    dimension: str, text: str, claimed: list[tuple[int, int]], facts: Callable[[], frozenset[str]]
) -> Iterator[list[engine.Span]]:
    """A dimension's settled readings one priority at a time, the highest first, each over the
    question as written with the claims and the facts as they are when its turn comes (`claimed`
    grows as the readings before take their words), as the step read them in its fixed order."""
    candidates = engine.worth_trying(text, dimension)
    for priority in _priorities(dimension):
        rules = [rule for rule in candidates if rule.priority == priority]
        yield engine.settle(engine.find(text, rules, facts=facts(), claimed=claimed))


def memory_view(text: str, start: int, end: int) -> tuple[str, int]:
    """The words around a card's name at [start, end) as card_memory.yaml's rules read them, the name
    written as one mark and a form factor right after it left out ("A800-SXM4-40GB"), and where
    those words start in the text."""
    head_start = max(0, start - MEMORY_HEAD)
    tail = text[end : end + MEMORY_TAIL]
    form = _FORM_FIRST.match(tail)
    tail = " " * form.end() + tail[form.end() :] if form else tail
    return text[head_start:start] + CARD_MARK + tail, head_start


# words after a memory that ask whether it is enough ("8G显存够吗", "24GB enough?")
_ENOUGH_AFTER = re.compile(r"\s*(?:够|足够|能不能|可以|enough|suffic)")

# what every memory reading has: a number and its unit ("24g", "80 GB", "1T")
MEMORY_SIZE = re.compile(r"\d\s*(?:g|gb|gib|t|tb|tib)(?![a-z])")


def _memory_part(match: re.Match) -> int | str:
    """The group of a gpu_memory.yaml match that is the memory (`memory`, without the words of need
    or use before it), or the whole match."""
    return "memory" if "memory" in match.re.groupindex else 0


class GpuMemory(GpuCounts):
    """The Reader's steps and helpers that read a GPU's memory."""

    def _gpu_memory_near(
        self, match: re.Match, found_id: str | None
    ) -> tuple[float | None, tuple[int, int] | None, int | None]:
        """The memory written right after ("A100 (40G)", "4090-24G") or before ("40G的A100", "三张24
        3090") a GPU name (knowledge/rules/<lang>/card_memory.yaml, read over the words around it), its
        span, and a count written times it after the name ("A10(4* 24GB)")."""
        view, head_start = memory_view(self.scan.original, match.start(), match.end())
        if not _any_needed("card_memory").search(view):
            return None, None, None  # no words any rule needs: most cards are written without a memory
        claimed = self.scan.claims_within(head_start, match.start())
        claimed += self.scan.claims_within(match.end(), match.end() + MEMORY_TAIL, match.start() - head_start + 1)
        found = engine.found(view, "card_memory", claimed=claimed)
        if not found:
            return None, None, None
        span = max(found, key=lambda s: (s.rule.priority, s.length, -s.start))  # all hold the mark: settle's pick
        at = match.start() - head_start
        readings = dict(span.readings)
        if "gpu_memory_if_variant" in readings:  # "三张24 3090": a bare number, when the card has that memory
            gib = readings["gpu_memory_if_variant"]
            if not (found_id and variant_with_memory(found_id, gib, self.cat)):
                return None, None, None
            memory = span.rule.pattern.match(view, span.start).span("memory")
            return gib, (head_start + memory[0], head_start + memory[1]), None
        if span.start < at:  # "40G的A100": the words before the name
            return readings["gpu_memory_gib"], (head_start + span.start, match.start()), None
        return readings["gpu_memory_gib"], (match.end(), match.end() + span.end - at - 1), readings.get("gpus")

    def _memory_in_all(self, gpu: str, total: float, words: str) -> str:
        """A memory larger than the card's, written beside a count ("4xA100 160Gb"): the memory of
        all of them when it divides into a variant of the card (said back), else the card's own."""
        count = self.fields.get("gpus")
        each = variant_with_memory(gpu, total / count, self.cat) if count else None
        if each:
            self.fields["gpu"] = each
            self.notes.append(Note(code="memory_of_all", params={"words": words, "gib": total / count}))
            return each
        self.set("gpu_memory_gib", total, words)
        return gpu

    def gpu_memory(self) -> None:
        """A GPU given by its memory only: "单卡48G", "48G显存", "a 24GB card", "80GB GPUs"; the
        servers' RAM ("内存 256G", "512GB RAM") is read first, so it is not taken for a GPU's."""
        text = self.scan.original  # the words any rule needs, as the engine looks for them (its `needs`)
        if not self.voc.triggers["gpu_memory"].search(text) or not self.scan.unclaimed_search(MEMORY_SIZE):
            return  # every reading's own words hold a memory size: none left that no step read
        self._set_readings(self._unclaimed("host_ram"))  # the servers' RAM (host_ram.yaml)
        if not _any_needed("gpu_memory").search(text):
            return  # no words any way of writing a GPU's memory needs
        for spans in _by_priority("gpu_memory", text, self.scan.claimed, self._memory_facts):
            for span in spans:  # each judged on the question as written, its words as they were found
                match = span.rule.pattern.match(text, span.start)
                if span.rule.claims:  # what a run uses, all the cards' memory together: no card's
                    self.scan.claim(*match.span(_memory_part(match)))
                else:
                    self._memory_alone(match, dict(span.readings))

    def _memory_facts(self) -> frozenset[str]:
        """What gpu_memory.yaml's rules may ask of the readings so far: several cards counted."""
        return frozenset({"several_cards"} if self.fields.get("gpus", 1) > 1 else ())

    def _memory_alone(self, match: re.Match, readings: dict) -> None:
        """One GPU memory written apart from a card's name (gpu_memory.yaml), judged: what a model
        needs ("需要显存为60G", unless a card named has it) or no named card's memory is claimed, no
        card's; a card's own is set with the count written with it."""
        gib = next(iter(readings.values()))
        one_gpu = "gpu_memory_one_card" in readings
        needed = "gpu_memory_needed" in readings
        said_own = one_gpu or "gpu_memory_own" in readings or readings.get("memory_said_own", False)
        part = _memory_part(match)  # the memory, without the words of need before it
        if not said_own and self._no_named_cards(gib, modded_ok=not needed):
            self.scan.claim(*match.span(part))  # no named card's memory
            return
        if 4 <= gib <= 512:
            before = (match["count"] if "count" in match.re.groupindex else None) or ""
            before = before.strip()
            words = self.scan.take(match, part)
            counted, counts = (None, {}) if before else self._count_before(COUNTED_MARK, match.start(part))
            if counted:  # "8张24G的卡": the count written before the memory ("2x8 80GB": the servers too)
                before, words = str(counts["gpus"]), self.scan.original[counted[0] : counted[1]].strip() + " " + words
                self.scan.claim(*counted)
                if "nodes" in counts:
                    self.set("nodes", counts["nodes"], words)
            self.set("gpu_memory_gib", gib, words)
            enough = _ENOUGH_AFTER.match(self.scan.original, match.end()) is not None
            self._memory_count(before, one_gpu, words, enough)

    def _no_named_cards(self, gib: float, modded_ok: bool) -> bool:
        """A memory written apart from the GPUs named that none of them comes with (no catalog
        variant has it; for a desktop card, not within what mods reach, `could_have`, unless it is
        what something needs), or other than the memory written beside the card ("4台H100（80GB）...
        样例是在96GB的卡上"): not their memory, and said so."""
        used = self.fields.get("gpu")
        named = [used] if used in self.cat.gpus else [g for g in self.gpu_ids if g in self.cat.gpus]
        if not named or any(variant_with_memory(g, gib, self.cat) == g for g in named):
            return False  # none named, or the card's own memory said again
        card = self.cat.gpus[named[0]]
        if any(g in self.memory_written_with for g in named):  # its memory was written beside it
            self.notes.append(Note(code="memory_apart_from_stated", params={"gib": gib, "gpu": card.name}))
            return True
        if any(variant_with_memory(g, gib, self.cat) for g in named):
            return False  # "A100，显存40G": the 40 GB A100
        cards = [self.cat.gpus[g] for g in named]
        if modded_ok and any(DESKTOP.search(c.name) and could_have(c, gib) for c in cards):
            return False  # "4090，显存48G", "2080ti 魔改22G显存"
        self.notes.append(Note(code="memory_apart_from_card", params={"gib": gib, "gpu": card.name}))
        return True

    def _memory_count(self, before: str, one_gpu: bool, words: str, enough: bool = False) -> None:
        """The count beside a memory: "单卡48G" is one, "8*24G" eight; "48G的显卡" and "8G显存够吗"
        (a card asked about) one if nothing else says."""
        if one_gpu and before:
            self.set("gpus", 1, words)
        elif not one_gpu and before and before not in ("a", "an"):
            self.set("gpus", int(count_value(before)), words)
        elif enough or re.search(r"(?:显卡|卡|card|gpu)$", words):
            self.weak("gpus", 1, words)
