"""Every reading of every labelled question, to check that a change to the reading layer loses none.

Run: python bench/reading_snapshot.py dump /tmp/before.jsonl     (before the change)
     python bench/reading_snapshot.py compare /tmp/before.jsonl  (after it: exit 1 on any difference)
The questions are train/questions, eval/questions, the shared dev set and the parser table; each line
is one question and what gpuplan read from it (the request, intent, topics, notes, errors, words not
understood, the comparison and what is asked first), compared exactly. A change meant to read better
shows its differences here, question by question.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml

os.environ["GPUPLAN_HF_LOOKUP"] = "0"  # no network: a Hub id is read as the text says

from gpuplan.bot.language.parser import parse  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED_DEV = ROOT.parent / "shared" / "questions" / "dev.yaml"


def questions() -> list[str]:
    texts: list[str] = []
    files = [*sorted((ROOT / "train" / "questions").glob("*.yaml"))]
    files += sorted((ROOT / "eval" / "questions").glob("*.yaml"))
    for path in [*files, SHARED_DEV]:
        if path.exists() and path.name != "spec.yaml":
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            rows = data if isinstance(data, list) else data.get("questions", [])
            texts += [row["text"] for row in rows if isinstance(row, dict) and "text" in row]
    sys.path.insert(0, str(ROOT))
    from tests.test_parser_table import CASES

    texts += [case.values[0] for case in CASES]
    return list(dict.fromkeys(texts))


def reading(text: str) -> dict:
    parsed = parse(text)
    notes = [{"code": n.code, "params": n.params} for n in parsed.notes]
    return {
        "request": parsed.request.model_dump(mode="json", exclude_none=True),
        "intent": parsed.intent,
        "topics": parsed.topics,
        "notes": notes,
        "errors": [{"code": n.code, "params": n.params} for n in parsed.errors],
        "unknown": parsed.unknown,
        "compare": parsed.compare,
        "question": parsed.question,
        "ask": parsed.ask,
    }


def main() -> None:
    command, path = sys.argv[1], Path(sys.argv[2])
    now = {text: json.dumps(reading(text), ensure_ascii=False, sort_keys=True, default=str) for text in questions()}
    if command == "dump":
        rows = (json.dumps({"text": text, "reading": read}, ensure_ascii=False) + "\n" for text, read in now.items())
        path.write_text("".join(rows))
        print(f"{len(now)} readings written to {path}")
        return
    before = {row["text"]: row["reading"] for row in map(json.loads, path.read_text().splitlines())}
    changed = [text for text in before if now.get(text) != before[text]]
    for text in changed[:20]:
        print("CHANGED", json.dumps(text[:100], ensure_ascii=False))
        print("  before", before[text][:400])
        print("  now   ", (now.get(text) or "")[:400])
    print(f"{len(before)} readings compared, {len(changed)} changed")
    sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
