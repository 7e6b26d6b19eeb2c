"""The one pipeline every surface calls: text -> Request -> Estimate -> Plan, answered beside the reading
of the question (bot/answer.py `Answer`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuplan.bot.answer import Answer, Reading
from gpuplan.bot.language.parser import Parsed, parse
from gpuplan.estimator import capacity, hardware, verdict
from gpuplan.estimator.advise import advise, advise_without_plan
from gpuplan.estimator.answer_schema import ComparisonRow, Observed
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import check_request, estimate
from gpuplan.estimator.footprint import footprint
from gpuplan.estimator.schema import Note, Plan, Request
from gpuplan.knowledge import Catalog, catalog


class QuestionError(ValueError):
    """The question cannot be answered as written; `notes` name what was wrong."""

    def __init__(self, notes: list[Note], lang: str):
        self.notes = notes
        self.lang = lang
        super().__init__("; ".join(n.code for n in notes))


def answer(text: str, lang: str | None = None, settings: dict[str, Any] | None = None) -> Answer:
    """Read a question and answer it; raises QuestionError when a gpuplan setting does not read.
    `settings` are Request fields set as if the question gave them as gpuplan settings (a serving
    export planned again with an fp8 KV cache: {"kv_cache": "fp8"})."""
    parsed = parse(text)
    lang = lang if lang in ("en", "zh") and not parsed.lang_given else parsed.lang
    if parsed.errors:
        raise QuestionError(parsed.errors, lang)
    if settings:
        parsed.request = parsed.request.model_copy(update=settings)
        parsed.fixed |= set(settings)
    return answer_parsed(parsed, lang)


def answer_parsed(parsed: Parsed, lang: str) -> Answer:
    """The answer to a parsed question, with its verdict: the answer to what was asked, said first."""
    found, cat = _answered(parsed, lang)
    estimate_fn = (lambda r: estimate(r, cat)) if found.estimate is not None else None
    judged = verdict.judge(found, found.intent, parsed.question, estimate_fn, cat)
    return found.model_copy(update={"verdict": judged})


def _answered(parsed: Parsed, lang: str) -> tuple[Answer, Catalog]:
    """The answer, and the catalog it was made with (with the question's Hub model or memory-only GPU)."""
    extra = _extra(parsed)
    cat = catalog()
    if parsed.intent == "help":
        return Answer(intent="help", lang=lang, request=parsed.request, notes=parsed.notes, **extra), cat
    if parsed.intent == "other":  # outside gpuplan's field: say what it does, in the user's language
        notes = [Note(code="out_of_scope"), *parsed.notes]
        return Answer(intent="other", lang=lang, request=parsed.request, notes=notes, **extra), cat
    _check_settings(parsed, lang)
    cat = _with_hub_model(parsed, cat)
    request = parsed.request
    if parsed.ask in ("largest", "price") and (request.gpu or request.gpu_memory_gib):
        request, cat = _memory_only_gpu(parsed, request, cat, any_stocked=True)
        if request.gpu:
            about = lambda r, n: _about_hardware(parsed, r, n, lang, cat, extra)  # noqa: E731
            return _retrying(parsed, request, lang, about), cat
    has_model = request.model is not None or request.params_b is not None
    if not has_model and not (parsed.compare and parsed.compare["kind"] == "model"):
        return _without_model(parsed, lang, extra, asked=_memory_only_gpu(parsed, request, cat)[0]), cat
    request, cat = _memory_only_gpu(parsed, request, cat)
    if parsed.compare:
        return _compare(parsed, request, lang, cat, extra), cat
    plan = _advise(parsed, request, lang, parsed.intent, cat)
    if parsed.memory_asked and plan.estimate:  # "how much VRAM does it need": every method's least
        extra["footprint"] = footprint(request, cat)
    return plan.model_copy(update=extra), cat


def _check_settings(parsed: Parsed, lang: str) -> None:
    """A gpuplan setting that makes no sense on its own (gpu_mem=2000) is an error at once, with
    or without a model to plan; an impossible reading from the text is dropped later instead."""
    wrong = [n for n in check_request(parsed.request, catalog()) if not _droppable([n], parsed.fixed, parsed.request)]
    if wrong:
        raise QuestionError(wrong, lang)


def _with_hub_model(parsed: Parsed, cat: Catalog) -> Catalog:
    """A Hugging Face id the catalog lacks (named now, or by the question this one follows up):
    its config.json, when the look-up is on and answers, in this question's copy of the catalog."""
    model = parsed.request.model
    wanted = model if model and model not in cat.models else parsed.hub_id
    if not wanted:
        return cat
    from gpuplan.bot import hub  # lazy: the Hub client loads urllib, kept off the start-up path of a catalog model

    spec = hub.lookup(wanted)
    if spec is None:  # the size its name carries, when it does, is what is left to plan with
        size = None if model else parsed.request.params_b
        parsed.notes.append(Note(code="hub_unknown", params={"id": wanted, "size": size}))
        return cat
    parsed.request = parsed.request.model_copy(update={"model": spec.id, "params_b": None})
    if wanted == parsed.hub_id:
        parsed.notes.append(Note(code="hub_found", params={"id": wanted, "params_b": spec.params_b}))
    return cat.with_model(spec)


def _memory_only_gpu(
    parsed: Parsed, request: Request, cat: Catalog, any_stocked: bool = False
) -> tuple[Request, Catalog]:
    """The GPU the request's card and memory name together (estimator/hardware.py resolve_memory),
    in this question's copy of the catalog; what the answer says about it joins the question's notes."""
    found = hardware.resolve_memory(cat, request.gpu, request.gpu_memory_gib, request.region, any_stocked)
    if found.note is not None:
        parsed.notes.append(found.note)
    update = {"gpu": found.gpu, "gpu_memory_gib": found.gpu_memory_gib}
    return request.model_copy(update=update), found.catalog


def _about_hardware(
    parsed: Parsed, request: Request, notes: list[Note], lang: str, cat: Catalog, extra: dict[str, Any]
) -> Answer:
    """ "The largest model 32 L40S can pretrain", "what 8 H100 cost for two weeks": no model to plan,
    an answer about the hardware itself (every method, or none: serving-by-default does not apply)."""
    if any(n.code == "no_training_word_serving" for n in notes):
        notes = [n for n in notes if n.code != "no_training_word_serving"]
        request = request.model_copy(update={"method": None})
    if parsed.ask == "largest":  # the answer's findings say it (bot/answer.py)
        about = {"largest": capacity.largest(request, cat)}
    else:
        about = {"price": capacity.price(request, cat)}
    return Answer(intent="plan", lang=lang, request=request, notes=notes, **about, **extra)


def _without_model(
    parsed: Parsed, lang: str, extra: dict[str, Any], notes: list[Note] | None = None, asked: Request | None = None
) -> Answer:
    """No model and no size: the diagnoses for a symptom, and a question back when there are none
    (its request the `asked` one, naming the card a memory makes: "一张48G的4090" rtx-4090-48gb)."""
    notes = parsed.notes if notes is None else notes
    if parsed.topics:
        plan = advise_without_plan(parsed.request, parsed.topics, observed=_observed(parsed))
        if plan.diagnoses:
            return Answer.of(plan, Reading(intent=parsed.intent, lang=lang, notes=notes, **extra))
    return Answer(
        intent=parsed.intent,
        lang=lang,
        request=asked or parsed.request,
        clarify=[Note(code="need_model")],
        notes=notes,
        **extra,
    )


# Which fields an estimator complaint is about: a field read from the text (not a gpuplan setting)
# that makes the request impossible is left to the estimator instead, and the answer says so.
COMPLAINT_FIELDS = {
    "tp_pp_not_dividing": ("tp", "pp", "nodes", "gpus"),
    "parallel_not_dividing": ("ep", "cp", "tp", "pp", "nodes", "gpus"),
    "ep_needs_moe": ("ep",),
    "ep_not_dividing_experts": ("ep",),
    "serving_ep_with_tp": ("ep", "tp", "pp"),  # SGLang's "--tp 4 --dp 4 --enable-dp-attention --moe-a2a-backend deepep"
    "no_layout": ("tp", "pp", "ep", "cp", "micro_batch", "global_batch", "zero", "offload", "ckpt", "nodes", "gpus"),
    "bad_gpu_memory": ("gpu_memory_gib",),
    "tp_not_dividing_heads": ("tp",),
    "pp_over_layers": ("pp",),
    "seq_over_limit": ("seq_len",),
    "lora_rank_too_big": ("lora_rank",),
    "tokens_below_a_sequence": ("train_tokens",),
    "too_many_per_node": ("nodes",),
    "gpus_nodes_mismatch": ("nodes",),
    "no_gpu_with_memory": ("gpu_memory_gib",),
    "bad_precision": ("precision",),
    "no_bf16": ("precision",),
    "no_fp8": ("precision",),
    "offload_needs_zero": ("offload",),
    "bad_gpus": ("gpus",),
    "too_many_gpus": ("gpus", "nodes"),
    "bad_zero": ("zero",),
    "bad_model_size": ("params_b",),
    "bad_mfu": ("mfu",),
    "unknown_fabric": ("fabric",),
}


def _advise(parsed: Parsed, request: Request, lang: str, intent: str, cat: Catalog) -> Answer:
    """The plan, read as `intent`, with `_retrying`'s drops of readings that make it impossible."""

    def planned(req: Request, notes: list[Note]) -> Answer:
        plan = advise(req, lang, raised=parsed.topics, cat=cat, observed=_observed(parsed))
        return Answer.of(plan, Reading(intent=intent, lang=lang, notes=notes))

    return _retrying(parsed, request, lang, planned)


def _retrying(
    parsed: Parsed, request: Request, lang: str, answer_with: Callable[[Request, list[Note]], Answer]
) -> Answer:
    """`answer_with(request, notes)`; readings from the text that make the request impossible are
    dropped one at a time (in the order COMPLAINT_FIELDS lists them), said, and the answer retried.
    Only gpuplan settings the user wrote can make it fail. A size that was the only model read and
    is impossible leaves a question with no model: it is asked back."""
    notes = list(parsed.notes)
    for _ in range(12):
        try:
            return answer_with(request, notes)
        except RequestError as exc:
            field = _droppable(exc.notes, parsed.fixed, request)
            if field is None:
                raise QuestionError(exc.notes, lang) from exc
            request = request.model_copy(update={field: None})
            notes += [*exc.notes, Note(code="reading_dropped", params={"fields": [field]})]
            if field == "params_b" and request.model is None:
                parsed.request = request
                return _without_model(parsed, lang, _extra(parsed), notes)
    raise QuestionError(notes, lang)


def _extra(parsed: Parsed) -> dict[str, Any]:
    """What every answer carries from the reading of the question."""
    return {"topics": parsed.topics, "unknown": parsed.unknown, "read": parsed.read}


def _observed(parsed: Parsed) -> Observed:
    """The figures the user's own logs state, as the rules quote them (the reading keeps them apart
    from the answer: they are not part of the plan)."""
    return Observed.model_validate(parsed.observed)


def _droppable(complaints: list[Note], fixed: set[str], request: Request) -> str | None:
    """The first field a complaint names that came from the text (not a setting) and is set."""
    for note in complaints:
        by_field = note.code in ("not_positive", "too_large")
        named = COMPLAINT_FIELDS.get(note.code) or ((note.params.get("field"),) if by_field else ())
        for name in named:
            if name and name not in fixed and getattr(request, name, None) is not None:
                return name
    return None


COMPARE_FIELD = {"gpu": "gpu", "method": "method"}
GPU_CHOICE_RULE = "gpu_choice_a100_h100"


def _compare(parsed: Parsed, request: Request, lang: str, cat: Catalog, extra: dict[str, Any]) -> Answer:
    """Estimate each option the question compares; the main plan is the cheapest that fits, or of
    setups with their own counts the first that fits."""
    kind, options = parsed.compare["kind"], list(dict.fromkeys(parsed.compare["options"]))  # each option once
    # "3090或4090能跑吗": a plan for each option, answered as a plan; "A100 vs H100" is a comparison
    label = "plan" if parsed.intent == "plan" and not parsed.compare_direct else "compare"
    plans: list[tuple[Any, Answer]] = []
    for option in options:
        if kind == "model":
            update = (
                {"model": option, "params_b": None} if isinstance(option, str) else {"params_b": option, "model": None}
            )
        else:
            update = {COMPARE_FIELD[kind]: option}
            own = parsed.compare.get("counts", {}).get(option)
            if own and "gpus" not in parsed.fixed:  # "2x 3090 vs 1x 4090"
                update.update(gpus=own, nodes=None)
        plans.append((option, _advise(parsed, request.model_copy(update=update), lang, label, cat)))
    rows = [_comparison_row(kind, option, plan) for option, plan in plans]
    fits = [i for i, r in enumerate(rows) if r.fits]
    _mark_winners(rows, fits)  # none fits: no option is the fastest or the cheapest way to run it
    fitting = fits or list(range(len(rows)))
    # setups written with their own counts ("8张A100 还是 4张H100") lead with the first that fits, the
    # user's own as a rule; GPU types alone ("A100 or H100") with the cheapest (per token for serving)
    cheapest = next((i for i, row in enumerate(rows) if row.cheapest), None)
    if cheapest is None:  # nothing fits: the least costly of them
        cheapest = min(fitting, key=lambda i: rows[i].cost_usd)
    best = fitting[0] if "counts" in parsed.compare else cheapest
    plan = plans[best][1]
    if kind == "gpu":  # the comparison answers it: no generic "A100 or H100" note beside it
        plan = plan.model_copy(update={"diagnoses": [d for d in plan.diagnoses if d.id != GPU_CHOICE_RULE]})
    return plan.model_copy(update={"comparison": rows, **extra})


def _mark_winners(rows: list[ComparisonRow], fitting: list[int]) -> None:
    """Of the options that fit, the fastest and the cheapest, said on their rows: for training the
    shortest run and the lowest cost, for serving the fastest stream per sequence and the lowest cost
    per generated token (a day of serving costs what it costs whatever it serves)."""
    serving = all(row.method == "infer" for row in rows)
    measures = (_SERVING_MEASURES if serving else _TRAINING_MEASURES).items()
    for flag, measure in measures:
        known = [i for i in fitting if measure(rows[i]) is not None]
        best = min(known, key=lambda i: measure(rows[i]), default=None) if len(rows) > 1 else None
        for i, row in enumerate(rows):
            setattr(row, flag, i == best)


def _slowness(row: ComparisonRow) -> float | None:
    speed = row.tokens_per_s_per_sequence
    return 1 / speed if speed else None


# what the least of is the fastest and the cheapest option
_TRAINING_MEASURES = {"fastest": lambda row: row.days, "cheapest": lambda row: row.cost_usd}
_SERVING_MEASURES = {"fastest": _slowness, "cheapest": lambda row: row.usd_per_million_tokens}


def _comparison_row(kind: str, option: Any, plan: Plan) -> ComparisonRow:
    est = plan.estimate
    return ComparisonRow(
        kind=kind,
        option=option,
        gpu=est.resolved.gpu,
        gpu_name=est.resolved.gpu_name,
        gpus=est.resolved.gpus,
        method=est.resolved.method,
        model_name=est.resolved.model_name,
        per_gpu_gib=est.memory.per_gpu_gib,
        capacity_gib=est.memory.capacity_gib,
        fits=est.memory.fits,
        days=est.compute.days,
        cost_usd=est.compute.cost_usd,
        tokens_per_s_per_gpu=est.compute.tokens_per_s_per_gpu,
        tokens_per_s_per_sequence=est.serving.tokens_per_s_per_sequence if est.serving else None,
        usd_per_million_tokens=est.compute.cost_per_million_tokens_usd if est.serving else None,
    )
