"""Load, worker crashes, scale-out and logs, against the Procfile's gunicorn (SQLite and, when
GPUPLAN_TEST_POSTGRES_URL is set, PostgreSQL). bench/bench_load.py runs the full-size versions."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import load
import pytest
import slack_requests as sr
from dbs import BACKENDS, POSTGRES, fresh_url
from servers import WebServer
from slack_standin import SlackStandIn

from gpuplan.bot.slack.blocks import violations
from gpuplan.bot.slack.store import Store

LOAD_REQUESTS, LOAD_CONCURRENCY = 500, 32  # the figures; the whole run takes about a second
KILL_REQUESTS = 600


def _env(slack: SlackStandIn, url: str, **extra: str) -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": "xoxb-res",
        "SLACK_SIGNING_SECRET": sr.SECRET,
        "SLACK_API_URL": slack.api_url,
        "GPUPLAN_DATABASE_URL": url,
        **extra,
    }


def _store(url: str) -> Store:
    return Store(sr.settings_for(url).database_url)


SLACK_ACK_MS = 3000  # Slack retries a request its app does not acknowledge within 3 seconds


@pytest.fixture(params=BACKENDS)
def database(request, tmp_path):
    return fresh_url(request.param, tmp_path)


def test_load_mixed_traffic(database, tmp_path):
    """500 signed requests at concurrency 32 against 2 workers: zero errors, every ack within
    Slack's 3 s (speed itself is bench/bench_load.py's to measure; a busy CI machine slows p99)."""
    with SlackStandIn() as slack:
        server = WebServer(_env(slack, database), workers=2, log_path=tmp_path / "load.log").start()
        try:
            report = load.run(
                server.port,
                LOAD_REQUESTS,
                LOAD_CONCURRENCY,
                lambda i: load.mixed_request(i, slack.response_url(f"load{i}")),
            )
        finally:
            server.stop()
        summary = report.summary()
        print("load:", summary)
        assert summary["errors"] == 0, [(r.kind, r.status, r.error, r.body[:100]) for r in report.errors[:5]]
        assert summary["p99_ms"] < SLACK_ACK_MS
        for r in report.results:
            if r.kind == "command":
                message = json.loads(r.body)
                assert violations({"text": message["text"], "blocks": message["blocks"]}) == []
        assert slack.recorder.violations() == []


def test_sigkill_during_load_loses_no_plan(database, tmp_path):
    """Kill a worker with SIGKILL mid-run: every plan id a response handed out is stored, the
    rows only grow, and the master's new worker keeps answering."""
    store = _store(database)
    with SlackStandIn() as slack:
        server = WebServer(_env(slack, database), workers=2, log_path=tmp_path / "kill.log").start()
        try:
            before = store.count_plans()
            victim = server.worker_pids()[0]
            killed = threading.Event()

            def maybe_kill(done: int) -> None:
                if done >= KILL_REQUESTS // 3 and not killed.is_set():
                    killed.set()
                    os.kill(victim, signal.SIGKILL)

            report = load.run(
                server.port,
                KILL_REQUESTS,
                16,
                lambda i: ("command", *sr.command(load.QUESTIONS[i % len(load.QUESTIONS)])),
                on_progress=maybe_kill,
            )
            assert killed.is_set()
            handed_out = report.plan_ids()
            missing = [pid for pid in handed_out if store.get_plan(pid) is None]
            assert missing == []
            assert store.count_plans() - before >= len(handed_out)
            # the requests the dead worker held are the only failures
            assert len(report.errors) <= 16, [(r.status, r.error) for r in report.errors]
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and victim in server.worker_pids():
                time.sleep(0.1)
            assert victim not in server.worker_pids() and len(server.worker_pids()) == 2
            assert sr.post(server.port, *sr.command("70b full"))[0] == 200
            if database.startswith("sqlite"):
                with store.engine.connect() as conn:
                    assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        finally:
            server.stop()
            store.dispose()


@pytest.mark.skipif(not POSTGRES, reason="two instances share PostgreSQL: set GPUPLAN_TEST_POSTGRES_URL")
def test_two_instances_behave_as_one_bot(tmp_path):
    url = fresh_url("postgres", tmp_path)
    with SlackStandIn() as slack:
        a = WebServer(_env(slack, url), workers=2, log_path=tmp_path / "a.log").start()
        b = WebServer(_env(slack, url), workers=2, log_path=tmp_path / "b.log").start()
        try:
            # a thread started on one instance continues on the other
            ts = f"{time.time():.6f}"
            assert sr.post(a.port, *sr.mention("llama-3.1-70b full on 16 H100", ts, "EvTwoA" + ts))[0] == 200
            slack.recorder.wait_for("chat.postMessage", 1)
            follow_ts = f"{time.time():.6f}"
            assert (
                sr.post(b.port, *sr.message("what about 16k context?", follow_ts, "EvTwoB" + follow_ts, thread_ts=ts))[
                    0
                ]
                == 200
            )
            posts = slack.recorder.wait_for("chat.postMessage", 2)
            assert "16,384" in json.dumps(posts[-1]["args"]["blocks"])
            # Slack's retries land on both instances: one reply
            retry_ts = f"{time.time():.6f}"
            event = sr.mention("7b lora", retry_ts, "EvTwoRetry" + retry_ts)
            for port, retry in ((a.port, None), (b.port, "1"), (a.port, "2"), (b.port, "3")):
                headers = {"X-Slack-Retry-Num": retry, "X-Slack-Retry-Reason": "http_timeout"} if retry else None
                assert sr.post(port, *event, headers=headers)[0] == 200
            time.sleep(1.5)
            assert len(slack.recorder.posted(sr.CHANNEL, retry_ts)) == 1
            # a plan made on one instance opens on the other
            message = json.loads(sr.post(a.port, *sr.command("qwen2.5-72b qlora"))[1])
            plan_id = message["blocks"][-1]["block_id"][len("plan:") :]
            shown = json.loads(sr.post(b.port, *sr.command(f"show {plan_id}"))[1])
            assert "Qwen2.5 72B" in shown["text"]
        finally:
            a.stop()
            b.stop()


def test_one_structured_log_line_per_request(tmp_path):
    secret_words = "project-nightingale"
    with SlackStandIn() as slack:
        log_path = tmp_path / "logs.log"
        server = WebServer(_env(slack, f"sqlite:///{tmp_path / 'logs.db'}"), workers=2, log_path=log_path).start()
        try:
            sr.post(server.port, *sr.command(f"{secret_words} 70b full"))
            sr.post(server.port, *sr.command("70b full"), signed=False)
            ts = f"{time.time():.6f}"
            sr.post(server.port, *sr.mention(f"{secret_words} 7b lora", ts, "EvLog" + ts))
            slack.recorder.wait_for("chat.postMessage", 1)
            time.sleep(0.3)
        finally:
            server.stop()
    text = log_path.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    requests = [line for line in lines if "latency_ms" in line]
    assert [line["status"] for line in requests] == [200, 401, 200]
    command, unsigned, mention = requests
    assert command["type"] == "command" and command["outcome"] == "plan" and command["plan_id"]
    assert unsigned["type"] == "unsigned"
    assert mention["type"] == "event:app_mention"
    posted = [line for line in lines if line.get("type") == "mention"]
    assert posted and posted[0]["posted"] is True and posted[0]["plan_id"]
    for forbidden in (secret_words, sr.SECRET, "xoxb-res"):
        assert forbidden not in text


def test_debug_logs_include_the_request(tmp_path):
    with SlackStandIn() as slack:
        log_path = tmp_path / "debug.log"
        env = _env(slack, f"sqlite:///{tmp_path / 'debug.db'}", GPUPLAN_DEBUG="1")
        server = WebServer(env, workers=1, log_path=log_path).start()
        try:
            sr.post(server.port, *sr.command("nightingale 70b full"))
        finally:
            server.stop()
    text = log_path.read_text()
    assert "nightingale" in text and sr.SECRET not in text and "xoxb-res" not in text


def test_slack_faults_end_to_end(tmp_path):
    """Mentions while Slack answers 429, 'ratelimited', 500 and '500-after' to a third of the
    posts: every thread gets exactly one reply (bench/bench_load.py runs 200)."""
    with SlackStandIn() as slack:
        server = WebServer(
            _env(slack, f"sqlite:///{tmp_path / 'faults.db'}"), workers=2, log_path=tmp_path / "faults.log"
        ).start()
        try:
            count = 40
            slack.recorder.fail("chat.postMessage", *([429, "ratelimited", 500, "500-after"] * (count // 12)))
            threads = [f"1900000000.{i:06d}" for i in range(count)]
            report = load.run(
                server.port, count, 8, lambda i: ("mention", *sr.mention("7b lora", threads[i], f"EvFaultT{i}"))
            )
            assert report.errors == []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not all(slack.recorder.posted(sr.CHANNEL, t) for t in threads):
                time.sleep(0.1)
            time.sleep(0.5)
            assert [len(slack.recorder.posted(sr.CHANNEL, t)) for t in threads] == [1] * count
        finally:
            server.stop()
