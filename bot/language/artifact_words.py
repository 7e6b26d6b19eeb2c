"""The names tools give the settings gpuplan reads from pasted configs and command lines
(knowledge/artifacts.yaml: `--tensor-parallel-size`, `per_device_train_batch_size`, `zero_optimization.stage`),
compiled once."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from gpuplan.bot.language.compiled import compiled
from gpuplan.knowledge import read_yaml

# how configs and flags write a switch on or off
TRUE_WORDS = {"true", "1", "yes", "y", "on", "enable", "enabled"}
FALSE_WORDS = {"false", "0", "no", "n", "off", "disable", "disabled", "none"}


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
    launchers = [(tool, launcher_pattern(patterns)) for tool, patterns in data["launchers"].items()]
    # a determiner may stand between: "without any PEFT", "not using LoRA", "不使用lora"
    negation = compiled(
        r"(?:" + "|".join(data["negations"]) + r")(?:\s*(?:any|the|a|an|using|use|使用|用))?[\s:：,，]*$", re.I
    )
    any_launcher = launcher_pattern([p for patterns in data["launchers"].values() for p in patterns])
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


def launcher_pattern(patterns: list[str]) -> re.Pattern:
    """A command line starting with one of `patterns`, after a prompt and `NAME=value` variables."""
    return compiled(r"^\s*(?:[$!>]\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:" + "|".join(patterns) + ")", re.I)
