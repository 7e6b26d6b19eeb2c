"""Layout-search speed: candidates scored per second, vectorised vs a plain Python loop.

Run: python bench/bench_search.py
The same candidates (every catalog GPU type x a full layout grid for a 70B full fine-tune) are
scored twice in one run: by search.score_training (numpy, GPU types x layouts at once) and by a
loop that calls the same memory and time functions one candidate at a time. A second grid, a
Mixture-of-Experts model at a 32k-token sequence, adds the expert and context parallel axes.
Targets: at least 20x faster than the loop, a 100,000-candidate search under 50 ms (with EP and
CP in the grid), and a 16,384-GPU MoE question answered in under 200 ms with the cache off.
Every timed search and question starts with the kernel timings by shape (memo.ShapeCache) emptied,
so each figure is what a question asked for the first time costs.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from gpuplan.bot.pipeline import answer
from gpuplan.estimator import compute, memo, memory, network, search
from gpuplan.estimator.architecture import for_model, generic
from gpuplan.estimator.context import overheads
from gpuplan.estimator.memory import Job, Layout
from gpuplan.knowledge import catalog

GBS, TOKENS = 1024, 1e10


def setup(max_gpus: int, arch=None, seq: int = 2048):
    cat = catalog()
    gpus = list(cat.gpus.values())
    job = Job(arch or generic(70), "full", "bf16-mixed", "adamw", seq)
    grid = search.training_grid(job.arch, "full", search.Fixed(), GBS, 8, max_gpus, seq)
    return cat, gpus, job, grid


def vectorised(cat, gpus, job, grid, prune: bool = True) -> float:
    memo.clear_shape_caches()
    start = time.perf_counter()
    options = search.gpu_options(cat, gpus, None, None)
    links = network.links_for_types(gpus, [cat.fabrics[g.node_fabric] for g in gpus], cat.collective_efficiency)
    hw = compute.hardware_for(gpus, "full", "bf16-mixed", cat, links)
    scored = search.score_training(
        job,
        grid,
        options,
        hw,
        gbs=GBS,
        tokens=TOKENS,
        over=overheads(cat),
        cat=cat,
        mfu=None,
        explicit_gpus=True,
        prune=prune,
    )
    search.choose(scored, "cheapest", None, None)
    return time.perf_counter() - start


def python_loop(cat, gpus, job, grid, limit: int) -> tuple[float, int]:
    """The same evaluation, one candidate per iteration (stops after `limit` candidates)."""
    over = overheads(cat)
    memo.clear_shape_caches()
    start = time.perf_counter()
    done = 0
    best = math.inf
    for gpu in gpus:
        links = network.links_for(gpu, cat.fabrics[gpu.node_fabric], cat.collective_efficiency)
        hw = compute.hardware_for([gpu], "full", "bf16-mixed", cat, links)
        price = cat.price(gpu.id, None)
        for i in range(grid.size):
            g, tp, pp = float(grid.gpus[i]), float(grid.tp[i]), float(grid.pp[i])
            mbs = float(grid.micro_batch[i])
            dp = g / (tp * pp)
            micro = max(1.0, math.ceil(GBS / (dp * mbs)))
            zero, offload, ckpt, vpp = (float(x[i]) for x in (grid.zero, grid.offload, grid.ckpt, grid.vpp))
            ep, cp = float(grid.ep[i]), float(grid.cp[i])
            micro = max(1.0, math.ceil(GBS / (dp / cp * mbs)))
            lay = Layout(g, tp, pp, zero, offload, ckpt, mbs, micro, 8, vpp, ep, cp)
            need = float(memory.per_gpu_total(memory.training_memory(job, lay, over)))
            step = compute.training_step(job, hw, lay, micro * dp / cp * mbs, cat.defaults)
            goodput = float(search.job_reliability(job, g, gpu.gpus_per_node, cat).goodput)
            seconds = TOKENS / float(np.ravel(step.tokens / step.seconds)[0]) / goodput
            cost = seconds / 3600 * g * price
            if need <= gpu.memory_gib * memory.GIB:
                best = min(best, cost)
            done += 1
            if done >= limit:
                return time.perf_counter() - start, done
    return time.perf_counter() - start, done


def report(title: str, cat, gpus, job, grid) -> None:
    candidates = len(gpus) * grid.size
    vectorised(cat, gpus, job, grid)  # warm up
    pruned = min(vectorised(cat, gpus, job, grid) for _ in range(5))
    vec = min(vectorised(cat, gpus, job, grid, prune=False) for _ in range(5))
    loop_s, loop_n = python_loop(cat, gpus, job, grid, limit=2000)
    per_loop = loop_s / loop_n
    per_vec = vec / candidates
    print(title)
    print(f"  candidates                 {candidates:,} ({len(gpus)} GPU types x {grid.size:,} layouts)")
    print(f"  vectorised, all scored     {vec * 1e3:.1f} ms  -> {candidates / vec:,.0f} candidates/s")
    print(f"  vectorised, pruned         {pruned * 1e3:.1f} ms  (layouts no GPU can hold skip the time model)")
    loop_rate = f"{per_loop * 1e6:.1f} us per candidate -> {1 / per_loop:,.0f} candidates/s"
    print(f"  python loop (first {loop_n:,})  {loop_rate}")
    print(f"  speed-up                   {per_loop / per_vec:,.0f}x  (target >= 20x)")
    print(f"  100,000 candidates         {vec * 100_000 / candidates * 1e3:.1f} ms at this rate  (target < 50 ms)")


def frontier_question() -> None:
    """A 16,384-GPU MoE pretraining question, parse to plan, with the estimate cache off."""
    os.environ["GPUPLAN_CACHE"] = "0"
    question = "pretrain deepseek-v3 on 16384 h800 tokens=14.8T seq=4096"
    answer(question)  # warm up: imports, catalogs, templates
    best = min(_timed(question) for _ in range(5))
    print(f"16,384-GPU MoE question     {best * 1e3:.0f} ms uncached  (target < 200 ms): {question}")


def _timed(question: str) -> float:
    memo.clear_shape_caches()
    start = time.perf_counter()
    answer(question)
    return time.perf_counter() - start


def main() -> None:
    report("dense 70B, 2k tokens (TP, PP, ZeRO, offload, checkpointing, micro-batch)", *setup(4096))
    moe = setup(4096, for_model("qwen3-235b-a22b"), seq=32768)
    report("MoE Qwen3-235B-A22B, 32k tokens (the same axes plus expert and context parallel)", *moe)
    frontier_question()


if __name__ == "__main__":
    main()
