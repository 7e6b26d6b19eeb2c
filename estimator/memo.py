"""Whether answers are memoised in this process (GPUPLAN_CACHE=0 turns it off).

Estimates, plans and rendered blocks are pure functions of the request and the knowledge, which
is loaded once per process, so repeating a question costs a dictionary lookup. Benchmarks turn
the memo off to measure the work itself (bench/bench_http.py prints both).
"""

from __future__ import annotations

import functools
import os


@functools.cache
def enabled() -> bool:
    """Read once per process, like the knowledge (tests that change it call enabled.cache_clear())."""
    return os.environ.get("GPUPLAN_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")
