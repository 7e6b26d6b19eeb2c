"""Table-driven parser tests: questions as people write them, in English and Chinese, with the
fields each must yield. The table is data beside the reading rules it tests:
knowledge/rules/questions/en.yaml and zh.yaml, one row per question (`q`, `expect`, and `why` /
`note` saying what it checks). `intent` (and `not_intent`), `topics` (and `not_topics`),
`compare`, `errors`, `notes` (and `not_notes`) and `unknown` are checked when given; every other
key of `expect` is a Request field."""

from pathlib import Path

import pytest
import yaml

from gpuplan.bot.language.parser import parse

TABLE = Path(__file__).resolve().parent.parent / "knowledge" / "rules" / "questions"


def _rows(lang: str) -> list[tuple[str, dict]]:
    rows = yaml.safe_load((TABLE / f"{lang}.yaml").read_text(encoding="utf-8"))
    return [(row["q"], row["expect"]) for row in rows]


EN = _rows("en")
ZH = _rows("zh")

CASES = [pytest.param(q, e, id=f"en-{i}") for i, (q, e) in enumerate(EN)] + [
    pytest.param(q, e, id=f"zh-{i}") for i, (q, e) in enumerate(ZH)
]
META = {"intent", "not_intent", "topics", "not_topics", "compare", "errors", "notes", "not_notes", "unknown"}


def test_table_size_and_languages():
    assert len(CASES) >= 120
    assert len(ZH) * 2 >= len(CASES)


@pytest.mark.parametrize("question, expect", CASES)
def test_parser_table(question, expect):
    parsed = parse(question)
    codes = [e.code for e in parsed.errors]
    if "errors" in expect:
        assert set(expect["errors"]) <= set(codes), codes
        return
    assert not codes, parsed.errors
    got = parsed.request.model_dump()
    for key, value in expect.items():
        if key in META:
            continue
        expected = pytest.approx(value) if isinstance(value, int | float) else value
        assert got[key] == expected, f"{key}: {got[key]!r} != {value!r}"
    if "intent" in expect:
        assert parsed.intent == expect["intent"]
    if "not_intent" in expect:
        assert parsed.intent != expect["not_intent"]
    if "topics" in expect:
        assert set(expect["topics"]) <= set(parsed.topics), parsed.topics
    if "not_topics" in expect:
        assert not set(expect["not_topics"]) & set(parsed.topics), parsed.topics
    if "compare" in expect:
        assert parsed.compare == expect["compare"]
    if "notes" in expect:
        assert set(expect["notes"]) <= {n.code for n in parsed.notes}, [n.code for n in parsed.notes]
    if "not_notes" in expect:
        assert not set(expect["not_notes"]) & {n.code for n in parsed.notes}, [n.code for n in parsed.notes]
    if "unknown" in expect:
        assert set(expect["unknown"]) <= set(parsed.unknown), parsed.unknown
