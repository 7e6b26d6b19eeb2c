"""The WSGI layer in front of Bolt: health, the signature gate, body checks, request kinds, logs."""

from __future__ import annotations

import json
import logging

import pytest
import slack_requests as sr
from slack_standin import SlackStandIn

from gpuplan.bot.slack.server import build, request_kind


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture
def wsgi(slack, tmp_path):
    settings = sr.settings_for(f"sqlite:///{tmp_path / 's.db'}", slack.api_url)
    application, _, store = build(settings)
    yield application
    store.dispose()


def call(app, method="POST", path="/slack/events", body=b"", headers=None, content_type="application/json"):
    return sr.wsgi_call(app, method, path, body, headers, content_type)


def test_health(wsgi):
    status, body = call(wsgi, "GET", "/healthz")
    assert status == 200 and json.loads(body) == {"status": "ok"}


def test_health_reports_a_dead_database(wsgi, monkeypatch):
    monkeypatch.setattr(wsgi.store, "ping", lambda: (_ for _ in ()).throw(OSError("gone")))
    status, body = call(wsgi, "GET", "/healthz")
    assert status == 503 and "database" in json.loads(body)["status"]


def test_a_signed_command_is_answered(wsgi):
    body, ctype = sr.command("llama-3-70b lora")
    status, out = call(wsgi, body=body, headers=sr.sign(body), content_type=ctype)
    assert status == 200 and json.loads(out)["response_type"] == "ephemeral"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Slack-Request-Timestamp": "1700000000"},
        {"X-Slack-Signature": "v0=00"},
        "wrong-secret",
        "stale",
        "future",
        "not-a-number",
    ],
)
def test_unsigned_requests_get_401(wsgi, headers):
    body, ctype = sr.command("70b full")
    if headers == "wrong-secret":
        headers = sr.sign(body, secret="not-the-secret")
    elif headers == "stale":
        headers = sr.sign(body, timestamp=int(__import__("time").time()) - 301)
    elif headers == "future":
        headers = sr.sign(body, timestamp=int(__import__("time").time()) + 301)
    elif headers == "not-a-number":
        headers = {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=ab"}
    status, out = call(wsgi, body=body, headers=headers, content_type=ctype)
    assert status == 401 and b"Traceback" not in out


def test_every_path_but_health_needs_a_signature(wsgi):
    for path in ("/", "/slack/events", "/admin", "/healthz/../slack/events"):
        assert call(wsgi, "GET", path)[0] == 401
    body = b"{}"
    assert call(wsgi, "POST", "/other", body, sr.sign(body))[0] == 404


def test_a_tampered_body_is_refused(wsgi):
    body, ctype = sr.command("70b full")
    headers = sr.sign(body)
    status, _ = call(wsgi, body=body.replace(b"70b", b"80b"), headers=headers, content_type=ctype)
    assert status == 401


@pytest.mark.parametrize(
    "body,ctype",
    [
        (b"{not json", "application/json"),
        (b"[1, 2]", "application/json"),
        (b'{"type": "event_callback"}', "application/json"),
        (b'{"type": "event_callback", "event": "x"}', "application/json"),
        (b"payload=%7Bbroken", "application/x-www-form-urlencoded"),
        (b"payload=%5B%5D", "application/x-www-form-urlencoded"),
        (b"hello=world", "application/x-www-form-urlencoded"),
        (b"\xff\xfe", "application/x-www-form-urlencoded"),
    ],
)
def test_malformed_payloads_get_400(wsgi, body, ctype):
    status, out = call(wsgi, body=body, headers=sr.sign(body), content_type=ctype)
    assert status == 400 and b"Traceback" not in out


def test_oversized_bodies_get_413(wsgi):
    body = b"x" * ((1 << 20) + 1)
    assert call(wsgi, body=body, headers=sr.sign(body))[0] == 413


def test_url_verification_challenge(wsgi):
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "t"}).encode()
    status, out = call(wsgi, body=body, headers=sr.sign(body))
    assert status == 200 and b"abc123" in out


@pytest.mark.parametrize(
    "factory,kind",
    [
        (lambda: sr.command("x"), "command"),
        (lambda: sr.mention("x", "1.0", "Ev1"), "event:app_mention"),
        (lambda: sr.home_opened("Ev2"), "event:app_home_opened"),
        (lambda: sr.block_action(sr.press("share", "abc"), "http://x"), "block_actions"),
        (lambda: sr.message_shortcut("x"), "message_action"),
    ],
)
def test_request_kind(factory, kind):
    body, ctype = factory()
    assert request_kind(body, ctype) == kind


def test_one_log_line_per_request_without_secrets_or_text(wsgi, caplog):
    caplog.set_level(logging.INFO, logger="gpuplan.requests")
    body, ctype = sr.command("secret project 70b full")
    call(wsgi, body=body, headers=sr.sign(body), content_type=ctype)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "gpuplan.requests"]
    assert len(lines) == 1
    line = lines[0]
    assert line["type"] == "command" and line["status"] == 200 and line["outcome"] == "plan" and line["plan_id"]
    assert line["latency_ms"] >= 0
    text = caplog.text
    assert "secret project" not in text and sr.SECRET not in text and "xoxb-test" not in text
