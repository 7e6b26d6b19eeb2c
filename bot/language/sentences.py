"""Where words stand in a question: their sentence and clause, whether that sentence asks
something, whose setup they describe (`owner`: the user's own, one they mean to get, one they quote
or lack) and a move from one setup to another ("from 1 node to 4 nodes")."""

from __future__ import annotations

import re

from gpuplan.bot.language.sections import section_pattern

# words of summing: a count said to be the whole ("a total of 32xH100s", "totally 32 gpus", "一共32张") sums
# the parts written before it; a memory said so is all the cards' together
TOTAL_WORDS = r"(?:\ba total of|\btotally|\bin total|\bin all|\baltogether|加起来|总共|一共|合计|总计|共)"

_MOVE_FROM = re.compile(r"(?:from|从|mov\w*|switch\w*|went|upgrad\w*|scal\w*|increas\w*|expand\w*|扩|升级|换)\W*$")

_MOVE_TO = re.compile(
    r"^[^.。!?！？\n]{0,40}?(?:\bto\b|->|→|=>|\binto\b|换成|改成|改为|变成|扩到|增加到|扩展到|升级到|到)"
)

_SENTENCE_END = re.compile(r"[.!?。！？\n]")

_QUESTION = re.compile(r"[?？]|^\s*(?:can|could|how|what|which|is|are|do|does|will|would)\b|吗|多少|能否|可否|怎么")

# where a sentence ends, for what a sentence holds: not a decimal point ("qwen2.5", "1.5k samples")
_SENTENCE_BREAK = re.compile(r"[!?。！？\n]|\.(?!\d)")


def sentence_around(text: str, span: tuple[int, int]) -> str:
    """The sentence the words at `span` stand in."""
    start = max((m.end() for m in _SENTENCE_BREAK.finditer(text, 0, span[0])), default=0)
    end = _SENTENCE_BREAK.search(text, span[1])
    return text[start : end.start() if end else len(text)]


def in_question(text: str, span: tuple[int, int]) -> bool:
    """Whether the words at span stand in a sentence that asks something."""
    start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, span[0])), default=0)
    end = _SENTENCE_END.search(text, span[1])
    sentence = text[start : end.end() if end else len(text)]
    return bool(_QUESTION.search(sentence.lower()))


# punctuation, or a gap: two spaces, or a space before 我 ("... + DeepSpeed  我想问是否能用 4090")
_CLAUSE_END = re.compile(r"[.。!?！？;；\n,，:：]|\s{2,}|\s(?=我)")

# a possessive right before a name: the user's own ("my 3090", "我的3090", "our A100s")
_MINE_BEFORE = re.compile(r"(?:\bmy|\bour|我的|我们的|我这边的?|我这里的?|自己的|本人的)\s*(?:own\s+)?$")


def _clause(text: str, span: tuple[int, int]) -> str:
    """The clause the words at `span` stand in (up to commas, colons and sentence ends)."""
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, span[0])), default=0)
    end_match = _CLAUSE_END.search(text, span[1])
    return text[start : end_match.start() if end_match else len(text)]


def lacked(text: str, span: tuple[int, int]) -> bool:
    """Whether the clause around `span` says the user lacks it ("A100s aren't available to me")."""

    return section_pattern("lacking").search(_clause(text, span)) is not None


def owner(text: str, span: tuple[int, int]) -> int:
    """+3 in a clause saying the user means to get it ("planning to buy", "打算买"); +2 right after
    "my" / "我的"; +1 when the clause around `span` speaks of the user's own setup
    ("I have", "我这里"), -1 when it quotes someone else's (a paper, a README, the official
    benchmark), one the user had before ("以前", "previously"), one they lack ("没有") or one that
    shows the same thing too ("也会出现同样的情况"), else 0."""

    clause = _clause(text, span)
    if section_pattern("prospective").search(clause):
        return 3  # "I have a 3090 ... planning to buy a 4090": what they mean to get is what they ask about
    if _MINE_BEFORE.search(text, max(0, span[0] - 12), span[0]):
        return 2  # "别人的2080ti比我的3090快": a possessive right before the name says more than the clause
    if any(section_pattern(s).search(clause) for s in ("earlier", "lacking", "also_seen")):
        return -1  # "I used to train on 1 GPU", "A100s aren't available", "also happens with": not what is asked about
    mine = section_pattern("first_person").search(clause) is not None
    theirs = section_pattern("reference").search(clause) is not None
    return int(mine) - int(theirs)


def moves_to(text: str, first: tuple[int, int], second: tuple[int, int]) -> bool:
    """True for "from <first> to <second>" ("moved from 1 node to 4 nodes", "从单机扩到4机")."""
    if second[0] < first[1]:
        return False
    before = text[max(0, first[0] - 24) : first[0]]
    return bool(_MOVE_FROM.search(before) and _MOVE_TO.search(text[first[1] : second[0]]))
