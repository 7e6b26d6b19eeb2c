"""One structured log line per request: what came in, how long it took, what it became.

Listeners record the outcome and plan id on the current request's record (a context variable,
so concurrent requests in threads never mix); the WSGI layer writes the line. Tokens and
secrets never reach it; user text only when GPUPLAN_DEBUG is on.
"""

from __future__ import annotations

import json
import logging
import time
from contextvars import ContextVar
from typing import Any

log = logging.getLogger("gpuplan.requests")
_record: ContextVar[dict[str, Any] | None] = ContextVar("gpuplan_request", default=None)


def start(**fields: Any) -> dict[str, Any]:
    record = {"t0": time.perf_counter(), **fields}
    _record.set(record)
    return record


def note(**fields: Any) -> None:
    """Add to the current request's record (no-op outside a request, e.g. in a lazy listener)."""
    record = _record.get()
    if record is not None:
        record.update({k: v for k, v in fields.items() if v is not None})


def finish(record: dict[str, Any], **fields: Any) -> None:
    record.update(fields)
    t0 = record.pop("t0")
    line = {"latency_ms": round((time.perf_counter() - t0) * 1000, 2), **record}
    log.info(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    _record.set(None)


def event(kind: str, **fields: Any) -> None:
    """A line for work done after the response (replies posted by a lazy listener)."""
    log.info(json.dumps({"type": kind, **fields}, ensure_ascii=False, separators=(",", ":")))


def configure(level: str = "INFO") -> None:
    """Plain lines on stderr: each request line is already JSON."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("slack_bolt").setLevel(max(logging.WARNING, logging.getLevelName(level)))
    logging.getLogger("slack_sdk").setLevel(max(logging.WARNING, logging.getLevelName(level)))
