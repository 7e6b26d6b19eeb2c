"""gpuplan's own `key=value` settings, each declared once: the Request fields it sets, how its
value is read, an example that works, and the other spellings it accepts.

A `key=value` token is a setting only when its key is one of these and it is written the way the
help shows it (`seq=4k`, no spaces, in the prose of the question). Any other `name=value`, a
`--flag`, JSON or YAML is part of a pasted artifact and is read by artifacts.py instead, so
`prefetch_factor=2` or `SeqNum=458` never stops a question. A setting with a value that does not
read is an error that names the key and shows the example.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import OSA

from gpuplan.bot.language import code_spans, values
from gpuplan.bot.language.repo_ids import looks_like_repo_id
from gpuplan.bot.language.vocabulary import method_word  # the method rules' words, shared with the prose reader
from gpuplan.estimator.schema import (
    AREAS,
    CKPTS,
    DATA_KINDS,
    KV_CACHES,
    LOSSES,
    METHODS,
    OBJECTIVES,
    OFFLOADS,
    OPTIMIZERS,
    PREFILLS,
    REGIONS,
    SERVE_PRECISIONS,
    TRAIN_PRECISIONS,
    Note,
)
from gpuplan.knowledge import Catalog, catalog


@dataclass(frozen=True)
class Key:
    name: str
    fields: tuple[str, ...]  # the Request fields it sets (and so overrides in the text)
    read: Callable[[str, Catalog], dict[str, Any]]  # value -> {field: value}; raises ValueError
    example: str
    aliases: tuple[str, ...] = ()


def _enum(allowed: tuple[str, ...], field_name: str, fold: Callable[[str], str] = str.lower):
    def read(raw: str, cat: Catalog) -> dict[str, Any]:
        value = fold(raw)
        if value not in allowed:
            raise ValueError(raw)
        return {field_name: value}

    return read


def _integer(field_name: str):
    def read(raw: str, cat: Catalog) -> dict[str, Any]:
        number = values.number(raw)
        if number != int(number):
            raise ValueError(raw)
        return {field_name: int(number)}

    return read


# the words of a setting turned on or off ("ep_overlap=off")
SWITCH = {"on": True, "true": True, "yes": True, "1": True, "off": False, "false": False, "no": False, "0": False}


def _switch(field_name: str):
    def read(raw: str, cat: Catalog) -> dict[str, Any]:
        if raw.lower() not in SWITCH:
            raise ValueError(raw)
        return {field_name: SWITCH[raw.lower()]}

    return read


def _with(field_name: str, reader: Callable[[str], Any]):
    return lambda raw, cat: {field_name: reader(raw)}


def _method(raw: str, cat: Catalog) -> dict[str, Any]:
    method = raw.lower() if raw.lower() in METHODS else method_word(raw)
    if method is None:
        raise ValueError(raw)
    return {"method": method}


def _zero(raw: str, cat: Catalog) -> dict[str, Any]:
    return {"zero": 3} if raw.lower() == "fsdp" else _integer("zero")(raw, cat)


def _fabric(raw: str, cat: Catalog) -> dict[str, Any]:
    if raw.lower() not in cat.fabrics:
        raise ValueError(raw)
    return {"fabric": raw.lower()}


def _framework(raw: str, cat: Catalog) -> dict[str, Any]:
    framework = cat.find_framework(raw)
    if framework is None:
        raise ValueError(raw)
    return {"framework": framework.id}


def _budget(raw: str, cat: Catalog) -> dict[str, Any]:
    usd, currency = values.money_usd(raw)
    return {"budget_usd": usd, "_currency": currency}


KEYS: tuple[Key, ...] = (
    Key("model", ("model", "params_b"), lambda raw, cat: {"_model": raw}, "model=llama-3-70b, model=70b"),
    Key("method", ("method",), _method, "method=lora"),
    Key("seq", ("seq_len",), _with("seq_len", values.length), "seq=4k", ("context",)),
    Key("mbs", ("micro_batch",), _integer("micro_batch"), "mbs=2"),
    Key("gbs", ("global_batch",), _integer("global_batch"), "gbs=512"),
    Key("tokens", ("train_tokens",), _with("train_tokens", values.quantity), "tokens=2T"),
    Key("samples", ("samples",), _with("samples", lambda raw: int(values.quantity(raw))), "samples=50k"),
    Key("sample_tokens", ("sample_tokens",), _with("sample_tokens", values.length), "sample_tokens=1500"),
    Key("epochs", ("epochs",), _with("epochs", values.number), "epochs=3"),
    Key(
        "dataset_gb",
        ("dataset_gb",),
        _with("dataset_gb", lambda raw: values.number(raw.lower().removesuffix("gb"))),
        "dataset_gb=200",
    ),
    Key("gpu", ("gpu",), lambda raw, cat: {"_gpu": raw}, "gpu=h100"),
    Key("gpus", ("gpus",), _integer("gpus"), "gpus=16", ("gpu_count", "n_gpus")),
    Key("nodes", ("nodes",), _integer("nodes"), "nodes=2"),
    Key("zero", ("zero",), _zero, "zero=3"),
    Key("offload", ("offload",), _enum(OFFLOADS, "offload"), "offload=cpu"),
    Key("tp", ("tp",), _integer("tp"), "tp=8"),
    Key("pp", ("pp",), _integer("pp"), "pp=4"),
    Key("ep", ("ep",), _integer("ep"), "ep=8"),
    Key("cp", ("cp",), _integer("cp"), "cp=2"),
    Key("etp", ("etp",), _integer("etp"), "etp=1"),
    Key("vpp", ("vpp",), _integer("vpp"), "vpp=4", aliases=("vp",)),
    Key("ep_overlap", ("ep_overlap",), _switch("ep_overlap"), "ep_overlap=off"),
    Key("ckpt", ("ckpt",), _enum(CKPTS, "ckpt"), "ckpt=full", ("checkpointing",)),
    Key("loss", ("loss",), _enum(LOSSES, "loss"), "loss=unchunked"),
    Key("framework", ("framework",), _framework, "framework=torchtune"),
    Key("kv", ("kv_cache",), _enum(KV_CACHES, "kv_cache"), "kv=fp8", aliases=("kv_cache",)),
    Key("prompt", ("prompt_tokens",), _with("prompt_tokens", values.length), "prompt=2k", ("isl", "input_len")),
    Key("prefill", ("prefill",), _enum(PREFILLS, "prefill"), "prefill=disaggregated"),
    Key("decode_gpus", ("decode_gpus",), _integer("decode_gpus"), "decode_gpus=72"),
    Key("precision", ("precision",), lambda raw, cat: {"precision": raw.lower()}, "precision=bf16-mixed"),
    Key(
        "optim",
        ("optimizer",),
        _enum(OPTIMIZERS, "optimizer", lambda r: r.lower().replace("_", "-")),
        "optim=adamw8bit",
    ),
    Key("lora_r", ("lora_rank",), _integer("lora_rank"), "lora_r=16"),
    Key("mfu", ("mfu",), _with("mfu", values.ratio), "mfu=0.4"),
    Key("deadline", ("deadline_days",), _with("deadline_days", values.duration_days), "deadline=14d"),
    Key("budget", ("budget_usd",), _budget, "budget=$50k"),
    Key("region", ("region",), _enum(REGIONS, "region"), "region=sg"),
    Key("objective", ("objective",), _enum(OBJECTIVES, "objective"), "objective=fastest", ("goal",)),
    Key("fabric", ("fabric",), _fabric, "fabric=ib-hdr200", ("network",)),
    Key("data", ("data",), _enum(DATA_KINDS, "data"), "data=tokens"),
    Key("users", ("users",), _enum(AREAS, "users"), "users=sea"),
    Key(
        "gpu_mem",
        ("gpu_memory_gib",),
        _with("gpu_memory_gib", lambda raw: values.number(re.sub(r"(?i)gi?b?$", "", raw))),
        "gpu_mem=48",
        ("gpu_memory", "vram"),
    ),
    Key("lang", (), _enum(("en", "zh"), "_lang"), "lang=zh"),
)
BY_NAME: dict[str, Key] = {name: key for key in KEYS for name in (key.name, *key.aliases)}
NAMES = frozenset(BY_NAME)

# A setting token: a known key, '=', a value without spaces, quotes or brackets, standing alone
# (not part of `--gpus=8`, `x.model=...` or `"seq": ...`).
TOKEN = re.compile(
    r"(?<![\w\-./\"'])(" + "|".join(sorted(map(re.escape, NAMES), key=len, reverse=True)) + r")"
    r"=([^\s=,;，；()\[\]{}\"'`]*[^\s=,;，；()\[\]{}\"'`?？!！.。])[?？!！.。]*(?=[\s,;，；。]|$)"
)  # case-sensitive: `GPU=2, BS=256` in a pasted config is the config's, not gpuplan's; a question
# mark or full stop after the value ends the sentence ("pp=1?", "seq=4k.")


_OPENS = re.compile(r"[(\[{\\]\s*$")


def find(text: str) -> list[re.Match]:
    """The setting tokens of a message: on its own lines, not inside code (fenced or inline), not
    on an indented line or one that continues a call or command (`    model=MODEL_PATH,`)."""
    fenced = code_spans.quoted_spans(text)
    found, position, previous = [], 0, ""
    for line in text.split("\n"):
        indented = line.startswith(("\t", "    "))  # a code block or the body of a call
        if line.strip() and not indented and not _continues(previous):
            for match in TOKEN.finditer(text, position, position + len(line)):
                if not any(a <= match.start() < b for a, b in fenced) and not _prose_value(match):
                    found.append(match)
        if line.strip():
            previous = line
        position += len(line) + 1
    return found


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d+)?(?:e[-+]?\d+)?|nan|inf)", re.I)  # as logs print them


# keys whose names logs print with numbers: a training log's loss, a device index
_LOG_KEYS = ("loss", "gpu")
# a name=value written in text: on a line with one that is no gpuplan key, a log's or a config's line
# ("step=10 loss=1.2 lr=2e-5"); the parser also points out near misses of keys with it ("sqe=4k")
ASSIGNMENT = re.compile(r"(?<![\w\-./])([A-Za-z_]\w*)=\S+")


def _prose_value(match: re.Match) -> bool:
    """A key's value that is a sentence's or a log's, not a setting: it runs into Chinese text and does
    not read ("tp=8时推理时间为252s", "model=qwen2-7b的推理"; "tokens=1.4万亿" reads), or it is a number
    where the key takes words, on a log's line or of a key logs print ("loss=1.234", "gpu=0"); a
    number alone for another such key ("users=100") stays a setting that does not read, and is said."""
    key, raw = BY_NAME[match.group(1)], match.group(2)
    if values.CJK.search(raw):
        return not _reads(key, raw)
    if not _NUMBER.fullmatch(raw) or _reads(key, raw) or _reads(key, "1"):
        return False
    start, end = match.string.rfind("\n", 0, match.start()) + 1, match.string.find("\n", match.end())
    line = match.string[start : end if end >= 0 else None]
    foreign = any(m.group(1) not in NAMES for m in ASSIGNMENT.finditer(line))
    return key.name in _LOG_KEYS or foreign


def _reads(key: Key, raw: str) -> bool:
    """Whether `raw` is a value `key` takes, names checked as the settings' readers later check them."""

    cat = catalog()
    try:
        key.read(raw, cat)
        if key.name == "model" and not (cat.find_model(raw) or looks_like_repo_id(raw)):
            values.model_size_b(raw)  # raises when it is no size either
    except (ValueError, OverflowError):
        return False
    if key.name == "precision":
        return raw.lower() in (*TRAIN_PRECISIONS, *SERVE_PRECISIONS)
    return key.name != "gpu" or cat.find_gpu(raw) is not None


def _continues(previous: str) -> bool:
    """Whether the line after `previous` is part of it: after an open bracket or a backslash, or
    after a code line ending in a comma (`Trainer(model=m,`), not after prose ("Hi team,")."""
    if _OPENS.search(previous):
        return True
    return previous.rstrip().endswith(",") and code_spans.is_code_line(previous)


def apply(token_key: str, raw: str, cat: Catalog) -> tuple[Key, dict[str, Any] | None, Note | None]:
    """Read one setting: (its Key, the fields it sets, or an error note naming key and value)."""
    key = BY_NAME[token_key]
    try:
        return key, key.read(raw, cat), None
    except (ValueError, OverflowError):
        return key, None, Note(code="bad_value", params={"key": key.name, "value": raw, "example": key.example})


def close_key(name: str) -> str | None:
    """A gpuplan key that `name` is probably a misspelling of (`sqe` -> `seq`, `methd` -> `method`):
    one edit away (a swap of two letters is one), two for names of eight letters or more."""

    name = name.lower()
    allowed = 2 if len(name) >= 8 else 1
    best = min(sorted(NAMES), key=lambda key: OSA.distance(name, key))
    return BY_NAME[best].name if len(name) >= 3 and OSA.distance(name, best) <= allowed else None
