"""Telling what people paste from what they write: fenced and inline code, command lines, flags and
settings inside a sentence ("--tp 8", "batch size set to 4"), so the prose reader does not count
"GPU 0" of an nvidia-smi table as one GPU. `split` gives (prose, code)."""

from __future__ import annotations

import re

from gpuplan.bot.language import values
from gpuplan.bot.language.artifact_words import FALSE_WORDS, TRUE_WORDS, Vocabulary, fold, lookup, vocabulary
from gpuplan.bot.language.vocabulary import vocabulary as question_words

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
SET_TO_ZH = r"(?:设置为|设置成|设为|设成|改为|改成|调为|调成|调到)"
# the same in English after the name: "I set per_device_train_batch_size to 8", "`max_model_len` to `32768`"
SET_TO_EN = r"(?:(?:is|was|are)\s+)?(?:(?:set|changed|increased|decreased|reduced|lowered|raised)\s+)?to(?=\s)"
# a known setting's name and value around an English "to", either or both in backticks: one artifact
_INLINE_SET_TO = re.compile(
    r"(?<![A-Za-z0-9_\-./])`?([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)`?\s+" + SET_TO_EN + r"\s+`?([\w.\-]+)`?"
)
_INLINE_SETTING = re.compile(
    r"(?<![A-Za-z0-9_\-./])([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)(?:\s*:|\s+=|=(?=\s)|\s*" + SET_TO_ZH + r")\s*"
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
    prose = sum(1 for word in words if PROSE_WORD.fullmatch(word))
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
PROSE_WORD = re.compile(
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
    if len(rest) >= 2 and all(PROSE_WORD.fullmatch(word) for word in rest):
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
        return token.lower() in TRUE_WORDS | FALSE_WORDS or token.lower() in setting.values
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
