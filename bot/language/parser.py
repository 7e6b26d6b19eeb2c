"""Read a question into a Request: "How many H100s to fully fine-tune Llama 3 70B with 8k context
in two weeks?", "我们想用QLoRA微调一个33B的模型，单卡48G够吗？", "model=qwen2.5-72b method=lora",
or a sentence with a pasted launcher line, config, nvidia-smi table or error log.

Order of reading: Slack markup is stripped and full-width characters folded; pasted artifacts are
told apart from prose (artifacts.py); gpuplan's own `key=value` settings are taken from the
prose (keys.py: they always win); the prose is read one kind of thing at a time
(extract.py); the artifacts fill what the prose left open; the question's intent and topics
are judged (intent.py). Reading never fails on real text: only a gpuplan setting with a value
that does not read is an error.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from gpuplan.bot.language import artifact_fields, artifacts, code_spans, intent, keys, options, settings_given
from gpuplan.bot.language.extract import Reader
from gpuplan.bot.language.methods import precision_for
from gpuplan.bot.language.values import CJK
from gpuplan.bot.language.vocabulary import vocabulary
from gpuplan.estimator.schema import Note, Request
from gpuplan.knowledge import Catalog, catalog

__all__ = ["CJK", "Parsed", "detect_lang", "normalize_text", "parse", "strip_slack_markup", "vocabulary"]

_SLACK_LINK = re.compile(r"<(https?://[^>|]+)(?:\|([^>]*))?>")
_SLACK_TOKEN = re.compile(r"<[@#!][^>]*>")
_LEADING_TOKENS = re.compile(r"(?m)^[ \t]*(?:<[@#!][^>]*>[ \t]*)+")
_MARKDOWN_ESCAPE = re.compile(r"\\([*_#`~])")
_SPACES = re.compile(r"[^\S\n]+")  # a run of spaces or tabs, not a line break
# fine-tuning sets are far smaller (the defaults use 1e8): of the labelled questions that state 1B
# training tokens or more and name no method (or only a bare "训练"), 4 of 4 are (continued) pretraining
PRETRAINING_TOKENS = 1e9
MAX_TEXT = 20_000  # enough for a question with a long pasted log; the rest is not read
MAX_PROSE = 4_000  # the sentences of a question are short; what is long is pasted (read as artifacts)


@dataclass
class Parsed:
    request: Request
    lang: str
    intent: str = "plan"  # plan | troubleshoot | compare | help | other
    lang_given: bool = False
    notes: list[Note] = field(default_factory=list)  # assumptions and choices made while reading
    errors: list[Note] = field(default_factory=list)  # gpuplan settings with values that do not read
    unknown: list[str] = field(default_factory=list)  # words gpuplan did not understand
    topics: list[str] = field(default_factory=list)  # troubleshooting topics, most likely first
    compare: dict[str, Any] | None = None  # {"kind": "gpu" | "method" | "model" | ..., "options": [...]}
    compare_direct: bool = False  # the options are written side by side ("A100 vs H100")
    read: list[Note] = field(default_factory=list)  # what was taken from pasted artifacts
    hub_id: str | None = None  # a Hugging Face model id the catalog lacks (looked up by the pipeline)
    ask: str = "plan"  # plan | largest (the biggest model that fits) | price (what hardware costs)
    memory_asked: bool = False  # "how much VRAM does it need": the answer adds the least memory per method
    question: str = "plan"  # what it asks to be told first: fit | time | cost | count | memory | plan
    observed: dict[str, Any] = field(default_factory=dict)  # figures the user's logs state (OOM, NCCL)
    users_read: tuple[int, str] | None = None  # "for 32 users": the sequences at once if this is serving
    fixed: set[str] = field(default_factory=set)  # Request fields given as gpuplan settings (never dropped)
    gpus_named: list[str] = field(default_factory=list)  # every GPU type the prose names


def detect_lang(text: str) -> str:
    return "zh" if CJK.search(text) else "en"


def strip_slack_markup(text: str) -> str:
    """Mentions, channel links and special tokens go; a formatted link keeps its label."""
    text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _LEADING_TOKENS.sub("", text)  # "<@U0BOT> gpus=8 ..." is not an indented line
    text = _SLACK_TOKEN.sub(" ", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def normalize_text(text: str) -> str:
    """NFKC folds full-width letters, digits and punctuation ("８卡", "＝") to ASCII."""
    return unicodedata.normalize("NFKC", text)


def _unescape_markdown(text: str) -> str:
    """GitHub and Slack escapes people paste along, read as what they escape: `3\\*8\\*A100`, `max\\_len=8k`."""
    return _MARKDOWN_ESCAPE.sub(r"\1", text) if "\\" in text else text  # sub's template calls Python each call


def parse(text: str, cat: Catalog | None = None, previous: Request | None = None) -> Parsed:
    """Read a question into a Request and judge what it asks for; never raises on user text.

    `previous` is the request a follow-up changes: words whose meaning depends on the method
    ("int4") are read against it when the follow-up names no method.
    """
    parsed, evidence = read(text, cat, previous)
    if parsed.intent != "help":
        verdict = intent.judge(evidence, parsed)
        parsed.intent, parsed.topics, parsed.ask = verdict.intent, verdict.topics, verdict.ask
        parsed.memory_asked = intent.hits("memory_ask", evidence.prose, most=1) > 0
        parsed.question = intent.question_kind(evidence.prose)
        if previous is None:  # a follow-up keeps the method of the request it changes
            _serving_by_default(parsed, evidence.raw, evidence.prose)  # after the verdict: an assumption
        _users_as_concurrency(parsed)
        full_load_asked(parsed)
    return parsed


def full_load_asked(parsed: Parsed) -> None:
    """ "How many users can 8 A100 serve": a serving question asking the sequences at once, giving
    none, is planned at the most the GPUs hold (Request.full_load); a thread's follow-up asks it of
    the request it changes (conversation.follow_up)."""
    request = parsed.request
    asked = parsed.question in ("concurrency", "batch")  # a served batch is its sequences at once
    if asked and request.method == "infer" and request.micro_batch is None:
        request.full_load = True


def _users_as_concurrency(parsed: Parsed) -> None:
    """The users a service is for ("for 32 users", "200人使用") once the question is serving (a team
    of 20 that fine-tunes is no concurrency) and nothing else set the sequences at once: all of them."""
    request = parsed.request
    if parsed.users_read is None or request.method != "infer" or request.micro_batch is not None:
        return
    users, words = parsed.users_read
    request.micro_batch = users
    parsed.notes.append(Note(code="users_as_concurrency", params={"users": users, "words": words}))


def read(text: str, cat: Catalog | None = None, previous: Request | None = None) -> tuple[Parsed, intent.Evidence]:
    """Everything but the intent: the request, notes, what was pasted (the classifier's inputs)."""
    cat = cat or catalog()
    raw = _unescape_markdown(normalize_text(strip_slack_markup(text or ""))[:MAX_TEXT])
    parsed = Parsed(request=Request(), lang=detect_lang(raw))
    tokens = keys.find(raw)
    unset = code_spans.blank(raw, [t.span() for t in tokens])
    prose, code = code_spans.split(unset)
    settings, settings_keys = settings_given.read_settings(tokens, cat, parsed)
    settings_given.hint_misspelled_keys(unset, parsed)
    found = artifacts.read(raw, code)
    evidence = intent.Evidence(raw=raw, prose=prose, code=code, found=found)
    if not code.strip() and not settings_keys and vocabulary().help.search(prose.lower()):
        parsed.intent = "help"
        return parsed, evidence
    # runs of blanks (where code was) collapsed: regexes that start with optional words and
    # spaces would otherwise rescan every long blank run at every position
    prose = _X_BEFORE_MEMORY.sub(" ", _blank_list_markers(_SPACES.sub(" ", prose)))
    reader = _read_prose(prose[:MAX_PROSE], code, cat, parsed)
    weak = any(n.code == "finetune_read_as_full" for n in reader.notes)  # a bare "fine-tune" / "训练"
    said = None if weak else reader.fields.get("method")
    method = settings.get("method") or said or (previous.method if previous else None)
    text_fields = _precision_field(reader, method, parsed)
    pasted = None if reader.method_weak and not settings.get("method") else method  # "run": the paste's own
    from_artifacts = _artifact_fields(found, reader, cat, parsed, pasted)
    _merge(parsed, text_fields, from_artifacts, settings, settings_keys, reader)
    _observed(found, parsed)
    return parsed, evidence


_LIST_MARKER = re.compile(r"(?m)^[ \t]*(\d{1,2})[.、)）](?=\S)")


# an x glued between a card's name and its memory ("8x4090x24GiB", "A100x80GB"): a separator, read as a space
# (after a name's number, "a100", "l40", "t4", "4090"; not after a count: "8x24GB" is eight 24 GB cards)
_X_BEFORE_MEMORY = re.compile(
    r"(?:(?<=[a-z]\d{3})|(?<=[a-z]\d{2})|(?<=[a-z]\d)|(?<=\d{4}))[x×](?=\d{1,3}(?:\.\d)?\s*(?:g|gb|gib)(?![a-wyz]))",
    re.I,
)


def _blank_list_markers(prose: str) -> str:
    """The numbers of a numbered list blanked ("1.开源的代码...\n2.70B的模型要..." asks about a 70B model,
    not a 2.7B one): line-start markers numbered one after another (1., 2., 3.), of which at least one
    is followed by a word, not a digit. A marker followed by one digit and a size's letter stays as
    written ("1.5B的模型用LoRA微调\n2.需要多少显存": 1.5B), and so does a list of sizes ("1.5B: ...\n2.7B: ...")."""
    markers = list(_LIST_MARKER.finditer(prose))
    numbers = [int(m.group(1)) for m in markers]
    in_list = [m for i, m in enumerate(markers) if numbers[i] - 1 in numbers[:i] or numbers[i] + 1 in numbers[i + 1 :]]
    if len(in_list) < 2 or all(prose[m.end()].isdigit() for m in in_list):
        return prose
    for m in in_list:
        if not _DECIMAL_SIZE.match(prose, m.end()):
            prose = prose[: m.start(1)] + " " * (m.end() - m.start(1)) + prose[m.end() :]
    return prose


_DECIMAL_SIZE = re.compile(r"\d(?:b|m|k|t)(?![a-z])", re.I)  # "1." + "5B": a size with one decimal, no list number


# --- the prose --------------------------------------------------------------------------------------


def _read_prose(prose: str, code: str, cat: Catalog, parsed: Parsed) -> Reader:
    """Run the extractors over the prose in order; names (not counts) are also looked for in code."""
    reader = Reader(prose, cat)
    reader.read()  # the extractors in Reader.STEPS order
    gpus, models, sizes = reader.gpu_ids, reader.model_ids, reader.size_readings
    parsed.gpus_named = list(gpus)
    comparing = bool(reader.voc.compare.search(prose.lower()))  # vocabularies are lower case
    options.compare_or_set_aside(parsed, reader, gpus, models, sizes, comparing)
    options.forget_servers_set_aside(parsed, reader)
    reader.method(comparing)
    parsed.users_read = reader.users_read
    reader.context()
    hub_id = reader.hub_id(prose) if not models else None
    if hub_id is None and not models:
        hub_id = reader.hub_id(_backticked_ids(code))
        _sizes_of_quoted_id(reader, hub_id, cat)
    if hub_id is None:
        reader.misspelt_model()  # not inside a Hugging Face id: the id is looked up whole
    reader.leftovers()
    reader.settle_weak()
    reader.code_names = reader.names_in(code) if code.strip() else {}
    if hub_id and not parsed.hub_id:
        parsed.hub_id = hub_id
        inside = hub_id.lower()  # "qwen3-next" of Qwen/Qwen3-Next-80B-A3B is not a model of its own
        reader.notes = [n for n in reader.notes if n.code != "unknown_model_name" or n.params["value"] not in inside]
    parsed.notes += reader.notes
    parsed.notes += [n for i, n in enumerate(reader.set_aside) if n not in reader.set_aside[:i]]  # said once
    if reader.contradiction:
        parsed.notes.append(reader.contradiction)
    parsed.unknown += reader.unknown
    return reader


_BACKTICKED = re.compile(r"(?<!`)`([^`\s]+)`(?!`)")  # one word in backticks: "using the `EleutherAI/pythia-12b`"
_FILE_LIKE = re.compile(r"^[./~]|\.(?:ya?ml|json|py|sh|txt|md|bin|safetensors|gguf|pt|pth|ckpt)$", re.I)


def _backticked_ids(code: str) -> str:
    """The words a sentence quotes in backticks that are a whole `org/name` (a model's id people quote
    so), as prose would hold them; paths (`examples/train_lora/llama3_lora_sft.yaml`), branches of more
    than one slash and the pasted commands and blocks around them are left out."""
    words = [m.group(1) for m in _BACKTICKED.finditer(code)]
    return " ".join(w for w in words if w.count("/") == 1 and not _FILE_LIKE.search(w))


def _sizes_of_quoted_id(reader: Reader, hub_id: str | None, cat: Catalog) -> None:
    """The sizes a backticked id's name carries ("EleutherAI/pythia-12b", "org/X-30B-A3B"), read as the
    prose's would be: what is planned when its config.json cannot be looked up."""
    if not hub_id or "params_b" in reader.fields:
        return
    name = Reader(hub_id.split("/")[-1].lower(), cat)
    name.read_sizes()
    sizes = name.size_readings
    if sizes:
        reader.fields["params_b"], reader.words["params_b"] = sizes[0][0], hub_id
    if "active_params_b" in name.fields and "active_params_b" not in reader.fields:
        reader.fields["active_params_b"], reader.words["active_params_b"] = name.fields["active_params_b"], hub_id


def _pretraining_sized(fields: dict[str, Any], parsed: Parsed, settings: dict[str, Any]) -> bool:
    """Billions of training tokens and no method, or only a bare "训练" read as a full fine-tune (a fine-tune
    word, "微调", "fine-tune", "sft", or method= keeps its method)."""
    bare = [n for n in parsed.notes if n.code == "finetune_read_as_full" and n.params.get("words") == "训练"]
    unnamed = not fields.get("method") or (bare and "method" not in settings)
    return bool(unnamed and (fields.get("train_tokens") or 0) >= PRETRAINING_TOKENS)


def _precision_field(reader: Reader, method: str | None, parsed: Parsed) -> dict[str, Any]:
    """The prose's fields, with a precision word read in the method's terms."""
    fields = dict(reader.fields)
    word = fields.pop("precision_word", None)
    if word:
        precision = precision_for(word, method)
        if precision:
            fields["precision"] = precision
        elif (
            word == "int4"
            and method == "lora"
            and fields.get("method") == "lora"
            and "int8" not in reader.scan.original
        ):
            fields["method"] = "qlora"  # "int4 下 ... lora 微调": LoRA on a 4-bit base is QLoRA
            parsed.notes.append(Note(code="int4_lora_is_qlora", params={"value": word}))
        elif word in ("int4", "int8") and method not in ("qlora", "infer"):
            parsed.notes.append(Note(code="precision_ignored", params={"value": word}))
    return fields


# --- artifacts ----------------------------------------------------------------------------------------


def _artifact_fields(
    found: artifacts.Artifacts, reader: Reader, cat: Catalog, parsed: Parsed, method: str | None
) -> dict[str, Any]:
    """Request fields from what was pasted, each with a `read` note naming the words."""

    fields, read = artifact_fields.to_request(found, reader, cat, method)
    parsed.read += read
    if "hub_id" in fields:
        pasted_id = fields.pop("hub_id")  # never a Request field, also when the prose named an id
        parsed.hub_id = parsed.hub_id or pasted_id
    return fields


def _merge(
    parsed: Parsed,
    text_fields: dict[str, Any],
    from_artifacts: dict[str, Any],
    settings: dict[str, Any],
    settings_keys: list[str],
    reader: Reader,
) -> None:
    """Settings win over the prose, the prose over the artifacts; every override is said."""
    fields = dict(from_artifacts)
    weak = reader.method_weak or any(n.code == "finetune_read_as_full" for n in reader.notes)
    if "method" in from_artifacts and weak:  # "训练" < `finetuning_type: lora`, "train a 70B" < train_ppo_ray.py
        text_fields = {k: v for k, v in text_fields.items() if k != "method"}
        parsed.notes[:] = [n for n in parsed.notes if n.code != "finetune_read_as_full"]
    if {"model", "params_b"} & set(text_fields):
        fields.pop("model", None)
        fields.pop("params_b", None)
    for name, value in text_fields.items():
        if name in fields and fields[name] != value and name in reader.words:
            parsed.notes.append(Note(code="artifact_set_aside", params={"field": name, "words": reader.words[name]}))
        fields[name] = value
    overridden = {f for name in settings_keys for f in keys.BY_NAME[name].fields}
    for name in list(fields):
        if name in overridden or name in settings:
            if name in settings and fields[name] != settings[name] and name in reader.words:
                parsed.notes.append(Note(code="text_overridden", params={"words": reader.words[name], "key": name}))
            fields.pop(name)
    if {"model", "params_b"} & set(settings) or parsed.hub_id and "model" in settings_keys:
        fields.pop("model", None)
        fields.pop("params_b", None)
    parsed.compare = _settled_compare(parsed.compare, settings)
    fields.update(settings)
    if fields.get("tp", 1) != 1 or fields.get("pp", 1) != 1:  # the user's own parallel sizes over the paste's stack
        parsed.read[:] = [n for n in parsed.read if n.code != "data_parallel_stack"]
    if _pretraining_sized(fields, parsed, settings):
        fields["method"] = "pretrain"  # "500B tokens", "8B tokens": only pretraining reads that much
        parsed.notes[:] = [n for n in parsed.notes if n.code != "finetune_read_as_full"]
        parsed.notes.append(Note(code="tokens_read_as_pretraining", params={"tokens": fields["train_tokens"]}))
    _prompt_within_context(fields, settings, reader, parsed)
    parsed.fixed = set(settings)
    if {"model", "params_b"} & set(settings) or "model" in text_fields:
        parsed.hub_id = None  # a setting or a catalog model named in the text says which model it is
    try:
        parsed.request = Request(**fields)
    except ValueError as exc:  # a value pydantic refuses: name it
        parsed.errors.append(Note(code="bad_value", params={"key": "request", "value": str(exc)[:200], "example": ""}))


def _prompt_within_context(fields: dict, settings: dict, reader: Reader, parsed: Parsed) -> None:
    """A prompt read from the prose no shorter than the context read beside it ("input length 50000"
    with a pasted --max_model_len 10240): the context stands and the prompt is set aside, said; a
    prompt= setting is the user's own and left for the estimate to refuse."""
    prompt, seq = fields.get("prompt_tokens"), fields.get("seq_len")
    if "prompt_tokens" in settings or not (prompt and seq and prompt >= seq):
        return
    fields.pop("prompt_tokens")
    used, other = reader.words.get("seq_len", f"seq={seq}"), reader.words.get("prompt_tokens", str(prompt))
    parsed.notes.append(Note(code="set_aside", params={"field": "prompt_tokens", "used": used, "other": other}))


# a precision word read for training, as serving names it
SERVING_PRECISION = {"bf16-mixed": "bf16", "fp16-mixed": "fp16", "fp8-mixed": "fp8"}
_ASKS = re.compile(r"[?？]|吗|么|呢|多少|多大|几张|几块|\b(?:how|what|which|can|could|would)\b")


def _serving_by_default(parsed: Parsed, raw: str, prose: str) -> None:
    """A question in words that names no method and no word of training anywhere, pasted text
    included ("How much VRAM does llama-3-8b need?", "R1 的各个版本的显存占用情况有文档不？"), asks
    about running the model: every such labelled question with a method (train/questions/) was
    about serving, also when it reports a symptom a served model shows too (an OOM: "结果报显存不足",
    a model that does not load); a training symptom (FP8 slower, loss, NCCL) keeps the fine-tune
    default, as does a terse request ("70b", "llama 70b gpus=8") or a pasted log alone."""
    if parsed.request.method or "method" in parsed.fixed:
        return
    text, voc = raw.lower(), vocabulary()
    trains = voc.training.search(text) or voc.finetune.search(text) or voc.any_method.search(text)
    training_symptom = any(rule not in voc.serving_symptoms for rule in intent.triggered(text))
    if _ASKS.search(prose.lower()) and not trains and not training_symptom:  # asked in words, not a log's
        precision = SERVING_PRECISION.get(parsed.request.precision, parsed.request.precision)  # "fp8" read for training
        parsed.request = parsed.request.model_copy(update={"method": "infer", "precision": precision})
        parsed.notes.append(Note(code="no_training_word_serving"))


def _settled_compare(compare: dict[str, Any] | None, settings: dict[str, Any]) -> dict[str, Any] | None:
    """A comparison the user settled with a setting (`gpu=h100` after "A100 or H100?") is no longer one."""
    if not compare:
        return None
    settled_by = {"model": ("model", "params_b"), "gpu": ("gpu",), "method": ("method",)}
    return None if any(k in settings for k in settled_by.get(compare["kind"], ())) else compare


def _observed(found: artifacts.Artifacts, parsed: Parsed) -> None:
    """Figures the user's own logs state, for the answer to quote."""
    if found.oom:
        parsed.observed["oom"] = {
            "capacity_gib": found.oom.capacity_gib,
            "requested_gib": found.oom.requested_gib,
            "free_gib": found.oom.free_gib,
            "in_use_gib": found.oom.in_use_gib,
        }
    if found.nccl_timeout_s:
        parsed.observed["nccl_timeout_s"] = found.nccl_timeout_s
    if found.checkpoint_save_s:
        parsed.observed["checkpoint_seen_s"] = found.checkpoint_save_s
    workers = found.first("dataloader_workers")
    if workers is not None:
        parsed.observed["dataloader_workers"] = workers.value
