"""Block Kit pages that are not a plan: Slack help, tiers, troubleshooting topics, the GPU and
model catalogs, a user's history and App Home. Pure functions; wording in templates/<lang>/.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from gpuplan.bot import render
from gpuplan.bot.answer import Answer
from gpuplan.bot.slack import blocks
from gpuplan.bot.slack.blocks import button, fit, fit_modal, parts, section
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import catalog

USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")
CATALOG_ROWS_PER_BLOCK = 20  # ~80 characters a row keeps a block well under 3,000
HOME_EXAMPLES = 5
QUESTION_PREVIEW = 150


@dataclass(frozen=True)
class HistoryItem:
    id: str
    created_at: float
    summary: str
    question: str


def summary(plan: Answer) -> str:
    """One line for history and App Home: what was asked and what it needs."""
    lang = plan.lang
    est = plan.estimate
    if plan.intent == "help":
        return render.message(Note(code="summary.help"), lang)
    if est is None:
        if plan.diagnoses:
            titles = ", ".join(d["title"] for d in render.diagnoses(plan)[:2])
            return render.message(Note(code="summary.topics", params={"titles": titles}), lang)
        return render.message(Note(code="summary.clarify"), lang)
    r, c = est.resolved, est.compute
    if r.method == "infer":
        params = {"model": r.model_name, "gpus": r.gpus, "gpu": r.gpu_name, "hourly": c.price_usd_per_gpu_hour * r.gpus}
        return render.message(Note(code="summary.serve", params=params), lang)
    params = {
        "model": r.model_name,
        "method": r.method,
        "gpus": r.gpus,
        "gpu": r.gpu_name,
        "days": c.days,
        "cost": c.cost_usd,
    }
    return render.message(Note(code="summary.plan", params=params), lang)


def when(timestamp: float) -> Markup:
    """Slack renders the date in each reader's own time zone; the fallback is UTC."""
    fallback = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(timestamp))
    return Markup(f"<!date^{int(timestamp)}^{{date_short_pretty}} {{time}}|{fallback}>")


def _history_rows(items: list[HistoryItem]) -> list[dict[str, Any]]:
    return [
        {
            "id": item.id,
            "when": when(item.created_at),
            "summary": item.summary,
            "question": _preview(item.question),
        }
        for item in items
    ]


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= QUESTION_PREVIEW else flat[: QUESTION_PREVIEW - 1] + "…"


def _tiers(lang: str) -> list[dict[str, Any]]:
    cat = catalog()
    return [
        {
            "id": t.id,
            "kind": t.kind,
            "title": getattr(t.title, lang),
            "summary": getattr(t.summary, lang),
            "url": cat.tier_url(t),
        }
        for t in cat.tiers
    ]


def _rules(lang: str) -> list[dict[str, str]]:
    return [{"id": r.id, "title": getattr(r.title, lang)} for r in catalog().rules]


def _build(template: str, lang: str, decorate: dict[str, list[dict]] | None = None, **context: Any) -> list[dict]:
    """Blocks from a page template. Parts named in `decorate` get, in order, the given accessories."""
    decorate = {name: list(items) for name, items in (decorate or {}).items()}
    out: list[dict] = []
    for name, text in parts(template, lang, **context):
        if name == "header":
            out.append({"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}})
        elif name == "fallback":
            continue
        else:
            block = section(text)
            if decorate.get(name):
                block["accessory"] = decorate[name].pop(0)
            out.append(block)
    return out


def _fallback(template: str, lang: str, **context: Any) -> str:
    return next((text for name, text in parts(template, lang, **context) if name == "fallback"), "gpuplan")


def _page(template: str, lang: str, decorate: dict[str, list[dict]] | None = None, **context: Any) -> dict:
    return fit(
        {"text": _fallback(template, lang, **context), "blocks": _build(template, lang, decorate, **context)}, lang
    )


def _ui(key: str, lang: str) -> str:
    return render.label("ui", key, lang)


def _tier_buttons(tiers: list[dict[str, Any]], lang: str) -> list[dict]:
    return [button(_ui("open_tier", lang), f"open_tier_{t['id']}", t["id"], url=t["url"]) for t in tiers]


def help_page(lang: str, command: str = "/gpuplan") -> dict:
    return _page("slack_help.j2", lang, command=command, examples=render.examples(lang))


def tiers_page(lang: str) -> dict:
    tiers = _tiers(lang)
    return _page("slack_tiers.j2", lang, {"tier": _tier_buttons(tiers, lang)}, tiers=tiers)


def faq_page(lang: str, command: str = "/gpuplan", missed: str = "") -> dict:
    return _page("slack_faq.j2", lang, command=command, rules=_rules(lang), missed=missed)


def catalog_page(kind: str, lang: str) -> dict:
    """`gpus` or `models` as fixed-width tables, split so no block passes Slack's limit."""
    cat = catalog()
    if kind == "gpus":
        rows = [
            {
                "id": g.id,
                "memory_gib": g.memory_gib,
                "bf16": f"{g.bf16_tflops:g}" if g.bf16_tflops else "-",
                "price": g.price_usd_per_hour,
                "name": g.name,
            }
            for g in cat.gpus.values()
        ]
    else:
        rows = [
            {
                "id": m.id,
                "params": f"{m.params_b:g}",
                "layers": m.layers,
                "hidden": m.hidden,
                "context": m.max_context,
            }
            for m in cat.models.values()
        ]
    chunks = [rows[i : i + CATALOG_ROWS_PER_BLOCK] for i in range(0, len(rows), CATALOG_ROWS_PER_BLOCK)]
    return _page("slack_catalog.j2", lang, kind=kind, chunks=chunks)


def history_page(items: list[HistoryItem], lang: str, command: str = "/gpuplan") -> dict:
    show = [button(_ui("open_plan", lang), "show_plan", item.id) for item in items]
    return _page("slack_history.j2", lang, {"plan": show}, plans=_history_rows(items), command=command)


def home_view(items: list[HistoryItem], lang: str, command: str = "/gpuplan") -> dict:
    """The App Home tab (a `home` view, up to 100 blocks)."""
    tiers = _tiers(lang)
    decorate = {
        "plan": [button(_ui("open_plan", lang), "show_plan", item.id) for item in items],
        "tier": _tier_buttons(tiers, lang),
    }
    context = {
        "plans": _history_rows(items),
        "tiers": tiers,
        "rules": _rules(lang),
        "examples": render.examples(lang)[:HOME_EXAMPLES],
        "command": command,
    }
    view = {"type": "home", "blocks": _build("slack_home.j2", lang, decorate, **context)}
    return fit_modal(view, lang)


def plan_modal(plan: Answer, plan_id: str) -> dict:
    """A stored plan opened from App Home or history: the plan's blocks in a modal, no buttons."""
    message = blocks.plan_message(plan, plan_id, with_actions=False)
    view = {
        "type": "modal",
        "callback_id": "plan_view",
        "title": {"type": "plain_text", "text": f"gpuplan {plan_id}"},
        "close": {"type": "plain_text", "text": _ui("close", plan.lang)},
        "blocks": message["blocks"],
    }
    return fit_modal(view, plan.lang)


def notice(code: str, lang: str, **params: Any) -> dict:
    """A one-line message from the catalog (not found, needs an id, ...), user values escaped."""
    return blocks.error_message([Note(code=code, params=params)], lang)


def shared_context(user_id: str, lang: str) -> dict:
    """The "shared by" line under a plan posted to the channel; a malformed id is not linked."""
    who = f"<@{user_id}>" if USER_ID.match(user_id or "") else blocks.escape(user_id or "?")
    text = render.message(Note(code="shared_by", params={"who": "WHO"}), lang).replace("WHO", who)
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def message_modal(message: dict, lang: str) -> dict:
    """A message (an error, a question back) shown as a modal, for surfaces that can only open one."""
    view = {
        "type": "modal",
        "callback_id": "gpuplan_message",
        "title": {"type": "plain_text", "text": "gpuplan"},
        "close": {"type": "plain_text", "text": _ui("close", lang)},
        "blocks": message["blocks"],
    }
    return fit_modal(view, lang)
