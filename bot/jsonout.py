"""The JSON contract of DESIGN.md: one object per answer (memory in GiB, time in hours/days, USD).

`JsonAnswer` is that object as a model, its fields in the order printed: docs/json-schema.json is its
JSON schema (`python -m gpuplan.bot.jsonout > docs/json-schema.json`; tests/test_json_schema.py keeps
it current and checks real answers against it)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuplan.bot.render import diagnoses, headline, notes_text
from gpuplan.estimator.answer_schema import ComparisonRow, FootprintRow, Largest, Price, Probe, Tier
from gpuplan.estimator.schema import (
    Alternative,
    ComputeEstimate,
    IOEstimate,
    Lang,
    MemoryEstimate,
    NetworkEstimate,
    Plan,
    Request,
    Resolved,
    ServingEstimate,
    Verdict,
    _Sparse,
)
from gpuplan.knowledge import catalog


class RequestAsRead(Request, _Sparse):
    """The request as read, when no plan was made: the fields read (and a catalog model's size)."""


class DiagnosisText(BaseModel):
    """A troubleshooting rule that applies, in the answer's language (bot/render.py `diagnoses`)."""

    id: str
    topic: str
    title: str
    answer: str
    checks: list[str]
    fired_by: str  # question | numbers | both
    probes: dict[str, Probe]


class JsonAnswer(BaseModel):
    """The JSON answer (docs/json.md): every key always printed, null when the answer has no such
    part, but `configs`, printed only with --config."""

    model_config = ConfigDict(extra="forbid", title="gpuplan answer")

    intent: Literal["plan", "troubleshoot", "compare", "help", "other"]
    headline: str
    verdict: Verdict | None
    lang: Lang
    request: Resolved | RequestAsRead  # the resolved request; without a plan, the request as read
    assumptions: list[str]
    read: list[str]
    clarify: list[str]
    memory: MemoryEstimate | None
    compute: ComputeEstimate | None
    io: IOEstimate | None
    network: NetworkEstimate | None
    serving: ServingEstimate | None
    tier: Tier | None
    alternatives: list[Alternative]
    diagnoses: list[DiagnosisText]
    comparison: list[ComparisonRow]
    topics: list[str]
    unknown: list[str]
    warnings: list[str]
    findings: list[str]
    largest: Largest | None
    price: Price | None
    footprint: list[FootprintRow]
    configs: dict[str, str] | None = Field(  # with --config FORMAT: {filename: text}; absent otherwise
        default=None, exclude_if=lambda value: value is None, description="with --config FORMAT: {filename: text}"
    )


def json_schema() -> dict[str, Any]:
    """The JSON schema of the answer, as published in docs/json-schema.json."""
    return JsonAnswer.model_json_schema(mode="serialization")


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


if __name__ == "__main__":  # python -m gpuplan.bot.jsonout > docs/json-schema.json
    print(json.dumps(json_schema(), indent=2, ensure_ascii=False))
