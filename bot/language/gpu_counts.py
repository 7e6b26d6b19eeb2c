"""GPU and node counts (steps of the Reader, extract.py): a count written beside a card's name
("8x H100", "2台8卡A800", "H100*8", "A100 80G 8张", "two H100 servers": knowledge/rules/<lang>/
card_count.yaml, read around the card; "96 DGX-A100": server_count.yaml), a count written alone ("8 GPUs",
"2机16卡", "单卡", "4 nodes": gpu_count.yaml), a count said per server ("每台8张", "8 A100 per node":
per_node.yaml) and one that is what a machine holds in a question for the number of machines ("nodes
of 8 H100?", "需要几台8卡A100": per_machine.yaml), the last two read around the count once it is read.
The rules read; this module builds the words they read and applies their readings."""

from __future__ import annotations

import re
from collections import Counter

from gpuplan.bot.language import engine
from gpuplan.bot.language.reader_state import ReaderState
from gpuplan.estimator.schema import Note

# how far before a name its count is looked for: the longest count with its words ("a couple of
# 8x", "3*8*", "2台8卡") is far shorter; searching all the text before it cost time on long pastes
COUNT_WINDOW = 48

# a card's name in the words its count is read from (the {CARD}, {SERVER_CARD} and {SERVER_NAME} pieces
# of knowledge/rules/pieces.yaml): a character no question holds and no pattern's \w, \d or \s matches;
# a server's name before the card's ("DGX-A100") is written as the last, whose count counts servers
CARD_MARK, SERVER_CARD_MARK, SERVER_NAME_MARK = "\x00", "\x01", "\x02"

# how far after a name its count and the words that place it are read: the longest ("gpus x 8
# machines", "graphics card") is 20 characters
AFTER_WINDOW = 32

# a GPU count read, in the words around it that tell what it counts (the {COUNT_READ} piece)
COUNT_MARK = "\x03"

# what a count right before it counts where no card's name stands (count_before.yaml's {COUNTED} and
# {INSTANCE} pieces): a memory written alone or a card gpuplan does not plan; a cloud instance type
COUNTED_MARK, INSTANCE_MARK = "\x04", "\x05"


def count_before_view(text: str, start: int, mark: str) -> str:
    """The words before `start` (as many as a count's are looked for) and what is counted there as
    one mark: what count_before.yaml's rules read."""
    return text[max(0, start - COUNT_WINDOW) : start] + mark


# how far before and after a GPU count the words that make it one server's are read (per_node.yaml's
# rules): "每台8张", "each with 8" before it; "8 A100 per node", "8 T4 16GB GPU on each" after it, whose
# longest, "(80 GB) GPUs per machine", is 25 characters (the rest of a long paste is not scanned)
PER_NODE_HEAD, PER_NODE_TAIL = 14, 64

# how far before a GPU count the words that make it one machine's are read ("nodes of 8"): per_machine.yaml
PER_MACHINE_HEAD = 16


def per_node_view(text: str, span: tuple[int, int]) -> str:
    """The words around the GPU count read at `span` as per_node.yaml's rules read them: 14
    characters before it, the count as one mark, 64 after it."""
    return text[max(0, span[0] - PER_NODE_HEAD) : span[0]] + COUNT_MARK + text[span[1] : span[1] + PER_NODE_TAIL]


# how far before and after a GPU (or node) count the words that make it a decode pool's are read
# (decode_pool.yaml): "with a decode pool of", "解码用" before its words; " as the decode pool" after them
DECODE_HEAD, DECODE_TAIL = 24, 24


def decode_view(text: str, span: tuple[int, int], words: str) -> str:
    """The words around the count read at `span` from `words` as decode_pool.yaml's rules read them: 24
    characters before its words ("72 h100" ends where the card's name does; "72张 h100" is "72张h100"
    as written), the count as one mark, 24 after it."""
    start = _written_from(text, span[1], words)
    start = span[0] if start is None else start
    return text[max(0, start - DECODE_HEAD) : start] + COUNT_MARK + text[span[1] : span[1] + DECODE_TAIL]


def _written_from(text: str, end: int, words: str) -> int | None:
    """Where `words` start that end right at `end` in `text`, spaces between their characters or not
    ("72张 h100" of "72张h100"), read backwards, within twice their length and 8 characters; else None
    (no pattern compiled per question: the compiled patterns are kept for the process's life)."""
    at = end
    for i, char in enumerate(reversed(re.sub(r"\s+", "", words))):
        while i and at > 0 and text[at - 1].isspace():
            at -= 1
        if at == 0 or text[at - 1] != char:
            return None
        at -= 1
    return at if at >= end - 2 * len(words) - 8 else None


def per_machine_view(text: str, span: tuple[int, int], words: str) -> str:
    """The words before the GPU count read at `span` as per_machine.yaml's rules read them (16
    characters), the count as one mark, and the words it was read from ("8卡": a machine's cards)."""
    return text[max(0, span[0] - PER_MACHINE_HEAD) : span[0]] + COUNT_MARK + words


def card_view(text: str, pos: int, head_end: int, tail_start: int, mark: str) -> str:
    """The words before a card's name (from `pos` to `head_end`), its mark, and as many words after
    it (from `tail_start`): what card_count.yaml's rules read."""
    return text[pos:head_end] + mark + text[tail_start : tail_start + AFTER_WINDOW]


class GpuCounts(ReaderState):
    """The Reader's steps and helpers that read GPU and node counts."""

    def _count_in_memory(self, count: int | None, memory_span, before, words: str) -> None:
        """'A10(4* 24GB)': a count times the memory written after the name is the count, when
        nothing before the name counted the cards. The count is read by card_memory.yaml's rule
        memory_times_count_after_card, over the memory's words, which card_count's view leaves out;
        this only applies it, after card_count's reading: which of two views' readings stands is no
        priority the engine settles within one (the reason this stays code)."""
        if count and self._counts_now()[0]["gpus"] == before[0]["gpus"]:
            said = self.scan.original[memory_span[0] : memory_span[1]].strip()
            self.set("gpus", count, words + " " + said)

    def _gpu_count(
        self, start: int, end: int, words: str, memory_span: tuple[int, int] | None, gpu: str, server: bool = False
    ) -> None:
        """The count written around a GPU's name (knowledge/rules/<lang>/card_count.yaml: "8x H100",
        "H100 x 8", "2台8卡H100", "A100 80G 8张", "96 DGX-A100"), read over the words before the name and
        after it, its memory and a vendor's word left out, the name written as one mark (`server`: a
        server's name, "DGX-A100", written before the card's: server_count.yaml's rules, which no other
        card's view needs tried)."""
        head_end = memory_span[0] if memory_span and memory_span[0] < start else start
        tail_start = memory_span[1] if memory_span and memory_span[1] > end else end
        pos = max(0, head_end - COUNT_WINDOW)
        mark = SERVER_NAME_MARK if server else SERVER_CARD_MARK if self._sold_in_servers(gpu) else CARD_MARK
        view = card_view(self.scan.original, pos, head_end, tail_start, mark)
        claimed = self.scan.claims_within(pos, head_end)
        claimed += self.scan.claims_within(tail_start, tail_start + AFTER_WINDOW, head_end - pos + 1)
        dimension = "server_count" if server else "card_count"
        for span in engine.read(view, dimension, claimed=claimed):  # one at most: all hold the mark
            self._count_beside(span, view, head_end - pos, (pos, tail_start), words, gpu)

    def _count_beside(self, span: engine.Span, view: str, at: int, origins: tuple[int, int], words: str, gpu: str):
        """Record a count read beside a card (`at`: the mark's place in `view`; `origins`: where the
        words before and after the mark start in the text) and claim its words: the count's, from
        its first group, not the words that only place it ("on" of "on 16k H100", "my")."""
        readings = dict(span.readings)
        if None in readings.values():
            return  # "1.5x A100": no count, and no other reading of one
        groups = [s for s in span.rule.pattern.match(view, span.start).regs[1:] if s[0] >= 0]
        if not groups and "servers" not in readings:  # "single A6000", "my 4090": one card, said as the name
            if "gpus" in readings:
                self.set("gpus", 1, words)
            else:
                self.weak("gpus", 1, words)
            return
        head = view[span.start : at].strip()
        said = (head + " " if head else "") + words + view[at + 1 : span.end]
        if "servers" in readings:
            self._servers(readings["servers"], said, gpu)
        for name in ("nodes", "gpus"):
            if name in readings:
                self.set(name, readings[name], said)
        counted_from = min((a for a, _ in groups), default=at)  # "a DGX A100": one server, no count
        if counted_from < at:
            self.scan.claim(origins[0] + counted_from, origins[0] + at)
        if span.end > at + 1:
            self.scan.claim(origins[1], origins[1] + span.end - at - 1)

    def _sold_in_servers(self, gpu: str) -> bool:
        """A Hopper or Blackwell SXM module, which comes only in servers: "4台H100", "4台H800" count
        servers in the labelled questions (3 of 3), while "8台V100 * 32G", "四台V100，一共128G" and
        "一台v100" count cards (train/questions/zh.yaml)."""
        card = self.cat.gpus.get(gpu)
        return bool(card and card.link == "nvlink" and card.family in ("hopper", "blackwell"))

    def _count_before(self, mark: str, start: int) -> tuple[tuple[int, int] | None, dict[str, int]]:
        """Where the count written just before `start` stands and what it reads ("8张", "two", "2 x",
        "2x8": nodes too), by count_before.yaml's rules over the words before it, what it counts
        written as `mark` (COUNTED_MARK or INSTANCE_MARK); (None, {}) when there is none ("a" is no
        count). What a count before a card counts is card_count.yaml's; this is for the steps that
        count something no card mark stands for, a cloud instance (gpu_names.py) and a memory written
        alone (gpu_memory.py). The words other readings took right before what is counted are read
        with it ("two 16GB 5060 Ti": the memory read with the card; "2 * 910b 32G": a card not planned)."""
        start = self.scan.claimed_before(start)
        view = count_before_view(self.scan.original, start, mark)
        claimed = self.scan.claims_within(max(0, start - COUNT_WINDOW), start)
        found = engine.settle([s for s in engine.found(view, "count_before", claimed=claimed) if s.end == len(view)])
        readings = dict(found[0].readings) if found else {}
        if not readings or None in readings.values():
            return None, {}
        origin = start - (len(view) - 1)
        return (origin + found[0].start, start), readings

    def _servers(self, servers: float, words: str, gpu: str) -> None:
        """ "4台 A800 机器", "two H100 servers": that many servers, each the type's usual number of
        GPUs (the answer says so) unless the question gives it."""
        if not servers or servers != int(servers):
            return
        self.set("nodes", int(servers), words)
        per_node = self.cat.gpus[gpu].gpus_per_node
        self.weak("gpus", int(servers) * per_node, words)
        note = Note(
            code="servers_of_usual_size",
            params={"servers": int(servers), "per_node": per_node, "gpu": self.cat.gpus[gpu].name},
        )
        if note not in self.notes:  # said once (the parser drops it for a card set aside)
            self.notes.append(note)

    def counts(self) -> None:
        """GPU and node counts written on their own: "2台8卡", "2机16卡", "two nodes of 8", "16 GPUs
        across 2 nodes", "8 GPUs", "8张卡", "单卡", "single node", "4 nodes"
        (knowledge/rules/*/gpu_count.yaml). Set rule by rule, the highest priority first: of two
        different counts the first set stands unless `set` says otherwise ("2台8卡" before "8卡")."""
        spans = self._unclaimed("gpu_count")
        self._set_readings(sorted(spans, key=lambda span: (-span.rule.priority, span.start)))

    def per_node_counts(self) -> None:
        """A GPU count said per server beside a node count ("4台服务器，每台8张H800", "3 nodes, 8
        A100 per node": knowledge/rules/<lang>/per_node.yaml, read around the count) is multiplied
        out: 32 GPUs on 4 nodes."""
        span, nodes = self.spans.get("gpus"), self.fields.get("nodes")
        if span is None or not nodes or nodes <= 1 or self.words.get("gpus") == self.words.get("nodes"):
            return  # no count, one node, or "2台8卡" already read both together
        view = per_node_view(self.scan.original, span)
        if engine.found(view, "per_node"):
            per_node = self.fields["gpus"]
            self.fields["gpus"] = per_node * nodes
            self.notes.append(Note(code="per_node_count", params={"per_node": per_node, "nodes": nodes}))

    def decode_pool(self) -> None:
        """A count that is a served model's decode pool ("a decode pool of 72 H100", "72 GPUs for
        decode", "decode on 9 nodes of 8 H100", "解码用72张卡": knowledge/rules/<lang>/decode_pool.yaml,
        read around the count) is the request's decode_gpus, the prefill pool left to the plan; a
        count of servers alone ("decode 节点 9 台") holds the named card's usual number each (the
        catalog's most common when none is named), and the answer says so."""
        name = "gpus" if "gpus" in self.spans else "nodes"
        span, words = self.spans.get(name), self.words.get(name, "")
        if span is None:
            return
        view = decode_view(self.scan.original, span, words)
        if not engine.found(view, "decode_pool"):
            return
        per_node = None if name == "gpus" else self._usual_per_node()
        gpus = self.fields["gpus"] if per_node is None else self.fields["nodes"] * per_node
        for field in ("gpus", "nodes"):  # the decode pool's, not the deployment's in all
            for table in (self.fields, self.words, self.spans):
                table.pop(field, None)
        self.weak_fields.pop("gpus", None)  # "9 台 h100": servers of the usual size, said below
        self.notes = [n for n in self.notes if n.code != "servers_of_usual_size"]
        self.fields["decode_gpus"], self.words["decode_gpus"], self.spans["decode_gpus"] = gpus, words, span
        params = {"decode_gpus": gpus, "words": words, "per_node": per_node}
        self.notes.append(Note(code="decode_pool_count", params=params))

    def _usual_per_node(self) -> int:
        """GPUs in one server of the card named, else the catalog's most common server size."""
        card = self.cat.gpus.get(self.fields.get("gpu", ""))
        return (
            card.gpus_per_node
            if card
            else Counter(g.gpus_per_node for g in self.cat.gpus.values()).most_common(1)[0][0]
        )

    def machines_asked(self) -> None:
        """A count of cards written with a question for the number of machines is what one machine
        holds when it stands inside the ask ("how many 8xH100 nodes": the lexicon's asks_machines, so
        this test is code) or its words say so ("nodes of 8 H100?", "需要几台8卡A100", "8卡H100 ...
        需要几台": knowledge/rules/<lang>/per_machine.yaml): the job's GPUs and machines are left to
        the plan, and the answer says so."""
        span, nodes = self.spans.get("gpus"), self.fields.get("nodes")
        asked = self.voc.asks_machines.search(self.scan.original)
        if span is None or nodes or not asked:
            return
        words = self.words["gpus"]
        in_the_ask = span[0] < asked.end() and asked.start() < span[1]  # "how many 8xH100 nodes"
        view = per_machine_view(self.scan.original, span, words)
        if in_the_ask or engine.found(view, "per_machine"):
            per_node = self.fields["gpus"]
            self._drop_counts_read_at(span)
            self.notes.append(Note(code="count_per_machine", params={"per_node": per_node, "words": words}))
