"""GPU and node counts (steps of the Reader, extract.py): a count written beside a card's name
("8x H100", "2台8卡A800", "H100*8", "A100 80G 8张", "two H100 servers"), a count written alone
("8 GPUs", "2机16卡", "16 GPUs across 2 nodes", "单卡", "4 nodes"), a count said per server, and one
written with a question for the number of machines."""

from __future__ import annotations

import re

from gpuplan.bot.language import engine
from gpuplan.bot.language.reader_state import ReaderState, regex
from gpuplan.bot.language.values import NUM, count_value
from gpuplan.estimator.schema import Note

# how far before a name its count is looked for: the longest count with its words ("a couple of
# 8x", "3*8*", "2台8卡") is far shorter; searching all the text before it cost time on long pastes
COUNT_WINDOW = 48

# thousands of cards, after a word that puts the job on them ("on 16k H100", "with 100k H100s",
# "用1万张"): "8k a100" alone may be a context length and is not read
_THOUSANDS_BEFORE = r"(?:\bon|\bwith|\busing|\bacross|\bof)\s+(\d+(?:\.\d+)?)\s*k\s*[x×]?\s*$"

# "nodes of 8 H100": the count after it is one machine's
_MACHINES_OF = re.compile(r"(?:nodes?|servers?|machines?|boxes|hosts?)\s+(?:of|with)\s+(?:\d+\s*[x×*]?\s*)?$")

# what joins a count to the thing counted after it: a memory or card ("8张24G", "two 24GB", "4x 80GB"),
# an instance ("2 x p4d.24xlarge", "2x ml.g5"), a DGX ("96 DGX-A100", "2台DGX")
CARDS_JOINER = r"(?:x|×|\*|张|块|个)?"

_SERVERS_JOINER = r"(?:x|×|\*|台|个)?"

# after a GPU name: the count before it was of machines ("4台 A800 机器", "two H100 servers")
_MACHINES_AFTER = re.compile(r"\s*(?:的)?\s*(?:机器|服务器|主机|节点|servers?\b|machines?\b|nodes?\b|boxes\b)")

# a count said per server: "每台8张", "each with 8", "8 A100 per node" (the count may stand between)
_PER_NODE_BEFORE = re.compile(
    r"(?:每台|每机|每个?节点|每个?服务器|each(?: node| server| machine| box)?(?: with| has)?"
    r"|per (?:node|server|machine))[:：,，]?\s*(?:有|是|配|装|带|都是)?[\s\d一二两三四五六七八九十张块个x×*]*$"
)

_PER_NODE_AFTER = re.compile(  # "8 H100 per node", "8 T4 16GB GPU on each"
    r"\s*(?:\(?\d+\s*g(?:b|ib)?\)?)?\s*(?:gpus?|cards?)?\s*"
    r"(?:per (?:node|server|machine)|(?:on |in )?each|/node|每台|每机)"
)

# a count with the word GPU before a GPU's name ("8 GPU A100", "8-GPU A800"; not "cuda 12.0\ngpu A100")
_GPU_WORD_COUNT = re.compile(r"(?<![\w.])(\d{1,5})[^\S\n]*-?[^\S\n]*gpus?[^\S\n]+$", re.I)

# a Chinese count whose cards a 的-phrase describes by what they have or their state ("4个没有NVLink的
# V100", "两张二手的3090"); 个 counts any noun ("2个版本的A100", "3个月的A100"), so only these openings
_COUNT_THEN_DESCRIBED = (
    r"\s*(?:张|块|个)\s*(?:没有|不带|带|有|支持|二手|全新|闲置|空闲|可用|坏掉?|旧|新)[^\s\d，。,.;；：:、]{0,10}的\s*$"
)

# a Chinese count written after a card and its memory ("用了4090 24G 4张", "A100 80G 8张"): the cards', not
# images' or pages' ("3张图")
_COUNT_AFTER_ZH = re.compile(
    r"\s*(\d{1,3})\s*(?:张|块)(?!\s*(?:图|照片|表|纸|显存|内存|的?样本|钱|多|元|/|每|一?小时|秒|截图|[a-z0-9]))"
)  # not a price ("8块钱一小时", "2块多"), a rate ("1000张/秒") or the next card's count ("2张A100")

_CARDS_AFTER = re.compile(r"\s*(?:卡|显卡|张|gpus?\b|cards?\b)")  # "16台H100卡": the 台 counts cards


class GpuCounts(ReaderState):
    """The Reader's steps and helpers that read GPU and node counts."""

    def _count_in_memory(self, count: int | None, memory_span, before, words: str) -> None:
        """'A10(4* 24GB)': a count times the memory written after the name is the count, when
        nothing before the name counted the cards."""
        if count and self._counts_now()[0]["gpus"] == before[0]["gpus"]:
            said = self.scan.original[memory_span[0] : memory_span[1]].strip()
            self.set("gpus", count, words + " " + said)

    def _gpu_count(self, start: int, end: int, words: str, memory_span: tuple[int, int] | None, gpu: str) -> None:
        """The count written before the GPU name (or after it: "24GB *2"), with nodes when given."""
        head_end = memory_span[0] if memory_span and memory_span[0] < start else start
        head = (self.scan.text, max(0, head_end - COUNT_WINDOW), head_end)  # text, pos, endpos
        tail_start = memory_span[1] if memory_span and memory_span[1] > end else end
        # 3*8*A100, 三个8*V100, 12x8卡H20
        product = regex(NUM + r"\s*(?:[*x×]|个|台|组)\s*" + NUM + r"\s*(?:[*x×]|卡|张)?\s*$").search(*head)
        if not product and _MACHINES_AFTER.match(self.scan.text, tail_start):  # "two 8 A100 servers"
            product = regex(NUM + r"\s+" + NUM + r"\s*$").search(*head)
        nodes_of = regex(
            NUM
            + r"\s*(台|机器?|nodes?|servers?|machines?|boxes)\s*(?:of|x|×|with)?\s*"
            + NUM
            + r"\s*(?:x|×|张|块)?\s*$"
        ).search(*head)
        # "8x H100", "8张", "8*(v100 16G)": a bracket may open after a multiplier
        before = regex(NUM + r"\s*(?:or (?:fewer|less|more)\s*)?(?:[x×*]\s*[(（]|x|×|\*|张|块|台|个|-way)?\s*$").search(
            *head
        )
        before = before or _GPU_WORD_COUNT.search(*head) or regex(NUM + _COUNT_THEN_DESCRIBED).search(*head)
        after = regex(r"^\s*(?:gpus?|cards?)?\s*[*x×]\s*(\d{1,5})(?![\d.])").search(self.scan.text[tail_start:])
        counted_after = None if after else _COUNT_AFTER_ZH.match(self.scan.text, tail_start)  # "4090 24G 4张"
        if product or nodes_of:  # "3*8*A100", "two nodes of 8 H100", "2台8卡H100"
            m = product or nodes_of
            nodes, count = count_value(m.group(1)), count_value(m.group(3) if nodes_of and not product else m.group(2))
            total = count if nodes_of and not product and m.group(2).startswith("机") else nodes * count
            self.set("nodes", int(nodes), m.group(0).strip() + " " + words)
            self.set("gpus", int(total), m.group(0).strip() + " " + words)
            self.scan.blank(*m.span())
        elif (
            before
            and after
            and before.group(1) not in ("a", "an")
            and ("台" in before.group(0) or _MACHINES_AFTER.match(self.scan.text, tail_start + after.end()))
        ):  # "2 H100*8 machines", "2台 H100*8": two servers of eight
            servers = count_value(before.group(1))
            if servers and servers == int(servers):
                said = before.group(0).strip() + " " + words + after.group(0)
                self.set("nodes", int(servers), said)
                self.set("gpus", int(servers) * int(after.group(1)), said)
                self.scan.blank(*before.span())
                self.scan.blank(tail_start + after.start(), tail_start + after.end())
        elif (
            before
            and before.group(1) not in ("a", "an")
            and not re.search(r"[x×*张块]|gpu", before.group(0))  # "4xA100 server", "8 GPU A100 server": GPUs
            # "2台H100": 台 counts machines, and an NVLink card comes in servers ("两台4090" may be two cards)
            and (
                _MACHINES_AFTER.match(self.scan.text, tail_start)
                or (
                    "台" in before.group(0)
                    and self._sold_in_servers(gpu)
                    and not _CARDS_AFTER.match(self.scan.text, tail_start)
                )
            )
        ):
            self._servers(count_value(before.group(1)), before.group(0).strip() + " " + words, gpu)
            self.scan.blank(*before.span())
        elif before and before.group(1) not in ("a", "an"):
            count = count_value(before.group(1))
            if count and count == int(count):
                self.set("gpus", int(count), before.group(0).strip() + " " + words)
                self.scan.blank(*before.span())
        elif after:
            self.set("gpus", int(after.group(1)), words + after.group(0))
            self.scan.blank(tail_start + after.start(), tail_start + after.end())
        elif counted_after:
            self.set("gpus", int(counted_after.group(1)), words + counted_after.group(0))
            self.scan.blank(*counted_after.span())
        elif thousands := regex(_THOUSANDS_BEFORE).search(*head):  # "on 16k H100": a cluster's count
            self.set("gpus", int(float(thousands.group(1)) * 1000), thousands.group(0).strip() + " " + words)
            self.scan.blank(thousands.start(1), thousands.end())
        elif regex(r"(?:\b(?:one|single)\s+|(?:单张|一张|一块|单卡)\s*)$").search(*head):
            self.set("gpus", 1, words)  # "on a single A6000": one card, said as such
        elif (
            regex(r"\b(?:a|an|my|this)\s+$").search(*head)
            or regex(
                r"^\s*(?:显卡|卡(?![\d数])|graphics card\b|card\b|gpu\b(?!\s*\d+\s*:))"  # not "GPU 1: ..." of a list
            ).search(self.scan.text[tail_start:])
        ):
            self.weak("gpus", 1, words)  # "my 4090", "titanxp显卡": one card unless a count is written

    def _sold_in_servers(self, gpu: str) -> bool:
        """A Hopper or Blackwell SXM module, which comes only in servers: "4台H100", "4台H800" count
        servers in the labelled questions (3 of 3), while "8台V100 * 32G", "四台V100，一共128G" and
        "一台v100" count cards (train/questions/zh.yaml)."""
        card = self.cat.gpus.get(gpu)
        return bool(card and card.link == "nvlink" and card.family in ("hopper", "blackwell"))

    def _dgx_servers(self, start: int, words: str, gpu: str) -> None:
        """ "96 NVIDIA DGX-A100 (8x40G) machines": a count before a DGX/HGX name counts servers."""
        count, servers = self._count_before(_SERVERS_JOINER, start)
        if count:
            self.scan.blank(*count.span())
        self._servers(servers or 1, (count.group(0).strip() + " " if count else "") + words, gpu)

    def _count_before(self, joiner: str, start: int) -> tuple[re.Match | None, int]:
        """The whole count written just before `start` ("8张", "two", "4x"; `joiner` the words that
        may join it to what it counts) and its value; (None, 0) when there is none ("a" is no count)."""
        match = regex(NUM + r"\s*" + joiner + r"\s*$").search(self.scan.text, max(0, start - COUNT_WINDOW), start)
        value = count_value(match.group(1)) if match and match.group(1) not in ("a", "an") else 0
        return (match, int(value)) if value and value == int(value) else (None, 0)

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
        spans = engine.read(self.scan.text, "gpu_count", original=self.scan.original)
        self._set_readings(sorted(spans, key=lambda span: (-span.rule.priority, span.start)))

    def per_node_counts(self) -> None:
        """A GPU count said per server beside a node count ("4台服务器，每台8张H800", "3 nodes, 8
        A100 per node") is multiplied out: 32 GPUs on 4 nodes."""
        span, nodes = self.spans.get("gpus"), self.fields.get("nodes")
        if span is None or not nodes or nodes <= 1 or self.words.get("gpus") == self.words.get("nodes"):
            return  # no count, one node, or "2台8卡" already read both together
        text = self.scan.original
        if _PER_NODE_BEFORE.search(text[max(0, span[0] - 14) : span[0]]) or _PER_NODE_AFTER.match(text, span[1]):
            per_node = self.fields["gpus"]
            self.fields["gpus"] = per_node * nodes
            self.notes.append(Note(code="per_node_count", params={"per_node": per_node, "nodes": nodes}))

    def machines_asked(self) -> None:
        """A count of cards written with a question for the number of machines ("how many 8xH100
        nodes", "nodes of 8 H100?", "需要几台8卡A100", "8卡H100 ... 需要几台") is what one machine
        holds: the job's GPUs and machines are left to the plan, and the answer says so."""
        span, nodes = self.spans.get("gpus"), self.fields.get("nodes")
        asked = self.voc.asks_machines.search(self.scan.original)
        if span is None or nodes or not asked:
            return
        words = self.words["gpus"]
        in_the_ask = span[0] < asked.end() and asked.start() < span[1]  # "how many 8xH100 nodes"
        of_machines = _MACHINES_OF.search(self.scan.original, max(0, span[0] - 16), span[0])
        per_machine_form = "卡" in words and not re.search(r"张|块", words)  # "8卡A100", not "8张A100"
        if in_the_ask or of_machines or per_machine_form:
            per_node = self.fields["gpus"]
            self._drop_counts_read_at(span)
            self.notes.append(Note(code="count_per_machine", params={"per_node": per_node, "words": words}))
