"""The JSON contract of DESIGN.md: one object per answer (memory in GiB, time in hours/days, USD)."""

from __future__ import annotations

from typing import Any

from gpuplan.bot.render import diagnoses, headline, notes_text
from gpuplan.estimator.schema import Plan
from gpuplan.knowledge import catalog


def plan_json(plan: Plan, configs: dict[str, str] | None = None) -> dict[str, Any]:
    """The answer as DESIGN.md's JSON; `configs` ({filename: text}) when --config asked for them."""
    lang = plan.lang
    est = plan.estimate
    out: dict[str, Any] = {
        "intent": plan.intent,
        "headline": headline(plan),
        "verdict": plan.verdict.model_dump() if plan.verdict else None,
        "lang": lang,
        "request": est.resolved.model_dump() if est else _asked(plan),
        "assumptions": notes_text(plan.notes + (est.assumptions if est else []), lang),
        "read": notes_text(plan.read, lang),
        "clarify": notes_text(plan.clarify, lang),
        "memory": est.memory.model_dump() if est else None,
        "compute": est.compute.model_dump() if est else None,
        "io": plan.io.model_dump() if plan.io else None,
        "network": plan.network.model_dump() if plan.network else None,
        "serving": est.serving.model_dump() if est and est.serving else None,
        "tier": plan.tier.model_dump() if plan.tier else None,
        "alternatives": [a.model_dump() for a in plan.alternatives],
        "diagnoses": diagnoses(plan),
        "comparison": [row.model_dump() for row in plan.comparison],
        "topics": plan.topics,
        "unknown": plan.unknown,
        "warnings": notes_text(est.warnings, lang) if est else [],
        "findings": notes_text(plan.findings, lang),
        "largest": plan.largest.model_dump() if plan.largest else None,
        "price": plan.price.model_dump() if plan.price else None,
        "footprint": [row.model_dump() for row in plan.footprint],
    }
    if configs is not None:
        out["configs"] = configs
    return out


def _asked(plan: Plan) -> dict[str, Any]:
    """The request as read, when no plan was made (a diagnosis, a question outside the field, a
    question back), with the published size of a catalog model it names (a vision-language model's
    encoder included, as a plan counts it)."""
    request = plan.request.model_dump(exclude_none=True)
    model = catalog().models.get(request.get("model", ""))
    if model is not None and "params_b" not in request:
        request["params_b"] = model.params_b + model.vision_params_b
    return request
