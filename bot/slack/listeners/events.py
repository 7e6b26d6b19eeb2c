"""Mentions, direct messages, thread follow-ups and App Home.

Events are acknowledged at once and answered by a lazy listener (Slack wants the 200 within 3 s;
posting the reply may wait on Slack's rate limits). Slack's retries of an event are dropped by
the event-id claim in `gpuplan.bot.slack.server`, and the reply carries the event id in its metadata, so
neither Slack's retries nor ours produce a second reply (bot/slack/slack_io.py).
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from gpuplan.bot.language.parser import CJK
from gpuplan.bot.slack import observe
from gpuplan.bot.slack.listeners.guard import internal_error_message, slack_error
from gpuplan.bot.slack.listeners.services import Services, services
from gpuplan.bot.slack.replies import Reply, Who

log = logging.getLogger("gpuplan.listeners")


def _logged(kind: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Lazy listeners run after the response: an exception is logged with its event id, not lost."""

    def wrap(listener: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(listener)
        def run(**kwargs: Any) -> None:
            try:
                listener(**kwargs)
            except Exception:
                event_id = (kwargs.get("body") or {}).get("event_id", "")
                log.exception("%s listener failed for event %s", kind, event_id)
                observe.event(kind, outcome="bug", event_id=event_id)

        return run  # bolt reads the argument names through functools.wraps (inspect.unwrap)

    return wrap


def acknowledge(ack: Ack) -> None:
    ack()


@_logged("mention")
def on_mention(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
    """A mention in a channel: the answer goes in the mention's thread."""
    if _ignored(event):
        return
    channel, ts = event.get("channel", ""), event.get("ts", "")
    who = Who(body.get("team_id", ""), event.get("user", ""), channel)
    _answer(services(context), event.get("text", ""), who, "mention", (channel, event.get("thread_ts") or ts), body)


@_logged("message")
def on_message(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
    """A direct message, or a follow-up in a thread gpuplan answered ("and with QLoRA?")."""
    if _ignored(event):
        return
    found = services(context)
    channel, ts = event.get("channel", ""), event.get("ts", "")
    text = event.get("text", "")
    who = Who(body.get("team_id", ""), event.get("user", ""), channel)
    if event.get("channel_type") == "im":  # a direct message: always for us
        _answer(found, text, who, "dm", (channel, event.get("thread_ts") or ts), body)
        return
    thread_ts = event.get("thread_ts")
    if not thread_ts or (context.bot_user_id and f"<@{context.bot_user_id}>" in text):
        return  # channel chatter, or a mention that on_mention answers
    if found.replies.store.thread(channel, thread_ts) is None or not found.replies.is_follow_up(text):
        return  # not a thread of ours, or people talking among themselves ("thanks!")
    _answer(found, text, who, "thread", (channel, thread_ts), body)


@_logged("home")
def on_home(event: dict[str, Any], body: dict[str, Any], client: WebClient, context: BoltContext) -> None:
    if event.get("tab", "home") != "home":
        return
    who = Who(body.get("team_id", ""), event.get("user", ""), "")
    try:
        client.views_publish(user_id=event.get("user", ""), view=services(context).replies.home(who))
        observe.event("home", outcome="published")
    except SlackApiError as exc:
        observe.event("home", outcome="failed", error=slack_error(exc))


def register(app: App) -> None:
    app.event("app_mention")(ack=acknowledge, lazy=[on_mention])
    app.event("message")(ack=acknowledge, lazy=[on_message])
    app.event("app_home_opened")(ack=acknowledge, lazy=[on_home])


def _ignored(event: dict[str, Any]) -> bool:
    """Bots (ourselves included) and edits are never answered."""
    return bool(event.get("bot_id") or event.get("subtype") or event.get("bot_profile") or not event.get("user"))


def _answer(found: Services, text: str, who: Who, source: str, thread: tuple[str, str], body: dict[str, Any]) -> None:
    event_id = body.get("event_id", "")
    channel, thread_ts = thread
    try:
        reply = found.replies.question(text, who, source, thread=thread)
    except Exception:  # a bug: the thread still gets an answer, the log the traceback
        ref = "err-" + secrets.token_hex(4)
        log.exception("%s failed (ref %s, event %s)", source, ref, event_id)
        lang = "zh" if CJK.search(text) else found.replies.settings.default_lang
        reply = Reply(message=internal_error_message(lang, ref), outcome="bug")
    # the event id keys the reply: a retry after an uncertain failure finds it instead of posting twice
    key = event_id or f"{channel}:{thread_ts}"
    posted = found.io.reply(channel, thread_ts, reply.message, key=key, plan_id=reply.plan_id)
    chart = "none"
    if posted and found.replies.settings.files_upload:  # the chart follows the reply (chart_poster.py)
        chart = found.charts.submit(found.io, reply.plan, reply.plan_id, thread)
    observe.event(source, outcome=reply.outcome, plan_id=reply.plan_id, event_id=event_id, posted=posted, chart=chart)
