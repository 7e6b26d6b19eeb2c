"""The one pipeline every surface calls: text -> Request -> Estimate -> Plan."""

from __future__ import annotations

from typing import Any

from bot.parser import Parsed, parse
from estimator.advise import advise, advise_without_plan
from estimator.errors import RequestError
from estimator.schema import Note, Plan, Request


class QuestionError(ValueError):
    """The question cannot be answered as written; `notes` name what was wrong."""

    def __init__(self, notes: list[Note], lang: str):
        self.notes = notes
        self.lang = lang
        super().__init__("; ".join(n.code for n in notes))


def answer(text: str, lang: str | None = None) -> Plan:
    """Read a question and answer it; raises QuestionError when it cannot be read."""
    parsed = parse(text)
    lang = lang if lang in ("en", "zh") and not parsed.lang_given else parsed.lang
    if parsed.errors:
        raise QuestionError(parsed.errors, lang)
    return answer_parsed(parsed, lang)


def answer_parsed(parsed: Parsed, lang: str) -> Plan:
    request = parsed.request
    extra: dict[str, Any] = {"topics": parsed.topics, "unknown": parsed.unknown}
    if parsed.intent == "help":
        return Plan(intent="help", lang=lang, request=request, notes=parsed.notes, **extra)
    has_model = request.model is not None or request.params_b is not None
    if not has_model and not (parsed.compare and parsed.compare["kind"] == "model"):
        if parsed.topics:  # a symptom needs no size: answered with the diagnoses alone
            plan = advise_without_plan(request, lang, parsed.topics, notes=parsed.notes)
            return plan.model_copy(update=extra)
        return Plan(
            intent=parsed.intent if parsed.intent != "compare" else "plan",
            lang=lang,
            request=request,
            clarify=[Note(code="need_model")],
            notes=parsed.notes,
            **extra,
        )
    try:
        if parsed.compare:
            return _compare(parsed, request, lang, extra)
        plan = advise(request, lang, intent=parsed.intent, notes=parsed.notes, raised=parsed.topics)
        return plan.model_copy(update=extra)
    except RequestError as exc:
        raise QuestionError(exc.notes, lang) from exc


COMPARE_FIELD = {"gpu": "gpu", "method": "method"}


def _compare(parsed: Parsed, request: Request, lang: str, extra: dict[str, Any]) -> Plan:
    """Estimate each option the question compares; the main plan is the cheapest that fits."""
    kind, options = parsed.compare["kind"], parsed.compare["options"]
    plans: list[tuple[Any, Plan]] = []
    for option in options:
        if kind == "model":
            update = (
                {"model": option, "params_b": None} if isinstance(option, str) else {"params_b": option, "model": None}
            )
        else:
            update = {COMPARE_FIELD[kind]: option}
        plan = advise(
            request.model_copy(update=update), lang, intent="compare", notes=parsed.notes, raised=parsed.topics
        )
        plans.append((option, plan))
    rows = []
    for option, plan in plans:
        est = plan.estimate
        rows.append(
            {
                "kind": kind,
                "option": option,
                "gpu": est.resolved.gpu,
                "gpu_name": est.resolved.gpu_name,
                "gpus": est.resolved.gpus,
                "method": est.resolved.method,
                "model_name": est.resolved.model_name,
                "per_gpu_gib": est.memory.per_gpu_gib,
                "capacity_gib": est.memory.capacity_gib,
                "fits": est.memory.fits,
                "days": est.compute.days,
                "cost_usd": est.compute.cost_usd,
                "tokens_per_s_per_gpu": est.compute.tokens_per_s_per_gpu,
            }
        )
    fitting = [i for i, r in enumerate(rows) if r["fits"]] or list(range(len(rows)))
    best = min(fitting, key=lambda i: rows[i]["cost_usd"])
    return plans[best][1].model_copy(update={"comparison": rows, **extra})
