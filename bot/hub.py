"""Model shapes from a Hugging Face repo's config.json, for models the catalog does not list.

`lookup("org/name")` fetches that repo's config.json only (never weights) through huggingface_hub
and turns it into a `ModelSpec` with `spec_from_config` (hub_config.py); whether a word someone
wrote names such a repo is bot/language/repo_ids.py's. Lookups are one GET bounded by a timeout, kept in a disk cache
(a cached config is never fetched again, so a second lookup works offline), and remembered per
process (failures for NEGATIVE_TTL seconds, so a bad id is not retried on every message).

Settings, read at each call:
  GPUPLAN_HF_LOOKUP   0 turns lookups off (HF_HUB_OFFLINE=1 does too)
  GPUPLAN_HF_TIMEOUT  seconds a lookup may take (default 3)
  GPUPLAN_HF_CACHE    the disk cache (default ~/.cache/gpuplan/hf)
  HF_ENDPOINT         the Hub (default https://huggingface.co); HF_TOKEN, if set, opens gated repos
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import json
import logging
import os
import tempfile
import threading
import time
import urllib.request
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from gpuplan.bot.hub_config import spec_from_config
from gpuplan.bot.language.repo_ids import looks_like_repo_id, repo_id_from
from gpuplan.knowledge import ModelSpec

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 3.0
DEFAULT_ENDPOINT = "https://huggingface.co"
NEGATIVE_TTL = 300.0  # seconds a failed lookup is remembered
USER_AGENT = "gpuplan/0.1 (+config.json lookups for GPU sizing)"
MIN_TIMEOUT = 0.2  # seconds: with less left before an answer is due, no look-up is started
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("gpuplan_hub_deadline", default=None)
MEMO_SIZE = 512
MAX_CONFIG_BYTES = 2_000_000  # a config.json is a few KB; anything huge is not one
_OFF = {"0", "false", "no", "off"}
_ON = {"1", "true", "yes", "on"}

# --- fetching ---------------------------------------------------------------------------------------

_memo: OrderedDict[str, tuple[float, ModelSpec | None]] = OrderedDict()
_memo_lock = threading.Lock()


def lookup(repo_id: str) -> ModelSpec | None:
    """The ModelSpec of a Hub repo's config.json, or None (off, offline, slow, missing, gated or not understood)."""
    rid = repo_id_from(repo_id)
    if rid is None:
        log.debug("hub lookup: %r is not a model repo id", repo_id)
        return None
    if not enabled():
        log.debug("hub lookup of %s: off (GPUPLAN_HF_LOOKUP=0 or HF_HUB_OFFLINE=1)", rid)
        return None
    hit = _recall(rid)
    if hit is not None:
        return hit[1]
    spec = _fetch_spec(rid)
    if spec is not None or _deadline.get() is None:
        _remember(rid, spec)
    return spec


def enabled() -> bool:
    if os.environ.get("GPUPLAN_HF_LOOKUP", "1").strip().lower() in _OFF:
        return False
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() not in _ON


def clear_memo() -> None:
    """Forget this process's lookups (the disk cache stays)."""
    with _memo_lock:
        _memo.clear()


def _recall(rid: str) -> tuple[float, ModelSpec | None] | None:
    with _memo_lock:
        hit = _memo.get(rid.lower())
        if hit is None or (hit[1] is None and hit[0] < time.monotonic()):
            return None
        return hit


def _remember(rid: str, spec: ModelSpec | None) -> None:
    with _memo_lock:
        _memo[rid.lower()] = (time.monotonic() + NEGATIVE_TTL, spec)
        _memo.move_to_end(rid.lower())
        while len(_memo) > MEMO_SIZE:
            _memo.popitem(last=False)


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Look-ups started inside take at most what is left of `seconds`, and a failure then is not
    remembered (a slash command is answered in its acknowledgement, which Slack waits 3 s for)."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def _timeout() -> float:
    raw = os.environ.get("GPUPLAN_HF_TIMEOUT", "")
    try:
        value = min(max(float(raw), 0.1), 60.0) if raw.strip() else DEFAULT_TIMEOUT
    except ValueError:
        log.debug("GPUPLAN_HF_TIMEOUT=%r is not a number; using %s s", raw, DEFAULT_TIMEOUT)
        value = DEFAULT_TIMEOUT
    deadline = _deadline.get()
    return value if deadline is None else min(value, deadline - time.monotonic())


def _cache_dir() -> Path:
    return Path(os.environ.get("GPUPLAN_HF_CACHE") or "~/.cache/gpuplan/hf").expanduser()


def _fetch_spec(rid: str) -> ModelSpec | None:
    found = _cached_config(rid) or _download_config(rid)
    if found is None:
        return None
    path, when = found
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        return spec_from_config(rid, config, looked_up=when)
    except (OSError, ValueError, RecursionError) as exc:  # JSONDecodeError and spec problems are ValueErrors
        log.debug("hub lookup of %s: config.json not understood: %s", rid, exc)
        return None


def _cache_path(rid: str) -> Path:
    org, name = rid.split("/", 1)
    return _cache_dir() / f"models--{org}--{name}" / "config.json"


def _cached_config(rid: str) -> tuple[Path, dt.date] | None:
    path = _cache_path(rid)
    return (path, _mtime_date(path)) if path.is_file() else None


def _mtime_date(path: Path) -> dt.date:
    try:
        return dt.date.fromtimestamp(path.stat().st_mtime)
    except OSError:
        return dt.date.today()


def _download_config(rid: str) -> tuple[Path, dt.date] | None:
    """One GET of config.json, at most the timeout long, kept in the disk cache.

    huggingface_hub builds the address (HF_ENDPOINT) and finds the token (HF_TOKEN or a login opens
    gated repos); the request itself is a single bounded GET rather than hf_hub_download, whose
    retries outlive any deadline and share one HTTP client across threads. The headers are ours:
    huggingface_hub's build_hf_headers fetches an agent registry from the Hub first (up to 3 s)."""
    from huggingface_hub import get_token, hf_hub_url  # lazy: a heavy library, needed by a look-up only

    endpoint = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    url = hf_hub_url(rid, "config.json", endpoint=endpoint)
    headers = {"user-agent": USER_AGENT}
    token = get_token()
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    timeout = _timeout()
    if timeout < MIN_TIMEOUT:
        log.debug("hub lookup of %s: no time left before the answer is due", rid)
        return None
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - an https/http Hub URL
            body = response.read(MAX_CONFIG_BYTES + 1)
    except (OSError, ValueError) as exc:  # URLError, HTTPError (404, 401), timeouts, refused connections
        log.debug("hub lookup of %s: %s", rid, exc)
        return None
    if len(body) > MAX_CONFIG_BYTES:
        log.debug("hub lookup of %s: config.json larger than %d bytes", rid, MAX_CONFIG_BYTES)
        return None
    return _store(rid, body), dt.date.today()


def _store(rid: str, body: bytes) -> Path:
    """Write atomically, so a concurrent reader never sees half a file."""
    path = _cache_path(rid)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
        partial.write_bytes(body)
        partial.replace(path)
    except OSError as exc:  # a read-only or full disk: use the download, just do not keep it
        log.debug("hub cache write for %s failed: %s", rid, exc)
        fallback = Path(tempfile.mkdtemp(prefix="gpuplan-hf-")) / "config.json"
        fallback.write_bytes(body)
        return fallback
    return path


__all__ = ["looks_like_repo_id", "repo_id_from", "lookup", "spec_from_config", "enabled", "clear_memo", "within"]
