"""Hostile and broken input, end to end in-process: nasty text through parse -> estimate ->
render -> blocks, and malformed Slack payloads through the WSGI gate and Bolt.

Nothing raises, nothing comes back with live Slack markup, no message breaks Slack's limits,
and no malformed payload gets a 500."""

from __future__ import annotations

import json
import logging
import re
import time
import urllib.parse

import pytest
import slack_requests as sr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_standin import SlackStandIn

from gpuplan.bot import render
from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.bot.slack.blocks import violations
from gpuplan.bot.slack.replies import Replies, Who
from gpuplan.bot.slack.server import build
from gpuplan.bot.slack.store import Store

NASTY = [
    "a" * (1 << 20),  # a megabyte
    "70b full " * 120_000,
    "".join(chr(c) for c in range(32)) + "70b full\x7f",
    "\u202e70b full\u202c \u200f全参\u200e \u2066qlora\u2069",  # RTL and isolate marks
    "🚀🔥 70b 🤖 full fine-tune 💸 on 8x 🟩 H100 👨‍👩‍👧",
    "\u200b7\u200b0\u200bb\u200b full\ufeff",
    "'; DROP TABLE gpuplan_plans; -- 70b full",
    '70b" OR 1=1 -- full',
    "{{7*7}} {% for x in range(9**9) %}x{% endfor %} ${7*7} #{7*7} <%= 7*7 %> 70b",
    "{{ config.items() }} {{ ''.__class__.__mro__ }} lora 7b",
    "<!channel> <!here> <!everyone> <@U123> <#C1|general> <https://evil.example|click> & 70b full",
    "<!subteam^S123|@admins> <mailto:x@y.z|mail> 70b",
    "gpus=1e308 70b full",
    "70b full seq=NaN mbs=inf tokens=-inf budget=$1e308 deadline=0d",
    "model=1e308b method=full",
    "7" * 400 + "b full",
    "0.0000000001b full",
    "-70b full gpus=-8 tp=0 pp=-1 zero=9 mfu=2",
    "model=../../etc/passwd gpu=%00 lang=xx",
    "gpus=" + "9" * 5000,
    "\ud800\udfff lone surrogates 70b",
    "seq=1e308 70b qlora gpu=4090",
    "ticket " + "客户说：" * 3000,
    "帮助 <!channel>",
    "faq {{7*7}}",
    "show <!here>",
    "history & & &",
    "=" * 10000,
    "key=value " * 2000,
    "\n\n\n\t\t\t",
    "",
]

LIVE_MARKUP = re.compile(r"<[!@#]|<https?:|<mailto:")


def assert_inert(payload: dict, kind: str = "message") -> None:
    assert violations(payload, kind) == []
    dumped = json.dumps(payload, ensure_ascii=False)
    assert not LIVE_MARKUP.search(dumped.replace("<@U0ASKER1>", "")), dumped[:300]


def through_everything(text: str) -> None:
    try:
        plan = answer(text)
    except QuestionError:
        return
    json.dumps(plan_json(plan))
    if plan.estimate is not None:
        render.plan_text(plan)
    render.ticket(plan, text)


@pytest.fixture(scope="module")
def replies(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    settings_ = sr.settings_for(f"sqlite:///{path}")
    store = Store(settings_.database_url)
    yield Replies(store, settings_)
    store.dispose()


WHO = Who("T1", "U0ASKER1", "C1")


@pytest.mark.parametrize("text", NASTY, ids=range(len(NASTY)))
def test_nasty_text_through_every_surface(replies, text):
    through_everything(text)
    for reply in (
        replies.command(text, WHO),
        replies.question(text, WHO, "mention", ("C1", "1.1")),
        replies.question(text, WHO, "thread", ("C1", "1.1")),  # as a follow-up too
        replies.ticket_for_text(text, WHO),
    ):
        if reply.message is not None:
            assert_inert(reply.message)
        if reply.view is not None:
            assert_inert(reply.view, "modal")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.one_of(
        st.text(max_size=4000),
        st.lists(
            st.one_of(
                st.sampled_from(NASTY[3:]),
                st.text(max_size=20),
                st.sampled_from(["70b", "full", "qlora", "gpus=", "seq=", "=", "<", ">", "&", "张", "卡"]),
            ),
            max_size=30,
        ).map(" ".join),
    )
)
def test_any_text_is_answered_or_refused_clearly(replies, text):
    through_everything(text)
    reply = replies.command(text, WHO)
    if reply.message is not None:
        assert_inert(reply.message)
    if reply.view is not None:
        assert_inert(reply.view, "modal")


# --- malformed Slack payloads ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    with SlackStandIn() as slack:
        path = tmp_path_factory.mktemp("gate") / "gate.db"
        settings_ = sr.settings_for(f"sqlite:///{path}", slack.api_url)
        application, _, store = build(settings_, verify_token=False)
        yield application, slack
        store.dispose()


def _valid_payloads() -> list[tuple[str, dict]]:
    """(kind, payload): one of each thing Slack sends, to be broken."""
    form = dict(urllib.parse.parse_qsl(sr.command("70b full")[0].decode()))
    event = json.loads(sr.mention("7b lora", "1700000000.1", "EvFuzz")[0])
    dm = json.loads(sr.message("7b lora", "1700000000.2", "EvFuzz2", channel_type="im")[0])
    home = json.loads(sr.home_opened("EvFuzz3")[0])
    action = json.loads(
        urllib.parse.parse_qs(sr.block_action(sr.press("share", "a2b3c4d5"), "http://x")[0].decode())["payload"][0]
    )
    select = json.loads(
        urllib.parse.parse_qs(
            sr.block_action(sr.select("set_method", "lora", "plan:a2b3c4d5"), "http://x")[0].decode()
        )["payload"][0]
    )
    shortcut = json.loads(urllib.parse.parse_qs(sr.message_shortcut("70b full")[0].decode())["payload"][0])
    return [
        ("command", form),
        ("event", event),
        ("event", dm),
        ("event", home),
        ("interactive", action),
        ("interactive", select),
        ("interactive", shortcut),
    ]


JUNK = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _paths(inner, (*prefix, i))


def _mutate(payload, path, action, junk):
    if not path:
        return junk
    parent = payload
    for key in path[:-1]:
        parent = parent[key]
    if action == "drop" and isinstance(parent, dict):
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = junk
    return payload


def _encode(kind: str, payload) -> tuple[bytes, str]:
    if kind == "command":
        if not isinstance(payload, dict):
            return str(payload).encode(), "application/x-www-form-urlencoded"
        return urllib.parse.urlencode(
            {k: str(v) for k, v in payload.items()}
        ).encode(), "application/x-www-form-urlencoded"
    if kind == "interactive":
        return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode(), "application/x-www-form-urlencoded"
    return json.dumps(payload).encode(), "application/json"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_malformed_payloads_never_get_a_500(gate, data, caplog):
    application, _ = gate
    kind, payload = data.draw(st.sampled_from(_valid_payloads()))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = list(_paths(payload))
        path = data.draw(st.sampled_from(paths))
        payload = _mutate(payload, path, data.draw(st.sampled_from(["drop", "replace"])), data.draw(JUNK))
    body, ctype = _encode(kind, payload)
    with caplog.at_level(logging.ERROR):
        status, out = sr.wsgi_call(application, "POST", "/slack/events", body, sr.sign(body), ctype)
    assert status < 500, (kind, payload, out[:200])
    assert b"Traceback" not in out


def test_lazy_listeners_survive_broken_events(gate, caplog):
    """Broken events are acknowledged, and the work after the response does not crash either."""
    application, slack = gate
    wrong_types = [  # refused at the gate
        {"type": "app_mention", "text": 123, "user": "U1", "channel": "C1", "ts": "1.1"},
        {"type": "message", "channel_type": "im", "text": ["a"], "user": "U1", "channel": "D1", "ts": "2.2"},
        {"type": "message", "channel_type": "channel", "text": "x", "user": "U1", "channel": "C1", "thread_ts": 5},
        {"type": "app_home_opened", "user": {"id": "U1"}, "tab": None},
    ]
    missing_fields = [  # acknowledged; the work after the response copes
        {"type": "app_mention"},
        {"type": "app_mention", "text": None, "user": None, "channel": None, "ts": None},
        {"type": "app_mention", "user": "U1", "text": "70b full"},
        {"type": "message", "channel_type": "im", "user": "U1"},
        {"type": "message", "channel_type": "channel", "user": "U1", "text": "and with qlora", "thread_ts": "9.9"},
        {"type": "app_home_opened"},
    ]
    with caplog.at_level(logging.ERROR):
        for i, event in enumerate(wrong_types + missing_fields):
            body = json.dumps(
                {"type": "event_callback", "event_id": f"EvBroken{i}", "team_id": "T1", "event": event}
            ).encode()
            expected = 400 if event in wrong_types else 200
            assert sr.wsgi_call(application, "POST", "/slack/events", body, sr.sign(body))[0] == expected
        time.sleep(1.0)
    assert "listener failed" not in caplog.text, caplog.text[-2000:]
