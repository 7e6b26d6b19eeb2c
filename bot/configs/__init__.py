"""Ready-to-run files for a plan's layout: `export(plan, "deepspeed")` -> {filename: text}.

Each format lives in its own module with a `check` (can this format express the plan?) and a
`files` builder; both are pure: a Launch (the plan's facts) in, text out.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuplan.bot.configs import deepspeed, fsdp, llamafactory, megatron, serving, torchrun
from gpuplan.bot.configs.launch import ConfigError, Launch, launch_from
from gpuplan.bot.configs.text import Words
from gpuplan.estimator.schema import Plan

Builder = Callable[[Launch, Words], dict[str, str]]

BUILDERS: dict[str, Builder] = {
    "deepspeed": deepspeed.files,
    "fsdp": fsdp.files,
    "torchrun": torchrun.files,
    "llamafactory": llamafactory.files,
    "megatron": megatron.files,
    "vllm": serving.vllm_files,
    "sglang": serving.sglang_files,
}
FORMATS = tuple(BUILDERS)
TRAINING_FORMATS = ("deepspeed", "fsdp", "torchrun", "llamafactory", "megatron")
SERVING_FORMATS = ("vllm", "sglang")

__all__ = ["FORMATS", "ConfigError", "export", "formats_for"]


def export(plan: Plan, fmt: str) -> dict[str, str]:
    """The files of one format for the plan, comments in the plan's language; ConfigError when
    the format is unknown or cannot express the plan (the error names one that can)."""
    if fmt not in BUILDERS:
        raise ConfigError("config_unknown_format", format=fmt, formats=", ".join(FORMATS))
    launch = launch_from(plan)
    try:
        return BUILDERS[fmt](launch, Words(plan.lang))
    except ConfigError as exc:
        exc.params.setdefault("suggest", ", ".join(formats_for(plan)))
        raise


def formats_for(plan: Plan) -> list[str]:
    """The formats that can express this plan, most specific first."""
    try:
        launch = launch_from(plan)
    except ConfigError:
        return []
    words = Words(plan.lang)
    usable = []
    for fmt in SERVING_FORMATS if launch.serving else TRAINING_FORMATS:
        try:
            BUILDERS[fmt](launch, words)
        except ConfigError:
            continue
        usable.append(fmt)
    return usable
