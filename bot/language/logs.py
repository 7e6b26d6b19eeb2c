"""Figures in pasted logs and tables: a CUDA out-of-memory message (what was asked, the card's
capacity, what was free), an NCCL watchdog's timeout, vLLM's memory lines, an nvidia-smi table."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuplan.bot.language import values
from gpuplan.bot.language.artifact_words import Vocabulary
from gpuplan.bot.language.vocabulary import vocabulary as question_words


@dataclass
class OomReport:
    """What a CUDA or serving OOM message says about the card and the allocation (GiB)."""

    capacity_gib: float | None = None
    requested_gib: float | None = None
    free_gib: float | None = None
    in_use_gib: float | None = None
    words: str = ""


_GIB = r"(\d{1,9}(?:\.\d{1,9})?)\s*(GiB|MiB|GB|MB)"
_OOM_NEW = re.compile(
    r"Tried to allocate " + _GIB + r"\.?\s*GPU \d+ has a total capacity of " + _GIB + r" of which " + _GIB + r" is free"
)
_OOM_OLD = re.compile(
    r"Tried to allocate "
    + _GIB
    + r" \(GPU \d+; "
    + _GIB
    + r" total capacity; "
    + _GIB
    + r" already allocated; "
    + _GIB
    + r" free"
)
_IN_USE = re.compile(r"this process has " + _GIB + r" memory in use")
_VLLM_TOTAL = re.compile(r"total_gpu_memory \(" + _GIB + r"\)")


def _gib(number: str, unit: str) -> float:
    value = float(number)
    return value / 1024 if unit.lower().startswith("m") else value


def read_oom(text: str) -> OomReport | None:
    """The capacity, the failed allocation and the free memory a CUDA OOM message states."""
    match = _OOM_NEW.search(text)
    if match:
        g = match.groups()
        report = OomReport(requested_gib=_gib(g[0], g[1]), capacity_gib=_gib(g[2], g[3]), free_gib=_gib(g[4], g[5]))
    elif match := _OOM_OLD.search(text):
        g = match.groups()
        report = OomReport(
            requested_gib=_gib(g[0], g[1]),
            capacity_gib=_gib(g[2], g[3]),
            in_use_gib=_gib(g[4], g[5]),
            free_gib=_gib(g[6], g[7]),
        )
    elif match := _VLLM_TOTAL.search(text):
        report = OomReport(capacity_gib=_gib(*match.groups()))
    else:
        return None
    in_use = _IN_USE.search(text)
    if in_use and report.in_use_gib is None:
        report.in_use_gib = _gib(*in_use.groups())
    report.words = match.group(0)
    return report


_NCCL_RAN = re.compile(r"ran for (\d{1,12}) (?:ms|milliseconds)")
_NCCL_LIMIT = re.compile(r"Timeout\(ms\)=(\d{1,12})")


def read_nccl_timeout(text: str) -> float | None:
    """Seconds a collective waited before the NCCL watchdog stopped it."""
    if "nccl" not in text.lower() and "watchdog" not in text.lower():
        return None
    match = _NCCL_RAN.search(text) or _NCCL_LIMIT.search(text)
    return int(match.group(1)) / 1000 if match else None


# one part of a duration: "25 minutes", "40分钟", "1.5h", "an hour", "两个多小时", "1个半小时", "半小时";
# parts written together add up ("1 hour 30 minutes", "1h30m"); a bare "s" only right after the
# number and not before "of" ("90s", not "100s of GB")
_DURATION_PART = re.compile(
    r"(?<![a-z\d.])(\d+(?:\.\d+)?|half an?(?=\s)|an?(?=\s)|[一二两三四五六七八九十]+|半)\s*(?:个)?(半)?多?\s*"
    r"(hours?|hrs?|h|minutes?|mins?|(?<=\d)m|seconds?|secs?|(?<=\d)s(?!\s+of\b)|小时|钟头|分钟|秒)(?![a-z\d])"
)
_PART_JOINER = re.compile(r"\s*(?:and\s+)?")
_INTERVAL_AFTER = re.compile(r"\s*(?:intervals?|apart|一次|间隔)")
_SECONDS = {
    "h": 3600,
    "hr": 3600,
    "hour": 3600,
    "小时": 3600,
    "钟头": 3600,
    "m": 60,
    "min": 60,
    "minute": 60,
    "分钟": 60,
}
_COUNT_WORDS = {"a": 1.0, "an": 1.0, "half a": 0.5, "half an": 0.5, "半": 0.5}
_CLAUSE_END = re.compile(r"[。!！?？;；\n]|\.(?!\d)")
_SAVE_WINDOW = 48  # characters after the save word a duration may sit in


def read_checkpoint_save_s(text: str, voc: Vocabulary) -> float | None:
    """Seconds a checkpoint save takes as the user tells it: the first duration in the clause after
    a save word, with no interval word between or after it ("every 30 minutes", "at 2 hours intervals")."""
    lowered = text.lower()
    for word in voc.checkpoint_save.finditer(lowered):
        window = lowered[word.end() : word.end() + _SAVE_WINDOW]
        window = window[: m.start()] if (m := _CLAUSE_END.search(window)) else window
        first = _DURATION_PART.search(window)
        if not first or voc.save_not_between.search(window[: first.start()]):
            continue
        seconds, end = _duration_from(window, first)
        if seconds is not None and not _INTERVAL_AFTER.match(window, end):
            return seconds
    return None


def _duration_from(window: str, part: re.Match) -> tuple[float | None, int]:
    """The seconds of a duration starting with `part`, adding the parts written right after it."""
    total = 0.0
    while part:
        amount, half, unit = part.groups()
        try:
            count = _COUNT_WORDS.get(amount) or values.number(amount)
        except ValueError:
            return None, part.end()
        unit = unit.rstrip("s") if unit.endswith("s") and len(unit) > 1 else unit
        total += (count + (0.5 if half else 0.0)) * _SECONDS.get(unit, 1)
        joined = _PART_JOINER.match(window, part.end()).end()
        end, part = part.end(), _DURATION_PART.match(window, joined)
    return total, end


_SMI_ROW = re.compile(r"\|\s*(\d{1,4})\s+((?:NVIDIA|Tesla|GeForce|Quadro|AMD)?[\w .\-]*?)\s+(?:On|Off)\s+\|")
_SMI_MEMORY = re.compile(r"(\d{1,9})MiB\s*/\s*(\d{1,9})MiB")
# `nvidia-smi -L` ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: ...)") and the GPU lines of PyTorch's and
# vLLM's collect_env ("GPU 0: Tesla V100-PCIE-32GB")
_SMI_LIST = re.compile(r"^\s*GPU (\d{1,4}): ([^(\n]+?)\s*(?:\(UUID.*)?$", re.M)


def read_nvidia_smi(code: str) -> list[tuple[str, float | None]]:
    """(GPU name, memory GiB) for each GPU row of an `nvidia-smi` table, an `nvidia-smi -L` list or
    collect_env's GPU lines."""
    names = {int(m.group(1)): m.group(2).strip() for m in _SMI_ROW.finditer(code)}
    gpu_name = question_words().gpu_alias  # a listed line names a GPU ("GPU 0: out of memory" does not)
    names.update(
        {int(m.group(1)): m.group(2).strip() for m in _SMI_LIST.finditer(code) if gpu_name.search(m.group(2).lower())}
    )
    memories = [int(m.group(2)) / 1024 for m in _SMI_MEMORY.finditer(code)]
    rows = []
    for position, index in enumerate(sorted(names)):
        memory = memories[position] if position < len(memories) else None
        rows.append((names[index], memory))
    return rows
