"""Read a question into a Request: "How many H100s to fully fine-tune Llama 3 70B with 8k context
in two weeks?", "我们想用QLoRA微调一个33B的模型，单卡48G够吗？", "2台8卡A800能全参训练70B吗",
"model=qwen2.5-72b method=lora".

Order of reading: Slack markup is stripped and full-width characters folded; `key=value`
tokens are taken out (they always win); then extractors read the free text one kind at a time,
each blanking what it consumed, so later extractors cannot read the same words twice and what
is left over can be reported as not understood. The vocabulary lives in knowledge/lexicon.yaml.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from bot import values
from estimator.schema import (
    AREAS,
    CKPTS,
    DATA_KINDS,
    METHODS,
    OBJECTIVES,
    OFFLOADS,
    OPTIMIZERS,
    REGIONS,
    Note,
    Request,
)
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
    "objective",
    "fabric",
    "data",
    "users",
    "gpu_mem",
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
    "goal": "objective",
    "network": "fabric",
    "gpu_memory": "gpu_mem",
    "vram": "gpu_mem",
}
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
    "objective": "objective=fastest",
    "fabric": "fabric=ib-hdr200",
    "data": "data=tokens",
    "users": "users=sea",
    "gpu_mem": "gpu_mem=48",
}
# the Request field each key=value key sets (to tell which free-text readings it overrides)
KEY_FIELDS = {
    "model": ("model", "params_b"),
    "seq": ("seq_len",),
    "mbs": ("micro_batch",),
    "gbs": ("global_batch",),
    "tokens": ("train_tokens",),
    "optim": ("optimizer",),
    "lora_r": ("lora_rank",),
    "deadline": ("deadline_days",),
    "budget": ("budget_usd",),
    "gpu_mem": ("gpu_memory_gib",),
}

CJK = re.compile(r"[\u4e00-\u9fff]")
_SLACK_LINK = re.compile(r"<(https?://[^>|]+)(?:\|([^>]*))?>")
_SLACK_TOKEN = re.compile(r"<[@#!][^>]*>")
_KEY_VALUE = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z_]+)\s*=\s*([^\s=,;，；]+)(?=[\s,;，；]|$)")
EN_NUMBERS = {
    "one": 1,
    "a": 1,
    "an": 1,
    "single": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "sixteen": 16,
    "twenty": 20,
    "thirty": 30,
    "sixty": 60,
    "ninety": 90,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
}
NUM = (
    r"(\d+(?:[.,]\d+)*|[一二两三四五六七八九十百]+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"sixteen|twenty|thirty|sixty|ninety|a couple of|a few|a single|a|an)"
)
UNIT = r"(万亿|千亿|百亿|十亿|亿|千万|百万|十万|万|千|trillion|billion|million|thousand|bn|tn|[kmbt])?"
MAX_TEXT = 4000


@dataclass
class Parsed:
    request: Request
    lang: str
    intent: str = "plan"
    lang_given: bool = False
    notes: list[Note] = field(default_factory=list)  # assumptions and overrides made while reading
    errors: list[Note] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # words gpuplan did not understand
    topics: list[str] = field(default_factory=list)  # troubleshooting topics the question raises
    compare: dict[str, Any] | None = None  # {"kind": "gpu" | "method" | "model", "options": [...]}


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


def count_value(text: str) -> float:
    """A small count written as digits, in Chinese or in English words."""
    text = text.strip().lower()
    if text in EN_NUMBERS:
        return float(EN_NUMBERS[text])
    return values.number(text)


# --- the compiled vocabulary ------------------------------------------------------------------


@dataclass(frozen=True)
class Vocabulary:
    methods: list[tuple[str, re.Pattern]]
    finetune: re.Pattern
    explicit_full: re.Pattern
    tables: dict[str, list[tuple[str, re.Pattern]]]
    users_context: re.Pattern
    pure_bf16: re.Pattern
    help: re.Pattern
    compare: re.Pattern
    unsupported: re.Pattern
    family: re.Pattern
    stopwords: frozenset[str]
    model_alias: re.Pattern
    gpu_alias: re.Pattern
    gpu_by_alias: dict[str, str]
    model_by_alias: dict[str, str]


def _any(patterns: list[str]) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def _alias_pattern(name: str) -> str:
    """A catalog name as people type it: any of space, '-', '_' or nothing between its parts."""
    parts = re.split(r"[\s\-_]+", name.lower())
    return r"[\s\-_]*".join(re.escape(p) for p in parts if p)


@functools.cache
def vocabulary() -> Vocabulary:
    cat = catalog()
    lex = cat.lexicon
    tables = {
        name: [(key, _any(patterns)) for key, patterns in getattr(lex, name).items()]
        for name in (
            "objectives",
            "regions",
            "user_areas",
            "data_kinds",
            "precisions",
            "checkpointing",
            "offload",
        )
    }
    # symptom questions: each troubleshooting rule's triggers, in either language
    tables["symptoms"] = [(rule.id, _any(rule.triggers.en + rule.triggers.zh)) for rule in cat.rules]
    gpu_by_alias: dict[str, str] = {}
    for gpu in cat.gpus.values():
        for name in [gpu.id, *gpu.aliases]:
            gpu_by_alias[name.lower()] = gpu.id
    model_by_alias: dict[str, str] = {}
    for spec in cat.models.values():
        for name in [spec.id, spec.name, *spec.aliases]:
            model_by_alias[name.lower()] = spec.id
    # longest names first so "a100 pcie 80g" wins over "a100"
    gpu_names = sorted(gpu_by_alias, key=len, reverse=True)
    model_names = sorted(model_by_alias, key=len, reverse=True)
    gpu_alias = re.compile(
        r"(?<![a-z0-9])(?:nvidia\s*|英伟达\s*|geforce\s*|amd\s*)?("
        + "|".join(_alias_pattern(n) for n in gpu_names)
        + r")(?:\s*s)?(?![a-z0-9])",
        re.IGNORECASE,
    )
    model_alias = re.compile(
        r"(?<![a-z0-9])(?:meta-llama/|meta[\s\-_]*|qwen/|mistralai/|deepseek-ai/|google/|tiiuae/|01-ai/|thudm/)?("
        + "|".join(_alias_pattern(n) for n in model_names)
        + r")(?:[\s\-_]*(?:instruct|chat|hf|base|it|awq|gptq))*(?![a-z0-9.])",
        re.IGNORECASE,
    )
    families = "|".join(re.escape(f) for f in sorted(lex.model_families, key=len, reverse=True))
    return Vocabulary(
        methods=[(m, _any(p)) for m, p in lex.methods.items()],
        finetune=_any(lex.finetune),
        explicit_full=_any(lex.explicit_full),
        tables=tables,
        users_context=_any(lex.users_context),
        pure_bf16=_any(lex.pure_bf16),
        help=_any(lex.help),
        compare=_any(lex.compare),
        unsupported=_any(lex.unsupported_hardware),
        family=re.compile(rf"(?<![a-z0-9])(?:{families})[\w.\-]*", re.IGNORECASE),
        stopwords=frozenset(lex.stopwords_en),
        model_alias=model_alias,
        gpu_alias=gpu_alias,
        gpu_by_alias=gpu_by_alias,
        model_by_alias=model_by_alias,
    )


def _gpu_id(matched: str, voc: Vocabulary) -> str | None:
    key = re.sub(r"[\s\-_]+", " ", matched.lower()).strip()
    if key in voc.gpu_by_alias:
        return voc.gpu_by_alias[key]
    return catalog().find_gpu(matched).id if catalog().find_gpu(matched) else None


def _model_id(matched: str, voc: Vocabulary) -> str | None:
    spec = catalog().find_model(matched)
    return spec.id if spec else None


# --- the text being read ------------------------------------------------------------------------


@functools.cache
def _rx(pattern: str) -> re.Pattern:
    """Each extractor pattern compiled once per process."""
    return re.compile(pattern)


class Scan:
    """The lower-cased question; extractors blank what they consume (positions stay stable)."""

    def __init__(self, text: str):
        self.text = text.lower()

    def search(self, pattern: re.Pattern | str) -> re.Match | None:
        return (_rx(pattern) if isinstance(pattern, str) else pattern).search(self.text)

    def finditer(self, pattern: re.Pattern | str) -> list[re.Match]:
        return list((_rx(pattern) if isinstance(pattern, str) else pattern).finditer(self.text))

    def take(self, match: re.Match, group: int = 0) -> str:
        start, end = match.span(group)
        taken = self.text[start:end]
        self.text = self.text[:start] + " " * (end - start) + self.text[end:]
        return taken.strip()


# --- key=value ------------------------------------------------------------------------------------


def _enum(value: str, allowed: tuple[str, ...], key: str) -> str:
    value = value.lower()
    if value not in allowed:
        raise ValueError(key)
    return value


def _int(text: str) -> int:
    number = values.number(text)
    if number != int(number):
        raise ValueError(text)
    return int(number)


def _method_value(value: str) -> str:
    lowered = value.lower()
    if lowered in METHODS:
        return lowered
    found = [m for m, pattern in vocabulary().methods if pattern.search(lowered)]
    if not found:
        if vocabulary().finetune.search(lowered):
            return "full"
        raise ValueError("method")
    return found[0]


def apply_key_value(key: str, raw: str, cat: Catalog, fields: dict, errors: list[Note], parsed: Parsed) -> str:
    """Set one `key=value` field, or record an error naming the key and the value. Returns the key."""
    key = KEY_ALIASES.get(key.lower(), key.lower())
    try:
        match key:
            case "model":
                _model_value(raw, cat, fields, errors)
            case "gpu":
                gpu = cat.find_gpu(raw)
                if gpu:
                    fields["gpu"] = gpu.id
                else:
                    errors.append(
                        Note(code="unknown_gpu", params={"value": raw, "suggestions": suggest_gpus(raw, cat)})
                    )
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
            case "gpu_mem":
                fields["gpu_memory_gib"] = values.number(re.sub(r"(?i)gi?b?$", "", raw))
            case "lang":
                parsed.lang = _enum(raw, ("en", "zh"), key)
                parsed.lang_given = True
            case _:
                errors.append(Note(code="unknown_key", params={"key": key, "keys": list(KEYS)}))
    except (ValueError, OverflowError):
        errors.append(Note(code="bad_value", params={"key": key, "value": raw, "example": EXAMPLES.get(key, "")}))
    return key


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


# --- free-text extractors -------------------------------------------------------------------------


def _first_in(table: list[tuple[str, re.Pattern]], scan: Scan, consume: bool = True) -> tuple[str, str] | None:
    for key, pattern in table:
        match = scan.search(pattern)
        if match:
            return key, (scan.take(match) if consume else match.group(0))
    return None


# Cheap tests that let an extractor skip a question with none of its words (speed only).
TRIGGERS = {
    "budget": re.compile(r"[$¥￥]|美元|美金|usd|dollar|buck|人民币|rmb|cny|元|块|预算|budget|spend|cost"),
    "schedule": re.compile(r"day|week|wk|month|hour|hr|天|周|星期|月|小时|期限|工期|时限|deadline|日"),
    "batches": re.compile(r"batch|(?<![a-z])bs|批|mbs|gbs"),
    "dataset": re.compile(
        r"sample|example|instruction|conversation|dialog|pair|prompt|row|record|ticket|document|doc|question|article|条|样本|组|数据|"
        r"tb|gb|\d\s*[tg](?![a-z])|epoch|轮|遍|corpus|语料|data"
    ),
    "gpu_memory": re.compile(r"\d\s*(?:g|gb|gib)(?![a-z])|显存|vram|memory"),
    "training_options": re.compile(
        r"fp|bf|int|bit|awq|gptq|gguf|q4|precision|精度|比特|zero|fsdp|ddp|deepspeed|"
        r"megatron|nemo|accelerate|torchtune|factory|axolotl|unsloth|vllm|sglang|trt|"
        r"tensorrt|tgi|ollama|lmdeploy|checkpoint|recomput|重计算|重算|检查点|offload|卸载|"
        r"下放|(?<![a-z])tp|(?<![a-z])pp|parallel|并行|adam|sgd|adafactor|rank|秩|"
        r"transformer engine|half|float"
    ),
}


class Reader:
    """Runs the extractors over one question and collects fields, notes and errors."""

    def __init__(self, text: str, cat: Catalog, parsed: Parsed):
        self.scan = Scan(text)
        self.cat = cat
        self.voc = vocabulary()
        self.parsed = parsed
        self.fields: dict[str, Any] = {}
        self.words: dict[str, str] = {}  # field -> the words it was read from (to name them later)

    def set(self, name: str, value: Any, words: str) -> None:
        if name in self.fields and self.fields[name] != value:
            self.conflict(name, self.words[name], words)
            return
        self.fields[name] = value
        self.words[name] = words

    def conflict(self, name: str, first: str, second: str) -> None:
        self.parsed.errors.append(Note(code="conflict", params={"field": name, "first": first, "second": second}))

    # each extractor reads one kind of thing and blanks it -----------------------------------
    def unsupported_hardware(self) -> None:
        for match in self.scan.finditer(self.voc.unsupported):
            words = self.scan.take(match)
            self.parsed.notes.append(Note(code="unsupported_hardware", params={"value": words}))
            self.parsed.unknown.append(words)

    def gpus(self) -> list[str]:
        """GPU types named, with a count written right before one ("8张H100", "8x A100", "8 H100s")."""
        found: list[str] = []
        for match in self.scan.finditer(self.voc.gpu_alias):
            gpu_id = _gpu_id(match.group(1), self.voc)
            if gpu_id is None:
                continue
            head = self.scan.text[: match.start()]
            nodes_of = _rx(
                NUM
                + r"\s*(台|机器?|nodes?|servers?|machines?|boxes)\s*(?:of|x|×|with)?\s*"
                + NUM
                + r"\s*(?:x|×|张|块)?\s*(?:nvidia\s*|英伟达\s*)?$"
            ).search(head)
            before = _rx(NUM + r"\s*(?:x|×|\*|张|块|台|个)?\s*(?:nvidia\s*|英伟达\s*)?$").search(head)
            words = self.scan.take(match)
            if nodes_of:  # "two nodes of 8 H100", "2台8卡H100" written before the GPU name
                nodes, count = count_value(nodes_of.group(1)), count_value(nodes_of.group(3))
                total = count if nodes_of.group(2).startswith("机") else nodes * count
                self.set("nodes", int(nodes), nodes_of.group(0).strip() + " " + words)
                self.set("gpus", int(total), nodes_of.group(0).strip() + " " + words)
                self.scan.text = (
                    self.scan.text[: nodes_of.start()]
                    + " " * (nodes_of.end() - nodes_of.start())
                    + self.scan.text[nodes_of.end() :]
                )
            elif before and before.group(1) not in ("a", "an"):
                count = count_value(before.group(1))
                if count and count == int(count) and count <= 100_000:
                    self.set("gpus", int(count), before.group(0).strip() + " " + words)
                    self.scan.text = (
                        self.scan.text[: before.start()]
                        + " " * (before.end() - before.start())
                        + self.scan.text[before.end() :]
                    )
            if gpu_id not in found:
                found.append(gpu_id)
        return found

    def models(self) -> list[str]:
        found: list[str] = []
        for match in self.scan.finditer(self.voc.model_alias):
            model_id = _model_id(match.group(1), self.voc)
            if model_id and model_id not in found:
                found.append(model_id)
                self.words.setdefault("model", self.scan.take(match))
            elif model_id:
                self.scan.take(match)
        return found

    def unknown_models(self, sizes: list[tuple[float, str]]) -> None:
        """Family names that are not in the catalog: suggestions, and their size when written."""
        for match in self.scan.finditer(self.voc.family):
            name = match.group(0).strip("-_. ")
            if len(name) < 3 or (name in ("gpt", "glm", "opt") and not re.search(r"\d", name)):
                continue  # a bare family word names no model
            size = re.search(r"(\d+(?:\.\d+)?)\s*b(?![a-z])", name)
            self.scan.take(match)
            self.parsed.notes.append(
                Note(
                    code="unknown_model_name",
                    params={
                        "value": name,
                        "suggestions": suggest_models(name, self.cat),
                        "size": float(size.group(1)) if size else None,
                    },
                )
            )
            if size:
                sizes.append((float(size.group(1)), name))

    def tokens(self) -> None:
        pattern = NUM + r"\s*" + UNIT + r"\s*(?:training\s+)?(?:tokens?|个\s*token|词元|token)"
        for match in self.scan.finditer(pattern):
            try:
                value = values.quantity(match.group(1) + (match.group(2) or ""))
            except ValueError:
                continue
            self.set("train_tokens", value, self.scan.take(match))

    def dataset(self) -> None:
        if not TRIGGERS["dataset"].search(self.scan.text):
            return
        samples = (
            NUM + r"\s*" + UNIT + r"\s*(?:training\s+|support\s+|customer\s+|labell?ed\s+)?(?:samples?|examples?|"
            r"instructions?|conversations?|dialogues?|pairs?|prompts?|rows|records|tickets?|documents?|docs|"
            r"questions?|articles?|条(?:数据|样本|对话|指令|语料|工单)?|个样本|组(?:对话|数据)|对数据)"
        )
        for match in self.scan.finditer(samples):
            try:
                self.set(
                    "samples", int(values.quantity(match.group(1) + (match.group(2) or ""))), self.scan.take(match)
                )
            except ValueError:
                continue
        size = (
            r"(\d+(?:\.\d+)?)\s*(tb|gb|t|g)\s*(?:of\s+)?(?:raw\s+|training\s+)?(?:data|text|corpus|dataset|"
            r"语料|数据|文本|训练数据)"
        )
        before = (
            r"(?:data(?:set)?|corpus|语料|数据集?)\s*(?:is|of|about|around|约|大约|有|共)?\s*"
            r"(\d+(?:\.\d+)?)\s*(tb|gb|t|g)"
        )
        for pattern in (size, before):
            for match in self.scan.finditer(pattern):
                scale = 1000.0 if match.group(2).startswith("t") else 1.0
                self.set("dataset_gb", float(match.group(1)) * scale, self.scan.take(match))
        for match in self.scan.finditer(r"(\d+(?:\.\d+)?|[一二两三四五六七八九十]+)\s*(?:epochs?|轮|个\s*epoch|遍)"):
            self.set("epochs", values.number(match.group(1)), self.scan.take(match))

    def sequence(self) -> None:
        label = (
            r"(?:seq(?:uence)?(?:[ _-]?len(?:gth)?)?|context(?:[ _-]?(?:length|window|len))?|max(?:imum)?[ _]"
            r"(?:seq(?:uence)?[ _])?len(?:gth)?|ctx|上下文(?:长度|窗口)?|序列长度|最大长度|文本长度|长度)"
        )
        value = r"(\d+(?:\.\d+)?\s*[km]?)"
        patterns = (
            label + r"\s*(?:of|=|:|is|为|是|到|达到)?\s*" + value + r"(?:\s*tokens?)?",
            value + r"\s*(?:tokens?\s*)?(?:of\s+)?" + label,
            # a bare "8k" is a context length only when it is one: a power of two (4k, 8k, 32k, 128k)
            r"(?<![\d.$])((?:1|2|4|8|16|32|64|128|256|512)\s*k)(?![a-z0-9])"
            r"(?!\s*(?:samples?|examples?|条|tokens?|steps?|\$|美元|usd))",
        )
        for pattern in patterns:
            for match in self.scan.finditer(pattern):
                try:
                    seq = values.length(match.group(1))
                except ValueError:
                    continue
                if 16 <= seq <= 100_000_000:
                    self.set("seq_len", seq, self.scan.take(match))

    def counts(self) -> None:
        """GPU and node counts: "2台8卡", "2机16卡", "two nodes of 8", "8 GPUs", "8张卡", "单卡"."""
        nodes_of = (
            NUM
            + r"\s*(台|机器?|nodes?|servers?|machines?|boxes)\s*(?:of|x|×|with|each with|,)?\s*"
            + NUM
            + r"\s*(?:张|块)?\s*(?:卡|显卡|gpus?|cards?)(?:\s*each)?"
        )
        for match in self.scan.finditer(nodes_of):
            nodes, count = count_value(match.group(1)), count_value(match.group(3))
            # "2机16卡" is 16 GPUs over 2 machines; "2台8卡", "two nodes of 8", "2 servers x 8 GPUs" are per node
            per_machine_total = match.group(2).startswith("机") and "each" not in match.group(0)
            total = count if per_machine_total else nodes * count
            words = self.scan.take(match)
            self.set("nodes", int(nodes), words)
            self.set("gpus", int(total), words)
        across = NUM + r"\s*(?:gpus?|cards?|卡)\s*(?:across|over|on|in)\s*" + NUM + r"\s*(?:nodes?|servers?|machines?)"
        for match in self.scan.finditer(across):
            words = self.scan.take(match)
            self.set("gpus", int(count_value(match.group(1))), words)
            self.set("nodes", int(count_value(match.group(2))), words)
        single = (
            r"单卡|单张(?:卡|显卡|gpu)|一张(?:卡|显卡)|(?:a |one )?single (?:gpu|card)|one gpu|"
            r"1 gpu(?![a-z])|a gpu(?![a-z])"
        )
        plain = NUM + r"\s*(?:x\s*)?(?:张|块|个)?\s*(?:gpus?|cards?|卡|显卡|graphics cards?)(?![a-z])"
        for match in self.scan.finditer(plain):
            if match.group(1) in ("a", "an"):
                continue
            count = count_value(match.group(1))
            if count == int(count) and 0 <= count <= 100_000:
                self.set("gpus", int(count), self.scan.take(match))
        for match in self.scan.finditer(single):
            self.set("gpus", 1, self.scan.take(match))
        for match in self.scan.finditer(NUM + r"\s*(?:nodes?|台服务器|台机器|台|机器)(?![a-z])"):
            if match.group(1) in ("a", "an"):
                continue
            self.set("nodes", int(count_value(match.group(1))), self.scan.take(match))

    def gpu_memory(self) -> None:
        """A GPU given by its memory only: "单卡48G", "48G显存", "a 24GB card", "80GB GPUs"."""
        if not TRIGGERS["gpu_memory"].search(self.scan.text):
            return
        single = r"(单卡|单张卡|单张显卡|一张卡|一块卡|(?:a|one|single) )"
        patterns = (
            (single + r"\s*(\d+(?:\.\d+)?)\s*(?:g|gb|gib)(?![a-z])(?:\s*(?:的)?(?:显存|vram|gpu|card|卡|显卡))?", True),
            (
                r"()(?:显存|vram|memory of|每卡|每张卡)\s*(?:为|是|有|only)?\s*(\d+(?:\.\d+)?)\s*(?:g|gb|gib)(?![a-z])",
                False,
            ),
            (
                NUM + r"?\s*(?:x|×|\*|张|块)?\s*(\d+(?:\.\d+)?)\s*(?:g|gb|gib)\s*(?:的)?\s*"
                r"(?:显存|vram|gpus?|cards?|卡|显卡|graphics)",
                False,
            ),
        )
        for pattern, one_gpu in patterns:
            for match in self.scan.finditer(pattern):
                gib = float(match.group(2))
                if not 4 <= gib <= 512:
                    continue
                words = self.scan.take(match)
                self.set("gpu_memory_gib", gib, words)
                if one_gpu and match.group(1).strip():
                    self.set("gpus", 1, words)
                elif not one_gpu and match.group(1) and match.group(1).strip() not in ("a", "an"):
                    self.set("gpus", int(count_value(match.group(1))), words)

    def sizes(self) -> list[tuple[float, str]]:
        pattern = (
            r"(?<![a-z0-9_.])(\d+(?:\.\d+)?)\s*(b|bn|billion|亿|万亿|千亿|百亿|t(?=\s*(?:参数|params?|parameters?|model|模型)))"
            r"(?:\s*(?:参数|params?|parameters?|的?模型|models?|llm))?(?![a-z])"
        )
        found = []
        for match in self.scan.finditer(pattern):
            unit = match.group(2)
            if unit == "t":
                unit = "万亿"
            try:
                size = values.model_size_b(match.group(1) + unit)
            except ValueError:
                continue
            found.append((size, self.scan.take(match)))
        return found

    def batches(self) -> None:
        if not TRIGGERS["batches"].search(self.scan.text):
            return
        number = r"(\d+)"
        micro = (
            r"(?:micro[- _]?batch(?:[- _]?size)?|per[- ]device (?:train )?batch(?: size)?|per[- ]gpu batch(?: size)?|"
            r"每卡\s*(?:batch|批量|批大小)|mbs)\s*(?:of|=|:|is|为|是)?\s*" + number
        )
        glob = (
            r"(?:global[- _]?batch(?:[- _]?size)?|total batch(?: size)?|全局\s*(?:batch|批量|批大小)|gbs)"
            r"\s*(?:of|=|:|is|为|是)?\s*" + number
        )
        plain = r"(?:batch[- _]?size|batch|bs|批量大小|批量|批大小)\s*(?:of|=|:|is|为|是)?\s*" + number
        for pattern, name in ((micro, "micro_batch"), (glob, "global_batch")):
            for match in self.scan.finditer(pattern):
                self.set(name, int(match.group(1)), self.scan.take(match))
        for match in self.scan.finditer(plain):
            value = int(match.group(1))
            name = "micro_batch" if value <= 64 else "global_batch"
            words = self.scan.take(match)
            self.set(name, value, words)
            self.parsed.notes.append(Note(code="batch_read_as", params={"words": words, "field": name, "value": value}))

    def schedule(self) -> None:
        if not TRIGGERS["schedule"].search(self.scan.text):
            return
        units = r"(days?|weeks?|wks?|months?|hours?|hrs?|天|周|星期|个星期|个月|月|小时|个小时|日)"
        en = (
            r"(?:in|within|under|less than|no more than|by|for|at most|deadline(?: of| is)?|in about)\s*"
            + NUM
            + r"\s*"
            + units
        )
        zh = NUM + r"\s*" + units + r"\s*(?:内|以内|之内|完成|搞定|训完|跑完|结束)"
        zh_before = r"(?:期限|工期|时限|deadline)\s*(?:是|为|:)?\s*" + NUM + r"\s*" + units
        for pattern in (en, zh, zh_before):
            for match in self.scan.finditer(pattern):
                try:
                    count = count_value(match.group(1))
                    days = values.duration_days(f"{count}{match.group(2)}")
                except ValueError:
                    continue
                self.set("deadline_days", days, self.scan.take(match))
        for match in self.scan.finditer(r"(?:this|next|one|a|一个)\s*(week|month|周|月)(?:\s*内)?"):
            words = self.scan.take(match)
            self.set("deadline_days", 7.0 if match.group(1) in ("week", "周") else 30.0, words)

    def budget(self) -> None:
        if not TRIGGERS["budget"].search(self.scan.text):
            return
        money = (
            r"(?:预算|budget|spend|cost)?\s*(?:of|is|为|是|有|:|about|around|under|up to|约|大约)?\s*"
            r"((?:\$|usd\s*|¥|￥)\s*\d+(?:[.,]\d+)*\s*(?:k|m|万|千)?(?![a-z])"
            r"|\d+(?:[.,]\d+)*\s*(?:k|m|万|千)?\s*(?:美元|美金|usd|dollars?|bucks|人民币|rmb|cny|元|块钱|块))"
        )
        for match in self.scan.finditer(money):
            raw = match.group(1)
            try:
                usd, currency = values.money_usd(raw)
            except ValueError:
                continue
            words = self.scan.take(match)
            self.set("budget_usd", usd, words)
            if currency != "USD":
                self.parsed.notes.append(
                    Note(
                        code="currency_converted", params={"value": raw.strip(), "usd": usd, "rate": values.CNY_PER_USD}
                    )
                )

    def training_options(self) -> None:
        """Precision, ZeRO/FSDP/DeepSpeed, checkpointing, offload, TP/PP, optimizer, LoRA rank."""
        if not TRIGGERS["training_options"].search(self.scan.text):
            return
        scan, voc = self.scan, self.voc
        if scan.search(voc.pure_bf16):
            self.set("precision_word", "bf16-pure", scan.take(scan.search(voc.pure_bf16)))
        found = _first_in(voc.tables["precisions"], scan)
        if found:
            self.set("precision_word", found[0], found[1])
        for match in scan.finditer(r"zero[- _]?(?:stage[- _]?)?([0-3])(?![0-9])|zero[- _]?([0-3])\b"):
            stage = match.group(1) or match.group(2)
            self.set("zero", int(stage), scan.take(match))
        for match in scan.finditer(r"(?<![a-z])fsdp\d?(?![a-z])"):
            self.set("zero", 3, scan.take(match))
        for match in scan.finditer(r"(?<![a-z])ddp(?![a-z])"):
            self.set("zero", 0, scan.take(match))
        for match in scan.finditer(
            r"deepspeed|megatron(?:-lm)?|nemo|accelerate|torchtune|llama-?factory|axolotl|"
            r"unsloth|vllm|sglang|tensorrt-llm|trt-llm|tgi|ollama|lmdeploy"
        ):
            self.parsed.notes.append(Note(code="framework_noted", params={"value": scan.take(match)}))
        found = _first_in(voc.tables["checkpointing"], scan)
        if found:
            self.set("ckpt", found[0], found[1])
        found = _first_in(voc.tables["offload"], scan)
        if found:
            self.set("offload", found[0], found[1])
        for match in scan.finditer(
            r"(?:(?<![a-z])tp|tensor[- ]parallel(?:ism)?(?: size| degree)?(?: of)?|张量并行)\s*[=:]?\s*(\d+)"
        ):
            self.set("tp", int(match.group(1)), scan.take(match))
        for match in scan.finditer(
            r"(?:(?<![a-z])pp|pipeline[- ]parallel(?:ism)?(?: size| degree)?(?: of)?|流水线并行)\s*[=:]?\s*(\d+)"
        ):
            self.set("pp", int(match.group(1)), scan.take(match))
        optimizers = (
            (r"paged[- _]?adamw?[- _]?(?:8[- _]?bit)?", "paged-adamw8bit"),
            (r"8[- _]?bit adamw?|adamw?[- _]?8[- _]?bit", "adamw8bit"),
            (r"adafactor", "adafactor"),
            (r"(?<![a-z])sgd(?![a-z])", "sgd"),
            (r"adamw?(?![a-z0-9])", "adamw"),
        )
        for pattern, name in optimizers:
            match = scan.search(pattern)
            if match:
                self.set("optimizer", name, scan.take(match))
                break
        for match in scan.finditer(
            r"(?:lora[- _]?)?(?:rank|r)\s*[=:]?\s*(\d+)(?![0-9])(?=\s|$|,|，)|秩\s*(?:为|是)?\s*(\d+)"
        ):
            self.set("lora_rank", int(match.group(1) or match.group(2)), scan.take(match))

    def method(self) -> None:
        scan, voc = self.scan, self.voc
        explicit_full = scan.search(voc.explicit_full)
        found: list[tuple[str, str]] = []
        for method, pattern in voc.methods:
            match = scan.search(pattern)
            if match:
                found.append((method, match.group(0)))
        named = {m for m, _ in found}
        adapters = [(m, w) for m, w in found if m in ("lora", "qlora")]
        if explicit_full and adapters and not self.parsed.compare:
            self.parsed.errors.append(
                Note(
                    code="conflict",
                    params={"field": "method", "first": explicit_full.group(0), "second": adapters[0][1]},
                )
            )
        if "qlora" in named and "lora" in named:
            found = [(m, w) for m, w in found if m != "lora"]  # "QLoRA" also reads as "LoRA"
        if found:
            method, words = found[0]
            # an alignment or serving word beats a generic training word ("fine-tune with DPO")
            self.fields["method"] = method
            self.words["method"] = words
            for _, pattern in voc.methods:
                for match in scan.finditer(pattern):
                    scan.take(match)
            self.methods_named = [m for m, _ in found]
        else:
            self.methods_named = []
            match = scan.search(voc.finetune)
            if match:
                self.fields["method"] = "full"
                self.words["method"] = scan.take(match)
                self.parsed.notes.append(Note(code="finetune_read_as_full", params={"words": self.words["method"]}))
        for match in scan.finditer(voc.finetune):
            scan.take(match)

    def context(self) -> None:
        scan, voc = self.scan, self.voc
        found = _first_in(voc.tables["objectives"], scan)
        if found:
            self.set("objective", found[0], found[1])
        found = _first_in(voc.tables["data_kinds"], scan)
        if found:
            self.set("data", found[0], found[1])
        if scan.search(voc.users_context):
            found = _first_in(voc.tables["user_areas"], scan)
            if found:
                self.set("users", found[0], found[1])
        found = _first_in(voc.tables["regions"], scan)
        if found:
            self.set("region", found[0], found[1])

    def leftovers(self) -> None:
        """Technical-looking words nothing read: tokens with digits or model-like names."""
        for word in re.findall(r"[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*|\d+[a-z][a-z0-9.\-]*", self.scan.text):
            word = word.strip(".-")
            if word and word not in self.voc.stopwords and word not in self.parsed.unknown:
                self.parsed.unknown.append(word)


def _precision(word: str, method: str | None) -> str | None:
    """A precision word in the request's terms: serving keeps bf16/fp16/fp8/int8/int4; training
    maps bf16 to bf16-mixed (pure bf16 when said), fp16 to fp16-mixed, fp8 to fp8-mixed."""
    if method == "infer":
        return {"bf16-pure": "bf16"}.get(word, word)
    return {"bf16": "bf16-mixed", "bf16-pure": "bf16", "fp16": "fp16-mixed", "fp8": "fp8-mixed", "fp32": "fp32"}.get(
        word
    )


def parse(text: str, cat: Catalog | None = None, previous: Request | None = None) -> Parsed:
    """Read a question into a Request; never raises on user text.

    `previous` is the request a follow-up changes: words whose meaning depends on the method
    ("int4") are read against it when the follow-up names no method.
    """
    cat = cat or catalog()
    raw = normalize_text(strip_slack_markup(text or ""))[:MAX_TEXT]
    parsed = Parsed(request=Request(), lang=detect_lang(raw))
    kv_fields: dict = {}
    kv_keys: list[str] = []
    for key, value in _KEY_VALUE.findall(raw):
        kv_keys.append(apply_key_value(key, value, cat, kv_fields, parsed.errors, parsed))
    free = _KEY_VALUE.sub(" ", raw)

    reader = Reader(free, cat, parsed)
    voc = reader.voc
    if voc.help.search(free) and not kv_fields:
        parsed.intent = "help"
        return parsed
    topics = [topic for topic, pattern in voc.tables["symptoms"] if pattern.search(reader.scan.text)]
    reader.unsupported_hardware()
    gpus = reader.gpus()
    models = reader.models()
    reader.tokens()
    reader.dataset()
    reader.sequence()
    reader.gpu_memory()
    reader.counts()
    sizes = reader.sizes()
    reader.unknown_models(sizes)
    reader.batches()
    reader.schedule()
    reader.budget()
    reader.training_options()
    comparing = bool(voc.compare.search(free))
    _compare_or_conflict(parsed, reader, gpus, models, sizes, comparing)
    reader.method()
    reader.context()
    reader.leftovers()

    fields = reader.fields
    precision_word = fields.pop("precision_word", None)
    method = kv_fields.get("method", fields.get("method", previous.method if previous else None))
    if precision_word:
        precision = _precision(precision_word, method)
        if precision:
            fields["precision"] = precision
        elif precision_word in ("int4", "int8") and method not in ("qlora", "infer"):
            parsed.notes.append(Note(code="precision_ignored", params={"value": precision_word}))
    _merge(parsed, reader, kv_fields, kv_keys)
    parsed.topics = topics
    if parsed.compare:
        parsed.intent = "compare"
    elif topics:
        parsed.intent = "troubleshoot"
    return parsed


def _compare_or_conflict(
    parsed: Parsed, reader: Reader, gpus: list[str], models: list[str], sizes: list[tuple[float, str]], comparing: bool
) -> None:
    """Two GPU types, models or sizes: a comparison when the question compares, else a conflict."""
    if len(gpus) >= 2 and comparing:
        parsed.compare = {"kind": "gpu", "options": gpus}
    elif len(gpus) >= 2:
        reader.conflict("gpu", gpus[0], gpus[1])
    elif gpus:
        reader.fields["gpu"] = gpus[0]
    options: list[tuple[str, Any]] = [("model", m) for m in models] + [("params_b", s) for s, _ in sizes]
    distinct = list(dict.fromkeys(options))
    if len(distinct) >= 2 and comparing and not parsed.compare:
        parsed.compare = {"kind": "model", "options": [v for _, v in distinct]}
    elif len(distinct) >= 2 and models:
        # a catalog model plus a size: the size may be its own ("llama3 8b") or the data ("on 300B")
        reader.fields["model"] = models[0]
        for size, words in sizes:
            reader.fields.setdefault("train_tokens", size * 1e9)
            reader.parsed.notes.append(Note(code="size_read_as_tokens", params={"words": words}))
    elif len(distinct) >= 2:
        reader.conflict("model", sizes[0][1], sizes[1][1])
    elif distinct:
        name, value = distinct[0]
        reader.fields[name] = value
    if not parsed.compare and comparing:
        named = [m for m, pattern in reader.voc.methods if reader.scan.search(pattern)]
        adapters = [m for m in named if m in ("lora", "qlora")]
        if adapters and reader.scan.search(reader.voc.explicit_full):
            parsed.compare = {"kind": "method", "options": [adapters[0], "full"]}


def _merge(parsed: Parsed, reader: Reader, kv_fields: dict, kv_keys: list[str]) -> None:
    """key=value wins; where it overrides something the text said, say so."""
    fields = reader.fields
    overridden = {f for key in kv_keys for f in KEY_FIELDS.get(key, (key,))}
    for name in list(fields):
        if name in overridden or name in kv_fields:
            if name in kv_fields and fields[name] != kv_fields[name] and name in reader.words:
                parsed.notes.append(Note(code="text_overridden", params={"words": reader.words[name], "key": name}))
            fields.pop(name)
    if "model" in kv_fields or "params_b" in kv_fields:
        fields.pop("model", None)
        fields.pop("params_b", None)
        if parsed.compare and parsed.compare["kind"] == "model":
            parsed.compare = None
    if "gpu" in kv_fields and parsed.compare and parsed.compare["kind"] == "gpu":
        parsed.compare = None
    if "method" in kv_fields and parsed.compare and parsed.compare["kind"] == "method":
        parsed.compare = None
    # a conflict the user settled with key=value is no longer a conflict
    parsed.errors = [
        e
        for e in parsed.errors
        if not (
            e.code == "conflict"
            and e.params["field"] in ("gpus", "nodes", "model", "params_b", "gpu", "method", "seq_len")
            and _settled(e.params["field"], kv_fields)
        )
    ]
    fields.update(kv_fields)
    try:
        parsed.request = Request(**fields)
    except ValueError as exc:  # a value pydantic refuses (e.g. an enum): name it
        parsed.errors.append(Note(code="bad_value", params={"key": "request", "value": str(exc)[:200], "example": ""}))


def _settled(field_name: str, kv_fields: dict) -> bool:
    aliases = {"model": ("model", "params_b"), "params_b": ("model", "params_b")}
    return any(k in kv_fields for k in aliases.get(field_name, (field_name,)))


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
