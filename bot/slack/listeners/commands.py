"""The slash command: a plan, a page, or a ticket draft, answered in the command's own response."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from gpuplan.bot import hub
from gpuplan.bot.slack import observe
from gpuplan.bot.slack.listeners.guard import guarded, slack_error
from gpuplan.bot.slack.listeners.services import services
from gpuplan.bot.slack.replies import Who

log = logging.getLogger("gpuplan.listeners")
COMMAND_LOOKUP_S = 1.5  # of Slack's 3 s for a command's ack: the rest is for the answer and the network


@guarded("command")
def answer_command(ack: Ack, command: dict[str, Any], client: WebClient, context: BoltContext) -> None:
    """`/gpuplan ...`: the answer goes in the ack (due within 3 s); a ticket draft opens a modal."""
    replies = services(context).replies
    who = Who(command.get("team_id", ""), command.get("user_id", ""), command.get("channel_id", ""))
    with hub.within(COMMAND_LOOKUP_S):
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


def register(app: App, command_name: str) -> None:
    app.command(command_name)(answer_command)
