"""What the listeners work with (the replies, the Slack I/O, the charts), reached through Bolt's context.

Listeners are plain module-level functions, as in Bolt's starter template, so they cannot close
over the app's objects: a middleware puts them in each request's context and `services(context)`
takes them out. Bolt deep-copies the context for lazy listeners; the services are shared, not
copied (a database engine and its locks cannot be, and must not be)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slack_bolt import App

from gpuplan.bot.slack.chart_poster import ChartPoster
from gpuplan.bot.slack.replies import Replies
from gpuplan.bot.slack.slack_io import SlackIO

CONTEXT_KEY = "gpuplan_services"


@dataclass(frozen=True)
class Services:
    replies: Replies
    io: SlackIO
    charts: ChartPoster = field(default_factory=ChartPoster)

    def __deepcopy__(self, memo: dict) -> Services:
        return self  # one set of services per process, whatever copies the context


def context_for(found: Services) -> dict[str, Services]:
    """The context entry that leads a listener to `found`."""
    return {CONTEXT_KEY: found}


def provide(app: App, found: Services) -> None:
    """Every request `app` handles carries `found` in its context."""

    def attach(context: Any, next: Callable[[], None]) -> None:  # noqa: A002 (Bolt's argument name)
        context[CONTEXT_KEY] = found
        next()

    app.middleware(attach)


def services(context: Any) -> Services:
    return context[CONTEXT_KEY]
