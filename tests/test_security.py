"""Request authenticity: nothing Slack did not sign gets past the gate, on any path.

1,000 forged variants (no or partial headers, wrong secrets, tampered bodies and timestamps,
replays older than five minutes, future timestamps, malformed signatures, signatures of other
requests) are sent to the WSGI application; none is accepted, and no listener runs: no plan is
stored and nothing reaches Slack's Web API. A sample also goes through the real gunicorn.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import time

import pytest
import slack_requests as sr
from servers import WebServer
from slack_standin import SlackStandIn

from gpuplan.bot.slack.server import build

FORGED = 1000
PATHS = ["/slack/events", "/slack/events", "/slack/events", "/", "/slack/events/", "/admin", "/healthz/x", "/install"]


def _signature(secret: str, timestamp: str, body: bytes) -> str:
    return "v0=" + hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()


def _bodies() -> list[tuple[bytes, str]]:
    return [
        sr.command("70b full"),
        sr.command("ticket we need 8 H100"),
        sr.mention("llama-3-70b lora", "1700000000.000100", "EvForged1"),
        sr.home_opened("EvForged2"),
        sr.block_action(sr.press("share", "a2b3c4d5"), "http://127.0.0.1:9/response/x"),
        sr.message_shortcut("We want to fine-tune 70B"),
        (b'{"type": "url_verification", "challenge": "x"}', "application/json"),
    ]


def forged_variants(n: int, seed: int = 7) -> list[tuple[str, bytes, str, dict[str, str]]]:
    """(path, body, content type, headers) for n requests Slack never signed."""
    rng = random.Random(seed)
    bodies = _bodies()
    now = int(time.time())
    out = []
    for i in range(n):
        body, ctype = bodies[i % len(bodies)]
        ts = str(now)
        kind = i % 14
        if kind == 0:  # no headers at all
            headers = {}
        elif kind == 1:  # a timestamp, no signature
            headers = {"X-Slack-Request-Timestamp": ts}
        elif kind == 2:  # a signature, no timestamp
            headers = {"X-Slack-Signature": _signature(sr.SECRET, ts, body)}
        elif kind == 3:  # the wrong secret
            secret = "".join(rng.choice("abcdef0123456789") for _ in range(32))
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": _signature(secret, ts, body)}
        elif kind == 4:  # a tampered body under a valid signature
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": _signature(sr.SECRET, ts, body)}
            position = rng.randrange(len(body))
            body = body[:position] + bytes([body[position] ^ (1 + rng.randrange(255))]) + body[position + 1 :]
        elif kind == 5:  # extra bytes appended
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": _signature(sr.SECRET, ts, body)}
            body = body + rng.choice([b"&text=rm", b" ", b"\x00", b"&user_id=U0ADMIN"])
        elif kind == 6:  # the timestamp changed under a valid signature
            headers = {
                "X-Slack-Request-Timestamp": str(now + rng.choice([-2, -1, 1, 2, 60])),
                "X-Slack-Signature": _signature(sr.SECRET, ts, body),
            }
        elif kind == 7:  # a replay: correctly signed, more than five minutes old
            old = str(now - rng.randint(301, 86400 * 30))
            headers = {"X-Slack-Request-Timestamp": old, "X-Slack-Signature": _signature(sr.SECRET, old, body)}
        elif kind == 8:  # from the future
            future = str(now + rng.randint(301, 86400))
            headers = {"X-Slack-Request-Timestamp": future, "X-Slack-Signature": _signature(sr.SECRET, future, body)}
        elif kind == 9:  # the wrong scheme or a mangled signature
            good = _signature(sr.SECRET, ts, body)
            bad = rng.choice(
                [
                    good.replace("v0=", "v1="),
                    good[3:],
                    good.upper(),
                    good[:-1],
                    good + "0",
                    "v0=",
                    "",
                    " " + good,
                    good.replace("v0=", "v0 ="),
                ]
            )
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": bad}
        elif kind == 10:  # a timestamp that is not a timestamp (signed as if it were one)
            bad_ts = rng.choice(["", "now", "1.7e9", f"{now}.5", "-1", "9" * 30, "+" + ts, ts + "\x00", "０" * 10])
            headers = {"X-Slack-Request-Timestamp": bad_ts, "X-Slack-Signature": _signature(sr.SECRET, bad_ts, body)}
        elif kind == 11:  # the signature of another request
            other, _ = bodies[(i + 1) % len(bodies)]
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": _signature(sr.SECRET, ts, other)}
        elif kind == 12:  # signed with an empty secret
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": _signature("", ts, body)}
        else:  # random noise of the right shape
            noise = "v0=" + "".join(rng.choice("0123456789abcdef") for _ in range(64))
            headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": noise}
        out.append((PATHS[rng.randrange(len(PATHS))], body, ctype, headers))
    return out


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture
def gate(slack, tmp_path):
    settings = sr.settings_for(f"sqlite:///{tmp_path / 'sec.db'}", slack.api_url)
    application, _, store = build(settings, verify_token=False)
    slack.recorder.clear()
    yield application, store
    store.dispose()


def test_a_thousand_forgeries_are_all_refused(gate, slack):
    application, store = gate
    accepted = []
    for path, body, ctype, headers in forged_variants(FORGED):
        status, out = sr.wsgi_call(application, "POST", path, body, headers, ctype)
        if status != 401:
            accepted.append((path, headers, status, out[:80]))
    assert accepted == []
    assert store.count_plans() == 0
    time.sleep(0.3)  # anything a lazy listener might have sent would have arrived by now
    assert slack.recorder.calls == []


def test_the_gate_can_tell_a_real_request(gate, slack):
    """The control: the same kinds of request, properly signed, are accepted."""
    application, store = gate
    for body, ctype in _bodies():
        status, _ = sr.wsgi_call(application, "POST", "/slack/events", body, sr.sign(body), ctype)
        assert status == 200
    assert store.count_plans() >= 1


def test_only_health_needs_no_signature(gate):
    application, _ = gate
    assert sr.wsgi_call(application, "GET", "/healthz")[0] == 200
    for method in ("GET", "POST", "PUT", "DELETE"):
        for path in PATHS:
            assert sr.wsgi_call(application, method, path)[0] == 401


def _all_booted(slack: SlackStandIn, workers: int, timeout: float = 30.0) -> None:
    """Wait for the start-up's auth.test calls: the master's check and one per worker (Bolt's App
    checks its token when a worker boots). /healthz answers once the first worker is up, and on a
    loaded machine the second one's auth.test could land after the recorder was cleared."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(call["method"] == "auth.test" for call in slack.recorder.calls) >= workers + 1:
            return
        time.sleep(0.05)


def test_forgeries_through_gunicorn(tmp_path):
    with SlackStandIn() as slack:
        env = {
            "SLACK_BOT_TOKEN": "xoxb-sec",
            "SLACK_SIGNING_SECRET": sr.SECRET,
            "SLACK_API_URL": slack.api_url,
            "GPUPLAN_DATABASE_URL": f"sqlite:///{tmp_path / 'gsec.db'}",
        }
        server = WebServer(env, workers=2, log_path=tmp_path / "g.log").start()
        try:
            _all_booted(slack, workers=2)
            slack.recorder.clear()
            statuses = [
                sr.post(server.port, body, ctype, headers=headers, path=path, signed=False)[0]
                for path, body, ctype, headers in forged_variants(140, seed=11)
            ]
            time.sleep(0.5)
            # gunicorn itself answers 400 to a header with a NUL byte; everything else reaches the gate
            forged = forged_variants(140, seed=11)
            expected = [400 if any("\x00" in v for v in h.values()) else 401 for _, _, _, h in forged]
            assert statuses == expected
            assert slack.recorder.calls == []
        finally:
            server.stop()
