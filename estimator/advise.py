"""Estimate -> Plan: the estimate plus the provider's matching tier and the troubleshooting diagnoses."""

from __future__ import annotations

from gpuplan.estimator import diagnose, tiers
from gpuplan.estimator.answer_schema import Observed
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Plan, Request
from gpuplan.knowledge import Catalog, catalog


def advise(
    request: Request,
    lang: str,
    raised: list[str] | None = None,
    cat: Catalog | None = None,
    observed: Observed | None = None,
) -> Plan:
    """The full plan for a request that names a model or a size (raises RequestError otherwise).
    `raised` are the troubleshooting rules the question itself triggered; `lang` titles the tier."""
    cat = cat or catalog()
    est = estimate(request, cat)
    # the provider's tiers are training configurations; serving plans link the guide's deployment section
    if est.resolved.method == "infer":
        tier_info = tiers.deployment_link(cat, lang)
    else:
        tier_info = tiers.match(cat, est, request, lang, lambda r: estimate(r, cat))
    facts, diagnoses = diagnose.diagnose(cat, raised or [], request, est, lambda r: estimate(r, cat), observed)
    return Plan(
        request=request,
        estimate=est,
        tier=tier_info,
        io=est.io,
        network=est.network,
        alternatives=est.alternatives,
        diagnoses=diagnoses,
        facts=facts,
    )


def advise_without_plan(
    request: Request, raised: list[str], cat: Catalog | None = None, observed: Observed | None = None
) -> Plan:
    """A symptom question with no model named: the diagnoses alone, without figures."""
    cat = cat or catalog()
    facts, diagnoses = diagnose.diagnose(cat, raised, request, None, observed=observed)
    return Plan(request=request, diagnoses=diagnoses, facts=facts)
