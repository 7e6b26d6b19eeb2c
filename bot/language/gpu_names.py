"""GPU names (steps of the Reader, extract.py): cloud instances, catalog cards with the count and
memory written around them, cards the catalog lacks, hardware gpuplan does not size, and cards of
several types the user has together."""

from __future__ import annotations

import re

from gpuplan.bot.language.catalog_names import DESKTOP, gpu_id, variant_with_form, variant_with_memory
from gpuplan.bot.language.gpu_counts import COUNTED_MARK, INSTANCE_MARK
from gpuplan.bot.language.gpu_memory import MEMORY_SIZE, GpuMemory
from gpuplan.bot.language.sections import hits
from gpuplan.bot.language.sentences import lacked, owner
from gpuplan.bot.language.vocabulary import VENDOR_BEFORE
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import normalize_name

# a form factor right after a GPU's name and count, in the same clause ("A800单机8卡PCIE", "H100 x8 SXM")
_FORM_AFTER = re.compile(r"^[^,，。.;；:：\n]{0,10}?(?<![a-z])(sxm\d?|pcie|nvl)(?![a-z])")

# what a bare card number counts when it is a number of things instead ("3090 steps", "1650条样本")
_QUANTITY_AFTER = re.compile(
    r"\s*(?:steps?|samples?|examples?|tokens?|iterations?|iters?|epochs?|rows?|records?|items?|sentences?|"
    r"documents?|files?|queries|requests?|images?|条(?!件)|步(?!骤)|个样本|轮(?!流)|次(?!数)|张图)(?![a-z])"
)

_TOTAL_AFTER = re.compile(r"\s*(?:in total|total|combined|altogether|总共|总计|合计|共)")

# between two GPU mentions of one mixed setup: a joining word and little else ("服务器 和 一台 80G", "+1张")
_MIXED_JOIN = re.compile(
    r"\s*(?:gpus?|cards?|服务器|机器|显卡|卡)?\s*[)）]?\s*(?:和|与|跟|加上?|外加|\+|&|\band\b|\bplus\b)"
    r"[^,，.。;；:：?？!！\n]{0,16}$"
)

_PLUS = re.compile(r"\+|加|\bplus\b")


def _joined_mentions(
    text: str, mentions: list[tuple[str, tuple[int, int], int | None, int | None]]
) -> list[tuple[str, tuple[int, int], int | None, int | None]]:
    """The first run of GPU mentions of at least two types, each with a count, joined one to the
    next by "and" / "和" / "+" with little between: the parts of one setup."""
    run: list = []
    for mention in mentions:
        between = text[run[-1][1][1] : mention[1][0]] if run else ""
        if mention[2] and run and len(between) <= 24 and _MIXED_JOIN.match(between):
            run.append(mention)
            continue
        if len({g for g, _, _, _ in run}) >= 2:
            break
        run = [mention] if mention[2] else []
    return run if len({g for g, _, _, _ in run}) >= 2 else []


class GpuNames(GpuMemory):
    """The Reader's steps that read GPU names, with what is written around them."""

    def read_gpu_names(self) -> None:
        self.gpu_ids = self.instances()
        self.gpu_ids += [g for g in self.gpus() if g not in self.gpu_ids]
        self.gpu_ids = [g for g in self.gpu_ids if g not in self.said_less_exactly] or self.gpu_ids
        self.mixed_cluster()

    def mixed_cluster(self) -> None:
        """Cards of different types the user has together ("一台40G A100 服务器 和 一台 80G A800 服务器",
        "1张RTX5000ADA 32G+1张V100 32G", "a 3090 and a 4090"): all of them, planned as the type with
        the least memory (sharded work is bound by the smallest card), and said so."""

        text = self.scan.original
        group = _joined_mentions(text, self.gpu_mentions)
        if len(group) < 2 or hits("choice", text, most=1):
            return  # types weighed against each other ("8张A100 和 8张H100 哪个快")
        added = all(_PLUS.search(text, a[1][1], b[1][0]) for a, b in zip(group, group[1:], strict=False))
        if not (added or all(owner(text, span) >= 1 for _, span, _, _ in group)):
            return  # "70b full on 8 H100 and 16 A100": either, unless "+" or the user's own ("I have")
        types = list(dict.fromkeys(g for g, _, _, _ in group))
        self.mixed_types = types
        smallest = min(types, key=lambda g: self.cat.gpus[g].memory_gib)
        total = sum(count for _, _, count, _ in group)
        nodes = [n for _, _, _, n in group if n]
        self.fields.update(gpu=smallest, gpus=total)
        self.words["gpu"] = self.words["gpus"] = " + ".join(self.scan.original[a:b] for _, (a, b), _, _ in group)
        if nodes:
            self.fields["nodes"] = sum(nodes) if len(nodes) == len(group) else max(nodes)
        self.set_aside = [n for n in self.set_aside if n.params["field"] not in ("gpu", "gpus", "nodes")]
        names = [self.cat.gpus[g].name for g in types]
        planned = self.cat.gpus[smallest].name
        self.notes.append(Note(code="mixed_gpus", params={"gpus": names, "total": total, "planned": planned}))

    def unknown_gpu_names(self) -> None:
        """A GPU name the catalog lacks ("Dedicated GPU: NVIDIA T500"), when no catalog GPU was
        read: said back as not sized, instead of planning the default GPU without a word."""
        if self.gpu_ids:
            return
        for match in self.scan.unclaimed(self.voc.gpu_like):
            words = self.scan.take(match)
            memory, span, _ = self._gpu_memory_near(match, None)
            named = gpu_id(f"{words} {memory:g}g", self.voc, self.cat) if memory else None
            if named:  # "16GB VRAM 5060 TI": a card the catalog names only with its memory
                self.scan.claim(*span)
                self.set("gpu", named, words)
                self.gpu_ids.append(named)
                self._cards_counted_before(match.start(), words)
                continue
            if not memory and self._catalog_has_with_memory(words):
                continue  # "5060 Ti" alone: the catalog has it, of a memory the question does not say
            self.unknown.append(words)
            if memory and "gpu_memory_gib" not in self.fields:  # "Mi50 16GB": planned as a card of that memory
                self.set("gpu_memory_gib", memory, words)
                self.scan.claim(*span)
                self._cards_counted_before(match.start(), words)  # "2张 RTX 2060 6g"
            else:
                memory = None
            self.notes.append(Note(code="unsupported_hardware", params={"value": words, "memory": memory}))

    def _catalog_has_with_memory(self, words: str) -> bool:
        """Whether a catalog card's name is these words and a memory ("5060 ti": the 5060 Ti 16GB)."""
        key = re.escape(re.sub(r"^(?:rtx|gtx)", "", normalize_name(words)))
        names = (normalize_name(g.name) for g in self.cat.gpus.values())
        return any(re.fullmatch(r"(?:rtx|gtx)?" + key + r"\d+g", name) for name in names)

    def _cards_counted_before(self, start: int, words: str) -> None:
        counted, counts = self._count_before(COUNTED_MARK, start)
        if counted and "gpus" not in self.fields:
            said = self.scan.original[counted[0] : counted[1]].strip() + " " + words
            for name in ("nodes", "gpus"):  # "2x8 MI50 16GB": the servers too
                if name in counts:
                    self.set(name, counts[name], said)
            self.scan.claim(*counted)

    def _remember_mention(self, gpu: str, span: tuple[int, int], start: int) -> None:
        """What one GPU mention came with, for comparisons and mixed setups: its counts, and whether
        the user lacks it."""
        here = self.counts_at.get(("gpus", span)) or self.counts_at.get(("weak", span))
        if here:
            self.gpu_counts.setdefault(gpu, here)
        self.gpu_mentions.append((gpu, (start, span[1]), here, self.counts_at.get(("nodes", span))))
        if lacked(self.scan.original, span):
            self.gpus_lacked.add(gpu)

    def unsupported_hardware(self) -> None:
        for match in self.scan.unclaimed(self.voc.unsupported):
            words = self.scan.take(match)
            self.notes.append(Note(code="unsupported_hardware", params={"value": words, "memory": None}))
            self.unknown.append(words)

    def instances(self) -> list[str]:
        """Cloud instance types ("ml.g5.48xlarge", "2 x p4d.24xlarge", "a2-highgpu-8g", "colab"):
        their GPU type and count, said back in a note."""
        found: list[str] = []
        if not self.scan.unclaimed_search(self.voc.any_instance):
            return found
        for instance, pattern in self.voc.instances:
            for match in self.scan.unclaimed(pattern):
                per = int(match.group(1)) if instance.gpus == "count" else instance.gpus
                count = self._count_before(INSTANCE_MARK, match.start())[1].get("instances", 1)
                words = self.scan.take(match)
                self.set("gpu", instance.gpu, words)
                self.set("gpus", per * count, words)
                if count > 1:
                    self.set("nodes", count, words)
                self.notes.append(
                    Note(code="instance_read", params={"instance": words, "gpu": instance.gpu, "gpus": per * count})
                )
                found.append(instance.gpu)
        return found

    def gpus(self) -> list[str]:
        """GPU types named, with the count and memory written around each: "8张H100", "8x A100",
        "4张40G的A100", "A100 (40G)", "TITAN RTX 24GB *2", "3*8*A100", "2台8卡A800", "my dual 3090"."""
        found: list[str] = []
        text = self.scan.original
        for match in self.scan.unclaimed(self.voc.gpu_alias):
            found_id = gpu_id(match.group(1), self.voc, self.cat)
            if found_id is None or (match.group(1).isdigit() and _QUANTITY_AFTER.match(text, match.end())):
                continue  # "3090 steps", "1650条样本": a number of things, not a card
            # "nvidia a100": the vendor's name too, when no reading took it
            free = self.scan.free_from(max(0, match.start() - 24), match.start())
            vendor = VENDOR_BEFORE.search(text, free, match.start())
            start = vendor.start() if vendor else match.start()
            server = bool(vendor and vendor.group("server"))  # "96 DGX-A100": servers, not GPUs
            words = text[start : match.end()].strip()
            memory, memory_span, inner_count = self._gpu_memory_near(match, found_id)
            written_with = bool(memory or MEMORY_SIZE.search(match.group(0)))  # "4台H100（80GB）", "3060 12gb"
            total = None  # "4xA100 160Gb": the memory of all the cards, told apart once the count is read
            as_written = None  # a card with other memory than the catalog's ("4090 48G"), once it is the one used
            if memory:
                variant = variant_with_memory(found_id, memory, self.cat)
                found_id = variant or found_id
                card = self.cat.gpus[found_id]
                said_total = _TOTAL_AFTER.match(text, memory_span[1])  # "2x 3090 (48GB total)"
                if not variant and memory > 1.15 * card.memory_gib and (said_total or not DESKTOP.search(card.name)):
                    total = memory  # not on desktop cards unless said, their memory is modded ("4090 48G")
                elif abs(self.cat.gpus[found_id].memory_gib - memory) > 0.15 * memory:
                    as_written = memory
            if written_with:  # the card its memory names ("A100(40G)": the 40 GB A100), whose memory no
                self.memory_written_with.add(found_id)  # memory written apart from it is
            form = _FORM_AFTER.search(text[match.end() : match.end() + 16])
            if form:  # "A800单机8卡PCIE": the form factor written after the count
                variant = variant_with_form(found_id, form.group(1).rstrip("0123456789"), self.cat)
                if variant:
                    found_id = variant
                    self.scan.claim(match.end() + form.start(1), match.end() + form.end(1))
            self.scan.take(match)
            self.scan.claim(start, match.start())
            self.option_spans["gpu"].append((start, match.end()))
            kept = self.set("gpu", found_id, words)
            if as_written and self.fields.get("gpu") == found_id:  # not a card compared or set aside
                self.set("gpu_memory_gib", as_written, words)
            if memory_span:
                self.scan.claim(*memory_span)
            before = self._counts_now()
            self._gpu_count(start, match.end(), words, memory_span, found_id, server)
            if not server:  # "96 DGX-A100 (8x40G)": the count in the memory is one server's
                self._count_in_memory(inner_count, memory_span, before, words)
            if not kept:  # the counts written with a GPU set aside are set aside with it
                self._restore_counts(before)
            self._remember_mention(found_id, match.span(), start)
            if total:
                said = self.scan.original[start : max(match.end(), memory_span[1])].strip()  # "a100 160gb"
                found_id = self._memory_in_all(found_id, total, said)
            if found_id not in found:
                found.append(found_id)
        return found
