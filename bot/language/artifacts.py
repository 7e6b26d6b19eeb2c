"""Read what people paste: command lines, config files, nvidia-smi tables and error logs.

A Slack question is often a sentence plus a pasted artifact: a torchrun or vLLM command, a
DeepSpeed JSON, a LLaMA-Factory YAML, an nvidia-smi table, a CUDA OOM message, an NCCL
watchdog line. `find_code` tells artifact text from prose (so the prose reader does not count
"GPU 0" as one GPU), and `read` turns the artifacts into field readings with the words each
came from. The names tools use live in knowledge/artifacts.yaml; this module is the mechanism.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from gpuplan.bot.language import values
from gpuplan.bot.language.compiled import compiled
from gpuplan.bot.language.vocabulary import vocabulary as question_words
from gpuplan.knowledge import read_yaml

# --- the vocabulary -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One entry of knowledge/artifacts.yaml: the names of one thing and how to read its value."""

    field: str
    read: str
    values: dict[str, str]
    requires: re.Pattern | None


@dataclass(frozen=True)
class Vocabulary:
    by_name: dict[str, Setting]  # folded name (maybe dotted) -> setting
    launchers: list[tuple[str, re.Pattern]]
    negation: re.Pattern  # matched against the words right before a setting
    any_launcher: re.Pattern  # every launcher at once: is this line a command?
    checkpoint_save: re.Pattern  # words a checkpoint save's duration follows
    save_not_between: re.Pattern  # words that make the duration something else's (an interval)
    stacks: list[tuple[str, re.Pattern, re.Pattern | None]]  # data-parallel-only stack: its signs, and `with`
    sharding: list[tuple[str, re.Pattern]]  # the engine that shards data-parallel copies: its words
    model_parallel: re.Pattern  # a stack or server that can split the model: no data-parallel-only reading


def fold(name: str) -> str:
    """`--max-model-len` -> `max_model_len`; `"zero_optimization"` -> `zero_optimization`."""
    return name.strip().strip("\"'").lstrip("-").lower().replace("-", "_")


@functools.cache
def vocabulary() -> Vocabulary:
    text = resources.files("gpuplan.knowledge").joinpath("artifacts.yaml").read_text(encoding="utf-8")
    data = read_yaml(text)
    by_name: dict[str, Setting] = {}
    for entry in data["settings"]:
        requires = compiled(entry["requires"]) if entry.get("requires") else None
        values_map = {str(k).lower(): str(v) for k, v in (entry.get("values") or {}).items()}
        setting = Setting(field=entry["field"], read=entry["read"], values=values_map, requires=requires)
        for name in entry["names"]:
            if fold(name) in by_name:
                raise ValueError(f"artifacts.yaml: name {name!r} is listed twice")
            by_name[fold(name)] = setting
    launchers = [(tool, _launcher(patterns)) for tool, patterns in data["launchers"].items()]
    # a determiner may stand between: "without any PEFT", "not using LoRA", "不使用lora"
    negation = compiled(
        r"(?:" + "|".join(data["negations"]) + r")(?:\s*(?:any|the|a|an|using|use|使用|用))?[\s:：,，]*$", re.I
    )
    any_launcher = _launcher([p for patterns in data["launchers"].values() for p in patterns])
    save = data["checkpoint_save"]
    return Vocabulary(
        by_name=by_name,
        launchers=launchers,
        negation=negation,
        any_launcher=any_launcher,
        checkpoint_save=compiled("|".join(save["words"])),
        save_not_between=compiled("|".join(save["not_between"])),
        stacks=[
            (stack, _any_of(words["signs"]), _any_of(words["with"]) if words.get("with") else None)
            for stack, words in data["data_parallel_stacks"].items()
        ],
        sharding=[(engine, _any_of(words)) for engine, words in data["sharding"].items()],
        model_parallel=_any_of(data["model_parallel"]),
    )


def _any_of(patterns: list[str]) -> re.Pattern:
    return compiled("|".join(f"(?:{p})" for p in patterns), re.I | re.M)


def lookup(qualified: str, voc: Vocabulary) -> Setting | None:
    """The longest dotted suffix of `qualified` that the vocabulary knows."""
    parts = qualified.split(".")
    for start in range(len(parts)):
        setting = voc.by_name.get(".".join(parts[start:]))
        if setting:
            return setting
    return None


# --- telling code from prose ---------------------------------------------------------------------

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE = re.compile(r"`[^`\n]+`")
_CODE_LINE = re.compile(
    r"""^\s*(?:
        (?:[$>]|>>>)\s                                  # shell or python prompt
      | \#\s*(?:--?[A-Za-z]|[A-Za-z_]+=|SBATCH)          # a commented-out setting
      | (?:export\s+)?[A-Z_][A-Z0-9_]*=\S               # environment assignment
      | --?[A-Za-z][\w.-]*(?:[=\s]|$)                  # a line that starts with a flag
      | \[?(?:INFO|WARN(?:ING)?|ERROR|DEBUG|CRITICAL|FATAL)\b
      | \[(?:rank\d*|E|W|I)\b | \[E\d | \[W\d
      | Traceback\b | File\s" | [\w.]*(?:Error|Exception|Warning): | GPU\s\d+:\s.*\(UUID
      | \+[-=+] | \|[-=+|\s] | \|\s+\d+\s                 # table borders; "+ text" is a list item
      | [{}\[\]] | "[\w.-]+"\s*:
      | [A-Za-z_][\w.-]*\s*:\s*[^\s:]+\s*,?\s*$        # yaml `key: value`
      | (?:import|from|def|class|return)\s
      | [\w.\[\]'"]+\s+=\s+\S.*$                        # an assignment (`x = y`)
      | (?:[\w.]+=\S+\s*)+$                             # only name=value pairs (env, kwargs)
      | [a-z][a-z0-9]*(?:_[a-z0-9]+)+[ \t]+[^\s:=]+\s*$  # `block_size 512`: a setting and its value
      | [\w.]+\(.*                                      # a call
      | \)\s*$
    )""",
    re.X,
)
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w.-]*")


def _is_code_line(line: str, voc: Vocabulary) -> bool:
    stripped = line.strip()
    if not stripped:
        return False
    launcher = voc.any_launcher.match(line)
    if stripped.endswith("\\") or (len(_FLAG.findall(line)) >= 2 and (launcher or not _flags_in_a_sentence(line))):
        return True
    if launcher:
        return not _prose_after_launcher(line[launcher.end() :])
    if values.CJK.search(line):  # Chinese text is prose unless it starts like a command (`--max_len 512 # 另一台`)
        return bool(re.match(r"^\s*(?:--?[A-Za-z]|[|+]-)", line))
    return bool(_CODE_LINE.match(line))


def _flags_in_a_sentence(line: str) -> bool:
    """Flags a sentence mentions ("I tried --enable_context_fmha=True and --max_batch_size=1, but it
    still fails"): five words of prose before the first flag, the first a capital."""
    first = _FLAG.search(line)
    return bool(first and _SENTENCE_START.match(line[: first.start()]))


_INLINE_FLAG = re.compile(r"(?<![\w\-./])--?[A-Za-z][\w.\-]*(?:=\S+|[ \t]+(?!--?[A-Za-z])[^\s\u4e00-\u9fff，。；]+)?")
# a known tool setting inside a sentence, `cutoff_len: 8192`, `max_words = 512`, `MODEL_MAX_Length设置为1024`
# (`name=value` without spaces is _INLINE_ASSIGN's)
_SET_TO_ZH = r"(?:设置为|设置成|设为|设成|改为|改成|调为|调成|调到)"
# the same in English after the name: "I set per_device_train_batch_size to 8", "`max_model_len` to `32768`"
_SET_TO_EN = r"(?:(?:is|was|are)\s+)?(?:(?:set|changed|increased|decreased|reduced|lowered|raised)\s+)?to(?=\s)"
# a known setting's name and value around an English "to", either or both in backticks: one artifact
_INLINE_SET_TO = re.compile(
    r"(?<![A-Za-z0-9_\-./])`?([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)`?\s+" + _SET_TO_EN + r"\s+`?([\w.\-]+)`?"
)
_INLINE_SETTING = re.compile(
    r"(?<![A-Za-z0-9_\-./])([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)(?:\s*:|\s+=|=(?=\s)|\s*" + _SET_TO_ZH + r")\s*"
    r"([^\s,，。；\u4e00-\u9fff]+)"
)
_INLINE_ASSIGN = re.compile(r"(?<![\w\-./])([A-Za-z_][\w.]*)=(\"[^\"\n]*\"|'[^'\n]*'|[^\s\u4e00-\u9fff，。；]+)")


_FILE_TOKEN = re.compile(r"\S+\.(?:py|sh|ya?ml|json|toml)\b|\S=\S")


def _prose_after_launcher(rest: str) -> bool:
    """A sentence that starts with a tool's name ("deepspeed zero3 is slow for qwen 7b", "vllm serve
    is slow on 2 H100", "deepspeed 多卡训练，三个卡..."): no flag, file or setting, and mostly words;
    "vllm serve Qwen/Qwen2.5-7B" is a command."""
    if _FLAG.search(rest) or _FILE_TOKEN.search(rest) or rest.rstrip().endswith("\\"):
        return False
    words = rest.split()
    prose = sum(1 for word in words if _PROSE_WORD.fullmatch(word))
    return bool(values.CJK.search(rest)) or (len(words) >= 3 and prose >= 2 * len(words) / 3)


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Spans of fenced (```) and inline (`) code."""
    return [m.span() for m in _FENCE.finditer(text)] + [m.span() for m in _INLINE.finditer(text)]


def is_code_line(line: str) -> bool:
    """A line that looks like code, a command or a config entry rather than a sentence."""
    return _is_code_line(line, vocabulary())


def find_code(text: str) -> list[tuple[int, int]]:
    """Spans of `text` that are artifacts: fenced and inline code, lines that look like code, and
    the flags and `name=value` tokens inside prose (gpuplan's own settings are taken out before)."""
    voc = vocabulary()
    spans: list[tuple[int, int]] = [m.span() for m in _FENCE.finditer(text)]
    taken = blank(text, spans)
    spans += [m.span() for m in _INLINE_SET_TO.finditer(taken) if lookup(fold(m.group(1)), voc)]
    taken = blank(text, spans)
    spans += [m.span() for m in _INLINE.finditer(taken)]
    taken = blank(text, spans)
    position, continued = 0, False
    for line in taken.split("\n"):
        if (continued and not _sentence(line)) or _is_code_line(line, voc):
            tail = None if continued else _command_tail(line, voc)
            tail = _prose_tail(line) if tail is None and not continued else tail
            spans.append((position, position + (tail if tail is not None else len(line))))
            continued = bool(re.search(r"[(\[{,\\]\s*$", line)) or (continued and not line.strip())
        else:
            spans += [(position + s, position + e) for s, e in _inline_artifacts(line)]
        position += len(line) + 1
    return sorted(spans)


_SENTENCE_START = re.compile(r"\s*[A-Z][a-z']*(?:\s+[A-Za-z][\w'-]*,?){4}")
_CODE_CHARS = re.compile(r"[{}\[\]=:\"]")
_CJK_WORDS = re.compile(r"[\u4e00-\u9fff]{4,}")


def _sentence(line: str) -> bool:
    """A line that reads as a sentence ("It would be nice to ...": a capital, five words; "70B的模型要
    持续做增量预训练": a run of Chinese words; no code characters) ends the code block above it, even
    when that block's last line ended with a comma or a backslash."""
    if _CODE_CHARS.search(line) or line.lstrip().startswith(("#", "//")):  # a comment stays in its block
        return False
    return bool(_SENTENCE_START.match(line) or _CJK_WORDS.search(line))


_TOKEN = re.compile(r"\S+")
# a word of prose after a command: "OOM on 13b", "on 8 A100" (a card's name: letters and digits)
_PROSE_WORD = re.compile(
    r"(?:[A-Za-z][a-z]{1,}|[A-Z]{2,}|[A-Za-z]{1,4}\d{2,4}[A-Za-z]?|\d+(?:\.\d+)?[A-Za-z]*|[\u4e00-\u9fff]+)[?.!,，。？！]?"
)


def _command_tail(line: str, voc: Vocabulary) -> int | None:
    """Where prose resumes after a one-line command: "... --gradient_checkpointing OOM on 13b"."""
    tokens = list(_TOKEN.finditer(line))
    flags = [i for i, t in enumerate(tokens) if re.match(r"--?[A-Za-z]", t.group())]
    if not flags:
        return None
    after = flags[-1] + 1
    if after < len(tokens) and _takes_value(tokens[flags[-1]].group(), tokens[after].group(), voc):
        after += 1
    rest = [t.group() for t in tokens[after:]]
    if len(rest) >= 2 and all(_PROSE_WORD.fullmatch(word) for word in rest):
        return tokens[after].start()
    return None


_SENTENCE_END = re.compile(r"[.!?。！？]\s+")
_SIZE_WORD = re.compile(r"\d(?:\.\d+)?\s*[bm](?![a-z])", re.I)
_COUNT_WORD = re.compile(r"\d+\s*(?:nodes?|gpus?|cards?|machines?|servers?|卡|张|台|机)", re.I)
_TAIL_WORD = re.compile(r"[\w.+\-]+[?!,，。？！]?")  # words and model names; no ':', '=', '/', brackets


def _prose_tail(line: str) -> int | None:
    """Where the user's words resume after a log message on the same line: "... 1.2 GiB is free.
    llama 70b lora", "NCCL error: unhandled system error, 2 nodes ethernet". The last sentence
    counts when it is plain words naming a model, a size, a method, a GPU or a count of GPUs or
    nodes (a log's own sentences name bytes, ranks and settings)."""
    ends = list(_SENTENCE_END.finditer(line))
    if not ends:
        return None
    start = ends[-1].end()
    rest = line[start:].split()
    if not 2 <= len(rest) <= 16 or not all(_TAIL_WORD.fullmatch(word) for word in rest):
        return None
    tail, words = line[start:].lower(), question_words()
    named = words.any_method.search(tail) or _SIZE_WORD.search(tail) or words.model_alias.search(tail)
    if named or _COUNT_WORD.search(tail) or words.gpu_alias.search(tail):
        return start
    return None


def _takes_value(flag: str, token: str, voc: Vocabulary) -> bool:
    """Whether `token` is the value of `flag` (a switch such as --gradient_checkpointing takes none)."""
    setting = lookup(fold(flag.split("=")[0]), voc)
    if "=" in flag or token.startswith("-"):
        return False
    if setting and (setting.read == "bool" or "true" in setting.values):
        return token.lower() in _TRUE | _FALSE or token.lower() in setting.values
    return True


def _inline_artifacts(line: str) -> list[tuple[int, int]]:
    """`--flag value` and `tool_name=value` written inside a sentence."""
    spans = [m.span() for m in _INLINE_FLAG.finditer(line) if _flag_like(m.group(0))]
    spans += [m.span() for m in _INLINE_SETTING.finditer(line) if lookup(fold(m.group(1)), vocabulary())]
    gpu_names = question_words().gpu_by_alias  # "A100=40G" names a card and its memory: prose
    return spans + [m.span() for m in _INLINE_ASSIGN.finditer(line) if m.group(1).lower() not in gpu_names]


def _flag_like(token: str) -> bool:
    """`--fp16`, `-bf16`, `--tp 4`; not a dash used as punctuation ("H100 -based", "7B -chat")."""
    name = token.lstrip("-").split("=")[0].split()[0]
    return token.startswith("--") or ("_" in name or name.lower() in vocabulary().by_name)


def _launcher(patterns: list[str]) -> re.Pattern:
    """A command line starting with one of `patterns`, after a prompt and `NAME=value` variables."""
    return compiled(r"^\s*(?:[$!>]\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:" + "|".join(patterns) + ")", re.I)


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the spans replaced by spaces (line breaks kept, so lines stay lines)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = ["\n" if ch == "\n" else " " for ch in text[start:end]]
    return "".join(chars)


def split(text: str) -> tuple[str, str]:
    """(prose, code): the same length as `text`, each with the other part blanked out."""
    spans = find_code(text)
    prose = blank(text, spans)
    code = blank(text, _complement(spans, len(text)))
    return prose, code


def _complement(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    out, position = [], 0
    for start, end in spans:
        if start > position:
            out.append((position, start))
        position = max(position, end)
    if position < length:
        out.append((position, length))
    return out


# --- name/value pairs ----------------------------------------------------------------------------

_VALUE = r"""("[^"\n]*"|'[^'\n]*'|[\w.-]+:\d+(?:,\d+)+|\d+(?:\s*,\s*\d+)+(?![\w.])|[^\s,;)}\]\\'"]+)"""
_PAIR_FLAG = re.compile(r"(?<![\w\-./])(--?[A-Za-z][\w.\-]*)(?:(?:=|[ \t]+)(?!--?[A-Za-z])" + _VALUE + r")?")
_PAIR_ASSIGN = re.compile(r"(?<![\w\-./])([A-Za-z_][\w.]*)\s*=\s*" + _VALUE)
# (a Chinese word may touch the name: "我把MODEL_MAX_Length设置为1024"; \w would count it as the name's)
_PAIR_SET_TO = re.compile(
    r"(?<![A-Za-z0-9_\-./])`?([A-Za-z_][A-Za-z0-9_.]*)`?\s*"
    + r"(?:"
    + _SET_TO_ZH
    + r"|(?<=\s)"
    + _SET_TO_EN
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
class OomReport:
    """What a CUDA or serving OOM message says about the card and the allocation (GiB)."""

    capacity_gib: float | None = None
    requested_gib: float | None = None
    free_gib: float | None = None
    in_use_gib: float | None = None
    words: str = ""


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


_TRUE = {"true", "1", "yes", "y", "on", "enable", "enabled"}
_FALSE = {"false", "0", "no", "n", "off", "disable", "disabled", "none"}


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
    return True if lowered in _TRUE else False if lowered in _FALSE else None


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
            and _PROSE_WORD.fullmatch(pair.value or "")
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


# --- logs and tables ------------------------------------------------------------------------------

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
