"""Slack listeners, one module per kind (the bolt-python starter template's layout). Each
module's `register(app, replies[, io])` attaches its listeners; the wording and the numbers come from
`bot.replies`, so the listeners only move payloads between Slack and it.
"""

from __future__ import annotations

from slack_bolt import App

from bot.listeners import actions, commands, events, shortcuts
from bot.replies import Replies
from bot.slack_io import SlackIO


def register_listeners(app: App, replies: Replies, io: SlackIO) -> None:
    commands.register(app, replies)
    events.register(app, replies, io)
    actions.register(app, replies, io)
    shortcuts.register(app, replies)
