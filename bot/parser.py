"""Turn a question ("70b full", "2台8卡A800能全参训练70B吗", "model=qwen2.5-72b method=lora")
into a Request.

Order of reading: Slack markup is stripped, `key=value` tokens are taken out (they always win),
then the free text is read for the model, method, hardware and shape. What could not be read
is kept so the answer can say so.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field

from bot import values
from estimator.schema import AREAS, CKPTS, DATA_KINDS, METHODS, OBJECTIVES, OFFLOADS, OPTIMIZERS, REGIONS, Note, Request
from knowledge import Catalog, catalog, normalize_name

KEYS = (
    "model",
    "method",
    "seq",
    "mbs",
    "gbs",
    "tokens",
    "gpu",
    "gpus",
    "nodes",
    "zero",
    "offload",
    "tp",
    "pp",
    "ckpt",
    "precision",
    "optim",
    "lora_r",
    "mfu",
    "deadline",
    "budget",
    "region",
    "lang",
    "samples",
    "epochs",
    "dataset_gb",
)
KEY_ALIASES = {
    "seq_len": "seq",
    "context": "seq",
    "micro_batch": "mbs",
    "global_batch": "gbs",
    "optimizer": "optim",
    "lora_rank": "lora_r",
    "rank": "lora_r",
    "train_tokens": "tokens",
    "gpu_count": "gpus",
    "n_gpus": "gpus",
    "checkpointing": "ckpt",
    "zero_stage": "zero",
}
CJK = re.compile(r"[\u4e00-\u9fff]")
_SLACK_LINK = re.compile(r"<(https?://[^>|]+)(?:\|([^>]*))?>")
_SLACK_TOKEN = re.compile(r"<[@#!][^>]*>")
_KEY_VALUE = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z_]+)\s*=\s*([^\s=,;，；]+)(?=[\s,;，；]|$)")


@dataclass
class Parsed:
    request: Request
    lang: str
    intent: str = "plan"
    lang_given: bool = False
    notes: list[Note] = field(default_factory=list)  # assumptions made while reading
    errors: list[Note] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # words gpuplan did not understand


def detect_lang(text: str) -> str:
    return "zh" if CJK.search(text) else "en"


def strip_slack_markup(text: str) -> str:
    """Mentions, channel links and special tokens go; a formatted link keeps its label."""
    text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _SLACK_TOKEN.sub(" ", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def normalize_text(text: str) -> str:
    """NFKC folds full-width letters, digits and punctuation ("８卡", "＝") to ASCII."""
    return unicodedata.normalize("NFKC", text)


# --- key=value ------------------------------------------------------------------------------


def _enum(value: str, allowed: tuple[str, ...], key: str) -> str:
    value = value.lower()
    if value not in allowed:
        raise ValueError(key)
    return value


def _method_value(value: str) -> str:
    found = find_method(value.lower())
    if found is None:
        raise ValueError("method")
    return found


def _model_value(value: str, cat: Catalog, fields: dict, errors: list[Note]) -> None:
    spec = cat.find_model(value)
    if spec:
        fields["model"] = spec.id
        return
    signed = re.fullmatch(r"\s*-\s*(.+)", value)
    try:
        size = values.model_size_b(signed.group(1) if signed else value)
    except ValueError:
        size = None
    if size is not None:
        fields["params_b"] = -size if signed else size  # the estimator names impossible sizes
        return
    errors.append(Note(code="unknown_model", params={"value": value, "suggestions": suggest_models(value, cat)}))


def _gpu_value(value: str, cat: Catalog, fields: dict, errors: list[Note]) -> None:
    gpu = cat.find_gpu(value)
    if gpu:
        fields["gpu"] = gpu.id
    else:
        errors.append(Note(code="unknown_gpu", params={"value": value, "suggestions": suggest_gpus(value, cat)}))


def _int(text: str) -> int:
    number = values.number(text)
    if number != int(number):
        raise ValueError(text)
    return int(number)


def apply_key_value(key: str, raw: str, cat: Catalog, fields: dict, errors: list[Note], parsed: Parsed) -> None:
    """Set one `key=value` field, or record an error naming the key and the value."""
    key = KEY_ALIASES.get(key.lower(), key.lower())
    try:
        match key:
            case "model":
                _model_value(raw, cat, fields, errors)
            case "gpu":
                _gpu_value(raw, cat, fields, errors)
            case "method":
                fields["method"] = _method_value(raw)
            case "seq":
                fields["seq_len"] = values.length(raw)
            case "mbs":
                fields["micro_batch"] = _int(raw)
            case "gbs":
                fields["global_batch"] = _int(raw)
            case "tokens":
                fields["train_tokens"] = values.quantity(raw)
            case "samples":
                fields["samples"] = int(values.quantity(raw))
            case "epochs":
                fields["epochs"] = values.number(raw)
            case "dataset_gb":
                fields["dataset_gb"] = values.number(raw.lower().removesuffix("gb"))
            case "gpus":
                fields["gpus"] = _int(raw)
            case "nodes":
                fields["nodes"] = _int(raw)
            case "zero":
                fields["zero"] = 3 if raw.lower() == "fsdp" else _int(raw)
            case "offload":
                fields["offload"] = _enum(raw, OFFLOADS, key)
            case "tp":
                fields["tp"] = _int(raw)
            case "pp":
                fields["pp"] = _int(raw)
            case "ckpt":
                fields["ckpt"] = _enum(raw, CKPTS, key)
            case "precision":
                fields["precision"] = raw.lower()
            case "optim":
                fields["optimizer"] = _enum(raw.replace("_", "-"), OPTIMIZERS, key)
            case "lora_r":
                fields["lora_rank"] = _int(raw)
            case "mfu":
                fields["mfu"] = values.ratio(raw)
            case "deadline":
                fields["deadline_days"] = values.duration_days(raw)
            case "budget":
                usd, currency = values.money_usd(raw)
                fields["budget_usd"] = usd
                if currency != "USD":
                    parsed.notes.append(
                        Note(code="currency_converted", params={"value": raw, "usd": usd, "rate": values.CNY_PER_USD})
                    )
            case "region":
                fields["region"] = _enum(raw, REGIONS, key)
            case "objective":
                fields["objective"] = _enum(raw, OBJECTIVES, key)
            case "fabric":
                fabric = raw.lower()
                if fabric not in cat.fabrics:
                    raise ValueError(key)
                fields["fabric"] = fabric
            case "data":
                fields["data"] = _enum(raw, DATA_KINDS, key)
            case "users":
                fields["users"] = _enum(raw, AREAS, key)
            case "lang":
                parsed.lang = _enum(raw, ("en", "zh"), key)
                parsed.lang_given = True
            case _:
                errors.append(Note(code="unknown_key", params={"key": key, "keys": list(KEYS)}))
    except (ValueError, OverflowError):
        errors.append(Note(code="bad_value", params={"key": key, "value": raw, "example": EXAMPLES.get(key, "")}))


EXAMPLES = {
    "model": "model=llama-3-70b, model=70b",
    "method": "method=lora",
    "seq": "seq=4k",
    "mbs": "mbs=2",
    "gbs": "gbs=512",
    "tokens": "tokens=2T",
    "gpus": "gpus=16",
    "nodes": "nodes=2",
    "zero": "zero=3",
    "offload": "offload=cpu",
    "tp": "tp=8",
    "pp": "pp=4",
    "ckpt": "ckpt=full",
    "precision": "precision=bf16-mixed",
    "optim": "optim=adamw8bit",
    "lora_r": "lora_r=16",
    "mfu": "mfu=0.4",
    "deadline": "deadline=14d",
    "budget": "budget=$50k",
    "region": "region=sg",
    "lang": "lang=zh",
    "gpu": "gpu=h100",
    "samples": "samples=50k",
    "epochs": "epochs=3",
    "dataset_gb": "dataset_gb=200",
}


# --- free text -------------------------------------------------------------------------------

METHOD_WORDS: tuple[tuple[str, str], ...] = (
    # (regex, method); checked in order, the first match wins
    (r"qlora|4-?bit lora|量化微调", "qlora"),
    (r"\blora\b|低秩", "lora"),
    (r"\bdpo\b|直接偏好", "dpo"),
    (r"\bppo\b|\brlhf\b|强化学习|人类反馈", "ppo"),
    (r"continued?[ -]pre-?train\w*|continual pre-?train\w*|继续预训练|增量预训练|二次预训练", "continue"),
    (r"pre-?train\w*|from scratch|预训练|从头训练|从零训练", "pretrain"),
    (r"\binfer\w*|\bserv\w*|\bdeploy\w*|推理|部署|上线|服务化", "infer"),
    (
        r"full[ -]?(?:fine[ -]?tun\w*|ft|param\w*)?|全参|全量|\bsft\b|fine[ -]?tun\w*|instruction[ -]tun\w*|"
        r"指令微调|指令精调|微调|精调",
        "full",
    ),
)
_METHOD_RES = tuple((re.compile(p, re.IGNORECASE), m) for p, m in METHOD_WORDS)


OBJECTIVE_WORDS = (
    (r"fastest|as fast as possible|asap|最快|尽快|越快越好", "fastest"),
    (r"fewest gpus|fewest cards|least gpus|minimum (?:number of )?gpus|最少(?:的)?卡|最少(?:的)?gpu|卡最少", "fewest"),
    (r"cheapest|lowest cost|least expensive|最便宜|最省钱|成本最低|省钱", "cheapest"),
)
REGION_WORDS = (
    (r"\bin (?:the )?us\b|\bus[- ](?:region|east|west|based)\b|\busa\b|united states|美国|北美", "us"),
    (r"hong ?kong|香港", "hk"),
    (r"singapore|新加坡", "sg"),
    (r"japan|tokyo|日本|东京", "jp"),
    (r"korea|seoul|韩国|首尔", "kr"),
)
USER_WORDS = (
    (r"north america|北美", "na"),
    (r"europe|欧洲", "eu"),
    (r"south-?east asia|东南亚", "sea"),
    (r"north-?east asia|东北亚", "nea"),
    (r"mainland china|china|中国大陆|国内", "cn"),
    (r"india|印度", "in"),
    (r"global|worldwide|全球", "global"),
)
_USERS_CONTEXT = re.compile(r"(?:users?|customers?|用户|客户)", re.IGNORECASE)


def _first(patterns: tuple[tuple[str, str], ...], text: str) -> str | None:
    for pattern, value in patterns:
        if re.search(pattern, text, re.IGNORECASE):
            return value
    return None


def find_method(text: str) -> str | None:
    lowered = text.lower()
    if lowered in METHODS:
        return lowered
    for pattern, method in _METHOD_RES:
        if pattern.search(lowered):
            return method
    return None


_SIZE = re.compile(
    r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)\s*(b|bn|billion|亿|万亿|千亿|百亿)(?:\s*(?:参数|params?|parameters?|模型|model))?(?![a-z])",
    re.IGNORECASE,
)
_GPU_COUNT = re.compile(
    r"(\d+|[一二两三四五六七八九十]+)\s*(?:x\s*|×\s*|张|块|个|台)?\s*(?:gpus?\b|cards?\b|卡|显卡)", re.IGNORECASE
)
_NODES_OF = re.compile(
    r"(\d+|[一二两三四五六七八九十]+)\s*(?:台|机|nodes?|servers?|machines?)\s*(?:of\s*)?(\d+|[一二两三四五六七八九十]+)\s*(?:卡|gpus?)?",
    re.IGNORECASE,
)


def _find_model_in_text(text: str, cat: Catalog) -> tuple[str | None, float | None, str]:
    """A catalog model named anywhere in the text, else a size; returns (model id, size, rest of text)."""
    folded = normalize_name(text)
    best: tuple[int, str] | None = None
    for alias, model_id in cat.model_index.items():
        if len(alias) >= 5 and alias in folded and (best is None or len(alias) > best[0]):
            best = (len(alias), model_id)
    if best:
        return best[1], None, text
    match = _SIZE.search(text)
    if match:
        size = values.model_size_b(match.group(1) + match.group(2))
        return None, size, text[: match.start()] + " " + text[match.end() :]
    return None, None, text


def _find_gpu_in_text(text: str, cat: Catalog) -> tuple[str | None, int | None]:
    """The GPU type named in the text, and a count written right before it ("8张H100", "8x A100")."""
    lowered = text.lower()
    best: tuple[int, str, re.Match] | None = None
    for gpu in cat.gpus.values():
        for name in [gpu.id, *gpu.aliases]:
            pattern = r"(?<![a-z0-9])" + re.escape(name.lower()).replace(r"\ ", r"[\s\-_]*") + r"(?![0-9])"
            match = re.search(pattern, lowered)
            if match and (best is None or len(name) > best[0]):
                best = (len(name), gpu.id, match)
    if best is None:
        return None, None
    before = re.search(
        r"(\d+|[一二两三四五六七八九十]+)\s*(?:x|×|\*|张|块|台|个)?\s*(?:nvidia\s*)?$", lowered[: best[2].start()]
    )
    count = int(values.number(before.group(1))) if before else None
    return best[1], count


def parse(text: str, cat: Catalog | None = None) -> Parsed:
    """Read a question into a Request; never raises on user text."""
    cat = cat or catalog()
    raw = normalize_text(strip_slack_markup(text or ""))[:4000]
    parsed = Parsed(request=Request(), lang=detect_lang(raw))
    fields: dict = {}
    kv_fields: dict = {}
    for key, value in _KEY_VALUE.findall(raw):
        apply_key_value(key, value, cat, kv_fields, parsed.errors, parsed)
    free = _KEY_VALUE.sub(" ", raw)

    model_id, size, free = _find_model_in_text(free, cat)
    if model_id:
        fields["model"] = model_id
    elif size is not None:
        fields["params_b"] = size
    method = find_method(free)
    if method:
        fields["method"] = method
    gpu_id, count_before = _find_gpu_in_text(free, cat)
    if gpu_id:
        fields["gpu"] = gpu_id
    if count_before:
        fields["gpus"] = count_before
    objective = _first(OBJECTIVE_WORDS, free)
    if objective:
        fields["objective"] = objective
    if _USERS_CONTEXT.search(free):  # "users in South-East Asia", "面向东南亚用户"
        users = _first(USER_WORDS, free)
        if users:
            fields["users"] = users
    elif (region := _first(REGION_WORDS, free)) is not None:
        fields["region"] = region
    nodes_of = _NODES_OF.search(free)
    if nodes_of:
        nodes, per_node = values.number(nodes_of.group(1)), values.number(nodes_of.group(2))
        fields["nodes"], fields["gpus"] = int(nodes), int(nodes * per_node)
    elif not count_before:
        count = _GPU_COUNT.search(free)
        if count:
            fields["gpus"] = int(values.number(count.group(1)))

    if "model" in kv_fields or "params_b" in kv_fields:
        fields.pop("model", None)
        fields.pop("params_b", None)
    fields.update(kv_fields)
    try:
        parsed.request = Request(**fields)
    except ValueError as exc:  # a value pydantic refuses (e.g. an enum): name it
        parsed.errors.append(Note(code="bad_value", params={"key": "request", "value": str(exc)[:200], "example": ""}))
    return parsed


def suggest_models(value: str, cat: Catalog, n: int = 3) -> list[str]:
    names = {normalize_name(m.id): m.id for m in cat.models.values()}
    close = difflib.get_close_matches(normalize_name(value), list(names), n=n, cutoff=0.5)
    return [names[c] for c in close]


def suggest_gpus(value: str, cat: Catalog, n: int = 3) -> list[str]:
    keys = list(cat.gpu_index)
    close = difflib.get_close_matches(normalize_name(value), keys, n=n * 3, cutoff=0.5)
    seen: list[str] = []
    for key in close:
        gpu_id = cat.gpu_index[key]
        if gpu_id not in seen:
            seen.append(gpu_id)
    return seen[:n]
