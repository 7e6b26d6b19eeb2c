"""The reading engine (bot/language/engine.py) and its rules as data (knowledge/rules/): every
rule's examples read as they say, alone and through the whole parser; overlaps settle by priority,
then length, then position; pieces expand; no text makes the engine fail or overlap its readings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parser_table import CASES

from gpuplan.bot.language import engine, gpu_counts, patterns, unread
from gpuplan.bot.language.catalog_names import gpu_id, variant_with_memory
from gpuplan.bot.language.extract import Reader
from gpuplan.bot.language.gpu_counts import (
    CARD_MARK,
    COUNTED_MARK,
    INSTANCE_MARK,
    SERVER_CARD_MARK,
    SERVER_NAME_MARK,
    card_view,
    count_before_view,
    decode_view,
    per_machine_view,
    per_node_view,
)
from gpuplan.bot.language.gpu_memory import memory_view
from gpuplan.bot.language.job_settings import UNSTATED_SPEED
from gpuplan.bot.language.parser import parse
from gpuplan.bot.language.vocabulary import VENDOR_BEFORE, vocabulary
from gpuplan.knowledge import catalog

RULES = [rule for dimension in engine.dimensions() for rule in engine.rules(dimension)]
EXAMPLES = [
    pytest.param(rule, text, want, id=f"{rule.dimension}-{rule.lang}-{rule.name}-{i}")
    for rule in RULES
    for i, (text, want) in enumerate(rule.examples.items())
]


# the counts written beside a card's name (card_count.yaml) are read over the words around the card,
# its name written as a mark and a memory right after it left out, as the Reader does (gpu_counts.py)
_MEMORY_AFTER = re.compile(r"\s*\d+\s*g(?:b|ib)?(?![a-z])")
# the counts read around a card: written beside it, or before a server's name before it ("96 DGX-A100")
_AROUND_A_CARD = ("card_count", "server_count")
# what a card-count reading sets in the request: servers are nodes, one card unless said is GPUs
_REQUEST_FIELD = {"servers": "nodes", "gpus_unless_said": "gpus"}


def _first_card(text: str) -> re.Match:
    voc, cat = vocabulary(), catalog()
    return next(m for m in voc.gpu_alias.finditer(text) if gpu_id(m.group(1), voc, cat))


def _first_card_view(text: str) -> str:
    """`text` around its first catalog card's name, as card_count.yaml's rules read it (server_count.yaml's
    when a server's name stands before it)."""
    voc, cat = vocabulary(), catalog()
    match = _first_card(text)
    card = cat.gpus[gpu_id(match.group(1), voc, cat)]
    in_servers = card.link == "nvlink" and card.family in ("hopper", "blackwell")
    memory = _MEMORY_AFTER.match(text, match.end())
    tail = memory.end() if memory else match.end()
    server = VENDOR_BEFORE.search(text, max(0, match.start() - 24), match.start())  # "dgx-a100": a server's name
    if server and server.group("server"):
        return card_view(text, max(0, server.start() - 48), server.start(), tail, SERVER_NAME_MARK)
    start = max(0, match.start() - 48)
    return card_view(text, start, match.start(), tail, SERVER_CARD_MARK if in_servers else CARD_MARK)


FACTS = frozenset(engine.FACTS)

# what a GPU count read is (per_node.yaml: one server's; per_machine.yaml: what one machine holds) is
# read over the words around it once the Reader has read the counts, as the step after them does
# (gpu_counts.py)
_COUNT_VIEWS = {
    "per_node": ("per_node_counts", lambda reader: per_node_view(reader.scan.original, reader.spans["gpus"])),
    "per_machine": (
        "machines_asked",
        lambda reader: per_machine_view(reader.scan.original, reader.spans["gpus"], reader.words["gpus"]),
    ),
    # decode_pool.yaml: the count is a decode pool's (a count of servers alone when no GPU count is read)
    "decode_pool": ("decode_pool", lambda reader: decode_view(reader.scan.original, *_count_read(reader))),
}
# the note the Reader says when such a rule reads
_COUNT_NOTES = {"per_node": "per_node_count", "per_machine": "count_per_machine", "decode_pool": "decode_pool_count"}


def _count_read(reader: Reader) -> tuple[tuple[int, int], str]:
    """Where the GPU count read stands and its words; the node count's when no GPU count is read."""
    name = "gpus" if "gpus" in reader.spans else "nodes"
    return reader.spans[name], reader.words[name]


def _count_read_view(dimension: str, text: str) -> str:
    """`text` around the GPU count the Reader reads in it, as `dimension`'s rules read it."""
    step, view = _COUNT_VIEWS[dimension]
    reader = Reader(text, catalog())
    for name in Reader.STEPS[: Reader.STEPS.index(step)]:
        getattr(reader, name)()
    return view(reader)


# what a count right before it counts where no card's name stands (count_before.yaml): the first memory
# written alone ("24g", "80gb"), else the first cloud instance type, as the Reader marks them
_MEMORY = re.compile(r"\d+\s*g(?:b|ib)?(?![a-z])")


def _counted_view(text: str) -> str:
    memory = _MEMORY.search(text)
    if memory:
        return count_before_view(text, memory.start(), COUNTED_MARK)
    instance = next(m for _, pattern in vocabulary().instances for m in [pattern.search(text)] if m)
    return count_before_view(text, instance.start(), INSTANCE_MARK)


def _read(dimension: str, text: str) -> list[engine.Span]:
    text = text.lower()
    if dimension == "count_before":
        return engine.read(_counted_view(text), dimension)
    if dimension in _COUNT_VIEWS:
        return engine.read(_count_read_view(dimension, text), dimension)
    if dimension == "card_memory":  # the memory beside a card's name, read around it as the Reader does
        return engine.read(memory_view(text, *_first_card(text).span())[0], dimension)
    # every fact a rule may ask holds (gpu_memory.yaml's claims of all the cards' memory: cards counted)
    return engine.read(_first_card_view(text) if dimension in _AROUND_A_CARD else text, dimension, facts=FACTS)


def _close(got: dict, want: dict) -> bool:
    """The same fields with the same values, money to the cent."""
    return set(got) == set(want) and all(got[k] == pytest.approx(v, abs=0.01) for k, v in want.items())


def test_every_rule_has_an_example_and_a_name_of_its_own():
    assert RULES, "no rules loaded"
    assert not [rule.name for rule in RULES if not rule.examples]
    names = [(rule.dimension, rule.lang, rule.name) for rule in RULES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("rule, text, want", EXAMPLES)
def test_rule_example_reads_as_it_says(rule, text, want):
    got = dict(reading for span in _read(rule.dimension, text) for reading in span.readings)
    assert _close(got, want), got
    assert any(span.rule is rule for span in _read(rule.dimension, text)), "another rule read it"


@pytest.mark.parametrize("rule, text, want", EXAMPLES)
def test_rule_example_reads_so_through_the_parser(rule, text, want):
    """Request fields as the example says; "users" (a service's users, none said at once) is what
    the parser keeps to take as the concurrency when the question serves (users_count); InfiniBand or RoCE of
    unstated speed is read as the usual one."""
    parsed = parse(text)
    request = parsed.request.model_dump()
    # fields of the reading that are no Request field: the users (above), the precision word,
    # which the parser turns into a precision with the method (methods.precision_for), and a
    # response's length, which with the prompt's makes the sequence (below)
    fields = {k: v for k, v in want.items() if k not in ("users_count", "precision_word", "response_tokens")}
    fields = {_REQUEST_FIELD.get(k, k): v for k, v in fields.items()} if rule.dimension in _AROUND_A_CARD else fields
    if rule.dimension == "count_before":  # instances are servers of their type's GPUs
        fields = {"nodes" if k == "instances" else k: v for k, v in fields.items()}
    if rule.dimension == "gpu_memory" and rule.claims:  # what a run uses, all the cards' memory: no card's
        assert request["gpu_memory_gib"] is None
    if rule.dimension == "gpu_memory":  # a GPU given by its memory: the request's memory (and one card)
        fields = {"gpu_memory_gib" if k.startswith("gpu_memory") else k: v for k, v in fields.items()}
        fields.update({"gpus": 1} if "gpu_memory_one_card" in want else {})
        fields.pop("memory_said_own", None)
    if rule.dimension == "card_memory":  # the card planned is the catalog's card of that memory
        memory = fields.pop("gpu_memory_gib", None) or fields.pop("gpu_memory_if_variant")
        assert variant_with_memory(request["gpu"], memory, catalog()) == request["gpu"]
    if rule.dimension == "family_name":  # a family the catalog lacks: said back, no request field of its own
        name = fields.pop("family_name")
        said = {n.code for n in parsed.notes if n.code in ("unknown_model_name", "model_family_sizes")}
        assert bool(said) == (name is not None), said
        if fields.get("params_b", 0) is None:  # no size of the name's: a size another step read may stand ("72Bqwen")
            del fields["params_b"]
    if "fabric" in fields:  # a network of unstated speed is then the usual one (no GPU named here)
        fields["fabric"] = UNSTATED_SPEED.get(fields["fabric"], fields["fabric"])
    if rule.dimension in _COUNT_NOTES:  # what a count read is: the note the Reader says of it
        assert _COUNT_NOTES[rule.dimension] in [note.code for note in parsed.notes]
        fields = {}
    assert _close({k: request[k] for k in fields}, fields)
    if "users_count" in want:
        assert parsed.users_read is not None and parsed.users_read[0] == want["users_count"]
    if "response_tokens" in want:  # "prompt length 2048, output length 512": a sequence of both
        assert request["seq_len"] == want["prompt_tokens"] + want["response_tokens"]


def _rule(name: str, priority: int) -> engine.Rule:
    return engine.Rule(name, "test", "en", engine.compiled("x"), "micro_batch", priority=priority)


def _span(start: int, end: int, rule: engine.Rule) -> engine.Span:
    return engine.Span(start, end, rule.field, end - start, rule)


def test_settle_keeps_the_higher_priority_then_the_longer_then_the_first():
    high, low = _rule("high", 30), _rule("low", 20)
    assert engine.settle([_span(0, 20, low), _span(5, 10, high)]) == [_span(5, 10, high)]
    assert engine.settle([_span(0, 5, low), _span(3, 12, low)]) == [_span(3, 12, low)]
    assert engine.settle([_span(4, 8, low), _span(0, 4, low), _span(2, 6, low)]) == [_span(0, 4, low), _span(4, 8, low)]


def test_settle_returns_the_kept_in_the_order_they_are_written():
    rule = _rule("r", 0)
    assert [s.start for s in engine.settle([_span(10, 12, rule), _span(0, 2, rule), _span(5, 7, rule)])] == [0, 5, 10]


def test_pieces_expand_nested_and_captured():
    table = {"INT": r"\d+", "PAIR": "{INT}x{INT}"}
    assert engine.expand("{value:PAIR}", table) == r"(?P<value>(?:\d+)x(?:\d+))"
    with pytest.raises(KeyError):
        engine.expand("{NOT_A_PIECE}", table)


def test_a_value_outside_a_rules_bounds_is_no_reading():
    """The plain batch rules split at 64: per GPU up to it, the global batch above it."""
    assert [(s.field, s.value) for s in engine.read("batch size 64", "batch")] == [("micro_batch", 64)]
    assert [(s.field, s.value) for s in engine.read("batch size 65", "batch")] == [("global_batch", 65)]


# GPU and node counts written alone (knowledge/rules/*/gpu_count.yaml): the converter that tells a
# total from a count per machine, and the named predicates ("two gpu servers" count servers, "a node"
# and "1.5 gpus" count nothing)
GPU_COUNTS = [
    ("2台8卡", {"nodes": 2, "gpus": 16}),
    ("两台8卡", {"nodes": 2, "gpus": 16}),
    ("2机16卡", {"nodes": 2, "gpus": 16}),
    ("3机4卡", {"nodes": 3, "gpus": 12}),
    ("32卡", {"gpus": 32}),
    ("2 nodes with 8 gpus", {"nodes": 2, "gpus": 16}),
    ("2 nodes with 16 gpus", {"nodes": 2, "gpus": 16}),
    ("16 gpus across 2 nodes", {"gpus": 16, "nodes": 2}),
    ("two gpu servers", {"nodes": 2}),
    ("an 8 gpu server", {"gpus": 8}),
    ("1.5 gpus", {}),
    ("a node", {}),
]


@pytest.mark.parametrize("text, want", GPU_COUNTS)
def test_gpu_counts_written_alone(text, want):
    assert dict(reading for span in engine.read(text, "gpu_count") for reading in span.readings) == want


# what a GPU count read is, by the words around it (per_node.yaml, per_machine.yaml): one server's, then
# multiplied by the servers; what one machine holds, when the question asks how many machines
COUNTS_READ = [
    ("3 nodes, 8 a100 per node, 70b full", {"gpus": 24, "nodes": 3}, "per_node_count"),
    ("2 servers, each has 8 h100, 70b lora", {"gpus": 16, "nodes": 2}, "per_node_count"),
    ("3 nodes with 8 a100, 70b full", {"gpus": 24, "nodes": 3}, None),  # one rule of card_count reads both
    ("4台服务器，8张h800，预训练30b", {"gpus": 8, "nodes": 4}, None),  # no word makes the 8 one server's
    ("how many nodes of 8 h100 for 70b full", {"gpus": None, "nodes": None}, "count_per_machine"),
    ("需要几台8卡a100才能全参微调72b", {"gpus": None, "nodes": None}, "count_per_machine"),
    ("需要几台8张a100才能全参微调72b", {"gpus": 8, "nodes": None}, None),  # 8张: cards, not a machine's
]


# a decode pool (decode_pool.yaml): the count is decode_gpus, none of the deployment's in all; servers
# alone hold the card's usual number (8 when none is named)
DECODE_POOLS = [
    ("serve deepseek-v3 with a decode pool of 72 h100", 72),
    ("serve deepseek-v3, 72 gpus for decode", 72),
    ("serve deepseek-v3 disaggregated, decode on 9 nodes of 8 h100", 72),
    ("deepseek-v3 推理，解码用72张卡", 72),
    ("部署 deepseek-v3，解码用72张H100", 72),  # read as "72张 h100": its words as written are found
    ("deepseek-v3 推理 decode 节点 9 台", 72),
    ("部署 deepseek-v3，decode 节点 4 台 h100", 32),
    ("serve deepseek-v3 on 72 h100", None),  # no word of decoding: the GPUs in all
    ("deepseek-v3 pd分离部署，72张h100", None),
]


@pytest.mark.parametrize("text, decode_gpus", DECODE_POOLS)
def test_a_decode_pool_read(text, decode_gpus):
    parsed = parse(text)
    request, codes = parsed.request, [n.code for n in parsed.notes]
    assert request.decode_gpus == decode_gpus
    if decode_gpus:
        assert (request.gpus, request.nodes) == (None, None) and "decode_pool_count" in codes
        assert "servers_of_usual_size" not in codes  # the decode pool's note says the servers' size
    else:
        assert request.gpus == 72 and "decode_pool_count" not in codes


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("72张 h10\n")), max_size=20), st.data())
def test_a_counts_words_are_found_where_they_end_as_a_pattern_of_them_finds_them(text, data):
    """decode_view finds where a count's words start, spaces between their characters allowed, by
    reading back from where they end: where the pattern of the words it replaced finds them."""
    end = data.draw(st.integers(0, len(text)))
    words = data.draw(st.text(alphabet=st.sampled_from(list("72张 h1")), min_size=1, max_size=6))
    pattern = re.compile(r"\s*".join(map(re.escape, re.sub(r"\s+", "", words))) + "$")
    found = pattern.search(text, max(0, end - 2 * len(words) - 8), end)
    if found and found.end() == end:  # ("$" also stands before a line's end: no count's words end so)
        assert gpu_counts._written_from(text, end, words) == found.start()
    elif not found:
        assert gpu_counts._written_from(text, end, words) is None


def test_decode_gpus_is_a_setting():
    parsed = parse("serve deepseek-v3 on h100 decode_gpus=72 ep=72")
    assert (parsed.request.decode_gpus, parsed.request.gpus, parsed.errors) == (72, None, [])
    assert parse("serve deepseek-v3 decode_gpus=lots").errors


@pytest.mark.parametrize("text, want, note", COUNTS_READ)
def test_what_a_count_read_is(text, want, note):
    parsed = parse(text)
    assert {k: getattr(parsed.request, k) for k in want} == want
    codes = [n.code for n in parsed.notes]
    assert [c for c in codes if c in ("per_node_count", "count_per_machine")] == ([note] if note else [])


# model sizes (knowledge/rules/*/size.yaml): a family name glued after a size (the piece {FAMILY}, the
# lexicon's family words) and a size that words after it make a count of tokens (the condition not_tokens)
SIZES = [
    ("72bqwen", {"params_b": 72}),
    ("500m qwen", {"params_b": 0.5}),
    ("7bxyz", {}),
    ("1b tokens", {}),
    ("pretrain on 2t of tokens", {}),
    ("1b * 8 epochs = 8b", {"params_b": 8}),
    ("10b 说的是 token 数吗", {}),
    ("100亿token", {}),
    ("70亿的模型", {"params_b": 7}),
]


@pytest.mark.parametrize("text, want", SIZES)
def test_model_sizes(text, want):
    assert dict(reading for span in engine.read(text, "size") for reading in span.readings) == want


def test_a_rules_needs_hold_wherever_its_pattern_matches():
    """A rule is not tried on a text without one of its `needs` words: no example or labelled question
    that its pattern matches lacks them."""
    texts = [text.lower() for rule in RULES for text in rule.examples] + [case.values[0].lower() for case in CASES]
    for rule in (rule for rule in RULES if rule.needs is not None):
        assert not [text for text in texts if rule.pattern.search(text) and not rule.needs.search(text)], rule.name
        # the words read off `needs`, looked for before it is searched, hold wherever it matches
        assert not [t for t in texts if rule.needs.search(t) and not any(w in t for w in rule.needed)], rule.name


REQUIRED_WORDS = [
    (r"\d+\s*(?:billion|trillion)", {"billion", "trillion"}),  # what the sequence requires beyond digits
    (r"(?<![a-z])gpus?(?![a-z])", {"gpu"}),  # a lookbehind requires nothing; "s?" neither
    (r"(?:lora|peft)|qlora", {"lora", "peft"}),  # every branch requires: their union ("qlora" holds "lora")
    (r"g(?:pt|lm)|opt", {"gpt", "glm", "opt"}),  # a run with the words the group after it starts with
    (r"r(?:l(?:hf|oo|)|emax)\b", {"rl", "remax"}),  # (patterns.word_tree's trees)
    (r"\d+(?:k|m)?", set()),  # a digit class and an optional group: nothing
    (r"(?i:lora)", set()),  # case-folded: nothing
    (r"[台张]卡", {"卡"}),  # "卡" (one literal) over the class of two
]


@pytest.mark.parametrize("pattern, want", REQUIRED_WORDS)
def test_required_words_of_a_pattern(pattern, want):
    written = patterns.required_words(pattern)
    assert set(written.split("|")) - {""} == {re.escape(word) for word in want}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abglnoqrtuxfp 0123456789台张卡机服务器-")), max_size=40))
def test_a_rules_required_words_hold_wherever_its_pattern_matches(text):
    """A rule is not tried on a text without one of the words read off its pattern
    (patterns.required_words): no text its pattern matches lacks them."""
    for rule in (rule for rule in RULES if rule.required):
        assert not (rule.pattern.search(text) and not any(word in text for word in rule.required)), rule.name


def test_required_words_hold_on_every_example_and_labelled_question():
    texts = [text.lower() for rule in RULES for text in rule.examples] + [case.values[0].lower() for case in CASES]
    for rule in (rule for rule in RULES if rule.required):
        held = [text for text in texts if rule.pattern.search(text) and not any(w in text for w in rule.required)]
        assert not held, rule.name


def _matching(text: str, dimension: str) -> list[engine.Rule]:
    """A dimension's rules that match the text and whose `needs` it holds, tried one by one."""
    return [
        rule
        for rule in engine.rules(dimension)
        if rule.pattern.search(text) and (rule.needs is None or rule.needs.search(text))
    ]


def _worth_trying_holds(text: str) -> None:
    for dimension in engine.dimensions():
        tried = [id(rule) for rule in engine.worth_trying(text, dimension)]
        assert {id(rule) for rule in _matching(text, dimension)} <= set(tried), (dimension, text)
        assert tried == [id(rule) for rule in engine.rules(dimension) if id(rule) in tried], "not in the rules' order"


def test_worth_trying_leaves_out_no_rule_that_matches_in_the_rules_order():
    """The words each rule requires are looked for once a dimension (engine.worth_trying): on every
    example and labelled question, every rule that matches is among those tried, in the rules' order,
    and a question with none of a dimension's words tries only its rules that no word gates."""
    texts = [text.lower() for rule in RULES for text in rule.examples] + [case.values[0].lower() for case in CASES]
    for text in texts:
        _worth_trying_holds(text)
    assert engine.worth_trying("hello", "batch") == [] and engine.worth_trying("batch size 8", "batch")
    # engine.found: the candidates of the rules worth trying, as a dimension's callers ask for them
    assert [(s.field, s.value) for s in engine.found("batch size 8", "batch")] == [("micro_batch", 8)]
    assert engine.found("hello", "batch") == []
    # the words of a rule's `needs` gate it too ("server" is one of gpu_count.yaml's `machines`)
    assert "machines" in [rule.name for rule in engine.worth_trying("2 servers of 8 h100", "gpu_count")]
    assert "machines" not in [rule.name for rule in engine.worth_trying("2 crates of 8 h100", "gpu_count")]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abglnoqrtuxfp 0123456789台张卡机服务器节点-")), max_size=40))
def test_worth_trying_leaves_out_no_rule_that_matches_any_text(text):
    _worth_trying_holds(text)


def test_a_claim_takes_its_words_from_weaker_rules_and_reads_nothing():
    """gpu_memory.yaml: what a run uses is claimed (`reads: nothing`): the weaker "20g显存" reading loses
    to it and nothing is read; the memory of all the cards together only where the step states that
    several cards are counted."""
    used = engine.read("lora 7b 占用了20g显存，正常吗", "gpu_memory")
    assert [(span.rule.name, span.readings) for span in used] == [("memory_used_zh", ())]
    total = "4张4090，加起来也就96g显存"
    assert [span.rule.name for span in engine.read(total, "gpu_memory", facts=frozenset({"several_cards"}))] == [
        "memory_of_all_cards_zh"
    ]
    assert [s.readings for s in engine.read(total, "gpu_memory")] == [(("gpu_memory_gib", 96.0),)]


def test_a_claim_names_no_field_and_a_fact_must_be_known():
    claim = {"name": "c", "pattern": "x", "reads": "nothing"}
    assert engine._rule(claim, "test", "en", {}).claims
    with pytest.raises(ValueError, match="names no field"):
        engine._rule({**claim, "field": "gpus"}, "test", "en", {})
    with pytest.raises(ValueError, match="reads"):
        engine._rule({**claim, "reads": "everything"}, "test", "en", {})
    with pytest.raises(ValueError, match="unknown conditions"):
        engine._rule({**claim, "when": ["no_such_fact"]}, "test", "en", {})


def test_the_memory_of_a_run_or_of_all_cards_is_no_cards_through_the_parser():
    """Words of use, of all the cards together and of need, now rules (gpu_memory.yaml), read as the
    step's code read them: no card's memory, unless what is needed is asked of no card named."""
    assert parse("4张4090，加起来也就96G显存，能lora训 llama 3.1 8b 吗").request.gpu_memory_gib is None
    assert parse("lora 7b 占用了20G显存，正常吗").request.gpu_memory_gib is None
    assert parse("7b推理需要24G显存吗").request.gpu_memory_gib == 24
    needed = parse("官方说需要显存为 60G，我有 4090，能跑吗")
    assert needed.request.gpu_memory_gib is None and "memory_apart_from_card" in [n.code for n in needed.notes]


def test_a_rule_of_words_beyond_ascii_matches_no_ascii_text():
    """A rule whose every required or needed word has a character beyond ASCII ("显存", "并发") is not
    tried on an English question: it matches no ASCII example or labelled question, and some such
    rules exist (the Chinese ones)."""
    texts = [text.lower() for rule in RULES for text in rule.examples] + [case.values[0].lower() for case in CASES]
    ascii_texts = [text for text in texts if text.isascii()]
    skipped = [rule for rule in RULES if not rule.ascii_text]
    assert len(skipped) > 50 and ascii_texts
    for rule in skipped:
        assert not [text for text in ascii_texts if rule.pattern.search(text)], rule.name
    words = [(rule, [*rule.required, rule.needs.pattern if rule.needs else ""]) for rule in RULES]
    assert all(rule.ascii_text for rule, gates in words if all(gate.isascii() for gate in gates))


CHARACTERS = list("abcdegilmnorstuxyz 0123456789$¥.,:=kKm万千元预算批量每卡全局")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(CHARACTERS), max_size=80))
def test_any_text_reads_without_error_and_without_overlap(text):
    for dimension in engine.dimensions():
        spans = engine.read(text.lower(), dimension)
        assert all(0 <= s.start < s.end <= len(text) for s in spans)
        assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))


def test_a_claimed_reading_leaves_its_words_to_no_other_but_may_place_one():
    """A candidate whose own words (its named groups) stand where an earlier reading took words is
    none; one that only crosses such words to reach its own stands ("租8张h100两周": the deadline's
    rule spans the GPUs read before it)."""
    text = "租8张h100两周"
    gpus = (text.index("8"), text.index("两"))
    assert [s.value for s in engine.read(text, "schedule", claimed=[gpus])] == [14.0]
    weeks = (text.index("两"), len(text))
    assert engine.read(text, "schedule", claimed=[weeks]) == []


def test_no_match_runs_across_words_another_step_took():
    """Blanking the prompt's length once let a tokens rule read "72B model" as 72B tokens; read as
    written, with the prompt's words claimed, nothing reads them."""
    parsed = parse("Model: Both Actor and Critic are 72B\n\nPrompt length: 40K tokens\n\nResponse length: 10K tokens")
    assert parsed.request.train_tokens is None and parsed.request.params_b == 72


def test_a_group_read_ahead_on_claimed_words_reads_as_unmatched():
    """A match's own words on a claim drop it; a group it reads ahead of its end (a lookahead) on a
    claim only places it, so the match stands with that group unmatched ("qwen72b 910b": the size
    after the name is a card already read, not another model's size)."""
    pattern = re.compile(r"(?P<name>qwen72b)(?=\s*(?P<other_size>\d+)b)?")
    match = pattern.search("qwen72b 910b280t")
    assert unread.seen(match, [(0, 3)]) is None  # its own words taken
    seen = unread.seen(match, [(8, 12)])  # "910b" taken by the step before
    assert seen["name"] == "qwen72b" and seen["other_size"] is None and seen.groupdict()["other_size"] is None
    assert seen.start("other_size") == -1 and seen.end() == match.end()
    assert unread.seen(match, [(20, 22)]) is match  # nothing of it taken


def test_a_catalog_name_before_a_claimed_card_reads_as_the_catalogs_model():
    assert parse("qwen72b 910b280T 需要多少节点才能微调").request.model == "qwen-72b"
