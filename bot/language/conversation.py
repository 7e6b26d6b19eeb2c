"""Follow-ups in a thread: "what about 16k context?" changes the previous request, not starts over.

Pure: takes the thread's previous Request and the new text, returns the merged question for
the pipeline. What the follow-up states replaces what was there; fields that only made sense
with the old value (tensor parallel for another model, a memory size for another GPU) are
dropped unless restated; every change is reported as a note.
"""

from __future__ import annotations

from typing import Any

from gpuplan.bot.language.parser import Parsed, full_load_asked, parse
from gpuplan.estimator.schema import Note, Request

# When a field changes, these fields were chosen for its old value and are reopened
DEPENDENT = {
    "model": ("params_b", "tp", "pp", "ep", "cp"),
    "params_b": ("model", "tp", "pp", "ep", "cp"),
    "gpu": ("gpu_memory_gib", "tp", "fabric"),
    "gpu_memory_gib": ("gpu",),
    "gpus": ("nodes",),
    "nodes": ("gpus",),
    "train_tokens": ("samples", "epochs", "dataset_gb"),
    "samples": ("train_tokens", "dataset_gb"),
    "dataset_gb": ("train_tokens", "samples"),
    "epochs": ("train_tokens",),
}
ADAPTERS = ("lora", "qlora")
SAME_FIELD = ("model", "params_b")  # two spellings of one thing: replaced, not reopened


def follow_up(previous: Request, text: str) -> Parsed:
    """Parse `text` as a change to `previous`; the result's request is the merged one."""
    parsed = parse(text, previous=previous)
    stated = parsed.request.model_dump(exclude_none=True)
    if stated and parsed.intent in ("other", "help"):
        parsed.intent = "plan"  # "what about 16k context?" changes the plan; it is not off-topic
    request, notes = change(previous, stated)
    parsed.request = request
    parsed.notes[:0] = notes
    full_load_asked(parsed)  # "and how many users can it serve?": asked of the service it follows
    return parsed


def change(previous: Request, stated: dict[str, Any]) -> tuple[Request, list[Note]]:
    """`previous` with the `stated` fields replaced and the fields that depended on them reopened."""
    merged: dict[str, Any] = previous.model_dump(exclude_none=True)
    changes: list[str] = []
    reopened: list[str] = []
    for name, value in stated.items():
        if merged.get(name) == value:
            continue
        dependents = _method_dependents(previous.method, value) if name == "method" else DEPENDENT.get(name, ())
        for dependent in dependents:
            if dependent not in stated and merged.pop(dependent, None) is not None and dependent not in SAME_FIELD:
                reopened.append(dependent)
        merged[name] = value
        changes.append(name)
    reopened += _pool_left_without_room(merged, stated)
    notes = [Note(code="follow_up_changed", params={"fields": changes}) if changes else Note(code="follow_up_same")]
    if reopened:
        notes.append(Note(code="follow_up_reopened", params={"fields": list(dict.fromkeys(reopened))}))
    return Request(**merged), notes


def _pool_left_without_room(merged: dict[str, Any], stated: dict[str, Any]) -> list[str]:
    """A decode pool and the GPUs in all that leave it no prefill GPU ("on 16 GPUs" after "a decode
    pool of 72"): the one the follow-up did not state is reopened, so the plan is the one asked."""
    pool, gpus = merged.get("decode_gpus"), merged.get("gpus")
    if not pool or not gpus or gpus > pool:
        return []
    older = "gpus" if "decode_gpus" in stated else "decode_gpus"
    merged.pop(older)
    return [older]


def _method_dependents(old: str | None, new: str) -> tuple[str, ...]:
    """Training <-> serving reopens precision, batch and sharding; leaving adapters drops the rank."""
    out: tuple[str, ...] = ()
    if (old == "infer") != (new == "infer"):
        out += ("precision", "optimizer", "micro_batch", "global_batch", "zero", "offload", "ckpt", "train_tokens")
        out += ("gpus", "nodes", "tp", "pp", "ep", "cp")  # a training cluster's size says little about serving
    if old in ADAPTERS and new not in ADAPTERS:
        out += ("lora_rank",)
    return out
