"""Slack listeners, one module per kind (the bolt-python starter template's layout). Each
module's `register(app, replies)` attaches its listeners; the wording and the numbers come from
`bot.replies`, so the listeners only move payloads between Slack and it.
"""

from __future__ import annotations

from slack_bolt import App

from bot.listeners import actions, commands, events, shortcuts
from bot.replies import Replies


def register_listeners(app: App, replies: Replies) -> None:
    commands.register(app, replies)
    events.register(app, replies)
    actions.register(app, replies)
    shortcuts.register(app, replies)
