"""The classifier's run-time arithmetic and the pattern rewrite that keeps the vocabulary fast:
each fast path gives what the plain definition gives."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parser_table import EN, ZH

from gpuplan.bot.language import classifier, intent, parser
from gpuplan.bot.language.patterns import fast_alternation, literal_branches, literal_first

MODEL = intent.model()
QUESTIONS = [q for q, _ in EN + ZH]
needs_model = pytest.mark.skipif(MODEL is None, reason="knowledge/classifier.npz absent or stale")


def _sorted(vector: intent.Vector) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(vector.idx, kind="stable")
    return vector.idx[order], vector.vals[order]


def _same_vector(text: str) -> None:
    dense = np.zeros(len(MODEL.dense_names), dtype=np.float32)
    slow_idx, slow_vals = _sorted(MODEL.vector(intent.ngrams(text), dense))
    fast_idx, fast_vals = _sorted(MODEL.text_vector(text, dense))
    assert np.array_equal(slow_idx, fast_idx)
    assert np.allclose(slow_vals, fast_vals, atol=1e-6)


@needs_model
@pytest.mark.parametrize("question", QUESTIONS[::7])
def test_word_memo_gives_the_ngram_vector(question):
    parsed, evidence = parser.read(question)
    _same_vector(intent.text_for_ngrams(evidence))


@needs_model
@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab c1-_.显存 \n"), max_size=60))
def test_word_memo_gives_the_ngram_vector_for_any_text(text):
    _same_vector(text)
    _same_vector(text)  # the second time from the memo


@needs_model
def test_word_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(classifier, "WORDS_REMEMBERED", 5)
    MODEL._columns_seen.clear()
    for i in range(20):
        MODEL.text_vector(f"word{i}", np.zeros(len(MODEL.dense_names), dtype=np.float32))
        assert len(MODEL._columns_seen) <= 5
    MODEL._columns_seen.clear()


@needs_model
@pytest.mark.parametrize("question", QUESTIONS[::11])
def test_probabilities_are_softmax_and_sigmoid_of_the_logits(question):
    parsed, evidence = parser.read(question)
    x = MODEL.text_vector(intent.text_for_ngrams(evidence), intent.dense(evidence, parsed))
    intents, topics = MODEL.probabilities(x)
    logits = x.vals.astype(np.float64) @ MODEL._weights[x.idx].astype(np.float64)
    k = len(MODEL.intents)
    z = logits[:k] + MODEL.intent_b
    softmax = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    sigmoid = 1 / (1 + np.exp(-(logits[k:] + MODEL.topic_b)))
    assert list(intents.values()) == pytest.approx(softmax.tolist(), abs=1e-5)
    assert list(topics.values()) == pytest.approx(sigmoid.tolist(), abs=1e-5)
    assert math.isclose(sum(intents.values()), 1.0, abs_tol=1e-9)


GUARDED = [
    r"(?<![a-z])vllm(?![a-z])",
    r"(?<![a-z])runs?(?![a-z])",
    r"(?<![\d.])10x",
    r"\bpod\b",
    r"\blicen[cs]e\b",
    r"\b(?:hdd|hard disk)\b",
    r"(?<![a-z])tp",
    r"(?<![\d.])\d{1,2} ?%",
    r"(?<![\d.])\d+ ?x",
    r"(?<![\d.])\d ?x",
    r"(?<![?？。!！.\n])(?<![?？。!！.]\s)(?:还是|或者)(?![^，。]{0,16}?都)",
    r"(?<=\d)(?<!1\d)x",
]


@pytest.mark.parametrize("pattern", GUARDED)
def test_literal_first_starts_with_the_word_when_it_can(pattern):
    rewritten = literal_first(pattern)
    word = re.sub(r"^(?:\(\?<[!=](?:\[[^\]]*\]|[^()\[])*\)|\\b)+", "", pattern)
    if word[:1].isalnum():
        assert rewritten[0].isalnum() and rewritten != pattern
    elif word.startswith("\\d"):
        assert rewritten.startswith("\\d(?<!")  # the digit first, its guard after it
    elif word.startswith("(?:"):  # the guards go into each alternative of the group
        assert rewritten.startswith("(?:") and rewritten[3].isalnum() and "|" in rewritten
    else:
        assert rewritten == pattern  # a class after the guard: left as written


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("vlmrunspodtx01.- 中_%9"), max_size=40))
def test_literal_first_finds_the_same_matches(text):
    import re

    for pattern in GUARDED:
        plain, fast = re.compile(pattern), re.compile(literal_first(pattern))
        assert [m.span() for m in plain.finditer(text)] == [m.span() for m in fast.finditer(text)]


_MANY = "(?<![a-z])(?P<n>" + "|".join(f"{d}x" for d in range(17)) + ")"  # more than MOST_GUARDED_BRANCHES

# guards as a piece expands them (a group of lookbehinds) and before a named group, as a rule's pattern
# writes them: the group's alternatives each start with their word, the guards after it; before a group
# of more alternatives than MOST_GUARDED_BRANCHES, a look-ahead for the characters they start with
GUARDED_GROUPS = [
    (r"(?:(?<![a-z]))(?P<w>for|to)\s", r"(?P<w>for(?<!(?:[a-z])for)|to(?<!(?:[a-z])to))\s"),
    (r"(?<![\d.])(?P<v>\d+(?:\.\d+)?)\s*g", r"(?P<v>\d(?<![\d.]\d)\d*(?:\.\d+)?)\s*g"),
    (
        r"(?:(?<![a-z0-9])(?<![a-z]-))(?P<n>one|two)x",
        r"(?P<n>one(?<!(?:[a-z0-9])one)(?<!(?:[a-z]-)one)|two(?<!(?:[a-z0-9])two)(?<!(?:[a-z]-)two))x",
    ),
    (r"(?:(?<![a-z]))+(?P<w>for|to)", r"(?:(?<![a-z]))+(?P<w>for|to)"),  # a repeated group: left
    (_MANY, "(?=[0123456789])" + _MANY),  # too many to copy the guards into: a look-ahead goes first
    ("(?=[0123456789])" + _MANY, None),  # a pattern that starts with a look-ahead: left
    (_MANY.replace("(?P<n>", "(?P<n>a?"), None),  # "a?0x": a first character it may leave out
]


@pytest.mark.parametrize("pattern, want", GUARDED_GROUPS)
def test_literal_first_moves_a_pieces_guards_into_a_named_group(pattern, want):
    assert literal_first(pattern) == (want or pattern)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("fortwnex0123456789.- g"), max_size=30))
def test_literal_first_finds_the_same_matches_and_groups_in_a_named_group(text):
    for pattern, _ in GUARDED_GROUPS:
        plain, fast = re.compile(pattern), re.compile(literal_first(pattern))
        assert [(m.span(), m.groups()) for m in plain.finditer(text)] == [
            (m.span(), m.groups()) for m in fast.finditer(text)
        ]


# patterns as the vocabulary writes them: groups first, guards, digits, alternatives
SPREAD = [
    r"(?:io|i/o|disk|data) bottleneck",
    r"\b(?:hdd|hard disk|hard drive)\b",
    r"bus ?bw|busbw|algbw",
    r"(?:\d|several|many) (?:small )?models? per gpu",
    r"(?<![\d.])\d{1,2} ?% (?:gpu[- ]?)?util",
    r"(?:a|b)?c",
    r"(?:显存|内存)(?:不够|不足)",
    r"(?<![?？。!！.\n])(?<![?？。!！.]\s)(?:还是|或者)(?![^，。]{0,16}?都)",
    r"x(?:[ab]|c)+y",
    r"(?:standard_)?nd96(?:_v5)?",
    r"[$¥]\d+|(?:\b(?:in|on) )?\b(?:one|a) (?:node|box)\b",
    r"(?:a)??c",
]


def test_literal_branches_spread_a_leading_group_with_its_guards():
    assert literal_branches(r"\b(?:hdd|ssd)\b") == [r"\bhdd\b", r"\bssd\b"]
    assert literal_branches(r"(?:io|i/o) bottleneck") == ["io bottleneck", "i/o bottleneck"]
    assert literal_branches(r"(?:a|b)?c") == ["ac", "bc", "c"]  # greedy: the group tried first
    assert literal_branches(r"(?:a|b)*c") == [r"(?:a|b)*c"]  # a repeated group stays
    assert literal_branches(r"(?:a)??c") == [r"(?:a)??c"]  # so does a lazy one
    assert literal_branches("[$¥]5") == [r"\$5", "¥5"]
    assert literal_branches("bus ?bw|busbw") == ["bus ?bw", "busbw"]


def test_fast_alternation_starts_every_branch_with_a_literal():
    import re._parser as sre_parse  # noqa: PLC0415  (CPython's own parser: what `re` will see)

    from gpuplan.knowledge import catalog

    for rule in catalog().rules:
        tree = sre_parse.parse(fast_alternation(rule.triggers.en + rule.triggers.zh))
        branches = tree.data[0][1][1] if tree.data[0][0] is sre_parse.BRANCH else [tree]
        for branch in branches:
            assert branch.data[0][0] is sre_parse.LITERAL, (rule.id, str(branch)[:80])


def test_fast_alternation_writes_shared_first_letters_once_keeping_the_first_match():
    words = ["abc", "abd", "x", "ab", "a(?:q|r)", "abe", r"code\ llama", r"codellama(?<![a-z]codellama)"]
    assert fast_alternation(words) == r"a(?:b(?:c|d|)|(?:q|r)|be)|x|code(?:\ llama|llama(?<![a-z]codellama))"
    assert fast_alternation(["ab", "a.c", "abc"]) == "a(?:b|.c|bc)"  # "abc" after "a.c", as written
    for text in ("abc", "abe", "aqx", "a-c", "codellama", "code llama"):
        plain = re.compile("|".join(f"(?:{w})" for w in words + ["ab", "a.c"]))
        fast = re.compile(fast_alternation(words + ["ab", "a.c"]))
        assert [m.span() for m in plain.finditer(text)] == [m.span() for m in fast.finditer(text)]


PIECES = ["io", "i/o", " bottleneck", "hdd", "hard", " disk", " drive", "bus", "bw", "algbw", "3", "12", "%"]
PIECES += [" gpu", "-util", "many", " small", " models", " model", " per", "c", "a", "b", "x", "y", " ", "\n"]
PIECES += ["显存", "内存", "不够", "还是", "或者", "都", "？", "，", "1", ".", "standard_", "nd96", "_v5", "$", "¥"]
PIECES += ["in ", "on ", "one ", "a ", "node", "box"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_fast_alternation_finds_the_same_matches(text):
    import re

    plain = re.compile("|".join(f"(?:{p})" for p in SPREAD))
    fast = re.compile(fast_alternation(SPREAD))
    assert [m.span() for m in plain.finditer(text)] == [m.span() for m in fast.finditer(text)]
    for pattern in SPREAD:
        one, spread = re.compile(pattern), re.compile(fast_alternation([pattern]))
        assert [m.span() for m in one.finditer(text)] == [m.span() for m in spread.finditer(text)]


def _with_family(code: str = "model_family_sizes") -> parser.Parsed:
    parsed = parser.Parsed(request=parser.Request(), lang="en")
    parsed.notes.append(parser.Note(code=code, params={"value": "llama 3", "models": ["llama-3-8b"]}))
    return parsed


@pytest.mark.parametrize(
    "sure, expected",
    [
        (False, "plan"),  # "How to fine tune LLaMA 3 in Colab?": unsure, ours, asked back for the size
        (True, "other"),  # "how to use llama2's conversation template": the classifier is sure
    ],
)
def test_a_family_named_overrules_other_only_when_the_classifier_is_unsure(sure, expected):
    assert intent.overruled("other", _with_family(), "plan", "", sure=sure) == expected


@pytest.mark.parametrize("classified", ["other", "compare"])
@pytest.mark.parametrize("text", ["mpt7 lora", "mixtral 8x7b lora", "用qwen3做lora微调"])
def test_the_commands_own_form_is_a_plan_whatever_the_classifier_says(classified, text):
    """A model and a method in a few characters is /gpuplan's own form: a refit had made 'mpt7 lora'
    a comparison (of what: nothing to compare was written)."""
    parsed = parser.read(text)[0]
    assert parsed.compare is None
    assert intent.overruled(classified, parsed, "plan", text) == "plan"


@pytest.mark.parametrize("text", ["a100 vs h100 lora", "H100上用fp8训练70b值得吗"])
def test_a_comparison_written_out_stays_one(text):
    """Options written side by side, or a choice word ('值得吗': is it worth it) with none parsed."""
    assert intent.overruled("compare", parser.read(text)[0], "plan", text) == "compare"


@needs_model
@pytest.mark.parametrize(
    "question",
    [
        "Conversation_template: could you tell me how to use this conversation_template with llama2?",
        "求助：llamafactory-cli eval 评估qwen模型的时候template 应该填什么",
        "[Question] License question for LLaVA 1.5: can it be used commercially?",
    ],
)
def test_questions_outside_the_field_naming_a_family_stay_outside(question):
    assert parser.parse(question).intent == "other"


def test_question_words_are_read_from_the_users_prose_not_a_pasted_command():
    """A pasted LLaMA-Factory command's --learning_rate is not the user asking about learning rates
    (an out-of-scope word): the question-word features count the prose only."""
    question = "lora 和全参占用的显存一致，为什么？\n\n```\n--finetuning_type lora \\\n--learning_rate 2e-5 \\\n```"
    parsed, evidence = parser.read(question)
    names = intent.dense_names()
    values = dict(zip(names, intent.dense(evidence, parsed), strict=True))
    assert values["words:out_of_scope"] == 0.0 and values["words:why"] > 0.0
    asked_in_prose = "learning_rate 设置有啥推荐"
    parsed, evidence = parser.read(asked_in_prose)
    values = dict(zip(names, intent.dense(evidence, parsed), strict=True))
    assert values["words:out_of_scope"] > 0.0


@pytest.mark.parametrize(
    "question", ["从A100换到H100值得吗，训练 70b", "is it worth upgrading from A100 to H100 for 70b training?"]
)
def test_whether_a_change_of_cards_is_worth_it_is_a_comparison(question):
    """Two cards and 'worth' / 值得: the refits had moved the Chinese one to a plan."""
    assert parser.parse(question).intent == "compare"


def test_a_symptom_phrase_keeps_troubleshooting_beside_out_of_scope_words_without_the_classifier(monkeypatch):
    """Without the classifier the rules decide: a question whose symptom phrase fired ('OOM') stays
    troubleshooting even beside out-of-scope words ('pip install'); with no phrase it would be other."""
    monkeypatch.setattr(intent, "model", lambda: None)
    text = "after pip install of the new version, training qwen 7b on a 4090 gives CUDA out of memory"
    assert parser.parse(text).intent == "troubleshoot"


# --- the classifier's arrays, inflated once into the knowledge cache --------------------------------


def _original_arrays():
    from importlib import resources

    with resources.files("gpuplan.knowledge").joinpath("classifier.npz").open("rb") as fh, np.load(fh) as data:
        return {name: data[name] for name in data.files}


def _same_arrays(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)


@pytest.mark.parametrize("damage", [None, b"", b"PK\x03\x04 not a zip", "flip a byte"])
def test_the_classifier_is_read_from_an_uncompressed_copy_equal_to_it(tmp_path, monkeypatch, damage):
    from importlib import resources

    monkeypatch.setenv("GPUPLAN_KNOWLEDGE_CACHE", str(tmp_path))
    path = resources.files("gpuplan.knowledge").joinpath("classifier.npz")
    original = _original_arrays()
    assert _same_arrays(intent._classifier_arrays(path), original)
    (copy,) = tmp_path.glob("classifier-*.npz")
    assert copy.stat().st_size > path.stat().st_size  # stored, not deflated
    if damage == "flip a byte":
        raw = bytearray(copy.read_bytes())
        raw[len(raw) // 2] ^= 0xFF  # inside an array: the zip's CRC-32 no longer holds
        copy.write_bytes(bytes(raw))
    elif damage is not None:
        copy.write_bytes(damage)
    assert _same_arrays(intent._classifier_arrays(path), original)
    assert _same_arrays(intent._classifier_arrays(path), original)


def test_with_the_cache_off_the_classifier_is_inflated_in_the_process(tmp_path, monkeypatch):
    from importlib import resources

    monkeypatch.setenv("GPUPLAN_KNOWLEDGE_CACHE", "off")
    path = resources.files("gpuplan.knowledge").joinpath("classifier.npz")
    assert _same_arrays(intent._classifier_arrays(path), _original_arrays())
