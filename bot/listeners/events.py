"""Mentions, direct messages, thread follow-ups and App Home.

Events are acknowledged at once and answered by a lazy listener (Slack wants the 200 within 3 s;
posting the reply may wait on Slack's rate limits). Slack's retries of an event are dropped by
the event-id claim in `bot.server`, and the reply carries the event id in its metadata, so
neither Slack's retries nor ours produce a second reply (bot/slack_io.py).
"""

from __future__ import annotations

import functools
import logging
import secrets
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import observe
from bot.listeners.guard import internal_error_message, slack_error
from bot.parser import CJK
from bot.replies import Replies, Reply, Who
from bot.slack_io import SlackIO

log = logging.getLogger("gpuplan.listeners")


def register(app: App, replies: Replies, io: SlackIO) -> None:
    def acknowledge(ack: Ack) -> None:
        ack()

    def on_mention(event: dict[str, Any], body: dict[str, Any]) -> None:
        if _ignored(event):
            return
        channel, ts = event.get("channel", ""), event.get("ts", "")
        thread_ts = event.get("thread_ts") or ts
        who = Who(body.get("team_id", ""), event.get("user", ""), channel)
        _answer(replies, io, event.get("text", ""), who, "mention", channel, thread_ts, body)

    def on_message(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
        if _ignored(event):
            return
        channel, ts = event.get("channel", ""), event.get("ts", "")
        text = event.get("text", "")
        who = Who(body.get("team_id", ""), event.get("user", ""), channel)
        if event.get("channel_type") == "im":  # a direct message: always for us
            _answer(replies, io, text, who, "dm", channel, event.get("thread_ts") or ts, body)
            return
        thread_ts = event.get("thread_ts")
        if not thread_ts or (context.bot_user_id and f"<@{context.bot_user_id}>" in text):
            return  # channel chatter, or a mention that on_mention answers
        if replies.store.thread(channel, thread_ts) is None or not replies.is_follow_up(text):
            return  # not a thread of ours, or people talking among themselves ("thanks!")
        _answer(replies, io, text, who, "thread", channel, thread_ts, body)

    def on_home(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        if event.get("tab", "home") != "home":
            return
        who = Who(body.get("team_id", ""), event.get("user", ""), "")
        try:
            client.views_publish(user_id=event.get("user", ""), view=replies.home(who))
            observe.event("home", outcome="published")
        except SlackApiError as exc:
            observe.event("home", outcome="failed", error=slack_error(exc))

    app.event("app_mention")(ack=acknowledge, lazy=[_logged("mention", on_mention)])
    app.event("message")(ack=acknowledge, lazy=[_logged("message", on_message)])
    app.event("app_home_opened")(ack=acknowledge, lazy=[_logged("home", on_home)])


def _ignored(event: dict[str, Any]) -> bool:
    """Bots (ourselves included) and edits are never answered."""
    return bool(event.get("bot_id") or event.get("subtype") or event.get("bot_profile") or not event.get("user"))


def _answer(
    replies: Replies,
    io: SlackIO,
    text: str,
    who: Who,
    source: str,
    channel: str,
    thread_ts: str,
    body: dict[str, Any],
) -> None:
    event_id = body.get("event_id", "")
    try:
        reply = replies.question(text, who, source, thread=(channel, thread_ts))
    except Exception:  # a bug: the thread still gets an answer, the log the traceback
        ref = "err-" + secrets.token_hex(4)
        log.exception("%s failed (ref %s, event %s)", source, ref, event_id)
        lang = "zh" if CJK.search(text) else replies.settings.default_lang
        reply = Reply(message=internal_error_message(lang, ref), outcome="bug")
    # the event id keys the reply: a retry after an uncertain failure finds it instead of posting twice
    posted = io.reply(
        channel, thread_ts, reply.message, key=event_id or f"{channel}:{thread_ts}", plan_id=reply.plan_id
    )
    observe.event(source, outcome=reply.outcome, plan_id=reply.plan_id, event_id=event_id, posted=posted)


def _logged(kind: str, listener: Any) -> Any:
    """Lazy listeners run after the response: an exception is logged with its event id, not lost."""

    @functools.wraps(listener)
    def run(**kwargs: Any) -> None:
        try:
            listener(**kwargs)
        except Exception:
            event_id = (kwargs.get("body") or {}).get("event_id", "")
            log.exception("%s listener failed for event %s", kind, event_id)
            observe.event(kind, outcome="bug", event_id=event_id)

    return run
