"""The shape of what Slack sends, checked before Bolt reads it.

Bolt and the listeners read a few dozen fields (team, user, channel, authorizations, event,
actions, message, ...) and assume Slack's types for them. A signed body whose fields have other
types is malformed: the gate answers 400 instead of letting it fail deeper as a 500. Unknown
fields are allowed (Slack adds fields over time); only the types of known ones are enforced.
Field list: api.slack.com/apis/events-api (envelope) and api.slack.com/reference/interaction-payloads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

Text = str | None


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Authorization(_Shape):
    team_id: Text = None
    enterprise_id: Text = None
    user_id: Text = None
    is_bot: bool | None = None
    is_enterprise_install: bool | None = None


class Team(_Shape):
    id: Text = None
    domain: Text = None
    enterprise_id: Text = None


class User(_Shape):
    id: Text = None
    team_id: Text = None
    name: Text = None
    username: Text = None


class Channel(_Shape):
    id: Text = None
    name: Text = None


class Attachment(_Shape):
    text: Text = None
    pretext: Text = None


class Message(_Shape):
    type: Text = None
    text: Text = None
    user: Text = None
    ts: Text = None
    thread_ts: Text = None
    bot_id: Text = None
    subtype: Text = None
    team: Text = None
    user_team: Text = None
    attachments: list[Attachment] | None = None


class Event(Message):
    type: str
    channel: str | Channel | None = None
    channel_type: Text = None
    event_ts: Text = None
    tab: Text = None
    bot_profile: dict[str, Any] | None = None
    previous_message: Message | None = None
    message: Message | None = None


class Option(_Shape):
    value: Text = None


class Action(_Shape):
    type: Text = None
    action_id: str  # Bolt matches listeners on it
    block_id: Text = None
    value: Text = None
    selected_option: Option | None = None


class Container(_Shape):
    type: Text = None
    channel_id: Text = None
    message_ts: Text = None
    thread_ts: Text = None
    is_ephemeral: bool | None = None


class View(_Shape):
    id: Text = None
    type: Text = None
    callback_id: Text = None
    team_id: Text = None
    app_installed_team_id: Text = None
    private_metadata: Text = None


class Envelope(_Shape):
    """An Events API body, or an interactive payload (block actions, shortcuts, views)."""

    type: str
    token: Text = None
    team_id: Text = None
    enterprise_id: Text = None
    context_team_id: Text = None
    context_enterprise_id: Text = None
    api_app_id: Text = None
    event_id: Text = None
    event_time: int | None = None
    authorizations: list[Authorization] | None = None
    is_enterprise_install: bool | None = None
    is_ext_shared_channel: bool | None = None
    event: Event | None = None
    enterprise: str | Team | None = None
    team: str | Team | None = None
    user: str | User | None = None
    channel: str | Channel | None = None
    container: Container | None = None
    message: Message | None = None
    actions: list[Action] | None = None
    view: View | None = None
    trigger_id: Text = None
    response_url: Text = None
    callback_id: Text = None
    message_ts: Text = None
    function_execution_id: Text = None
    challenge: Text = None


def well_formed(body: Any) -> bool:
    """True when a JSON body (or a form's `payload`) has the types Slack sends."""
    if not isinstance(body, dict):
        return False
    try:
        envelope = Envelope.model_validate(body)
    except ValidationError:
        return False
    if envelope.type == "event_callback" and envelope.event is None:
        return False
    return not (envelope.type == "block_actions" and not envelope.actions)
