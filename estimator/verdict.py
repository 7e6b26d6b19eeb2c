"""What an answer says first: the verdict on the question that was asked, as data.

The question's kind (does it fit, how long, how much, how many, which of two, why) and the plan's
figures decide it, most pressing first: a diagnosis when the user reports a symptom, a choice when
options are weighed, a deadline or budget that cannot be met, a plan that does not fit (with the
smallest change that makes it fit), then the figure the question asked for. bot/render.py writes
the sentence in the question's language; every surface (terminal, Slack, ticket, JSON) shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from gpuplan.estimator.answer_schema import ComparisonRow, Diagnosis, Largest, Price
from gpuplan.estimator.longest import Longest, largest_micro_batch, longest_sequence
from gpuplan.estimator.remedy import remedies
from gpuplan.estimator.schema import Estimate, FigureAsked, Plan, Request, Verdict
from gpuplan.knowledge import Catalog

EstimateFn = Callable[[Request], Estimate]
OOM_TOPIC = "oom_large_model"
PRETRAINING = ("pretrain", "continue")
# the assumptions that mean no dataset size was given: the time is then a rate per amount of data
NO_DATA_SIZE = ("tokens_default", "tokens_chinchilla")
# training data a rate is quoted per: a billion tokens for pretraining, 100M for a fine-tune's dataset
RATE_UNIT_TOKENS = {"pretrain": 1e9, "continue": 1e9}
FINE_TUNE_UNIT_TOKENS = 1e8
# a pretraining run with no deadline given is sized to finish in about a month (knowledge/defaults.yaml
# limits.pretrain_target_days); one that takes more than this many times that leads with it (our choice)
TARGET_OVERRUN = 3.0
HOURS_A_MONTH = 365 * 24 / 12  # 730: a month of a year's hours
# the question kinds (bot/language/intent.py question_kind) a verdict says it answered as asked
FIGURES_ASKED = frozenset(("fit", "time", "cost", "count", "memory", "concurrency", *get_args(FigureAsked)))


def judge(plan: Plan, intent: str, question: str, estimate_fn: EstimateFn | None, cat: Catalog) -> Verdict:
    """The verdict of `plan` for a question of intent `intent` (plan | troubleshoot | compare | help |
    other) and kind `question` (fit | time | cost | cost_month | count | memory | concurrency |
    storage | host_ram | longest | batch | throughput | gpu_hours | plan); `estimate_fn` re-estimates
    changed requests (None: no remedies are searched)."""
    if intent in ("help", "other"):
        return Verdict(kind="other", asked="other", reason="help" if intent == "help" else "out_of_scope")
    if plan.largest:
        return _largest(plan.largest, plan.request.method, cat)
    if plan.price:
        return _price(plan.price)
    est = plan.estimate
    if est is None:
        if plan.diagnoses:
            return Verdict(kind="diagnosis", asked="why", cause=plan.diagnoses[0].id)
        return Verdict(kind="other", asked=_asked(question), reason="clarify")
    if len(plan.comparison) > 1:
        return _choice(plan, question)
    leading = _leading_diagnosis(plan, intent, question, cat)
    if leading is not None:
        return _diagnosis(plan, leading, estimate_fn, cat)
    return _for_plan(plan, est, question, estimate_fn, cat)


def _leading_diagnosis(plan: Plan, intent: str, question: str, cat: Catalog) -> Diagnosis | None:
    """The rule the answer leads with: the most likely one of a troubleshooting question, or a symptom
    the question itself raised (a pasted NCCL error, "keeps OOMing") when it asks for no figure of its
    own (how long, how much, how many, whether it fits); advice ("serve it near the users", "InfiniBand
    between nodes") when the question asks to choose ("which network?") or is a troubleshooting one."""
    if intent == "troubleshoot" and plan.diagnoses:
        return plan.diagnoses[0]
    if question not in ("plan", "choose"):
        return None
    leads = {rule.id for rule in cat.rules if rule.kind == "symptom" or question == "choose"}
    return next((d for d in plan.diagnoses if d.fired_by in ("question", "both") and d.id in leads), None)


def _for_plan(plan: Plan, est: Estimate, question: str, estimate_fn: EstimateFn | None, cat: Catalog) -> Verdict:
    """A plan's verdict: what cannot be met or does not fit first, then the figure asked for."""
    base = _base(plan, est, question)
    missed = _missed_limit(est)
    if missed:
        return Verdict(**base, kind="infeasible", **missed)
    held = _most_held(plan, est, question, base, estimate_fn, cat) if estimate_fn else None
    if held is not None:
        return held
    if question == "longest" or (question == "batch" and est.serving is None):  # nothing holds with headroom
        question, base["asked"] = "fit", "fit"  # whether the plan fits, said
    if not est.memory.fits:
        found = remedies(plan.request, est, estimate_fn, cat) if estimate_fn else []
        return Verdict(**base, kind="does_not_fit", remedies=found)
    serving = est.resolved.method == "infer"
    if question in ("concurrency", "batch") and serving and plan.request.full_load:
        return Verdict(**base, kind="capacity")
    if question == "storage":
        return Verdict(**base, kind="storage", **_storage(est))
    if question == "throughput":
        return Verdict(**base | _throughput(est), kind="throughput")
    if question == "gpu_hours" and not serving:
        return Verdict(**base, kind="gpu_hours", gpu_hours=est.compute.gpu_hours, **_rate(est, plan))
    if question == "host_ram":
        return Verdict(**base, kind="host_ram", host_ram_gib=est.io.host_ram_gib, offload=est.resolved.offload)
    if question == "fit" or (question == "plan" and base["gpus_given"]):
        return Verdict(**base, kind="fits")
    if question in ("time", "cost", "cost_month") and not serving:
        return Verdict(**base, kind="duration", **_rate(est, plan))
    if question in ("time", "cost", "cost_month"):  # a month around the clock, when asked
        month = base["usd_per_hour"] * HOURS_A_MONTH if question == "cost_month" else None
        return Verdict(**base, kind="price", usd_per_month=month)
    if question == "memory":
        return Verdict(**base, kind="count", **_least(plan, est.resolved.method))
    return Verdict(**base, kind="count" if question == "count" else "plan")


def _most_held(
    plan: Plan, est: Estimate, question: str, base: dict[str, Any], estimate_fn: EstimateFn, cat: Catalog
) -> Verdict | None:
    """The longest sequence, or the largest training micro-batch, the plan's GPUs hold when that is
    asked (estimator/longest.py); None when not asked or nothing holds with headroom."""
    if question == "longest":
        limit = int(cat.defaults.number("limits", "generic_max_context"))
        longest = longest_sequence(plan.request, est, estimate_fn, limit)
        if longest is None:
            return None
        return Verdict(**base, kind="longest", **_longest_said(longest, est, estimate_fn, cat))
    if question == "batch" and est.serving is None:
        largest = largest_micro_batch(plan.request, est, estimate_fn)
        if largest is None:
            return None
        ckpt = largest.estimate.resolved.ckpt
        most = {"most_sequences": largest.sequences, "at_least": largest.at_least or None, "ckpt": ckpt}
        if ckpt != "none" and plan.request.ckpt is None:  # the speed recomputing costs: the most without it
            plain = largest_micro_batch(plan.request.model_copy(update={"ckpt": "none"}), est, estimate_fn)
            most["plain_sequences"] = plain.sequences if plain else 0
        return Verdict(**base, kind="batch", **most)
    return None


def _longest_said(longest: Longest, est: Estimate, estimate_fn: EstimateFn, cat: Catalog) -> dict[str, Any]:
    """The longest sequence, the model's own context, and when serving beyond it, how many sequences
    of that context the one replica holds at full load."""
    model = cat.models.get(est.resolved.model or "")
    context = model.max_context if model else None
    said = {"longest_tokens": longest.tokens, "at_least": longest.at_least or None, "model_context": context}
    if est.serving is not None and context and longest.tokens >= context:
        at_context = estimate_fn(longest.request.model_copy(update={"seq_len": context}))
        said["at_context"] = at_context.serving.max_concurrency if at_context.serving else None
    return said


def _throughput(est: Estimate) -> dict[str, Any]:
    """ "How many tokens per second": generated in all when serving (and at full load), trained on
    per GPU when training, with the MFU."""
    r, c, s = est.resolved, est.compute, est.serving
    per_gpu = {"tokens_per_s_per_gpu": c.tokens_per_s_per_gpu, "tokens_per_s": c.tokens_per_s_per_gpu * r.gpus}
    if s is None:
        return per_gpu | {"mfu": c.mfu}
    at_full = s.max_tokens_per_s_per_gpu * r.gpus if s.max_tokens_per_s_per_gpu else None
    return per_gpu | {"full_load_tokens_per_s": at_full}


def _storage(est: Estimate) -> dict[str, Any]:
    """ "How big a disk": what the plan keeps on it (estimator/io.py), in all and by part."""
    io = est.io
    where = {"storage": io.storage, "storage_gb": io.storage_tb * 1000}
    if est.serving is not None:  # the weights served, and one spare version beside them
        return where | {"base_gb": io.checkpoint_gb}
    return where | {
        "storage_gb_per_node": io.storage_tb_per_node * 1000 if io.storage_tb_per_node else None,
        "base_gb": io.base_gb,
        "dataset_gb": io.dataset_gb,
        "checkpoint_gb": io.checkpoint_gb,
        "checkpoints": io.retained_checkpoints,
        "export_gb": io.export_gb,
    }


def _least(plan: Plan, method: str) -> dict[str, Any]:
    """ "How much VRAM does it need": the least one GPU needs for the method planned (the footprint)."""
    row = next((r for r in plan.footprint if r.method == method), None)
    if row is None:
        return {}
    cards = list(row.cards) or None
    return {
        "least_gib": row.per_gpu_gib,
        "least_cards": cards,
        "least_card_gib": row.smallest_gib if cards else None,
    }


def _asked(question: str) -> str:
    if question == "choose":
        return "choice"
    if question == "cost_month":
        return "cost"
    return question if question in FIGURES_ASKED else "plan"


def _base(plan: Plan, est: Estimate, question: str) -> dict[str, Any]:
    """What every plan verdict quotes: the job, the hardware, memory, time and cost."""
    r, m, c = est.resolved, est.memory, est.compute
    out: dict[str, Any] = {
        "asked": _asked(question),
        "model_name": r.model_name,
        "generic": r.model is None,
        "params_b": r.params_b,
        "method": r.method,
        "seq_len": r.seq_len,
        "gpu_name": r.gpu_name,
        "gpus": r.gpus,
        "nodes": r.nodes,
        "gpus_given": plan.request.gpus is not None or plan.request.nodes is not None,
        "per_gpu_gib": m.per_gpu_gib,
        "usable_gib": m.usable_gib,
        "tight": m.tight,
    }
    if est.serving is None:
        out.update(days=c.days, cost_usd=c.cost_usd, train_tokens=c.train_tokens)
        return out
    s = est.serving
    out.update(
        concurrency=s.concurrency,  # a replica's: each of r.dp replicas serves as many
        replicas=r.dp,
        served=r.global_batch,  # the sequences the busy replicas serve (fewer than concurrency x replicas when idle)
        full_load=s.max_concurrency * r.dp if s.max_concurrency else None,
        context=s.context,
        tokens_per_s_per_sequence=s.tokens_per_s_per_sequence,
        usd_per_million_tokens=c.cost_per_million_tokens_usd,
        usd_per_hour=c.price_usd_per_gpu_hour * r.gpus,
    )
    if plan.request.decode_gpus and s.decode_gpus:  # the decode pool asked about, and the prefill pool beside it
        out.update(
            decode_gpus=s.decode_gpus,
            prefill_gpus=s.prefill_gpus,
            tokens_per_s=c.tokens_per_s_per_gpu * r.gpus,
            decode_tokens_per_s_per_gpu=s.decode_tokens_per_s_per_gpu,
        )
    return out


def _rate(est: Estimate, plan: Plan) -> dict[str, Any]:
    """How long and how much; with no dataset size given (the estimate assumed the tokens), the rate
    per amount of data instead."""
    codes = {n.code for n in est.assumptions}
    if not codes & set(NO_DATA_SIZE):
        return {"data_given": True, "epochs": plan.request.epochs}
    r, c = est.resolved, est.compute
    unit = RATE_UNIT_TOKENS.get(r.method, FINE_TUNE_UNIT_TOKENS)
    hours = c.days * 24 * unit / c.train_tokens if c.train_tokens else None
    return {"data_given": False, "hours_per_unit": hours, "unit_tokens": unit}


def _missed_limit(est: Estimate) -> dict[str, Any] | None:
    """A deadline or budget that no deliverable plan meets: which, by how much, and the training
    tokens the limit affords at the plan's pace and price. With no deadline given, a pretraining
    run sized to the usual target that still takes more than TARGET_OVERRUN times it ("target")."""
    found = {w.code: w.params for w in est.warnings}
    r, c = est.resolved, est.compute
    deadline = found.get("short_deadline")
    target = None
    if deadline and not deadline.get("given", True):
        target, deadline = deadline, None
        if target["ratio"] < TARGET_OVERRUN:
            target = None
    budget = found.get("short_budget")
    both = found.get("short_deadline_and_budget")
    if not (deadline or budget or both or target):
        return None
    days_limit = r.deadline_days or (target["deadline"] if target else None)
    share = 1.0
    if days_limit and c.days > days_limit:
        share = min(share, days_limit / c.days)
    if r.budget_usd and c.cost_usd > r.budget_usd:
        share = min(share, r.budget_usd / c.cost_usd)
    limit = "both" if both or (deadline and budget) else "deadline" if deadline else "budget" if budget else "target"
    return {
        "limit": limit,
        "deadline_days": days_limit,
        "budget_usd": r.budget_usd,
        "tokens_within": c.train_tokens * share,
    }


def _diagnosis(plan: Plan, leading: Diagnosis, estimate_fn: EstimateFn | None, cat: Catalog) -> Verdict:
    """The most likely cause; for an out-of-memory report, the plan's numbers as the user likely
    runs it (see `_as_run`) and the smallest change that makes it fit."""
    est = plan.estimate
    cause = leading.id
    base = _base(plan, est, "plan") | {"asked": "why"}
    if cause != OOM_TOPIC or estimate_fn is None:
        return Verdict(**base, kind="diagnosis", cause=cause)
    run_request = plan.request if not est.memory.fits else _as_run(plan.request, est)
    run = est if not est.memory.fits else _estimate(estimate_fn, run_request)
    if run is None or run.memory.fits:
        return Verdict(**base, kind="diagnosis", cause=cause)
    found = remedies(run_request, run, estimate_fn, cat, relaxed=plan.request)
    return Verdict(
        **base | {"per_gpu_gib": run.memory.per_gpu_gib, "usable_gib": run.memory.usable_gib},
        kind="diagnosis",
        cause=cause,
        remedies=found,
        as_run=run is not est,
    )


def _as_run(request: Request, est: Estimate) -> Request | None:
    """A training plan that fits only by settings gpuplan chose, as a run reporting OOM most likely
    has it: the Hugging Face Trainer's defaults where the question set nothing (no activation
    checkpointing, Transformers' own cross-entropy over the whole sequence in fp32), on the same
    GPUs. The Trainer runs data parallel: tensor or pipeline parallelism the plan chose and the
    question did not name is dropped, with ZeRO-3 in its place (the sharding the Trainer offers
    through DeepSpeed or FSDP). None for serving, or when the question fixed both."""
    r = est.resolved
    if r.method == "infer" or (request.ckpt is not None and request.loss is not None):
        return None
    tp, pp = request.tp or 1, request.pp or 1
    zero = request.zero if request.zero is not None else r.zero if (tp, pp) == (r.tp, r.pp) else 3
    update: dict[str, Any] = {"gpus": r.gpus, "gpu": request.gpu or r.gpu, "zero": zero, "tp": tp, "pp": pp}
    update["ckpt"] = request.ckpt or "none"
    update["loss"] = request.loss or "unchunked"
    return request.model_copy(update=update)


def _estimate(estimate_fn: EstimateFn, request: Request | None) -> Estimate | None:
    if request is None:
        return None
    try:
        return estimate_fn(request)
    except ValueError:  # RequestError is a ValueError
        return None


def _choice(plan: Plan, question: str) -> Verdict:
    """The option to take and why: the only one that fits, else the cheaper (per generated token
    when serving) and whether it is also the faster."""
    rows = plan.comparison
    fitting = [row for row in rows if row.fits]
    if not fitting:
        named = " / ".join(_option_name(row) for row in rows)
        return Verdict(kind="choice", asked="choice", reason="none_fits", other=named, method=rows[0].method)
    pick = next((row for row in fitting if row.cheapest), fitting[0])
    other = next(row for row in rows if row is not pick)
    serving = pick.method == "infer"
    if len(fitting) == 1:
        reason = "only_fits"
    elif pick.fastest:
        reason = "cheaper_and_faster"
    else:
        reason = "cheaper"
    figure = "usd_per_million_tokens" if serving else "cost_usd"
    return Verdict(
        kind="choice",
        asked="fit" if question == "fit" else "choice",
        reason=reason,
        pick=_option_name(pick),
        other=_option_name(other),
        pick_value=getattr(pick, figure),
        other_value=getattr(other, figure) if other.fits else None,
        other_days=(other.tokens_per_s_per_sequence if serving else other.days) if other.fits else None,
        method=pick.method,
        model_name=pick.model_name,
        gpus=pick.gpus,
        gpu_name=pick.gpu_name,
        days=pick.days,
        cost_usd=pick.cost_usd,
        per_gpu_gib=pick.per_gpu_gib,
        tokens_per_s_per_sequence=pick.tokens_per_s_per_sequence,
        usd_per_million_tokens=pick.usd_per_million_tokens,
    )


def _option_name(row: ComparisonRow) -> str:
    """An option as the question named it: a GPU with its count, a method, a model."""
    if row.kind == "gpu":
        return f"{row.gpus} x {row.gpu_name}"
    if row.kind == "method":
        return str(row.method)
    return str(row.model_name)


def _largest(largest: Largest, method: str | None, cat: Catalog) -> Verdict:
    """The largest model on the GPUs asked about. For pretraining, the compute-optimal size that ends
    in time (a model that only fits in memory would take far longer to pretrain); for another method
    its row; with no method asked, every method's figure (`figures`), the full fine-tune's first."""
    gpu = cat.gpus.get(largest.gpu)
    base = {"kind": "largest", "asked": "largest", "gpus": largest.gpus, "gpu_name": gpu.name if gpu else None}
    figures = {key: row.params_b for key, row in largest.methods.items() if row}
    bounded = {key for key, row in largest.methods.items() if row and row.at_least}
    in_time = largest.pretrain_in_time
    if method in PRETRAINING and in_time:
        return Verdict(
            **base,
            method=method,
            params_b=in_time.params_b,
            days=in_time.deadline_days,
            figures=figures,
            at_least=in_time.at_least,
        )
    key = method if method in figures else None
    return Verdict(
        **base,
        method=key,
        params_b=figures.get(key) if key else None,
        figures=figures,
        at_least=key in bounded if key else None,
        bounded=sorted(bounded) or None,
    )


def _price(price: Price) -> Verdict:
    return Verdict(
        kind="price",
        asked="price",
        gpus=price.gpus,
        gpu_name=price.gpu_name,
        cost_usd=price.cost_usd,
        usd_per_hour=price.usd_per_gpu_hour * price.gpus,
        hours=price.hours,
    )
