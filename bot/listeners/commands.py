"""The slash command: a plan, a page, or a ticket draft, answered in the command's own response."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import hub, observe
from bot.listeners.guard import guarded, slack_error
from bot.replies import Replies, Who

log = logging.getLogger("gpuplan.listeners")
COMMAND_LOOKUP_S = 1.5  # of Slack's 3 s for a command's ack: the rest is for the answer and the network


def register(app: App, replies: Replies) -> None:
    @guarded("command")
    def handle_command(ack: Ack, command: dict[str, Any], client: WebClient) -> None:
        who = Who(command.get("team_id", ""), command.get("user_id", ""), command.get("channel_id", ""))
        with hub.within(COMMAND_LOOKUP_S):  # the answer goes in the ack, due within 3 s
            reply = replies.command(command.get("text") or "", who)
        observe.note(outcome=reply.outcome, plan_id=reply.plan_id)
        if reply.view is not None and command.get("trigger_id"):
            try:
                client.views_open(trigger_id=command["trigger_id"], view=reply.view)
                ack()
                return
            except SlackApiError as exc:  # e.g. an expired trigger: fall back to a message
                log.warning("views.open failed for the command (%s); answering as a message", slack_error(exc))
        ack(response_type="ephemeral", **reply.message)

    app.command(replies.command_name)(handle_command)
