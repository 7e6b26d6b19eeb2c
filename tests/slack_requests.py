"""Signed Slack requests for tests, built the way Slack builds them.

Signing: api.slack.com/authentication/verifying-requests-from-slack (v0, HMAC-SHA256).
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import time
import urllib.parse
from typing import Any

SECRET = "test-signing-secret"
TEAM = "T0TEST"
USER = "U0ASKER"
CHANNEL = "C0PLANS"
BOT_USER = "U0GPUPLAN"


def sign(body: bytes, timestamp: int | None = None, secret: str = SECRET) -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": "v0=" + digest}


def command(text: str, response_url: str = "http://127.0.0.1:9/response/x", user: str = USER) -> tuple[bytes, str]:
    form = {
        "token": "legacy",
        "team_id": TEAM,
        "team_domain": "test",
        "channel_id": CHANNEL,
        "channel_name": "plans",
        "user_id": user,
        "user_name": "asker",
        "command": "/gpuplan",
        "text": text,
        "api_app_id": "A0TEST",
        "response_url": response_url,
        "trigger_id": "1234.5678.abcd",
    }
    return urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded"


def event(event: dict[str, Any], event_id: str, authorizations_user: str = BOT_USER) -> tuple[bytes, str]:
    body = {
        "token": "legacy",
        "team_id": TEAM,
        "api_app_id": "A0TEST",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": authorizations_user, "is_bot": True}],
        "event": event,
    }
    return json.dumps(body).encode(), "application/json"


def mention(
    text: str, ts: str, event_id: str, thread_ts: str | None = None, channel: str = CHANNEL
) -> tuple[bytes, str]:
    ev = {
        "type": "app_mention",
        "user": USER,
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts:
        ev["thread_ts"] = thread_ts
    return event(ev, event_id)


def message(
    text: str, ts: str, event_id: str, thread_ts: str | None = None, channel_type: str = "channel", **extra: Any
) -> tuple[bytes, str]:
    channel = "D0DIRECT" if channel_type == "im" else CHANNEL
    ev = {
        "type": "message",
        "user": USER,
        "text": text,
        "ts": ts,
        "channel": channel,
        "channel_type": channel_type,
        "event_ts": ts,
        **extra,
    }
    if thread_ts:
        ev["thread_ts"] = thread_ts
    return event(ev, event_id)


def home_opened(event_id: str, user: str = USER) -> tuple[bytes, str]:
    return event(
        {"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": "home", "event_ts": "1700000000.000100"},
        event_id,
    )


def interactive(payload: dict[str, Any]) -> tuple[bytes, str]:
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode(), "application/x-www-form-urlencoded"


def block_action(
    action: dict[str, Any],
    response_url: str,
    message: dict[str, Any] | None = None,
    container: str = "message",
    view: dict[str, Any] | None = None,
) -> tuple[bytes, str]:
    """A button or select pressed on a message, or inside a modal (`view`: id, hash, metadata)."""
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "test"},
        "user": {"id": USER, "username": "asker", "team_id": TEAM},
        "api_app_id": "A0TEST",
        "token": "legacy",
        "trigger_id": "1234.5678.trigger",
        "container": {"type": container, "channel_id": CHANNEL, "is_ephemeral": message is None},
        "channel": {"id": CHANNEL, "name": "plans"},
        "response_url": response_url,
        "actions": [{"action_ts": "1700000000.1", **action}],
    }
    if message is not None:
        payload["message"] = message
    if view is not None:  # inside a modal: Slack sends the view, no channel and no response URL
        payload["container"] = {"type": "view", "view_id": view["id"]}
        payload["view"] = {"type": "modal", "callback_id": "show_configs", **view}
        payload.pop("channel")
        payload.pop("response_url")
    return interactive(payload)


def select(action_id: str, value: str, block_id: str) -> dict[str, Any]:
    return {
        "type": "static_select",
        "action_id": action_id,
        "block_id": block_id,
        "selected_option": {"text": {"type": "plain_text", "text": value}, "value": value},
    }


def press(action_id: str, value: str, block_id: str = "b") -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": action_id,
        "block_id": block_id,
        "value": value,
        "text": {"type": "plain_text", "text": action_id},
    }


def message_shortcut(text: str, callback_id: str = "draft_plan_reply") -> tuple[bytes, str]:
    return interactive(
        {
            "type": "message_action",
            "callback_id": callback_id,
            "team": {"id": TEAM, "domain": "test"},
            "user": {"id": USER, "name": "asker"},
            "channel": {"id": CHANNEL, "name": "support"},
            "trigger_id": "1234.5678.shortcut",
            "response_url": "http://127.0.0.1:9/response/x",
            "message_ts": "1700000000.000200",
            "message": {"type": "message", "user": "U0CUSTOMER", "text": text, "ts": "1700000000.000200"},
        }
    )


def post(
    port: int,
    body: bytes,
    content_type: str,
    headers: dict[str, str] | None = None,
    path: str = "/slack/events",
    signed: bool = True,
    method: str = "POST",
) -> tuple[int, bytes]:
    """Send one request to a local server; returns (status, body)."""
    all_headers = {"Content-Type": content_type, **(sign(body) if signed else {}), **(headers or {})}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=all_headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wsgi_call(
    app: Any,
    method: str = "POST",
    path: str = "/slack/events",
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> tuple[int, bytes]:
    """Call a WSGI application in-process, as gunicorn would; returns (status, body)."""
    import io

    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    for key, value in (headers or {}).items():
        environ["HTTP_" + key.upper().replace("-", "_")] = value
    captured: dict[str, Any] = {}
    out = b"".join(app(environ, lambda status, hdrs: captured.update(status=status, headers=hdrs)))
    return int(captured["status"].split()[0]), out


def settings_for(database_url: str, api_url: str = "http://127.0.0.1:9/api/", **env: str) -> Any:
    """Validated app settings for a test: this module's signing secret, a test token, the given database."""
    from gpuplan.bot.slack.settings import load_settings

    return load_settings(
        environ={
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": api_url,
            "GPUPLAN_DATABASE_URL": database_url,
            **env,
        }
    )
