"""The troubleshooting rules engine: which rules of knowledge/faq.yaml apply to a question and its
plan, with the facts and probe estimates their answers quote.

A rule fires when the question raised it (the parser matched one of its triggers) or when the
plan's numbers satisfy one of its `when` groups; its `applies` conditions must hold either way.
Probes re-estimate the request with a few settings changed ("ZeRO-3 over as many GPUs as it
takes", "QLoRA instead") so the answer can quote both. Rendering happens in bot/: this module
only decides and computes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpuplan.estimator.answer_schema import Diagnosis, Facts, Observed, OomSeen, Probe
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.memory import NF4_BYTES_PER_PARAM, kv_element, state_bytes
from gpuplan.estimator.schema import (
    ADAPTER_METHODS,
    Estimate,
    IOEstimate,
    NetworkEstimate,
    Request,
    ServingEstimate,
)
from gpuplan.knowledge import Catalog, FaqRule
from gpuplan.knowledge.schema import Condition

CHINCHILLA_TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022


def facts(request: Request, est: Estimate | None, cat: Catalog) -> dict[str, Any]:
    """Everything a rule may test or an answer may quote, flat and JSON-friendly."""
    f: dict[str, Any] = {"has_plan": est is not None, "method": request.method or "none"}
    if est is None:
        return f
    f |= _plan_facts(est, cat)
    f |= _network_facts(est.network)
    f |= _io_facts(est.io, cat)
    f |= _serving_facts(est.serving)
    r = est.resolved
    f["cost_per_mtok"] = est.compute.cost_per_million_tokens_usd
    f["replicas"] = r.gpus // est.serving.replica_gpus if est.serving else 1
    if r.pp > 1 and (est.compute.step_time_s or 0.0) > 0:
        micro = max(1, r.global_batch // max(1, r.dp * r.micro_batch))
        f["bubble_fraction"] = (r.pp - 1) / (r.vpp * micro + r.pp - 1)  # interleaved over vpp chunks
    return f


def _plan_facts(est: Estimate, cat: Catalog) -> dict[str, Any]:
    r, m, c = est.resolved, est.memory, est.compute
    gpu = cat.gpus[r.gpu]
    w_b, g_b, o_b = state_bytes(r.precision if r.method != "infer" else "bf16-mixed", r.optimizer)
    text_params = r.params_b * 1e9 - (est.architecture.vision_params if est.architecture else 0)  # encoder frozen
    trained = 0.0 if r.method in ADAPTER_METHODS or r.method == "infer" else text_params * (w_b + g_b + o_b)
    # an adapter run holds the whole base frozen: 16-bit for LoRA, NF4 for QLoRA (memory.NF4_BYTES_PER_PARAM)
    frozen_bytes = NF4_BYTES_PER_PARAM if r.method == "qlora" else 2.0
    frozen = text_params * frozen_bytes if r.method in ADAPTER_METHODS else 0.0
    return {
        "method": r.method,
        "model_name": r.model_name,
        "params_b": r.params_b,
        "gpus": r.gpus,
        "nodes": r.nodes,
        "gpu": r.gpu,
        "gpu_name": r.gpu_name,
        "gpu_family": gpu.family,
        "gpus_per_node": gpu.gpus_per_node,
        "capacity_gib": m.capacity_gib,
        "per_gpu_gib": m.per_gpu_gib,
        "fits": m.fits,
        # what the fit was judged against: the share of the card a plan may fill (fit.usable)
        "limit_gib": m.usable_gib,
        "over_capacity_gib": max(0.0, m.per_gpu_gib - m.usable_gib),
        "weights_gib": m.breakdown_gib.weights,
        "kv_cache_gib": m.breakdown_gib.kv_cache,
        "model_state_gb": trained / 1e9,
        "adapter": r.method in ADAPTER_METHODS,
        "frozen_weights_gb": frozen / 1e9,
        "host_ram_gib": m.host_ram_gib,
        "offload": r.offload,
        "zero": r.zero,
        "ckpt": r.ckpt,
        "precision": r.precision,
        "kv_cache": kv_element(r.precision, r.kv_cache),  # serving: the KV cache's element type
        "seq_len": r.seq_len,
        "tp": r.tp,
        "pp": r.pp,
        "mfu": c.mfu,
        "days": c.days,
        "cost_usd": c.cost_usd,
        "region": r.region,
        "multi_node": r.nodes > 1,
        "chinchilla_tokens": CHINCHILLA_TOKENS_PER_PARAM * r.params_b * 1e9,
        "bubble_fraction": 0.0,
    }


def _network_facts(net: NetworkEstimate | None) -> dict[str, Any]:
    if net is None:
        return {"per_step_gb": 0.0, "fabric": None, "fabric_options": [], "comm_fraction": 0.0, "fabric_owned": True}
    waiting = net.assumed_comm_fraction if net.assumed_comm_fraction is not None else net.comm_fraction
    return {
        "per_step_gb": net.per_step_gb,
        "fabric": net.fabric,
        "fabric_options": [option.model_dump() for option in net.options],
        "comm_fraction": waiting,
        # the recommended network is the one the plan runs on (the user's own, or the usual one)
        "fabric_owned": net.fabric == net.assumed_fabric,
    }


def _io_facts(io: IOEstimate, cat: Catalog) -> dict[str, Any]:
    storage_read = next((o.read_gb_s for o in cat.storage.options if o.id == io.storage), None)
    read_per_node = io.read_mb_s_per_node or 0.0
    return {
        "read_mb_s_per_node": read_per_node,
        "cpu_bound": bool(io.cpu_bound),
        "decode_cores_per_node": io.decode_cores_per_node or 0.0,
        "workers": io.dataloader_workers_per_gpu if io.dataloader_workers_per_gpu is not None else 2,
        "data": io.data,
        "storage": io.storage,
        "read_share_of_storage": (read_per_node / 1000 / storage_read) if storage_read else 0.0,
        "checkpoint_gb": io.checkpoint_gb,
        "checkpoint_write_s": io.checkpoint_write_s,
    }


def _serving_facts(serving: ServingEstimate | None) -> dict[str, Any]:
    mig = serving.mig.model_dump() if serving and serving.mig else None
    return {
        "concurrency": serving.concurrency if serving else None,
        "replica_gpus": serving.replica_gpus if serving else None,
        "tokens_per_s_per_sequence": serving.tokens_per_s_per_sequence if serving else None,
        "mig": mig,
        "mig_fits": bool(mig),
    }


def observed_facts(observed: Observed) -> dict[str, Any]:
    """What the user's pasted logs say, as facts the rules may quote (`oom_*`, `nccl_timeout_s`)."""
    if not observed.model_fields_set:
        return {}
    oom = observed.oom or OomSeen()
    out: dict[str, Any] = {
        "oom_seen": observed.oom is not None,
        "nccl_timeout_s": observed.nccl_timeout_s,
        "checkpoint_seen_s": observed.checkpoint_seen_s,
        "workers_seen": observed.dataloader_workers,
    }
    for key in ("capacity_gib", "requested_gib", "free_gib", "in_use_gib"):
        out[f"oom_{key}"] = getattr(oom, key)
    if oom.requested_gib is not None and oom.free_gib is not None:
        out["oom_short_gib"] = max(0.0, oom.requested_gib - oom.free_gib)
    return out


def holds(cond: Condition, f: dict[str, Any]) -> bool:
    """One condition against the facts; a missing fact never satisfies anything."""
    if cond.fact not in f or f[cond.fact] is None:
        return False
    value = f[cond.fact]
    tests = (
        (cond.eq is not None, lambda: value == cond.eq),
        (cond.ne is not None, lambda: value != cond.ne),
        (cond.gt is not None, lambda: value > cond.gt),
        (cond.ge is not None, lambda: value >= cond.ge),
        (cond.lt is not None, lambda: value < cond.lt),
        (cond.le is not None, lambda: value <= cond.le),
        (cond.in_ is not None, lambda: value in cond.in_),
        (cond.not_in is not None, lambda: value not in cond.not_in),
    )
    try:
        return all(check() for present, check in tests if present)
    except TypeError:
        return False


def probe_summary(est: Estimate) -> Probe:
    r, m, c = est.resolved, est.memory, est.compute
    return Probe(
        method=r.method,
        gpu=r.gpu,
        gpu_name=r.gpu_name,
        gpus=r.gpus,
        nodes=r.nodes,
        zero=r.zero,
        ckpt=r.ckpt,
        offload=r.offload,
        precision=r.precision,
        per_gpu_gib=m.per_gpu_gib,
        capacity_gib=m.capacity_gib,
        usable_gib=m.usable_gib,
        fits=m.fits,
        host_ram_gib=m.host_ram_gib,
        days=c.days,
        cost_usd=c.cost_usd,
        concurrency=est.serving.concurrency if est.serving else None,
    )


def run_probes(rule: FaqRule, request: Request, estimate_fn: Callable[[Request], Estimate]) -> dict[str, Probe]:
    out: dict[str, Probe] = {}
    for name, changes in rule.probes.items():
        try:
            out[name] = probe_summary(estimate_fn(request.model_copy(update=changes)))
        except (RequestError, ValueError):
            continue  # a probe that cannot be estimated is simply not quoted
    return out


def diagnose(
    cat: Catalog,
    raised: list[str],
    request: Request,
    est: Estimate | None,
    estimate_fn: Callable[[Request], Estimate] | None = None,
    observed: Observed | None = None,
) -> tuple[Facts, list[Diagnosis]]:
    """(facts, diagnoses most relevant first). `raised` are the rule ids the question triggered;
    `observed` the figures the user's own logs state (a CUDA OOM message's capacity and request)."""
    f = facts(request, est, cat)
    f.update(observed_facts(observed or Observed()))
    if f.get("checkpoint_seen_s") and f.get("checkpoint_gb"):  # the write rate the user's save reached
        f["checkpoint_seen_gb_s"] = f["checkpoint_gb"] / f["checkpoint_seen_s"]
    found = []
    for order, rule in enumerate(cat.rules):
        by_question = rule.id in raised
        by_numbers = est is not None and any(all(holds(c, f) for c in group) for group in rule.when)
        if not (by_question or by_numbers):
            continue
        if rule.applies and not all(holds(c, f) for c in rule.applies):
            continue
        # the asker's own question first, in the order the question raised them (most likely
        # first), then what the numbers reveal, by severity
        rank = raised.index(rule.id) if by_question else len(raised)
        score = (20 - 2 * rank if by_question else 0) + (5 if by_numbers else 0) + rule.severity / 10 - order / 1000
        fired = "both" if by_question and by_numbers else "question" if by_question else "numbers"
        probes = run_probes(rule, request, estimate_fn) if est is not None and estimate_fn else {}
        found.append(
            Diagnosis(
                id=rule.id,
                topic=rule.topic,
                fired_by=fired,
                score=round(score, 2),
                severity=rule.severity,
                probes=probes,
            )
        )
    found.sort(key=lambda d: -d.score)
    return Facts.model_validate(f), found
