"""Render notes and plans as text in English or Chinese, from `templates/<lang>/`.

Templates are compiled once per process (StrictUndefined: a missing value is a bug, not a blank).
"""

from __future__ import annotations

import functools
import math
from importlib import resources
from typing import Any

import jinja2

from gpuplan.estimator.schema import Note, Plan
from gpuplan.knowledge import catalog, read_yaml

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
    if seconds < 3600:
        minutes = seconds / 60
        return _count(_trim(round(minutes, 1)) if minutes < 10 else f"{minutes:.0f}", "minute", "分钟", lang)
    if days < 2:
        return _count(_trim(days * 24), "hour", "小时", lang)
    return _count(_trim(days), "day", "天", lang)


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
    )
    return env


@functools.cache
def messages(lang: str) -> dict[str, jinja2.Template]:
    """The message catalog of one language: code -> compiled template."""
    path = resources.files("gpuplan.templates").joinpath(lang, "messages.yaml")
    table = read_yaml(path.read_text(encoding="utf-8"))
    env = environment()
    return {code: env.from_string(text) for code, text in table.items()}


def message(note: Note | dict, lang: str) -> str:
    if isinstance(note, dict):
        note = Note(**note)
    template = messages(lang).get(note.code)
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
    template = messages(lang).get(f"{kind}.{value}")
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
    env = environment()
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


def plan_text(plan: Plan) -> str:
    """The plan for a terminal."""
    return render(
        "plan.txt.j2",
        plan.lang,
        plan=plan,
        est=plan.estimate,
        diagnoses=diagnoses(plan),
        notes=plan.notes + plan.estimate.assumptions,
    )


@functools.cache
def _rule_templates(lang: str) -> dict[str, tuple[str, jinja2.Template, list[str]]]:
    """Each troubleshooting rule's title, compiled answer and checks in one language."""
    env = environment(trim=False)
    out = {}
    for rule in catalog().rules:
        title = getattr(rule.title, lang)
        out[rule.id] = (title, env.from_string(getattr(rule.answer, lang)), list(getattr(rule.checks, lang)))
    return out


class _Absent(dict):
    """Facts and probes for rule answers: a fact or probe the plan does not have reads as None,
    so an answer's `{% if p.sharded %}` simply skips it (the templates stay strict otherwise)."""

    def __missing__(self, key: str) -> None:
        return None


def display_facts(facts: dict[str, Any], lang: str) -> dict[str, Any]:
    """The plan's facts plus the words answers quote (storage, fabric, data kind) in this language."""
    f = dict(facts)
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


def diagnoses(plan: Plan) -> list[dict[str, Any]]:
    """The plan's diagnoses rendered in its language: {id, topic, title, answer, checks, fired_by, probes}."""
    lang = plan.lang
    templates = _rule_templates(lang)
    f = display_facts(plan.facts, lang)
    out = []
    for d in plan.diagnoses:
        title, answer, checks = templates[d["id"]]
        text = answer.render(
            f=_Absent(f),
            p=_Absent(d["probes"]),
            lang=lang,
            label=lambda k, v: label(k, v, lang),
            name=lambda kind, key: name_of(kind, key, lang),
        )
        text = "\n".join(line.strip() for line in text.strip().splitlines() if line.strip())
        out.append(
            {
                "id": d["id"],
                "topic": d["topic"],
                "title": title,
                "answer": text,
                "checks": checks,
                "fired_by": d["fired_by"],
                "probes": d["probes"],
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
    "gpu_memory_class",
    "default_data",
    "pretrain_target",
)


def ticket(plan: Plan, question: str) -> tuple[str, str]:
    """(customer reply, internal note): plain text that pastes into any ticket system."""
    lang = plan.lang
    est = plan.estimate
    notes = plan.notes + (est.assumptions if est else [])
    key = [message(n, lang) for code in CUSTOMER_ASSUMPTIONS for n in notes if n.code == code]
    diag = diagnoses(plan)
    reply = render(
        "ticket_reply.txt.j2", lang, plan=plan, est=est, diagnoses=diag, key_assumptions=key, rec=recommendation(plan)
    )
    note = render("ticket_note.txt.j2", lang, plan=plan, est=est, diagnoses=diag, notes=notes, question=question)
    return reply.strip() + "\n", note.strip() + "\n"


def recommendation(plan: Plan) -> dict[str, Any] | None:
    """What to recommend to a customer: the plan when it fits; when the customer's own setup does
    not, the fewest GPUs that hold the job as the memory diagnosis re-estimated it."""
    est = plan.estimate
    if est is None:
        return None
    r, m, c = est.resolved, est.memory, est.compute
    plan_rec = {
        "gpus": r.gpus,
        "gpu_name": r.gpu_name,
        "zero": r.zero,
        "tp": r.tp,
        "pp": r.pp,
        "ckpt": r.ckpt,
        "offload": r.offload,
        "per_gpu_gib": m.per_gpu_gib,
        "capacity_gib": m.capacity_gib,
        "days": c.days,
        "cost_usd": c.cost_usd,
        "nodes": r.nodes,
        "from_plan": True,
    }
    if m.fits:
        return plan_rec
    for d in plan.diagnoses:
        sharded = d["probes"].get("sharded")
        if sharded and sharded["fits"]:
            return {**sharded, "tp": None, "pp": None, "from_plan": False}
    return plan_rec


def error_text(notes: list[Note], lang: str) -> str:
    return render("error.txt.j2", lang, lines=notes_text(notes, lang)).strip()


def notes_text(notes: list[Note], lang: str) -> list[str]:
    return [message(n, lang) for n in notes]


def short_answer(plan: Plan) -> str:
    """An answer without figures: a question back, the topics heard, what was not understood."""
    lang = plan.lang
    lines = notes_text(plan.findings, lang) + notes_text(plan.clarify, lang)
    for d in diagnoses(plan):
        lines += ["", d["title"], d["answer"]] + [f"  - {check}" for check in d["checks"]]
    if plan.diagnoses:
        lines.append("")
    lines += notes_text(plan.notes, lang)
    if plan.not_understood:
        lines.append(message(Note(code="not_understood", params={"words": plan.not_understood}), lang))
    return "\n".join(lines)
