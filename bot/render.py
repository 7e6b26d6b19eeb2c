"""Render notes and plans as text in English or Chinese, from `templates/<lang>/`.

Templates are compiled once per process (StrictUndefined: a missing value is a bug, not a blank).
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from importlib import resources
from typing import Any

import jinja2

from gpuplan.bot.answer import Answer
from gpuplan.estimator.answer_schema import ComparisonRow, Facts
from gpuplan.estimator.schema import METHODS, Note
from gpuplan.knowledge import cache_dir, catalog, read_yaml

LANGS = ("en", "zh")


def human(value: float, lang: str = "en") -> str:
    """Large counts the way each language writes them: 1.4T / 1.4万亿, 300B / 3000亿, 100M / 1亿."""
    if value is None or not math.isfinite(value):
        return "-"
    if lang == "zh":
        for unit, scale in (("万亿", 1e12), ("亿", 1e8), ("万", 1e4)):
            if abs(value) >= scale:
                return f"{_trim(value / scale)}{unit}"
        return _trim(value)
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{_trim(value / scale)}{unit}"
    return _trim(value)


def _trim(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.2f}".rstrip("0").rstrip(".")


def usd(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    if 0 < value < 0.005:  # a few seconds of one GPU: never "$0.00"
        return "<$0.01"
    if abs(value) >= 100:
        return f"${value:,.0f}"
    return f"${value:,.2f}"


def num(value: float, digits: int = 0) -> str:
    if isinstance(value, int) and abs(value) >= 10**15:  # beyond a float's digits: 1.00e+400
        text = str(abs(value))
        return f"{'-' if value < 0 else ''}{text[0]}.{text[1:3]}e+{len(text) - 1}"
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:,.{digits}f}"


def gib(value: float) -> str:
    return num(value, 1)


def mem(gib: float) -> str:
    """A memory amount with its unit: 16.8 GiB, or 20 MiB below one GiB (allocator messages)."""
    return f"{gib:,.1f} GiB" if gib >= 1 else f"{gib * 1024:,.0f} MiB"


def pct(value: float) -> str:
    return f"{value * 100:.0f}%" if value >= 0.1 else f"{value * 100:.1f}%"


def duration(days: float, lang: str = "en") -> str:
    """0.3 days -> '7.2 hours' / '7.2 小时'; 45 days -> '45 days' / '45 天'; under an hour in minutes,
    under a minute in seconds."""
    if days is None or not math.isfinite(days):
        return "-"
    seconds = days * 86400
    if seconds < 59.5:
        return _count(f"{seconds:.0f}", "second", "秒", lang)
    if seconds < 3570:  # 59.5 minutes and more read as an hour
        minutes = seconds / 60
        return _count(_trim(round(minutes, 1)) if minutes < 10 else f"{minutes:.0f}", "minute", "分钟", lang)
    if days < 2:  # hours to a tenth: "1 hour", "3.6 hours" (not "0.99 hours")
        return _count(_trim(round(days * 24, 1)), "hour", "小时", lang)
    if days >= 2 * DAYS_PER_YEAR:  # "3,761 days" reads better as years
        return _count(_trim(days / DAYS_PER_YEAR), "year", "年", lang)
    return _count(_trim(days), "day", "天", lang)


DAYS_PER_YEAR = 365.25


def _count(number: str, unit: str, zh_unit: str, lang: str) -> str:
    """'1 hour', '2.5 hours', '3 小时'."""
    if lang == "zh":
        return f"{number} {zh_unit}"
    return f"{number} {unit}" + ("" if number == "1" else "s")


def rate(mb_s: float) -> str:
    """A data rate given in MB/s, in the unit that keeps it readable."""
    if mb_s >= 1000:
        return f"{mb_s / 1000:,.1f} GB/s"
    if mb_s >= 1:
        return f"{mb_s:,.1f} MB/s"
    return f"{mb_s * 1000:,.1f} KB/s"


def size(gb: float) -> str:
    """A size given in GB (10^9 bytes), in the unit that keeps it readable."""
    if gb >= 1000:
        return f"{gb / 1000:,.1f} TB"
    if gb >= 1:
        return f"{gb:,.1f} GB"
    if gb >= 1e-3:
        return f"{gb * 1000:,.1f} MB"
    return f"{gb * 1e6:,.1f} KB"


def sci(value: float) -> str:
    """A large count in scientific notation: 5.3e+19."""
    return f"{value:.2g}" if value else "0"


def bar(used: float, capacity: float, width: int = 20) -> str:
    """A text bar of memory use against capacity; overflow shows as '!'."""
    if capacity <= 0:
        return ""
    share = used / capacity
    filled = min(width, round(share * width))
    return "█" * filled + "░" * (width - filled) + ("!" if share > 1 else "")


_CARD_NOISE = re.compile(r"^(?:NVIDIA|AMD Instinct|AMD)\s+|\b(?:GeForce|Tesla)\s+|\s+SXM\d?\b|\s*\(.*\)$")


def card(name: str | None) -> str:
    """A GPU as people name it: 'NVIDIA A100 SXM4 80GB' -> 'A100 80GB', 'NVIDIA GeForce RTX 4090 24GB'
    -> 'RTX 4090 24GB', 'NVIDIA A10 24GB (also AWS A10G)' -> 'A10 24GB'."""
    return _CARD_NOISE.sub("", name or "").strip() or (name or "")


def _template_dir() -> str:
    return str(resources.files("gpuplan.templates"))


@functools.cache
def environment(trim: bool = True) -> jinja2.Environment:
    """Templates compiled once. `trim=False` keeps line breaks after block tags, for the rules'
    answers, whose sentences stand on their own lines."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_template_dir()),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=trim,
        lstrip_blocks=trim,
        keep_trailing_newline=False,
    )
    env.filters.update(
        human=human,
        usd=usd,
        num=num,
        gib=gib,
        mem=mem,
        pct=pct,
        duration=duration,
        bar=bar,
        rate=rate,
        size=size,
        sci=sci,
        short=_trim,  # 13.5, 96, 141: no trailing zeros
        card=card,
        sentence=lambda text: text[:1].upper() + text[1:],
    )
    return env


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's cache of compiled templates on disk; a template that cannot be written there is
    compiled again by the next process."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _template_cache(kind: str) -> jinja2.BytecodeCache | None:
    """`templates/<kind>/` in the knowledge cache directory (GPUPLAN_KNOWLEDGE_CACHE), None when off or
    unwritable."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        (folder / "templates" / kind).mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return _TemplateCache(str(folder / "templates" / kind))


@functools.cache
def cached_environment(trim: bool = True) -> jinja2.Environment:
    """environment(trim) with compiled templates kept on disk between processes (Jinja's bytecode
    cache, checked against each template's source); it also loads messages ("<lang>/<code>") and the
    rules' answers and headlines ("<lang>/rules/<id>/answer"). Compiling a terminal answer's
    templates took about 0.03 s of every process. Jinja keys that cache by name and source, not by
    the settings that shape the compiled code, so each environment has a folder of its own and the
    Slack environment (every value escaped) none."""
    loader = jinja2.ChoiceLoader([environment().loader, jinja2.FunctionLoader(_source)])
    return environment(trim).overlay(loader=loader, bytecode_cache=_template_cache("trim" if trim else "keep"))


def _source(name: str) -> str | None:
    """A message's text ("en/fits"), or a troubleshooting rule's answer or headline ("en/rules/oom/answer")."""
    lang, _, key = name.partition("/")
    if lang not in LANGS:
        return None
    if not key.startswith("rules/"):
        return messages(lang).get(key)
    rule_id, _, part = key.removeprefix("rules/").partition("/")
    rule = next((r for r in catalog().rules if r.id == rule_id), None)
    return getattr(getattr(rule, part), lang) if rule and part in ("answer", "headline") else None


@functools.cache
def messages(lang: str) -> dict[str, str]:
    """The message catalog of one language: code -> template text."""
    path = resources.files("gpuplan.templates").joinpath(lang, "messages.yaml")
    return read_yaml(path.read_text(encoding="utf-8"))


@functools.cache
def message_template(lang: str, code: str) -> jinja2.Template | None:
    """One message compiled the first time it is used (an answer uses a dozen of some 330: compiling
    them all cost a terminal answer about 0.2 s)."""
    return cached_environment().get_template(f"{lang}/{code}") if code in messages(lang) else None


def message(note: Note | dict, lang: str) -> str:
    if isinstance(note, dict):
        note = Note(**note)
    template = message_template(lang, note.code)
    if template is None:
        raise KeyError(f"no {lang} message for {note.code}")
    return template.render(
        lang=lang, label=lambda k, v: label(k, v, lang), name=lambda kind, key: name_of(kind, key, lang), **note.params
    ).strip()


def label(kind: str, value: Any, lang: str) -> str:
    """Short names for enum values ('method.full' -> 'full fine-tune' / '全参微调')."""
    try:
        return _label(kind, value, lang)
    except TypeError:  # an unhashable value: no memo
        return _label.__wrapped__(kind, value, lang)


@functools.lru_cache(maxsize=4096)
def _label(kind: str, value: Any, lang: str) -> str:
    template = message_template(lang, f"{kind}.{value}")
    return template.render().strip() if template else str(value)


def name_of(kind: str, key: str | None, lang: str) -> str:
    """Display names from the knowledge base: regions, storage options, fabrics, GPUs."""
    if not key:
        return ""
    cat = catalog()
    if kind == "region" and key in cat.regions:
        return cat.regions[key].name.model_dump()[lang]
    if kind == "area" and key in cat.areas:
        return cat.areas[key][lang]
    if kind == "storage":
        for option in cat.storage.options:
            if option.id == key:
                return option.name.model_dump()[lang]
    if kind == "fabric" and key in cat.fabrics:
        return cat.fabrics[key].name
    if kind == "gpu" and key in cat.gpus:
        return cat.gpus[key].name
    return {"nvlink": "NVLink", "pcie": "PCIe", "infinity-fabric": "Infinity Fabric"}.get(key, key)


def render(template: str, lang: str, **context: Any) -> str:
    env = cached_environment()
    return env.get_template(f"{lang}/{template}").render(
        lang=lang,
        message=lambda n: message(n, lang),
        label=lambda k, v: label(k, v, lang),
        name=lambda kind, key: name_of(kind, key, lang),
        **context,
    )


@functools.cache
def examples(lang: str) -> list[str]:
    """The example questions of the help text (templates/<lang>/examples.yaml)."""
    path = resources.files("gpuplan.templates").joinpath(lang, "examples.yaml")
    return list(read_yaml(path.read_text(encoding="utf-8")))


def help_text(lang: str) -> str:
    return render("help.txt.j2", lang, examples=examples(lang))


def text_answer(plan: Answer, details: bool = False) -> str:
    """The answer for a terminal, whatever its kind: help, an answer without figures, or a plan."""
    if plan.intent == "help":
        return help_text(plan.lang)
    if plan.estimate is None:
        return short_answer(plan, details=details)
    return plan_text(plan, details=details)


def plan_text(plan: Answer, details: bool = False) -> str:
    """The plan for a terminal: the headline, then one screen of what supports it; `details` adds
    every assumption, the data pipeline, storage, network, tiers and the whole diagnosis."""
    est = plan.estimate
    notes = plan.notes + est.assumptions
    if details:
        return render(
            "plan_details.txt.j2",
            plan.lang,
            plan=plan,
            est=est,
            headline=headline(plan),
            diagnoses=diagnoses(plan),
            notes=notes,
            network_line=network_line(plan, always=True),
        )
    shown, hidden = key_notes(plan)
    told, titled = diagnoses_shown(plan)
    return render(
        "plan.txt.j2",
        plan.lang,
        plan=plan,
        est=est,
        headline=headline(plan),
        diagnoses=told,
        also=titled,
        key_notes=shown,
        more_notes=hidden,
        warnings=[message(w, plan.lang) for w in said_elsewhere_dropped(plan)],
        fit_word=fit_word(est.memory, plan.lang),
        network_line=network_line(plan),
        **answer_options(plan),
    )


def diagnoses_shown(plan: Answer) -> tuple[list[dict[str, Any]], list[str]]:
    """(diagnoses told in full, titles of the others) for the one-screen answer: a troubleshooting
    verdict tells its leading rule; the rest, and those the numbers raised beside another verdict,
    are named (--details tells them); a rule on what the headline says is not named again."""
    found = diagnoses(plan)
    v = plan.verdict
    leading = [d for d in found if v is not None and v.kind == "diagnosis" and d["id"] == v.cause]
    said = {"oom_large_model"} if v is not None and v.kind == "does_not_fit" else set()
    others = [d["title"] for d in found if d not in leading and d["id"] not in said]
    return leading, others


# the estimate's warnings a headline already says (a plan that does not fit, a limit it misses)
SAID_BY_VERDICT = {
    "does_not_fit": ("does_not_fit", "does_not_fit_engine", "fits_with_more_gpus", "fits_with_offload", "short_memory"),
    "infeasible": ("short_deadline", "short_budget", "short_deadline_and_budget"),
    "diagnosis": ("does_not_fit", "does_not_fit_engine", "fits_with_more_gpus", "fits_with_offload", "short_memory"),
}
NETWORK_WARNINGS = ("comm_bound",)  # what the network line says already


def said_elsewhere_dropped(plan: Answer) -> list[Note]:
    """The warnings worth a line of their own: not what the headline says, each once."""
    said = SAID_BY_VERDICT.get(plan.verdict.kind if plan.verdict else "", ())
    if network_line(plan):
        said = (*said, *NETWORK_WARNINGS)
    seen: set[str] = set()
    out = []
    for w in plan.estimate.warnings:
        if w.code in said or w.code in seen:
            continue
        seen.add(w.code)
        out.append(w)
    return out


# what a reader should check first, in order: how the question was read, then the defaults that move
# the figures most (the model's shape, the data, the length, the load, the GPU chosen)
KEY_ASSUMPTIONS = (
    "generic_arch",
    "generic_moe_arch",
    "default_method",
    "tokens_default",
    "tokens_chinchilla",
    "tokens_from_samples",
    "tokens_from_dataset",
    "default_seq",
    "default_output",
    "prefill_disaggregated",
    "default_concurrency",
    "pool_full_load",
    "asked_full_load",
    "fitted_concurrency",
    "default_serve_precision",
    "pretrain_target",
    "recipe_speed",
    "sdpa_attention",
    "chosen_gpu",
    "gpu_memory_class",
    "currency_converted",
)
# reading notes that change nothing in the figures
ROUTINE_NOTES = ("framework_noted", "out_of_scope")
MOST_NOTES = 3


def key_notes(plan: Answer, most: int = MOST_NOTES) -> tuple[list[str], int]:
    """The few assumptions that change the answer, rendered, and how many more --details lists: the
    question's reading first (what was taken from a paste, set aside, read as), then KEY_ASSUMPTIONS."""
    est = plan.estimate
    all_notes = plan.read + plan.notes + (est.assumptions if est else [])
    reading = [n for n in plan.read + plan.notes if n.code not in ROUTINE_NOTES]
    keyed = [n for code in KEY_ASSUMPTIONS for n in all_notes if n.code == code and n not in reading]
    chosen = _unique(reading + keyed)[:most]
    shown = [message(n, plan.lang) for n in chosen]
    return shown, len(_unique(all_notes)) - len(chosen)


def _unique(notes: list[Note]) -> list[Note]:
    out: list[Note] = []
    for n in notes:
        if n not in out:
            out.append(n)
    return out


def fit_word(memory: Any, lang: str) -> str:
    key = "tight" if memory.fits and memory.tight else "fits" if memory.fits else "no_fit"
    return label("fit", key, lang)


def network_line(plan: Answer, always: bool = False) -> str:
    """Traffic inside a server and between servers, named apart; one node only when the GPUs wait on
    their own links for a tenth of the step or more (`always`: whenever there is traffic)."""
    net, r = plan.estimate.network, plan.estimate.resolved
    if net is None or net.per_step_gb <= 0 or (net.single_node and net.comm_fraction < 0.1 and not always):
        return ""
    options = [dict(option) for option in net.options]  # a message quotes values, not models
    params = {**dict(net), "options": options, "method": r.method, "nodes": r.nodes}
    return message(Note(code="network_line", params=params), plan.lang)


def answer_options(plan: Answer) -> dict[str, Any]:
    """What else to weigh, by the verdict: the other ways to fit, the compared options side by side,
    or the estimator's alternatives."""
    v, lang, est = plan.verdict, plan.lang, plan.estimate
    if plan.comparison:
        rows = [message(Note(code="row.compare", params=_row_params(row, lang)), lang) for row in plan.comparison]
        return {"options": rows, "options_title": label("ui", "compared", lang)}
    if v is not None and v.remedies:
        shown = 2 if v.kind == "does_not_fit" else 1  # the headline says these
        rows = [remedy_text(r, lang) for r in v.remedies[shown:]]
        return {"options": rows, "options_title": label("ui", "other_fixes", lang)}
    if v is not None and v.kind in ("does_not_fit", "diagnosis"):
        return {"options": [], "options_title": ""}
    if plan.footprint and v is not None and v.asked == "memory":  # the least memory per method is the answer's
        return {"options": [], "options_title": ""}
    rows = [
        message(Note(code="row.alternative", params={**a.model_dump(), "card": card(a.gpu_name)}), lang)
        for a in est.alternatives[:3]
    ]
    return {"options": rows, "options_title": label("ui", "alternatives", lang)}


def _row_params(row: ComparisonRow, lang: str) -> dict[str, Any]:
    name = label("method", row.method, lang) if row.kind == "method" else row.model_name
    if row.kind == "gpu":
        name = card(row.gpu_name)
    return {**row.model_dump(), "option_name": name, "card": card(row.gpu_name)}


@functools.cache
def _rule_template(lang: str, rule_id: str) -> tuple[str, jinja2.Template, list[str]]:
    """A troubleshooting rule's title, compiled answer and checks in one language, compiled the first
    time a plan shows that rule (a plan shows a few of some 50)."""
    rule = next(r for r in catalog().rules if r.id == rule_id)
    answer = cached_environment(trim=False).get_template(f"{lang}/rules/{rule_id}/answer")
    return getattr(rule.title, lang), answer, list(getattr(rule.checks, lang))


class _Absent(dict):
    """Facts and probes for rule answers: a fact or probe the plan does not have reads as None,
    so an answer's `{% if p.sharded %}` simply skips it (the templates stay strict otherwise)."""

    def __missing__(self, key: str) -> None:
        return None


def display_facts(facts: Facts | None, lang: str) -> dict[str, Any]:
    """The plan's facts plus the words answers quote (storage, fabric, data kind) in this language."""
    f = dict(facts) if facts is not None else {}
    if f.get("has_plan"):
        f.update(
            read_rate=rate(f.get("read_mb_s_per_node", 0.0)),
            data_label=label("data", f.get("data"), lang),
            storage_name=name_of("storage", f.get("storage"), lang),
            region_name=name_of("region", f.get("region"), lang),
            offload_label=label("offload", f.get("offload"), lang),
            fabric_name=name_of("fabric", f.get("fabric"), lang),
            checkpoint_size=size(f.get("checkpoint_gb", 0.0)),
        )
    return f


def diagnoses(plan: Answer) -> list[dict[str, Any]]:
    """The plan's diagnoses rendered in its language: {id, topic, title, answer, checks, fired_by, probes}."""
    lang = plan.lang
    f = display_facts(plan.facts, lang)
    out = []
    for d in plan.diagnoses:
        title, answer, checks = _rule_template(lang, d.id)
        text = answer.render(
            f=_Absent(f),
            p=_Absent(d.probes),
            lang=lang,
            label=lambda k, v: label(k, v, lang),
            name=lambda kind, key: name_of(kind, key, lang),
        )
        text = "\n".join(line.strip() for line in text.strip().splitlines() if line.strip())
        out.append(
            {
                "id": d.id,
                "topic": d.topic,
                "title": title,
                "answer": text,
                "checks": checks,
                "fired_by": d.fired_by,
                "probes": {name: probe.model_dump() for name, probe in d.probes.items()},
            }
        )
    return out


# the assumptions a customer can confirm or correct, in the order a reply lists them
CUSTOMER_ASSUMPTIONS = (
    "default_method",
    "generic_arch",
    "currency_converted",
    "default_seq",
    "tokens_default",
    "tokens_chinchilla",
    "tokens_from_samples",
    "tokens_from_dataset",
    "default_precision",
    "default_serve_precision",
    "default_concurrency",
    "pool_full_load",
    "asked_full_load",
    "gpu_memory_class",
    "default_data",
    "pretrain_target",
    "recipe_speed",
)


def ticket(plan: Answer, question: str) -> tuple[str, str]:
    """(customer reply, internal note): plain text that pastes into any ticket system. The reply opens
    with the headline and quotes the assumptions in customer words (no gpuplan settings syntax)."""
    lang = plan.lang
    est = plan.estimate
    notes = plan.notes + (est.assumptions if est else [])
    key = [customer_words(message(n, lang)) for code in CUSTOMER_ASSUMPTIONS for n in notes if n.code == code]
    told, _ = diagnoses_shown(plan)
    fixes = [remedy_text(r, lang) for r in (plan.verdict.remedies or [])] if plan.verdict else []
    reply = render(
        "ticket_reply.txt.j2",
        lang,
        plan=plan,
        est=est,
        headline=headline(plan),
        diagnoses=[{**d, "answer": customer_words(d["answer"])} for d in told],
        key_assumptions=key,
        fixes=fixes,
    )
    note = render(
        "ticket_note.txt.j2", lang, plan=plan, est=est, diagnoses=diagnoses(plan), notes=notes, question=question
    )
    return reply.strip() + "\n", note.strip() + "\n"


# a bracketed hint that names gpuplan's settings ("(set seq= to change it)", "（可用 seq= 修改）")
_SETTINGS_HINT = re.compile(r"\s*[(（][^()（）]*\b[a-z_]+=[^()（）]*[)）]")


def customer_words(text: str) -> str:
    """A sentence for a customer: without the hints that name gpuplan's own settings."""
    return _SETTINGS_HINT.sub("", text)


# --- the headline: the answer to the question asked, the first line on every surface ----------------


def headline(plan: Answer) -> str:
    """The verdict of `plan` (estimator/verdict.py) as one sentence in its language."""
    v = plan.verdict
    if v is None:
        return ""
    lang = plan.lang
    if v.kind == "other":
        return _other_headline(plan)
    ctx = _headline_context(plan)
    if v.kind == "diagnosis":
        return _diagnosis_headline(plan, ctx)
    return message(Note(code=f"headline_{v.kind}", params=ctx), lang)


def _headline_context(plan: Answer) -> dict[str, Any]:
    """The verdict's values, with the words a sentence needs: the job, the GPU's short name, the
    remedies as phrases, the options of a choice by their short names."""
    v, lang = plan.verdict, plan.lang
    ctx: dict[str, Any] = dict(v)
    ctx["remedies"] = [dict(r) for r in v.remedies] if v.remedies is not None else None  # values, not models
    ctx.update(card=card(v.gpu_name), fixes=[remedy_text(r, lang) for r in v.remedies or []])
    ctx["storage_name"] = name_of("storage", v.storage, lang)  # "" where no storage was asked
    ctx["bounded"] = v.bounded or []
    if v.kind == "choice" and (v.pick in METHODS or (v.other or "").split(" / ")[0] in METHODS):
        ctx["job"] = model_text(v.model_name or "", bool(v.generic), lang)  # the methods are the options
    elif v.model_name is not None and v.method is not None:
        ctx["job"] = job_text(v.method, v.model_name, bool(v.generic), lang)
    else:
        ctx["job"] = ""
    for key in ("pick", "other"):
        if v.kind == "choice" and ctx[key]:
            ctx[key] = _option_text(ctx[key], lang)
    return ctx


def job_text(method: str, model_name: str, generic: bool, lang: str) -> str:
    """'a full fine-tune of Qwen2.5 7B', '部署推理 Llama 3 70B', 'pretraining a 3B model'."""
    return message(Note(code=f"job.{method}", params={"model": model_text(model_name, generic, lang)}), lang)


def model_text(model_name: str, generic: bool, lang: str) -> str:
    """'Qwen2.5 7B', or a bare size as a model: 'a 70B model' / '70B 模型'."""
    return message(Note(code="model_generic", params={"size": model_name}), lang) if generic else model_name


def remedy_text(remedy: Any, lang: str) -> str:
    """A remedy as a phrase that completes "to fit, ..." / "First try: ...": a ladder of the run's own
    settings or of what serving gives up names each step; a single change has its own phrase."""
    params = {**dict(remedy), "card": card(remedy.gpu_name)}
    steps = remedy.change.split("+")
    if remedy.change in ("gpus", "offload", "method") or (remedy.change == "seq_len" and remedy.concurrency is None):
        return message(Note(code=f"fix.{remedy.change}", params=params), lang)
    kind = "serving" if remedy.concurrency is not None else "setting"
    names = [message(Note(code=f"{kind}.{step}", params=params), lang) for step in dict.fromkeys(steps)]
    key = "parts" if kind == "serving" else "settings"
    return message(
        Note(code=f"fix.{kind}s" if kind == "setting" else "fix.serving", params={**params, key: _joined(names, lang)}),
        lang,
    )


def _joined(items: list[str], lang: str) -> str:
    if lang == "zh":
        return "、".join(items[:-1]) + ("和" if len(items) > 1 else "") + items[-1]
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]


def _option_text(option: str, lang: str) -> str:
    """A compared option by its short name: '8 x NVIDIA L40S 48GB' -> '8 x L40S 48GB'; a method by its label;
    options joined by ' / ' each so."""
    if " / " in option:
        return " / ".join(_option_text(part, lang) for part in option.split(" / "))
    if option in METHODS:
        return label("method", option, lang)
    count, sep, name = option.partition(" x ")
    if not sep:
        return option
    return f"{count} 张 {card(name)}" if lang == "zh" else f"{count} x {card(name)}"


def _diagnosis_headline(plan: Answer, ctx: dict[str, Any]) -> str:
    """The leading rule's one-sentence answer: the most likely cause and the first thing to try."""
    rule = next(r for r in catalog().rules if r.id == plan.verdict.cause)
    template = cached_environment().get_template(f"{plan.lang}/rules/{rule.id}/headline")
    probes = next((d.probes for d in plan.diagnoses if d.id == rule.id), {})
    lang = plan.lang
    return template.render(
        f=_Absent(display_facts(plan.facts, lang)),
        p=_Absent(probes),
        v=_Absent(dict(plan.verdict)),
        lang=lang,
        label=lambda k, v: label(k, v, lang),
        **{k: ctx[k] for k in ("job", "card", "fixes")},
    ).strip()


def _other_headline(plan: Answer) -> str:
    """No verdict on figures: what gpuplan does (help, outside its field) or the question back."""
    reason = plan.verdict.reason
    if reason == "help":
        return message(Note(code="headline_help"), plan.lang)
    notes = plan.clarify if reason == "clarify" else [n for n in plan.notes if n.code == "out_of_scope"]
    return message(notes[0], plan.lang) if notes else ""


def error_text(notes: list[Note], lang: str) -> str:
    return render("error.txt.j2", lang, lines=notes_text(notes, lang)).strip()


def notes_text(notes: list[Note], lang: str) -> list[str]:
    return [message(n, lang) for n in notes]


def short_answer(plan: Answer, details: bool = False) -> str:
    """An answer without figures, headline first: the largest model or a price with its rows, the
    leading diagnosis of a symptom (the others named), a question back, the reading's notes, what
    was not understood; nothing the headline said, nothing twice. `details` tells every diagnosis
    and every note."""
    lang = plan.lang
    said = {"out_of_scope", "price_line"}
    body = notes_text([n for n in plan.findings if n.code not in said], lang)
    if plan.verdict is None or plan.verdict.reason != "clarify":
        body += notes_text(plan.clarify, lang)
    told, titled = diagnoses_shown(plan)
    if details or not told:
        told, titled = diagnoses(plan), []
    for d in told:
        body += ["", d["title"], d["answer"]] + [f"  - {check}" for check in d["checks"]]
    if titled:
        body.append(message(Note(code="also_worth_a_look", params={"titles": titled}), lang))
    notes = _unique([n for n in plan.notes if n.code not in said and n.code not in ROUTINE_NOTES])
    shown = notes if details else notes[:MOST_NOTES]
    body += [""] * bool(told and shown) + notes_text(shown, lang)
    if len(notes) > len(shown):
        body.append(message(Note(code="more_in_details", params={"count": len(notes) - len(shown)}), lang))
    if plan.not_understood:
        body.append(message(Note(code="not_understood", params={"words": plan.not_understood}), lang))
    while body and not body[0].strip():
        body.pop(0)
    return "\n".join([headline(plan), *([""] + body if body else [])]).rstrip()
