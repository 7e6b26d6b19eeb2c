"""Ready-to-run files for a plan's layout: `export(plan, "deepspeed")` -> {filename: text}.

Each format lives in its own module with a `check` (can this format express the plan?) and a
`files` builder; both are pure: a Launch (the plan's facts) in, text out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from gpuplan.bot import render
from gpuplan.bot.answer import Answer
from gpuplan.bot.configs import concurrency, deepspeed, disaggregated, fsdp, llamafactory, megatron, serving, torchrun
from gpuplan.bot.configs.launch import ConfigError, Launch, launch_from
from gpuplan.bot.configs.text import Words
from gpuplan.bot.pipeline import answer
from gpuplan.estimator.schema import Note

Builder = Callable[[Launch, Words], dict[str, str]]


def _serving(one_pool: Builder, two_pools: Builder) -> Builder:
    """A serving engine's builder: the plan's replicas, or its prefill and decode pools when it
    prefills on GPUs of their own."""
    return lambda launch, words: (two_pools if launch.disaggregated else one_pool)(launch, words)


BUILDERS: dict[str, Builder] = {
    "deepspeed": deepspeed.files,
    "fsdp": fsdp.files,
    "torchrun": torchrun.files,
    "llamafactory": llamafactory.files,
    "megatron": megatron.files,
    "vllm": _serving(serving.vllm_files, disaggregated.vllm_files),
    "sglang": _serving(serving.sglang_files, disaggregated.sglang_files),
}
FORMATS = tuple(BUILDERS)
TRAINING_FORMATS = ("deepspeed", "fsdp", "torchrun", "llamafactory", "megatron")
SERVING_FORMATS = ("vllm", "sglang")

# formats that run data parallelism only: a plan left open is made again without model parallelism
DATA_PARALLEL_ONLY = ("deepspeed", "fsdp", "llamafactory")
WITHOUT_MODEL_PARALLEL = {"tp": 1, "pp": 1, "cp": 1}

__all__ = ["FORMATS", "ConfigError", "export", "export_answered", "export_for_question", "formats_for"]


def export(plan: Answer, fmt: str, note: str = "") -> dict[str, str]:
    """The files of one format for the plan, comments in the plan's language (`note` a header
    line of its own); ConfigError when the format is unknown or cannot express the plan (the
    error names one that can)."""
    if fmt not in BUILDERS:
        raise ConfigError("config_unknown_format", format=fmt, formats=", ".join(FORMATS))
    launch = dataclasses.replace(launch_from(plan), note=note)
    try:
        return BUILDERS[fmt](launch, Words(plan.lang))
    except ConfigError as exc:
        exc.params.setdefault("suggest", ", ".join(formats_for(plan)))
        raise


def export_for_question(text: str, fmt: str, lang: str | None = None) -> tuple[Answer, dict[str, str]]:
    """`gpuplan config FORMAT question`: the plan and its files (export_answered)."""
    plan = answer(text, lang=lang)
    return export_answered(text, plan, fmt)


def export_answered(text: str, plan: Answer, fmt: str) -> tuple[Answer, dict[str, str]]:
    """The plan the files of `fmt` are written for, and the files, for a question already answered
    (`plan`). A serving plan that holds too few sequences at full load is planned again first
    (concurrency.replan); a data-parallel format asked of a plan whose open layout splits the model
    is planned again without model parallelism (the files say so), when that plan fits; a layout
    the user fixed is never changed. Both re-plan through the request, never by editing the text."""
    replanned = concurrency.replan(text, plan) if fmt in SERVING_FORMATS else None
    if replanned is not None:
        try:
            return replanned.plan, export(replanned.plan, fmt, note=replanned.note)
        except ConfigError:  # a layout this engine cannot launch: the plan as asked, as before
            pass
    try:
        return plan, export(plan, fmt)
    except ConfigError as exc:
        again = _without_model_parallel(text, plan, fmt, exc)
        if again is None:
            raise
        note = Note(code="config_replanned", params={"format": fmt, "layout": exc.params.get("layout", "")})
        return again, export(again, fmt, note=render.message(note, again.lang))


def _without_model_parallel(text: str, plan: Answer, fmt: str, refused: ConfigError) -> Answer | None:
    """The question planned with tp = pp = cp = 1, when `fmt` runs data parallelism only, the
    plan's layout was left open and the plan without model parallelism fits; else None."""
    request = plan.request
    fixed = any(v is not None for v in (request.tp, request.pp, request.cp))
    if refused.code != "config_needs_megatron" or fmt not in DATA_PARALLEL_ONLY or fixed:
        return None
    again = answer(text, lang=plan.lang, settings=WITHOUT_MODEL_PARALLEL)
    return again if again.estimate is not None and again.estimate.memory.fits else None


def formats_for(plan: Answer) -> list[str]:
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
