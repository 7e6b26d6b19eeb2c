"""Read what people paste: command lines, config files, nvidia-smi tables and error logs.

A Slack question is often a sentence plus a pasted artifact: a torchrun or vLLM command, a
DeepSpeed JSON, a LLaMA-Factory YAML, an nvidia-smi table, a CUDA OOM message, an NCCL
watchdog line. code_spans.py tells artifact text from prose (so the prose reader does not count
"GPU 0" as one GPU); here `pairs` finds the names and values in it and `read` turns them into
field readings with the words each came from, beside the figures of logs and tables (logs.py).
The names tools use live in knowledge/artifacts.yaml (artifact_words.py); this module is the
mechanism.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpuplan.bot.language import values
from gpuplan.bot.language.artifact_words import FALSE_WORDS, TRUE_WORDS, Setting, Vocabulary, fold, lookup, vocabulary
from gpuplan.bot.language.code_spans import PROSE_WORD, SET_TO_EN, SET_TO_ZH
from gpuplan.bot.language.logs import OomReport, read_checkpoint_save_s, read_nccl_timeout, read_nvidia_smi, read_oom

# --- name/value pairs ----------------------------------------------------------------------------

_VALUE = r"""("[^"\n]*"|'[^'\n]*'|[\w.-]+:\d+(?:,\d+)+|\d+(?:\s*,\s*\d+)+(?![\w.])|[^\s,;)}\]\\'"]+)"""
_PAIR_FLAG = re.compile(r"(?<![\w\-./])(--?[A-Za-z][\w.\-]*)(?:(?:=|[ \t]+)(?!--?[A-Za-z])" + _VALUE + r")?")
_PAIR_ASSIGN = re.compile(r"(?<![\w\-./])([A-Za-z_][\w.]*)\s*=\s*" + _VALUE)
# (a Chinese word may touch the name: "我把MODEL_MAX_Length设置为1024"; \w would count it as the name's)
_PAIR_SET_TO = re.compile(
    r"(?<![A-Za-z0-9_\-./])`?([A-Za-z_][A-Za-z0-9_.]*)`?\s*"
    + r"(?:"
    + SET_TO_ZH
    + r"|(?<=\s)"
    + SET_TO_EN
    + r")\s*`?"
    + _VALUE
)
_PAIR_COLON = re.compile(r"""(?<![\w\-./])["']?([A-Za-z_][\w.\-]*)["']?[ \t]*:[ \t]*(\{|""" + _VALUE + r")")


# a line of one snake_case setting and its value, as logs and argument dumps print them
_PAIR_SPACE = re.compile(r"(?m)^[ \t]*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)[ \t]+([^\s:=]+)[ \t]*$")
# a line of a setting named in words and its one value, as summaries list them ('Sequence length: 128');
# read as the snake_case name (sequence_length); a value followed by more words ('8 (4 per GPU)') is not
_PAIR_WORDS = re.compile(r"(?m)^[ \t]*[-*]?[ \t]*([A-Za-z][a-z]+(?:[ \t][a-z]+){1,2})[ \t]*:[ \t]*([^\s:=]+)[ \t]*$")


@dataclass
class Pair:
    name: str  # folded, dotted with its JSON parents
    value: str | None  # None: a flag written without a value
    words: str  # as written
    start: int = 0  # where it was written


_COMMENT = re.compile(r"(?m)(?:^|(?<=\s))#(?!SBATCH).*$")


def pairs(code: str) -> list[Pair]:
    """Every `--flag value`, `name=value`, `name设置为value`, `name value` and `Name in words: value`
    line, `name: value` and `"name": value` in `code` (comments skipped: a commented-out
    `# --quantization_bit 4` says what was NOT used)."""
    code = _COMMENT.sub(lambda m: " " * len(m.group(0)), code)
    found: list[tuple[int, Pair]] = []
    for pattern, unquoted in ((_PAIR_FLAG, True), (_PAIR_ASSIGN, True), (_PAIR_SET_TO, True), (_PAIR_SPACE, False)):
        for match in pattern.finditer(code):
            value = _unquote(match.group(2)) if unquoted else match.group(2)
            start = match.start(1)
            found.append((start, Pair(fold(match.group(1)), value, match.group(0).strip(), start)))
    for match in _PAIR_WORDS.finditer(code):  # "Sequence length: 128" is sequence_length
        start = match.start(1)
        name = re.sub(r"[ \t]+", "_", match.group(1))
        found.append((start, Pair(fold(name), match.group(2), match.group(0).strip(), start)))
    found += _colon_pairs(code)
    found.sort(key=lambda item: item[0])
    return [pair for _, pair in found]


def _colon_pairs(code: str) -> list[tuple[int, Pair]]:
    """`name: value` pairs, with the names of the JSON objects they sit in (`offload_optimizer.device`)."""
    opened: list[str | None] = []  # the key of each open brace (None for an anonymous one)
    events = sorted(
        [(m.start(), "pair", m) for m in _PAIR_COLON.finditer(code)]
        + [(m.start(), m.group(0), m) for m in re.finditer(r"[{}]", code)]
    )
    out: list[tuple[int, Pair]] = []
    pending: str | None = None
    for position, kind, match in events:
        if kind == "{":
            opened.append(pending)
            pending = None
        elif kind == "}":
            if opened:
                opened.pop()
        else:
            name = fold(match.group(1))
            if match.group(2) == "{":
                pending = name
                continue
            parents = [key for key in opened if key]
            qualified = ".".join([*parents, name])
            out.append((position, Pair(qualified, _unquote(match.group(2)), match.group(0).strip(), position)))
    return out


def _unquote(value: str | None) -> str | None:
    if value is None:
        return None
    return value.strip().strip("\"'`").strip()


# --- readings ------------------------------------------------------------------------------------


@dataclass
class Reading:
    field: str
    value: Any
    words: str


@dataclass
class Artifacts:
    readings: list[Reading] = field(default_factory=list)
    launchers: list[str] = field(default_factory=list)
    oom: OomReport | None = None
    nccl_timeout_s: float | None = None
    checkpoint_save_s: float | None = None  # how long the user says a checkpoint save takes
    data_parallel: tuple[str, str | None] | None = None  # a data-parallel-only stack pasted, and its sharding
    smi_gpus: list[tuple[str, float | None]] = field(default_factory=list)  # (name, memory GiB) per row
    _first: dict[str, Reading] | None = field(default=None, repr=False)

    def first(self, name: str) -> Reading | None:
        """The first reading of a field (an index, built once the readings are complete)."""
        if self._first is None:
            self._first = {}
            for reading in self.readings:
                self._first.setdefault(reading.field, reading)
        return self._first.get(name)


def read_value(setting: Setting, raw: str | None) -> Any:
    """The value of one pair for its setting, or None when it does not read."""
    if setting.values:
        key = "true" if raw is None else raw.lower()
        if setting.read == "bool" or key in setting.values:
            return setting.values.get(key)
        return _values_by_word(setting, key)
    reader = _READERS.get(setting.read)
    try:
        return reader(raw) if reader else None
    except (ValueError, OverflowError, TypeError):
        return None


def _values_by_word(setting: Setting, key: str) -> str | None:
    """A file name or compound value that contains one of the listed words (`ds_z3_offload.json`)."""
    words = re.split(r"[^a-z0-9_.]+|[._](?=json|yaml|yml)", key.replace("/", " "))
    for word in words:
        for part in [word, *word.split("_")]:
            if part in setting.values:
                return setting.values[part]
    for name, value in setting.values.items():
        if len(name) >= 3 and name in key:
            return value
    return None


def _int(raw: str | None) -> int | None:
    if raw is None:
        return None
    match = re.fullmatch(r"(?:[a-z]+:)?(\d{1,15})", raw.strip().lower())
    return int(match.group(1)) if match else None


def _bool(raw: str | None) -> bool | None:
    if raw is None:
        return True
    lowered = raw.lower()
    return True if lowered in TRUE_WORDS else False if lowered in FALSE_WORDS else None


def _length(raw: str | None) -> int | None:
    if raw is None:
        return None
    value = values.length(raw.replace("_", ""))
    return value if 16 <= value <= 100_000_000 else None


def _count_list(raw: str | None) -> int | None:
    if raw is None or not re.fullmatch(r"\d+(\s*,\s*\d+)*,?", raw.strip()):
        return None
    return len([d for d in raw.split(",") if d.strip()])


def _include(raw: str | None) -> int | None:
    match = re.fullmatch(r"[\w.-]+:(\d+(?:,\d+)*)", raw or "")
    return len(match.group(1).split(",")) if match else None


def _number(raw: str | None) -> float | None:
    return values.number(raw.replace("_", "")) if raw else None


_READERS = {
    "int": _int,
    "bool": _bool,
    "length": _length,
    "count_list": _count_list,
    "include": _include,
    "number": _number,
    "text": lambda raw: raw or None,
}


def read(text: str, code: str) -> Artifacts:
    """Everything the artifacts in `code` say; `text` is the whole message (for `requires`)."""
    voc = vocabulary()
    found = Artifacts()
    for pair in pairs(code) if code.strip() else ():
        setting = lookup(pair.name, voc)
        if setting is None or (setting.requires and not setting.requires.search(text)):
            continue
        if voc.negation.search(text[max(0, pair.start - 16) : pair.start]):
            continue
        value = read_value(setting, pair.value)
        if (
            value is None
            and setting.read == "bool"
            and pair.words.startswith("-")
            and PROSE_WORD.fullmatch(pair.value or "")
        ):
            value = read_value(setting, None)  # "add --use_lora parameter": a switch, then prose (not "$VAR")
        if value is not None:
            found.readings.append(Reading(setting.field, value, pair.words))
    if code.strip():
        lines = [line for line in code.split("\n") if line.strip()]
        found.launchers = [tool for tool, pattern in voc.launchers if any(pattern.match(line) for line in lines)]
    found.smi_gpus = read_nvidia_smi(text)  # "GPU 0: <name>" lines read as prose too
    found.oom = read_oom(text) if "allocate" in text or "total_gpu_memory" in text else None
    found.nccl_timeout_s = read_nccl_timeout(text)
    found.checkpoint_save_s = read_checkpoint_save_s(text, voc)
    found.data_parallel = read_data_parallel_stack(code, voc) if code.strip() else None
    return found


def read_data_parallel_stack(code: str, voc: Vocabulary) -> tuple[str, str | None] | None:
    """(the stack, the engine sharding it) when the pasted code launches or configures a training
    stack that runs data parallel only (the HF Trainer under DeepSpeed, LLaMA-Factory, axolotl, ...),
    and nothing in it can split the model (Megatron, NeMo, a server, a parallel size)."""
    if voc.model_parallel.search(code):
        return None
    stack = next(
        (name for name, signs, also in voc.stacks if signs.search(code) and (not also or also.search(code))), None
    )
    if stack is None:
        return None
    return stack, next((engine for engine, words in voc.sharding if words.search(code)), None)
