"""Buttons and selects on a plan: change the method or GPU, show the math, share, draft a ticket,
open a stored plan, the Config files modal (its format select, Send as files to the user's direct
messages: files:write, im:write); the tier link buttons only need an acknowledgement."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from gpuplan.bot import render
from gpuplan.bot.slack import config_replies, observe, selects
from gpuplan.bot.slack.listeners.guard import guarded, slack_error
from gpuplan.bot.slack.listeners.services import services
from gpuplan.bot.slack.replies import Reply, Who
from gpuplan.bot.slack.slack_io import SlackIO
from gpuplan.estimator.schema import Note

log = logging.getLogger("gpuplan.listeners")


@guarded("action")
def switch(ack: Ack, body: dict[str, Any], action: dict[str, Any], context: BoltContext) -> None:
    """The method (serving: precision, context, concurrency) or GPU select on a plan: the plan again
    with that choice, in place."""
    ack()
    found = services(context)
    selected = (action.get("selected_option") or {}).get("value", "")
    name, value = selects.chosen(action.get("action_id", ""), selected)
    reply = found.replies.switch(_ref(action), name, value, _who(body), _thread(body))
    observe.note(outcome=reply.outcome, plan_id=reply.plan_id)
    replace = reply.outcome != "not_found"
    message = {"replace_original": replace, **reply.message}
    found.io.respond(_url(body), message, idempotent=True, plan_id=reply.plan_id)


@guarded("action")
def share(ack: Ack, body: dict[str, Any], action: dict[str, Any], context: BoltContext) -> None:
    """Post the plan in the channel for everyone."""
    ack()
    found = services(context)
    reply = found.replies.shared(_ref(action), _who(body))
    observe.note(outcome=reply.outcome, plan_id=_ref(action))
    in_channel = reply.outcome != "not_found"
    message = {"response_type": "in_channel" if in_channel else "ephemeral", "replace_original": False}
    # a new message in the channel: retried only where Slack cannot have posted it already
    found.io.respond(_url(body), {**message, **reply.message}, idempotent=not in_channel, plan_id=_ref(action))


@guarded("action")
def show_details(
    ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
) -> None:
    """The "Show details" button: the whole plan, every assumption included, in a modal."""
    ack()
    found = services(context)
    _open(client, found.io, body, found.replies.details(_ref(action)))


@guarded("action")
def show_math(ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext) -> None:
    ack()
    found = services(context)
    _open(client, found.io, body, found.replies.math(_ref(action)))


@guarded("action")
def draft_ticket(
    ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
) -> None:
    ack()
    found = services(context)
    _open(client, found.io, body, found.replies.ticket_for_plan(_ref(action)))


@guarded("action")
def show_plan(ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext) -> None:
    ack()
    found = services(context)
    _open(client, found.io, body, found.replies.show_modal(action.get("value", "")))


@guarded("action")
def show_configs(
    ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
) -> None:
    """The Config files button on a plan: the modal with the first format that fits."""
    ack()
    found = services(context)
    _open(client, found.io, body, config_replies.modal(found.replies, _ref(action)))


@guarded("action")
def pick_format(
    ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
) -> None:
    """The format select inside the modal: the same modal with the other format's files."""
    ack()
    view = body.get("view") or {}
    meta = _metadata(view)
    fmt = (action.get("selected_option") or {}).get("value", "")
    reply = config_replies.modal(services(context).replies, meta.get("ref", ""), fmt)
    observe.note(outcome=reply.outcome)
    if reply.view is None or not view.get("id"):
        return
    try:
        client.views_update(view_id=view["id"], hash=view.get("hash"), view=reply.view)
    except SlackApiError as exc:  # a newer update won the race (hash_conflict) or the view closed
        log.warning("views.update failed (%s)", slack_error(exc))


@guarded("action")
def upload_configs(
    ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
) -> None:
    """Send as files (in the modal): each file as a snippet in the user's direct messages."""
    ack()
    found = services(context)
    view = body.get("view") or {}
    ref, fmt = _metadata(view).get("ref", ""), action.get("value", "")
    got = config_replies.files_for(found.replies, ref, fmt)
    user = (body.get("user") or {}).get("id", "")
    if got is None or not user:
        observe.note(outcome="not_found")
        return
    plan, files = got
    try:
        channel = client.conversations_open(users=user)["channel"]["id"]
        comment = render.message(Note(code="config_files_sent", params={"format": fmt}), plan.lang)
        uploads = [{"content": text, "filename": name, "title": name} for name, text in files.items()]
        client.files_upload_v2(channel=channel, file_uploads=uploads, initial_comment=comment)
        observe.note(outcome="page")
    except SlackApiError as exc:  # no files:write / im:write, or Slack refused: say so atop the files
        error = slack_error(exc)
        log.warning("files upload failed (%s)", error)
        observe.note(outcome="error")
        notice = render.message(Note(code="config_upload_failed", params={"error": error}), plan.lang)
        reply = config_replies.modal(found.replies, ref, fmt, notice=notice)
        if view.get("id") and reply.view is not None:
            try:
                client.views_update(view_id=view["id"], view=reply.view)
            except SlackApiError as again:
                log.warning("views.update failed (%s)", slack_error(again))


def _metadata(view: dict[str, Any]) -> dict[str, Any]:
    """What the Config files modal keeps for its controls: the plan's ref and the format shown."""
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def link(ack: Ack) -> None:
    ack()  # a URL button: Slack opens the link itself


def register(app: App) -> None:
    app.action({"action_id": "set_method"})(switch)
    app.action({"action_id": "set_gpu"})(switch)
    app.action("share")(share)
    app.action("show_details")(show_details)
    app.action("show_math")(show_math)
    app.action("draft_ticket")(draft_ticket)
    app.action("show_plan")(show_plan)
    app.action("show_configs")(show_configs)
    app.action("config_format")(pick_format)
    app.action("upload_configs")(upload_configs)
    app.action(re.compile(r"^open_tier"))(link)


def _ref(action: dict[str, Any]) -> str:
    """The plan a control belongs to: a button's value, or a select's block id ("plan:<ref>")."""
    if action.get("type") == "button" and action.get("value"):
        return action["value"]
    block_id = action.get("block_id", "")
    return block_id[len("plan:") :] if block_id.startswith("plan:") else ""


def _who(body: dict[str, Any]) -> Who:
    team = (body.get("team") or {}).get("id", "")
    user = (body.get("user") or {}).get("id", "")
    channel = (body.get("channel") or {}).get("id", "")
    return Who(team, user, channel)


def _thread(body: dict[str, Any]) -> tuple[str, str] | None:
    """The thread a plan message sits in, so a change there becomes the thread's new plan."""
    message = body.get("message") or {}
    channel = (body.get("channel") or {}).get("id", "")
    thread_ts = message.get("thread_ts")
    return (channel, thread_ts) if channel and thread_ts else None


def _url(body: dict[str, Any]) -> str:
    return str(body.get("response_url") or "")


def _open(client: WebClient, io: SlackIO, body: dict[str, Any], reply: Reply) -> None:
    """Open the reply's modal; when there is none or it cannot open, answer with its message."""
    observe.note(outcome=reply.outcome, plan_id=reply.plan_id)
    if reply.view is not None and body.get("trigger_id"):
        try:
            client.views_open(trigger_id=body["trigger_id"], view=reply.view)
            return
        except SlackApiError as exc:
            log.warning("views.open failed (%s); answering with a message", slack_error(exc))
    if reply.message is not None:
        message = {"replace_original": False, "response_type": "ephemeral", **reply.message}
        io.respond(_url(body), message, idempotent=True, plan_id=reply.plan_id)
