"""The message shortcut "Draft GPU plan reply": a customer's message in, a modal with the reply
for the customer and the internal note out, in the message's language."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from gpuplan.bot.slack import observe, pages
from gpuplan.bot.slack.listeners.guard import guarded, slack_error
from gpuplan.bot.slack.listeners.services import services
from gpuplan.bot.slack.replies import Replies, Who

log = logging.getLogger("gpuplan.listeners")
CALLBACK_ID = "draft_plan_reply"


def message_text(message: dict[str, Any]) -> str:
    """The words of a message, including what a forwarded or shared message carries in attachments."""
    pieces = [message.get("text") or ""]
    for attachment in message.get("attachments") or []:
        pieces += [attachment.get("pretext") or "", attachment.get("text") or ""]
    return "\n".join(p for p in pieces if p.strip())


@guarded("shortcut")
def draft_reply(ack: Ack, shortcut: dict[str, Any], client: WebClient, context: BoltContext) -> None:
    """A customer's message in, a modal with the drafted reply and the internal note out."""
    ack()
    replies = services(context).replies
    team = (shortcut.get("team") or {}).get("id", "")
    user = (shortcut.get("user") or {}).get("id", "")
    channel = (shortcut.get("channel") or {}).get("id", "")
    reply = replies.ticket_for_text(message_text(shortcut.get("message") or {}), Who(team, user, channel))
    observe.note(outcome=reply.outcome, plan_id=reply.plan_id)
    view = reply.view or pages.message_modal(reply.message, _lang(reply, replies))
    try:
        client.views_open(trigger_id=shortcut["trigger_id"], view=view)
    except SlackApiError as exc:
        log.warning("views.open failed for the shortcut: %s", slack_error(exc))
        observe.note(outcome="view_failed")


def register(app: App) -> None:
    app.shortcut(CALLBACK_ID)(draft_reply)


def _lang(reply: Any, replies: Replies) -> str:
    return reply.plan.lang if reply.plan is not None else replies.settings.default_lang
