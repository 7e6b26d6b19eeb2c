"""Terminal answer time: one `gpuplan "70b full"` in a fresh process, start-up included.

Run: python bench/bench_cli.py [-n RUNS] [question]
Baseline in the same run: `python -c pass`, the interpreter's own start, started in turn with
the answer (A B A B ...) so that a shared machine's drift moves both; the ratio is taken pair by
pair. Target: the answer under 0.5 s of wall time. The cold line empties the knowledge cache
(GPUPLAN_KNOWLEDGE_CACHE) before each run: the first answer after the knowledge or the parser
changed. Figures are medians (min-max); user + system CPU is the children's own accounting.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("-n", type=int, default=9, help="runs of each command (default 9)")
    args.add_argument("question", nargs="?", default="70b full")
    opts = args.parse_args()
    answer = [sys.executable, "-m", "gpuplan.bot.cli", opts.question]
    bare = [sys.executable, "-c", "pass"]
    env = dict(os.environ)
    run(answer, env)  # a first answer fills the knowledge cache, as any earlier use has
    pairs = [(run(answer, env), run(bare, env)) for _ in range(opts.n)]
    with tempfile.TemporaryDirectory() as folder:
        cold = []
        for i in range(max(3, opts.n // 3)):
            cold.append(run(answer, {**env, "GPUPLAN_KNOWLEDGE_CACHE": os.path.join(folder, str(i))}))
    print(f"question             {opts.question!r}, {opts.n} runs each, in turn with the baseline")
    print(f"answer wall          {spread([a[0] for a, _ in pairs])}  (target: under 0.5 s)")
    print(f"answer cpu           {spread([a[1] for a, _ in pairs])}")
    print(f"python -c pass wall  {spread([b[0] for _, b in pairs])}")
    print(f"ratio (wall, pairs)  {statistics.median(a[0] / b[0] for a, b in pairs):.1f}x the bare interpreter")
    print(f"cold cache wall      {spread([c[0] for c in cold])}  (first answer after an edit)")


if __name__ == "__main__":
    main()
