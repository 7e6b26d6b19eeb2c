"""What the listeners work with (the replies and the Slack I/O), reached through Bolt's context.

Listeners are plain module-level functions, as in Bolt's starter template, so they cannot close
over the app's objects. A middleware puts a key in each request's context and `services(context)`
finds the objects by it: a plain string survives the copy Bolt makes of the context for lazy
listeners, where the objects themselves (a database engine, locks) would not."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt import App

from gpuplan.bot.slack.replies import Replies
from gpuplan.bot.slack.slack_io import SlackIO

CONTEXT_KEY = "gpuplan_services"
_BY_KEY: dict[str, Services] = {}


@dataclass(frozen=True)
class Services:
    replies: Replies
    io: SlackIO


def context_for(found: Services) -> dict[str, str]:
    """The context entry that leads a listener to `found`."""
    key = secrets.token_hex(8)
    _BY_KEY[key] = found
    return {CONTEXT_KEY: key}


def provide(app: App, found: Services) -> None:
    """Every request `app` handles carries `found` in its context."""
    entry = context_for(found)

    def attach(context: Any, next: Callable[[], None]) -> None:  # noqa: A002 (Bolt's argument name)
        context.update(entry)
        next()

    app.middleware(attach)


def services(context: Any) -> Services:
    return _BY_KEY[context[CONTEXT_KEY]]
