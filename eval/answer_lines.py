"""How long the default answers are: the line count of `gpuplan "<question>"` over every labelled real
question (train/questions, eval/questions), median and maximum, with the longest ones named.

    python eval/answer_lines.py [--top 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

import yaml

from gpuplan.bot import render
from gpuplan.bot.pipeline import QuestionError, answer

ROOT = Path(__file__).parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=10, help="how many of the longest answers to name")
    args = parser.parse_args()
    os.environ.setdefault("GPUPLAN_HF_LOOKUP", "0")
    counts: list[tuple[int, str, str]] = []
    for folder in ("train", "eval"):
        for path in sorted((ROOT / folder / "questions").glob("*.yaml")):
            if path.name.startswith("spec"):
                continue
            for q in yaml.safe_load(path.read_text(encoding="utf-8")):
                try:
                    plan = answer(q["text"])
                except QuestionError:
                    continue
                if plan.intent != "help":
                    counts.append((len(render.text_answer(plan).splitlines()), q["id"], plan.verdict.kind))
    lines = [c for c, _, _ in counts]
    print(f"{len(lines)} answers: median {statistics.median(lines):g} lines, max {max(lines)}")
    for cut in (10, 15, 20, 25, 30):
        print(f"  <= {cut}: {sum(n <= cut for n in lines) / len(lines):.0%}")
    for n, qid, kind in sorted(counts, reverse=True)[: args.top]:
        print(f"  {n:3d}  {qid}  {kind}")


if __name__ == "__main__":
    main()
