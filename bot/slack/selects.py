"""The two selects on a plan message: what to change (the method, or a serving plan's precision,
context and concurrency) and the GPU type. Each option's value names the Request field it sets
("precision=fp8"); `chosen` reads it back for the listener, and replies.switch re-plans with it.
"""

from __future__ import annotations

from gpuplan.bot import render
from gpuplan.bot.answer import Answer
from gpuplan.estimator.schema import Note, Resolved
from gpuplan.knowledge import catalog

TRAINING_METHODS = ("full", "lora", "qlora")
# the order weights precisions are listed in: most bytes per parameter first
PRECISION_ORDER = ("bf16", "fp16", "fp8", "int8", "int4")
# estimate: common serving context lengths (4k, 8k, 32k) offered as choices, not a measured figure
CONTEXT_CHOICES = (4096, 8192, 32768)
# estimate: concurrency steps from one interactive user to a busy endpoint, offered as choices
CONCURRENCY_CHOICES = (1, 8, 32, 128)


def chosen(action_id: str, value: str) -> tuple[str, str]:
    """(Request field, value) of a selected option: "precision=fp8" names its field; a bare value
    (messages posted before options named theirs) belongs to the select's own field."""
    if "=" in value:
        name, _, rest = value.partition("=")
        return name, rest
    return ("method" if action_id == "set_method" else "gpu"), value


def method_select(plan: Answer) -> dict:
    """A serving plan's precision, context and concurrency; a training plan's method."""
    lang, resolved = plan.lang, plan.estimate.resolved
    if resolved.method == "infer":
        return _select("set_method", _label("change_serving", lang), option_groups=_serving_groups(plan))
    methods = TRAINING_METHODS if resolved.method in TRAINING_METHODS else (resolved.method, *TRAINING_METHODS)
    options = [_option(render.label("method", m, lang), "method", m, m == resolved.method, lang) for m in methods]
    return _select("set_method", _label("change_method", lang), options=options)


def gpu_select(plan: Answer) -> dict:
    """The current GPU first, the user's own type when the question named one, then every type
    the inventory holds enough of, in one region, for the plan's GPU count (when none does, every
    type it holds: a select needs an option)."""
    resolved, cat = plan.estimate.resolved, catalog()
    in_stock = {g: cat.stock(g, plan.request.region)[0] for g in cat.gpus}
    deliverable = [g for g, count in in_stock.items() if count >= resolved.gpus]
    held = deliverable or [g for g, count in in_stock.items() if count > 0] or list(cat.gpus)
    ids = list(dict.fromkeys([resolved.gpu, plan.request.gpu or resolved.gpu, *held]))
    options = [_option(_gpu_name(g), "gpu", g, g == resolved.gpu, plan.lang) for g in ids if g in cat.gpus]
    return _select("set_gpu", _label("change_gpu", plan.lang), options=options)


def _serving_groups(plan: Answer) -> list[dict]:
    lang, resolved = plan.lang, plan.estimate.resolved
    precisions = [_option(p, "precision", p, p == resolved.precision, lang) for p in precision_choices(resolved)]
    contexts = [
        _option(_text("ui.context_choice", lang, tokens=n), "seq_len", n, n == resolved.seq_len, lang)
        for n in context_choices(resolved)
    ]
    served = resolved.global_batch  # the sequences at once in all, which mbs= asks for (the replicas share them)
    counts = [
        _option(_text("ui.concurrency_choice", lang, count=n), "micro_batch", n, n == served, lang)
        for n in _with_own(CONCURRENCY_CHOICES, served)
    ]
    training = [_option(render.label("method", m, lang), "method", m, False, lang) for m in TRAINING_METHODS]
    groups = (("group_precision", precisions), ("group_context", contexts), ("group_concurrency", counts))
    groups += (("group_training", training),)
    return [{"label": _plain(_label(key, lang)), "options": options} for key, options in groups]


def precision_choices(resolved: Resolved) -> list[str]:
    """16-bit (bf16, or fp16 where the GPU has no bf16), fp8 where the GPU has FP8 tensor cores,
    int4, and the plan's own."""
    gpu = catalog().gpus.get(resolved.gpu)
    offered = {"bf16" if gpu is None or gpu.supports_bf16 else "fp16", "int4", resolved.precision}
    if gpu is not None and gpu.fp8_tflops:
        offered.add("fp8")
    return [p for p in PRECISION_ORDER if p in offered] + sorted(offered - set(PRECISION_ORDER))


def context_choices(resolved: Resolved) -> list[int]:
    """4k, 8k, 32k and the model's longest context, none beyond it; the plan's own always."""
    spec = catalog().models.get(resolved.model or "")
    longest = spec.max_context if spec is not None else None
    offered = [*CONTEXT_CHOICES, longest] if longest else list(CONTEXT_CHOICES)
    return _with_own([n for n in offered if longest is None or n <= longest], resolved.seq_len)


def _with_own(choices: tuple[int, ...] | list[int], own: int) -> list[int]:
    return sorted({*choices, own})


def _option(text: str, field: str, value: object, current: bool, lang: str) -> dict:
    if current:
        text = _text("ui.current_choice", lang, choice=text)
    return {"text": _plain(text), "value": f"{field}={value}"}


def _select(action_id: str, placeholder: str, **options: list[dict]) -> dict:
    return {"type": "static_select", "action_id": action_id, "placeholder": _plain(placeholder), **options}


def _plain(text: str) -> dict:
    return {"type": "plain_text", "text": text}


def _label(key: str, lang: str) -> str:
    return render.label("ui", key, lang)


def _text(code: str, lang: str, **params: object) -> str:
    return render.message(Note(code=code, params=params), lang)


def _gpu_name(gpu_id: str) -> str:
    return catalog().gpus[gpu_id].name
