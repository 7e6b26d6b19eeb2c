"""Whether answers are memoised in this process (GPUPLAN_CACHE=0 turns it off), and the bounded
caches of kernel timings by shape, which stay on.

Estimates, plans and rendered blocks are pure functions of the request and the knowledge, which
is loaded once per process, so repeating a question costs a dictionary lookup. Benchmarks turn
the memo off to measure the work itself (bench/bench_http.py prints both).

GPUPLAN_CACHE covers whole requests only. Below them, ShapeCache keeps the kernel model's timings
of the shapes asked before (a model on GPU types at a precision, over some micro-batch or decode
shapes), which different requests share: the same models are asked over and over. They are
bounded and exact (an entry is what the same call computes); clear_shape_caches() empties them,
as bench/bench_estimate.py does for its cold figure.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np


@functools.cache
def enabled() -> bool:
    """Read once per process, like the knowledge (tests that change it call enabled.cache_clear())."""
    return os.environ.get("GPUPLAN_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def shape_key(value: Any) -> Any:
    """A hashable key for a number, array or None: an array by its type, shape and bytes, anything
    else by its type and value (a float and a 0-d array of it compute alike but are not the same)."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    return type(value), value


# what one ShapeCache may hold, keys and results (estimate: a few thousand typical entries of a
# few kB; a search over every GPU type and a giant grid makes entries of megabytes, kept fewer)
SHAPE_CACHE_BYTES = 32 * 2**20


class ShapeCache:
    """A least-recently-used cache of at most `maxsize` results and SHAPE_CACHE_BYTES of keys and
    arrays. Keys name objects by id (GPU figures, model shapes): each entry keeps those objects
    alive (`keep`), so no other object can take their ids while it stands."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._entries: OrderedDict[tuple, tuple[tuple, Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        _SHAPE_CACHES.append(self)

    def get(self, key: tuple, keep: tuple, compute: Callable[[], Any]) -> Any:
        with self._lock:  # the Slack server answers on several threads (gunicorn gthread, Bolt's lazy listeners)
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry[1]
        result = compute()  # outside the lock: two threads may compute one entry, never corrupt the order
        size = _nbytes(key) + _nbytes(result)
        with self._lock:
            if size <= SHAPE_CACHE_BYTES // 4 and key not in self._entries:  # a larger one pushes out most
                self._entries[key] = (keep, result, size)
                self._bytes += size
            while self._entries and (len(self._entries) > self.maxsize or self._bytes > SHAPE_CACHE_BYTES):
                self._bytes -= self._entries.popitem(last=False)[1][2]
        return result

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


# leaves of keys and results that hold no bytes counted (numbers, names, the types shape_key adds)
_NO_BYTES = frozenset({int, float, bool, str, type, type(None), np.float64})


def _nbytes(value: Any) -> int:
    """The bytes of the arrays and byte strings in a key or result (its containers and dataclasses
    walked; anything else counted as nothing). The common leaves and containers are told by their
    exact type first: a key holds some fifty of them, each a few isinstance and hasattr calls else."""
    kind = type(value)
    if kind in _NO_BYTES:
        return 0
    if kind is tuple:
        return sum(map(_nbytes, value))
    if kind is bytes:
        return len(value)
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, tuple | list):
        return sum(map(_nbytes, value))
    if hasattr(value, "__dataclass_fields__"):
        return sum(_nbytes(getattr(value, name)) for name in value.__dataclass_fields__)
    return 0


_SHAPE_CACHES: list[ShapeCache] = []


def clear_shape_caches() -> None:
    """Empty every ShapeCache (a cold start for benchmarks and tests)."""
    for cache in _SHAPE_CACHES:
        cache.clear()
