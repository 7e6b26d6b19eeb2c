"""Parse time of this tree against another revision, the two taking turns question by question: a
ratio that a shared machine's drift moves little.

Run: python bench/parse_ab.py REV [--runs 5] [--rounds 9]
REV is a git revision ("1043a02^") or the path of another source tree. Baseline in the same run: REV.
One worker process per tree imports its own gpuplan and parses the questions it is sent; each
question of the parser table (this tree's) goes to one worker, then to the other, who goes first
alternating, so that a burst of load on the machine falls on both. Each question's fastest parse of
`rounds` is kept, and a run's figure is their mean. Each run starts two new workers; the runs'
ratios (this tree / REV) are printed with their median. The workers take turns, so neither finds
its caches as it left them: the figures are those of a bot answering now and then (bench_parse.py
measures back-to-back parses, the caches warm).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_parser_table import EN, ZH  # noqa: E402

QUESTIONS = [q for q, _ in EN + ZH]

# a worker: imports the gpuplan its PYTHONPATH holds, says where from, then times each question sent
WORKER = """
import json, os, sys, time
import gpuplan
from gpuplan.bot.language.parser import parse
print(os.path.realpath(gpuplan.__file__), flush=True)
for line in sys.stdin:
    question = json.loads(line)
    start = time.perf_counter()
    parse(question)
    print(time.perf_counter() - start, flush=True)
"""


class Worker:
    """A process that parses what it is sent with one tree's gpuplan."""

    def __init__(self, tree: Path, where: Path) -> None:
        (where / "gpuplan").symlink_to(tree, target_is_directory=True)
        env = {**os.environ, "PYTHONPATH": str(where)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        imported = Path(self.process.stdout.readline().strip())
        if not imported.is_relative_to(tree.resolve()):
            raise SystemExit(f"the worker for {tree} imported gpuplan from {imported}")

    def parse(self, question: str) -> float:
        self.process.stdin.write(json.dumps(question) + "\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def source_tree(rev: str, into: Path) -> Path:
    """The tree of a path as given, or of a git revision, written out with `git archive`."""
    if Path(rev).is_dir():
        return Path(rev).resolve()
    tree = into / "rev"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def one_run(trees: list[Path], where: Path, rounds: int) -> list[float]:
    """Each tree's mean over the questions of their fastest parse, the trees taking turns."""
    workers = []
    for i, tree in enumerate(trees):
        (where / str(i)).mkdir()
        workers.append(Worker(tree, where / str(i)))
    try:
        for question in QUESTIONS:  # warm: the lexicon compiled, the memos as a running bot has them
            for worker in workers:
                worker.parse(question)
        best = [[float("inf")] * len(QUESTIONS) for _ in workers]
        for r in range(rounds):
            for i, question in enumerate(QUESTIONS):
                for k in (0, 1) if (i + r) % 2 == 0 else (1, 0):
                    best[k][i] = min(best[k][i], workers[k].parse(question))
        return [statistics.mean(each) for each in best]
    finally:
        for worker in workers:
            worker.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="a git revision or another source tree: the baseline")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=9, help="parses of each question a run (its fastest kept)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = [ROOT, source_tree(args.rev, Path(tmp))]
        figures = []
        for run in range(args.runs):
            where = Path(tmp) / f"run{run}"
            where.mkdir()
            figures.append(one_run(trees, where, args.rounds))
    ratios = [this / other for this, other in figures]
    print(f"questions            {len(QUESTIONS)} (the parser table), {args.rounds} rounds, {args.runs} runs")
    print(f"this tree            {statistics.median(f[0] for f in figures) * 1e6:.0f} us a question (median of runs)")
    print(f"{args.rev:<20} {statistics.median(f[1] for f in figures) * 1e6:.0f} us")
    print(f"this / {args.rev}: {' '.join(f'{r:.3f}' for r in ratios)}; median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
