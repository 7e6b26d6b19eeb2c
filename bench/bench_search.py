"""Layout-search speed: candidates scored per second, vectorised vs a plain Python loop.

Run: python bench/bench_search.py
The same candidates (every catalog GPU type x a full layout grid for a 70B full fine-tune) are
scored twice in one run: by search.score_training (numpy, GPU types x layouts at once) and by a
loop that calls the same memory and time functions one candidate at a time. Targets: at least
20x faster than the loop, and a 100,000-candidate search under 50 ms.
"""

from __future__ import annotations

import math
import time

from gpuplan.estimator import compute, memory, network, search
from gpuplan.estimator.architecture import generic
from gpuplan.estimator.context import overheads
from gpuplan.estimator.memory import Job, Layout
from gpuplan.knowledge import catalog

GBS, TOKENS = 1024, 1e10


def setup(max_gpus: int):
    cat = catalog()
    gpus = list(cat.gpus.values())
    job = Job(generic(70), "full", "bf16-mixed", "adamw", 2048)
    grid = search.training_grid(job.arch, "full", search.Fixed(), GBS, 8, max_gpus)
    return cat, gpus, job, grid


def vectorised(cat, gpus, job, grid, prune: bool = True) -> float:
    start = time.perf_counter()
    options = search.gpu_options(cat, gpus, None, None)
    links = network.links_for_types(gpus, [cat.fabrics[g.node_fabric] for g in gpus], cat.collective_efficiency)
    hw = compute.hardware_for(gpus, "full", "bf16-mixed", cat.defaults, links)
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
    start = time.perf_counter()
    done = 0
    best = math.inf
    for gpu in gpus:
        links = network.links_for(gpu, cat.fabrics[gpu.node_fabric], cat.collective_efficiency)
        hw = compute.Hardware(
            gpu.peak_16bit_tflops * 1e12, compute.hardware_utilisation(gpu, "full", "bf16-mixed", cat.defaults), links
        )
        price = cat.price(gpu.id, None)
        for i in range(grid.size):
            g, tp, pp = float(grid.gpus[i]), float(grid.tp[i]), float(grid.pp[i])
            mbs = float(grid.micro_batch[i])
            dp = g / (tp * pp)
            micro = max(1.0, math.ceil(GBS / (dp * mbs)))
            zero, offload, ckpt, vpp = (float(x[i]) for x in (grid.zero, grid.offload, grid.ckpt, grid.vpp))
            lay = Layout(g, tp, pp, zero, offload, ckpt, mbs, micro, 8, vpp)
            need = float(memory.per_gpu_total(memory.training_memory(job, lay, over)))
            step = compute.training_step(job, hw, lay, micro * dp * mbs, cat.defaults)
            goodput = float(search.job_reliability(job, g, gpu.gpus_per_node, cat).goodput)
            seconds = TOKENS / float(step.tokens / step.seconds) / goodput
            cost = seconds / 3600 * g * price
            if need <= gpu.memory_gib * memory.GIB:
                best = min(best, cost)
            done += 1
            if done >= limit:
                return time.perf_counter() - start, done
    return time.perf_counter() - start, done


def main() -> None:
    cat, gpus, job, grid = setup(4096)
    candidates = len(gpus) * grid.size
    vectorised(cat, gpus, job, grid)  # warm up
    pruned = min(vectorised(cat, gpus, job, grid) for _ in range(5))
    vec = min(vectorised(cat, gpus, job, grid, prune=False) for _ in range(5))
    loop_s, loop_n = python_loop(cat, gpus, job, grid, limit=3000)
    per_loop = loop_s / loop_n
    per_vec = vec / candidates
    print(f"candidates                 {candidates:,} ({len(gpus)} GPU types x {grid.size:,} layouts)")
    print(f"vectorised, all scored     {vec * 1e3:.1f} ms  -> {candidates / vec:,.0f} candidates/s")
    print(f"vectorised, pruned         {pruned * 1e3:.1f} ms  (layouts no GPU can hold skip the time model)")
    print(f"python loop (first {loop_n:,})  {per_loop * 1e6:.1f} us per candidate -> {1 / per_loop:,.0f} candidates/s")
    print(f"speed-up                   {per_loop / per_vec:,.0f}x  (target >= 20x)")
    scale = 100_000 / candidates
    print(f"100,000 candidates         {vec * scale * 1e3:.1f} ms at this rate  (target < 50 ms)")


if __name__ == "__main__":
    main()
