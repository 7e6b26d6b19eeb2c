"""Slack Block Kit messages, built by pure functions (no Slack calls here).

Wording comes from templates/<lang>/slack_*.j2 as named parts ("@@ name"); this module arranges
the parts into blocks, adds the buttons, escapes everything for mrkdwn, and fits the result
inside Slack's limits (long content is shortened and pointed to the details view, never
rejected by Slack).
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import OrderedDict
from typing import Any

import jinja2
from markupsafe import Markup

from gpuplan.bot import render
from gpuplan.bot.answer import Answer
from gpuplan.bot.slack import selects
from gpuplan.estimator import memo
from gpuplan.estimator.schema import Note

# Slack's documented limits (api.slack.com/reference/block-kit)
LIMITS = {
    "blocks_message": 50,
    "blocks_modal": 100,
    "section_text": 3000,
    "fields": 10,
    "field_text": 2000,
    "header_text": 150,
    "context_elements": 10,
    "context_text": 2000,
    "button_text": 75,
    "button_value": 2000,
    "action_id": 255,
    "block_id": 255,
    "url": 3000,
    "actions_elements": 25,
    "select_options": 100,
    "option_groups": 100,
    "option_group_label": 75,
    "option_text": 75,
    "option_value": 150,
    "placeholder": 150,
    "message_text": 40000,
    "modal_title": 24,
    "modal_button": 24,
    "private_metadata": 3000,
    "fallback_text": 3000,
}
ELLIPSIS = "…"


def escape(text: Any) -> str:
    """Slack mrkdwn control characters (&, <, >) made inert: `<!channel>` prints, never pings."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


PART = re.compile(r"@@ ([a-z_]+)\n")


def _finalize(value: Any) -> Any:
    """Escape interpolated text; "@@" is broken so no value can forge a part marker. Markup
    values are ours (Slack date tokens), built from numbers, and pass as they are."""
    if isinstance(value, Markup):
        return str(value)
    return escape(value).replace("@@", "@\u200b@") if isinstance(value, str) else value


@functools.cache
def slack_environment() -> jinja2.Environment:
    """The text environment, plus escaping of every interpolated value."""
    base = render.environment()
    env = base.overlay(finalize=_finalize)
    return env


def parts(template: str, lang: str, **context: Any) -> list[tuple[str, str]]:
    """Render a Slack template into its named parts, in order."""
    env = slack_environment()
    text = env.get_template(f"{lang}/{template}").render(
        lang=lang,
        message=lambda n: render.message(n, lang),
        label=lambda k, v: render.label(k, v, lang),
        name=lambda kind, key: render.name_of(kind, key, lang),
        **context,
    )
    pieces = PART.split(text)  # [before, name, body, name, body, ...]
    out: list[tuple[str, str]] = []
    for name, body in zip(pieces[1::2], pieces[2::2], strict=True):
        body = body.strip("\n")
        if body.strip():
            out.append((name, body))
    return out


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def button(text: str, action_id: str, value: str = "", url: str | None = None, style: str | None = None) -> dict:
    b: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_id": action_id,
    }
    if value:
        b["value"] = value
    if url:
        b["url"] = url
    if style:
        b["style"] = style
    return b


def _ui(key: str, lang: str) -> str:
    return render.label("ui", key, lang)


def assemble(named: list[tuple[str, str]], lang: str) -> tuple[list[dict], str]:
    """Blocks from named parts: header, fields grouped into one section, context for assumptions."""
    blocks: list[dict] = []
    fallback = ""
    fields: list[str] = []
    context: list[str] = []

    def flush_fields() -> None:
        if fields:
            blocks.append({"type": "section", "fields": [{"type": "mrkdwn", "text": f} for f in fields]})
            fields.clear()

    for name, text in named:
        if name != "field":
            flush_fields()
        if name == "header":
            blocks.append({"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}})
        elif name == "field":
            fields.append(text)
            if len(fields) == LIMITS["fields"]:
                flush_fields()
        elif name == "assumptions":
            context.extend(line for line in text.splitlines() if line.strip())
        elif name == "fallback":
            fallback = text
        elif name == "job":  # what was estimated, in small print under the header
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": text}]})
        elif name == "diagnosis":
            blocks.append(section(text))
        elif name == "notes":  # warnings and pointers, in small print
            lines = [line for line in text.splitlines() if line.strip()]
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": line} for line in lines]})
        else:
            blocks.append(section(text))
    flush_fields()
    if context:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": line} for line in context]})
    return blocks, fallback


def _plan_ref(plan: Answer, plan_id: str | None) -> str:
    """What the buttons carry back: the stored plan's id, else the request itself."""
    if plan_id:
        return plan_id
    fields = plan.request.model_dump(exclude_none=True)
    fields["lang"] = plan.lang
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def actions(plan: Answer, plan_id: str | None) -> dict:
    """Change the method (a serving plan: precision, context, concurrency) or GPU, show the math, config
    files, share in the channel, draft a ticket reply."""
    lang = plan.lang
    ref = _plan_ref(plan, plan_id)
    return {
        "type": "actions",
        "block_id": f"plan:{ref}" if len(ref) < 240 else "plan",
        "elements": [
            selects.method_select(plan),
            selects.gpu_select(plan),
            button(_ui("show_details", lang), "show_details", ref),
            button(_ui("show_math", lang), "show_math", ref),
            button(_ui("config_files", lang), "show_configs", ref),
            button(_ui("share", lang), "share", ref, style="primary"),
            button(_ui("draft_ticket", lang), "draft_ticket", ref),
        ],
    }


def plan_message(plan: Answer, plan_id: str | None = None, with_actions: bool = True) -> dict:
    """The whole answer as a Slack message: {"text": fallback, "blocks": [...]}."""
    if plan.intent == "help":
        return help_message(plan.lang)
    fallback, body = plan_body(plan)
    return message_from_body(plan, fallback, body, plan_id, with_actions)


def message_from_body(plan: Answer, fallback: str, body: str, plan_id: str | None, with_actions: bool = True) -> dict:
    """A plan message from its rendered body (see plan_body) plus the buttons for this plan id."""
    blocks = json.loads(body)  # a fresh copy, already fitted with room for one more block
    if with_actions and plan.estimate is not None:
        blocks += _fit_blocks([actions(plan, plan_id)], 1, plan.lang)
    return {"text": fallback, "blocks": blocks}


_BODY_MEMO: OrderedDict[str, tuple[str, str]] = OrderedDict()
_BODY_MEMO_SIZE = 1024
_BODY_LOCK = threading.Lock()


def plan_body(plan: Answer, key: str | None = None) -> tuple[str, str]:
    """(fallback text, the plan's blocks as JSON) without the buttons, which carry the plan id.
    Memoised by the plan's content (`key`: its JSON): rendering is a pure function of it."""
    if not memo.enabled():
        return _render_plan_body(plan)
    key = key or plan.model_dump_json(exclude_defaults=True)
    with _BODY_LOCK:
        hit = _BODY_MEMO.get(key)
        if hit is not None:
            _BODY_MEMO.move_to_end(key)
            return hit
    value = _render_plan_body(plan)
    with _BODY_LOCK:
        _BODY_MEMO[key] = value
        while len(_BODY_MEMO) > _BODY_MEMO_SIZE:
            _BODY_MEMO.popitem(last=False)
    return value


def _render_plan_body(plan: Answer) -> tuple[str, str]:
    lang = plan.lang
    head, rest = split_headline(render.headline(plan))
    if plan.estimate is None:
        said = {"out_of_scope", "price_line"}
        clarify = [] if plan.verdict is not None and plan.verdict.reason == "clarify" else plan.clarify
        named = parts(
            "slack_short.j2",
            lang,
            head=head,
            rest=rest,
            findings=[n for n in plan.findings if n.code not in said],
            clarify=clarify,
            diagnoses=render.diagnoses(plan),
            notes=[n for n in plan.notes if n.code not in said],
            unknown=plan.not_understood,
        )
        blocks, fallback = assemble(named, lang)
    else:
        named = parts("slack_plan.j2", lang, **plan_context(plan), head=head, rest=rest)
        blocks, fallback = assemble(named, lang)
        _tier_button(plan, blocks)
    # room for the buttons: fit as a message of 49 blocks so appending them stays within 50
    message = fit({"text": fallback, "blocks": blocks}, lang, max_blocks=LIMITS["blocks_message"] - 1)
    return message["text"], json.dumps(message["blocks"], ensure_ascii=False)


def plan_context(plan: Answer) -> dict[str, Any]:
    """What the one-screen plan shows, as the terminal's (bot/render.py) decides it."""
    told, titled = render.diagnoses_shown(plan)
    shown, hidden = render.key_notes(plan)
    return {
        "plan": plan,
        "est": plan.estimate,
        "headline": render.headline(plan),
        "diagnoses": told,
        "also": titled,
        "key_notes": shown,
        "more_notes": hidden,
        "warnings": [render.message(w, plan.lang) for w in render.said_elsewhere_dropped(plan)],
        "fit_word": render.fit_word(plan.estimate.memory, plan.lang),
        "network_line": render.network_line(plan),
        **render.answer_options(plan),
    }


def _tier_button(plan: Answer, blocks: list[dict]) -> None:
    """The tier's link as a button beside its line."""
    if not plan.tier:
        return
    tier_block = next(
        (b for b in blocks if b.get("text", {}).get("text", "").startswith(("*Tier:*", "*对应方案：*"))), None
    )
    if tier_block is not None:
        url = plan.tier.url
        tier_block["accessory"] = button(_ui("open_tier", plan.lang), "open_tier", plan.tier.id, url=url)


# where a long headline splits into the header (150 characters at most) and a line below it: after a
# sentence, else after a clause of some length, never inside brackets
_SENTENCE_ENDS = (". ", "。")
_CLAUSE_ENDS = ("; ", "；", ", ", "，")
_SHORTEST_CLAUSE = 60


def split_headline(text: str, limit: int = LIMITS["header_text"]) -> tuple[str, str]:
    """(header, the rest): the headline whole when it fits a header, else cut after its last
    sentence that does, else after its last clause of 60 characters or more that does, else at a
    word with an ellipsis; the rest goes on the line below."""
    if len(text) <= limit:
        return text, ""
    for ends, shortest in ((_SENTENCE_ENDS, 1), (_CLAUSE_ENDS, _SHORTEST_CLAUSE)):
        cuts = [i + len(e) for e in ends for i in _positions(text, e, limit) if i >= shortest]
        if cuts:
            cut = max(cuts)
            head = text[:cut].rstrip().rstrip(",，;；")
            rest = text[cut:].strip()
            return head, rest[:1].upper() + rest[1:]
    spaces = [i for i in _positions(text, " ", limit - 1) if i > _SHORTEST_CLAUSE] or [text.rfind(" ", 0, limit - 1)]
    cut = spaces[-1] if spaces[-1] > _SHORTEST_CLAUSE else limit - 1
    return text[:cut].rstrip() + ELLIPSIS, ELLIPSIS + text[cut:].strip()


def _positions(text: str, end: str, limit: int) -> list[int]:
    """Where `end` occurs outside brackets, ending within `limit` characters."""
    found, depth = [], 0
    for i, ch in enumerate(text[:limit]):
        depth += ch in "(（[" and 1 or 0
        depth -= ch in ")）]" and 1 or 0
        if depth == 0 and text.startswith(end, i) and i + len(end.rstrip()) <= limit:
            found.append(i)
    return found


def details_modal(plan: Answer) -> dict:
    """Everything the plan says (every assumption, data, storage, network, tiers, all diagnoses)."""
    lang = plan.lang
    head, rest = split_headline(render.headline(plan))
    if plan.estimate is None:
        return fit_modal(_modal("show_details", _ui("details_title", lang), plan_message(plan)["blocks"], lang), lang)
    est = plan.estimate
    named = parts(
        "slack_details.j2",
        lang,
        plan=plan,
        est=est,
        head=head,
        rest=rest,
        diagnoses=render.diagnoses(plan),
        notes=plan.notes + est.assumptions,
    )
    blocks, _ = assemble(named, lang)
    return fit_modal(_modal("show_details", _ui("details_title", lang), blocks, lang), lang)


def _modal(callback_id: str, title: str, blocks: list[dict], lang: str) -> dict:
    return {
        "type": "modal",
        "callback_id": callback_id,
        "title": {"type": "plain_text", "text": title},
        "close": {"type": "plain_text", "text": _ui("close", lang)},
        "blocks": blocks,
    }


def help_message(lang: str) -> dict:
    text = render.help_text(lang)
    return fit({"text": _truncate(text, 200), "blocks": [section("```" + escape(text) + "```")]}, lang)


def error_message(notes: list[Note], lang: str) -> dict:
    text = escape(render.error_text(notes, lang))  # the fallback text is mrkdwn too: it notifies
    return fit({"text": text, "blocks": [section(":x: " + text)]}, lang)


def ticket_modal(plan: Answer, question: str, callback_id: str = "ticket_draft") -> dict:
    """A modal with the customer reply and the internal note, each ready to copy."""
    reply, note = render.ticket(plan, question)
    lang = plan.lang
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": _ui("reply_heading", lang)}},
        section("```" + escape(reply) + "```"),
        {"type": "header", "text": {"type": "plain_text", "text": _ui("note_heading", lang)}},
        section("```" + escape(note) + "```"),
    ]
    return fit_modal(
        {
            "type": "modal",
            "callback_id": callback_id,
            "title": {"type": "plain_text", "text": _ui("ticket_title", lang)},
            "close": {"type": "plain_text", "text": _ui("close", lang)},
            "blocks": blocks,
        },
        lang,
    )


def math_modal(plan: Answer) -> dict:
    """The breakdown behind the plan and the formulas it uses."""
    lang = plan.lang
    est = plan.estimate
    # the shape the estimate used, as it stored it (None for plans stored before it was kept)
    named = parts("slack_math.j2", lang, plan=plan, est=est, arch=est.architecture if est else None)
    blocks, _ = assemble(named, lang)
    return fit_modal(
        {
            "type": "modal",
            "callback_id": "show_math",
            "title": {"type": "plain_text", "text": _ui("math_title", lang)},
            "close": {"type": "plain_text", "text": _ui("close", lang)},
            "blocks": blocks,
        },
        lang,
    )


# --- Slack's limits ------------------------------------------------------------------------------


def violations(payload: dict, kind: str = "message") -> list[str]:
    """Every place a message or modal breaks one of Slack's limits (empty when it is fine)."""
    out: list[str] = []
    max_blocks = LIMITS["blocks_modal"] if kind == "modal" else LIMITS["blocks_message"]
    blocks = payload.get("blocks", [])
    if len(blocks) > max_blocks:
        out.append(f"{len(blocks)} blocks > {max_blocks}")
    if kind == "message" and len(payload.get("text", "")) > LIMITS["fallback_text"]:
        out.append("fallback text too long")
    if kind == "modal":
        for key in ("title", "close", "submit"):
            if key in payload and len(payload[key]["text"]) > LIMITS["modal_title"]:
                out.append(f"modal {key} too long")
        if len(payload.get("private_metadata", "")) > LIMITS["private_metadata"]:
            out.append("private_metadata too long")
    for i, block in enumerate(blocks):
        where = f"block {i} ({block.get('type')})"
        if len(block.get("block_id", "")) > LIMITS["block_id"]:
            out.append(f"{where}: block_id too long")
        kind_ = block.get("type")
        if kind_ == "header" and len(block["text"]["text"]) > LIMITS["header_text"]:
            out.append(f"{where}: header over {LIMITS['header_text']}")
        if kind_ == "section":
            if "text" in block and len(block["text"]["text"]) > LIMITS["section_text"]:
                out.append(f"{where}: text over {LIMITS['section_text']}")
            fields = block.get("fields", [])
            if len(fields) > LIMITS["fields"]:
                out.append(f"{where}: {len(fields)} fields")
            out += [
                f"{where}: field over {LIMITS['field_text']}" for f in fields if len(f["text"]) > LIMITS["field_text"]
            ]
            if "accessory" in block:
                out += _element_violations(block["accessory"], where)
            if "text" not in block and not fields:
                out.append(f"{where}: empty section")
        if kind_ == "context":
            elements = block.get("elements", [])
            if len(elements) > LIMITS["context_elements"]:
                out.append(f"{where}: {len(elements)} context elements")
            out += [
                f"{where}: context text too long" for e in elements if len(e.get("text", "")) > LIMITS["context_text"]
            ]
        if kind_ == "actions":
            elements = block.get("elements", [])
            if len(elements) > LIMITS["actions_elements"]:
                out.append(f"{where}: {len(elements)} elements")
            for element in elements:
                out += _element_violations(element, where)
    return out


def _element_violations(element: dict, where: str) -> list[str]:
    out = []
    if len(element.get("action_id", "")) > LIMITS["action_id"]:
        out.append(f"{where}: action_id too long")
    if element.get("type") == "button":
        if len(element["text"]["text"]) > LIMITS["button_text"]:
            out.append(f"{where}: button text too long")
        if len(element.get("value", "")) > LIMITS["button_value"]:
            out.append(f"{where}: button value too long")
        if len(element.get("url", "")) > LIMITS["url"]:
            out.append(f"{where}: url too long")
    if element.get("type") == "static_select":
        groups = element.get("option_groups", [])
        options = element.get("options", []) + [option for group in groups for option in group["options"]]
        if len(options) > LIMITS["select_options"]:
            out.append(f"{where}: {len(options)} options")
        if len(groups) > LIMITS["option_groups"]:
            out.append(f"{where}: {len(groups)} option groups")
        if any(len(group["label"]["text"]) > LIMITS["option_group_label"] for group in groups):
            out.append(f"{where}: option group label too long")
        for option in options:
            if len(option["text"]["text"]) > LIMITS["option_text"] or len(option["value"]) > LIMITS["option_value"]:
                out.append(f"{where}: option too long")
        if len(element.get("placeholder", {}).get("text", "")) > LIMITS["placeholder"]:
            out.append(f"{where}: placeholder too long")
    return out


def _fit_element(element: dict) -> dict:
    if element.get("type") == "button":
        element["text"]["text"] = _truncate(element["text"]["text"], LIMITS["button_text"])
        if len(element.get("value", "")) > LIMITS["button_value"]:
            element["value"] = element["value"][: LIMITS["button_value"]]
        if len(element.get("url", "")) > LIMITS["url"]:
            element.pop("url")
    if element.get("type") == "static_select":
        if "options" in element:
            element["options"] = element["options"][: LIMITS["select_options"]]
        if "option_groups" in element:
            element["option_groups"] = _fit_groups(element["option_groups"])
        groups = element.get("option_groups", [])
        for option in element.get("options", []) + [option for group in groups for option in group["options"]]:
            option["text"]["text"] = _truncate(option["text"]["text"], LIMITS["option_text"])
            option["value"] = option["value"][: LIMITS["option_value"]]
        if "placeholder" in element:
            element["placeholder"]["text"] = _truncate(element["placeholder"]["text"], LIMITS["placeholder"])
    if len(element.get("action_id", "")) > LIMITS["action_id"]:
        element["action_id"] = element["action_id"][: LIMITS["action_id"]]
    return element


def _fit_groups(groups: list[dict]) -> list[dict]:
    """At most 100 groups holding 100 options in all (the last give up their tail), labels shortened."""
    room, fitted = LIMITS["select_options"], []
    for group in groups[: LIMITS["option_groups"]]:
        if room > 0:
            label = {**group["label"], "text": _truncate(group["label"]["text"], LIMITS["option_group_label"])}
            fitted.append({"label": label, "options": group["options"][:room]})
            room -= len(fitted[-1]["options"])
    return fitted


def _fit_blocks(blocks: list[dict], max_blocks: int, lang: str) -> list[dict]:
    fitted: list[dict] = []
    for block in blocks:
        kind = block.get("type")
        if len(block.get("block_id", "")) > LIMITS["block_id"]:
            block["block_id"] = block["block_id"][: LIMITS["block_id"]]
        if kind == "header":
            block["text"]["text"] = _truncate(block["text"]["text"], LIMITS["header_text"])
        elif kind == "section":
            if "text" in block:
                block["text"]["text"] = _truncate(block["text"]["text"], LIMITS["section_text"])
            if "fields" in block:
                fields = [
                    {"type": "mrkdwn", "text": _truncate(f["text"], LIMITS["field_text"])} for f in block["fields"]
                ]
                while len(fields) > LIMITS["fields"]:  # spill extra fields into sections of their own
                    fitted.append({"type": "section", "fields": fields[: LIMITS["fields"]]})
                    fields = fields[LIMITS["fields"] :]
                block["fields"] = fields
            if "accessory" in block:
                block["accessory"] = _fit_element(block["accessory"])
        elif kind == "context":
            elements = block["elements"]
            keep = LIMITS["context_elements"]
            if len(elements) > keep:  # fold the rest into the last element
                tail = "\n".join(e["text"] for e in elements[keep - 1 :])
                elements = elements[: keep - 1] + [{"type": "mrkdwn", "text": tail}]
            block["elements"] = [{**e, "text": _truncate(e["text"], LIMITS["context_text"])} for e in elements]
        elif kind == "actions":
            block["elements"] = [_fit_element(e) for e in block["elements"][: LIMITS["actions_elements"]]]
        fitted.append(block)
    if len(fitted) > max_blocks:
        # keep the head and the buttons; say the rest is in the details view
        tail = [b for b in fitted if b.get("type") == "actions"][-1:]
        head = [b for b in fitted if b.get("type") != "actions"][: max_blocks - 1 - len(tail)]
        more = {"type": "context", "elements": [{"type": "mrkdwn", "text": _ui("more_in_details", lang)}]}
        fitted = head + [more] + tail
    return fitted


def fit(message: dict, lang: str = "en", max_blocks: int = LIMITS["blocks_message"]) -> dict:
    """Shorten whatever breaks a limit; the result always passes `violations`."""
    message["text"] = _truncate(message.get("text") or "gpuplan", LIMITS["fallback_text"])
    message["blocks"] = _fit_blocks(message.get("blocks", []), max_blocks, lang)
    return message


def fit_modal(view: dict, lang: str = "en") -> dict:
    for key in ("title", "close", "submit"):
        if key in view:
            view[key]["text"] = _truncate(view[key]["text"], LIMITS["modal_title"])
    if len(view.get("private_metadata", "")) > LIMITS["private_metadata"]:
        view["private_metadata"] = view["private_metadata"][: LIMITS["private_metadata"]]
    view["blocks"] = _fit_blocks(view.get("blocks", []), LIMITS["blocks_modal"], lang)
    return view
