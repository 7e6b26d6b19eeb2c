"""Slack faults, driven through the local stand-in: retries land every reply exactly once, never
twice, and a reply that finally fails is logged with its plan id."""

from __future__ import annotations

import logging

import pytest
from slack_standin import SlackStandIn

from gpuplan.bot.slack import slack_io
from gpuplan.bot.slack.slack_io import SlackIO, web_client

CHANNEL, THREAD = "C0FAULTS", "1700000000.000100"
MESSAGE = {"text": "a plan", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "a plan"}}]}


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture
def io(slack):
    slack.recorder.clear()
    return SlackIO.create("xoxb-faults", slack.api_url, timeout=1.0)


@pytest.mark.parametrize(
    "faults",
    [
        (),
        (429,),
        ("ratelimited",),
        (500,),  # failed before acting: posted again
        ("500-after",),  # posted, then failed: found in the thread, not posted again
        (("timeout", 1.6),),  # posted, answered too late: found, not posted again
        (429, 500, "ratelimited", "500-after"),
    ],
    ids=["ok", "429", "ratelimited-body", "500-before", "500-after-posting", "timeout-after-posting", "mixed"],
)
def test_every_reply_lands_exactly_once(slack, io, faults):
    slack.recorder.fail("chat.postMessage", *faults)
    assert io.reply(CHANNEL, THREAD, MESSAGE, key="Ev1", plan_id="p1") is True
    landed = slack.recorder.posted(CHANNEL, THREAD)
    assert len(landed) == 1
    assert landed[0]["metadata"]["event_payload"] == {"key": "Ev1", "plan_id": "p1"}


def test_a_reply_that_finally_fails_is_logged_with_its_plan_id(slack, io, caplog):
    io.poster.attempts = 2  # the same path as five attempts, in less time
    slack.recorder.fail("chat.postMessage", *([500] * 10))
    with caplog.at_level(logging.ERROR, logger="gpuplan.slack"):
        assert io.reply(CHANNEL, "1700000000.000200", MESSAGE, key="Ev2", plan_id="p2fail") is False
    assert slack.recorder.posted(CHANNEL, "1700000000.000200") == []
    assert any("reply not posted: plan p2fail" in r.getMessage() for r in caplog.records)


def test_a_refusal_is_not_retried(slack, io, caplog):
    slack.recorder.fail("chat.postMessage", "channel_not_found")
    with caplog.at_level(logging.ERROR, logger="gpuplan.slack"):
        assert io.reply(CHANNEL, "1700000000.000300", MESSAGE, key="Ev3", plan_id="p3") is False
    assert len(slack.recorder.of("chat.postMessage")) == 1
    assert "channel_not_found" in caplog.text


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # bytes that are no UTF-8 text, as a real image's


def test_a_file_lands_in_the_thread_with_its_bytes(slack, io):
    """files_upload_v2 against the stand-in: the upload URL gets the bytes, completeUploadExternal
    shares the file in the reply's thread."""
    assert io.upload(CHANNEL, THREAD, PNG, filename="plan.png", title="A chart", alt_text="what it shows") is True
    [(shared, data)] = slack.recorder.shared(CHANNEL, THREAD)
    assert data == PNG and shared["title"] == "A chart"
    [asked] = slack.recorder.of("files.getUploadURLExternal")
    assert asked["args"]["filename"] == "plan.png" and int(asked["args"]["length"]) == len(PNG)
    assert asked["args"]["alt_txt"] == "what it shows"


@pytest.mark.parametrize("error", ["missing_scope", "not_allowed"])
def test_an_upload_slack_refuses_is_logged_once_and_not_retried(slack, io, caplog, monkeypatch, error):
    monkeypatch.setattr(slack_io, "_upload_refusals_said", set())
    slack.recorder.fail("files.getUploadURLExternal", error, error)
    with caplog.at_level(logging.WARNING, logger="gpuplan.slack"):
        for thread in ("1700000000.000400", "1700000000.000500"):
            assert io.upload(CHANNEL, thread, PNG, filename="p.png", title="t", alt_text="a") is False
    assert len(slack.recorder.of("files.getUploadURLExternal")) == 2  # once per upload, no retry
    assert slack.recorder.of("files.completeUploadExternal") == []
    said = [r.getMessage() for r in caplog.records if error in r.getMessage()]
    assert len(said) == 1 and "stand without it" in said[0]


def test_replacing_a_message_is_retried_on_any_fault(slack, io):
    slack.recorder.fail("response_url", 500, 429)
    assert io.respond(slack.response_url("r1"), {"replace_original": True, **MESSAGE}, idempotent=True, plan_id="p")
    assert [c["status"] for c in slack.recorder.of("response_url")] == [500, 429, 200]


def test_a_new_channel_message_is_not_repeated_after_a_server_error(slack, io, caplog):
    slack.recorder.fail("response_url", 500)
    with caplog.at_level(logging.ERROR, logger="gpuplan.slack"):
        delivered = io.respond(
            slack.response_url("r2"), {"response_type": "in_channel", **MESSAGE}, idempotent=False, plan_id="pshare"
        )
    assert delivered is False and len(slack.recorder.of("response_url")) == 1
    assert "response not delivered: plan pshare" in caplog.text


def test_a_new_channel_message_is_retried_after_a_rate_limit(slack, io):
    slack.recorder.fail("response_url", 429)
    assert io.respond(
        slack.response_url("r3"), {"response_type": "in_channel", **MESSAGE}, idempotent=False, plan_id="p"
    )
    assert [c["status"] for c in slack.recorder.of("response_url")] == [429, 200]


def test_views_are_retried_on_any_fault(slack):
    slack.recorder.clear()
    client = web_client("xoxb-faults", slack.api_url, timeout=1.0)
    slack.recorder.fail("views.publish", 500, "ratelimited", 429)
    client.views_publish(user_id="U1", view={"type": "home", "blocks": []})
    assert [c["status"] for c in slack.recorder.of("views.publish")] == [500, 200, 429, 200]


def test_nothing_listening_is_a_logged_failure(caplog):
    io = SlackIO.create("xoxb-faults", "http://127.0.0.1:9/api/", timeout=1.0)
    io.poster.attempts = 2
    with caplog.at_level(logging.ERROR, logger="gpuplan.slack"):
        assert io.reply(CHANNEL, THREAD, MESSAGE, key="Ev9", plan_id="p9") is False
    assert "reply not posted: plan p9" in caplog.text
