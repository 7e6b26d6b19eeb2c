"""Full-size reliability runs with printed figures (tests/test_resilience.py runs smaller ones in CI).

Run: python bench/bench_load.py [--postgres postgresql://...] [-n 500] [-c 32]
1. Load: n signed requests at concurrency c against the Procfile's gunicorn (2 workers), as
   slash commands and as mentions with ../shared/tools/slackload.py, and as mixed traffic
   (commands, mentions, follow-ups, clicks) with tests/load.py. Target: zero errors, p99 < 1 s.
2. Crash: 10 x n commands at concurrency c while a worker is killed with SIGKILL at one third
   and at two thirds: every plan id a response handed out must be stored.
3. Slack faults: 200 mentions while the Web API stand-in answers 429, 'ratelimited', 500 and
   '500-after' (posted, then 500) to a third of the posts: every thread gets exactly one reply.
Each run uses SQLite, and PostgreSQL too when --postgres (or GPUPLAN_TEST_POSTGRES_URL) is given.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import load  # noqa: E402
import slack_requests as sr  # noqa: E402
from servers import WebServer  # noqa: E402
from slack_standin import SlackStandIn  # noqa: E402

from gpuplan.bot.slack.settings import load_settings  # noqa: E402
from gpuplan.bot.slack.store import Store  # noqa: E402

SLACKLOAD = Path(os.environ.get("SLACKLOAD", ROOT.parent / "shared" / "tools" / "slackload.py"))


def databases(tmp: Path, postgres: str) -> list[tuple[str, str]]:
    out = [("sqlite", f"sqlite:///{tmp / 'bench.db'}")]
    if postgres:
        import sqlalchemy as sa

        name = "gpuplan_bench_" + uuid.uuid4().hex[:8]
        admin = sa.create_engine(postgres, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        out.append(("postgres", postgres.rsplit("/", 1)[0] + "/" + name))
    return out


def env_for(slack: SlackStandIn, url: str) -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": "xoxb-bench",
        "SLACK_SIGNING_SECRET": sr.SECRET,
        "SLACK_API_URL": slack.api_url,
        "GPUPLAN_DATABASE_URL": url,
    }


def slackload(port: int, n: int, c: int, mention: bool) -> dict:
    args = [
        sys.executable,
        str(SLACKLOAD),
        "--url",
        f"http://127.0.0.1:{port}/slack/events",
        "--secret",
        sr.SECRET,
        "-n",
        str(n),
        "-c",
        str(c),
        "--json",
    ]
    args += ["--mention", "<@U0GPUPLAN> llama-3-70b qlora on 8 H100"] if mention else ["--text", "70b full"]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": out.stderr[-300:]}


def row(label: str, figures: dict) -> None:
    keys = ("requests", "errors", "rps", "p50_ms", "p99_ms", "max_ms")
    print(f"  {label:34} " + "  ".join(f"{k}={figures.get(k)}" for k in keys))


def load_runs(name: str, url: str, n: int, c: int, tmp: Path) -> None:
    with SlackStandIn() as slack:
        server = WebServer(env_for(slack, url), workers=2, log_path=tmp / f"load-{name}.log").start()
        try:
            load.run(server.port, 100, c, lambda i: ("command", *sr.command(load.QUESTIONS[i % 10])))  # warm-up
            if SLACKLOAD.exists():
                row("slash commands (slackload)", slackload(server.port, n, c, mention=False))
                row("mentions (slackload)", slackload(server.port, n, c, mention=True))
            mixed = load.run(server.port, n, c, lambda i: load.mixed_request(i, slack.response_url(f"b{i}")))
            row("mixed traffic (tests/load.py)", mixed.summary())
            violations = slack.recorder.violations()
            print(f"  {'':34} Block Kit violations in what reached Slack: {len(violations)}")
        finally:
            server.stop()


def crash_run(name: str, url: str, n: int, c: int, tmp: Path) -> None:
    settings = load_settings(
        environ={"SLACK_BOT_TOKEN": "xoxb-x", "SLACK_SIGNING_SECRET": "s", "GPUPLAN_DATABASE_URL": url}
    )
    store = Store(settings.database_url)
    with SlackStandIn() as slack:
        server = WebServer(env_for(slack, url), workers=2, log_path=tmp / f"crash-{name}.log").start()
        try:
            before = store.count_plans()
            kills: list[int] = []
            lock = threading.Lock()

            def maybe_kill(done: int) -> None:
                with lock:
                    due = len(kills) < 2 and done >= (len(kills) + 1) * n // 3
                    if due:
                        pid = server.worker_pids()[0]
                        kills.append(pid)
                        os.kill(pid, signal.SIGKILL)

            report = load.run(
                server.port, n, c, lambda i: ("command", *sr.command(load.QUESTIONS[i % 10])), on_progress=maybe_kill
            )
            handed = report.plan_ids()
            missing = [p for p in handed if store.get_plan(p) is None]
            after = store.count_plans()
            print(
                f"  {n} commands at concurrency {c}, SIGKILL to workers {kills}: "
                f"{len(handed)} plan ids handed out, {len(missing)} missing from the store, "
                f"rows {before} -> {after} (+{after - before}), {len(report.errors)} requests cut off by the kills"
            )
        finally:
            server.stop()
            store.dispose()


def fault_run(name: str, url: str, tmp: Path, count: int = 200) -> None:
    with SlackStandIn() as slack:
        server = WebServer(env_for(slack, url), workers=2, log_path=tmp / f"faults-{name}.log").start()
        try:
            faults = [429, "ratelimited", 500, "500-after"] * (count // 12)
            slack.recorder.fail("chat.postMessage", *faults)
            threads = [f"1900000000.{i:06d}" for i in range(count)]
            start = time.perf_counter()
            report = load.run(
                server.port, count, 16, lambda i: ("mention", *sr.mention("7b lora", threads[i], f"EvFault{i}-{name}"))
            )
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                landed = [len(slack.recorder.posted(sr.CHANNEL, t)) for t in threads]
                if all(landed):
                    break
                time.sleep(0.2)
            took = time.perf_counter() - start
            landed = [len(slack.recorder.posted(sr.CHANNEL, t)) for t in threads]
            print(
                f"  {count} mentions, {len(faults)} injected faults (429, ratelimited, 500, 500-after): "
                f"{sum(1 for x in landed if x == 1)} threads with exactly one reply, "
                f"{sum(1 for x in landed if x == 0)} with none, {sum(1 for x in landed if x > 1)} with duplicates; "
                f"{len(report.errors)} HTTP errors; all settled in {took:.1f} s"
            )
        finally:
            server.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=500)
    ap.add_argument("-c", type=int, default=32)
    ap.add_argument("--postgres", default=os.environ.get("GPUPLAN_TEST_POSTGRES_URL", ""))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for name, url in databases(tmp, args.postgres):
            print(f"== {name}")
            print(
                f"load: {args.n} signed requests at concurrency {args.c}, 2 gunicorn workers (target: 0 errors, "
                "p99 < 1000 ms)"
            )
            load_runs(name, url, args.n, args.c, tmp)
            print("crash:")
            crash_run(name, url, 10 * args.n, args.c, tmp)
            print("Slack faults:")
            fault_run(name, url, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
