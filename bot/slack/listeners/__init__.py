"""Slack listeners, one module per kind (the bolt-python starter template's layout): each holds
module-level callbacks and a `register(app)` that only wires them. The wording and the numbers
come from `gpuplan.bot.slack.replies`, reached through `services(context)`, so the listeners only
move payloads between Slack and it.
"""

from __future__ import annotations

from slack_bolt import App

from gpuplan.bot.slack.listeners import actions, commands, events, shortcuts
from gpuplan.bot.slack.listeners.services import Services, provide
from gpuplan.bot.slack.replies import Replies
from gpuplan.bot.slack.slack_io import SlackIO


def register_listeners(app: App, replies: Replies, io: SlackIO) -> None:
    provide(app, Services(replies, io))
    commands.register(app, replies.command_name)
    events.register(app)
    actions.register(app)
    shortcuts.register(app)
