"""HTTP throughput of the Slack app: gpuplan's full plan reply against a bare Bolt app.

Run: python bench/bench_http.py [-n 1000] [-c 8]
Starts the Procfile's web command (gunicorn, gpuplan.bot.slack.wsgi) and a bare Bolt app that acks with one
line (bench/bare_app.py) under the same gunicorn settings, a local stand-in for Slack's Web API,
and loads each with ../shared/tools/slackload.py at the same concurrency, in the same run.
Prints requests/s, p50 and p99 latency for every configuration measured (worker class, threads,
Bolt's process_before_response) and the ratio of gpuplan's throughput to the bare app's.
Target: gpuplan's plan reply reaches at least half of the bare app's throughput. Two more rows
for the chosen configuration separate the causes: "bare, plan-sized" acks with a reply as large
as the plan (the cost of the reply's size alone), and "gpuplan, no memo" runs with GPUPLAN_CACHE=0
(every request computes its plan from scratch, as a question nobody asked before does).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from servers import WebServer  # noqa: E402
from slack_standin import SlackStandIn  # noqa: E402

SECRET = "bench-signing-secret"
SLACKLOAD = Path(os.environ.get("SLACKLOAD", ROOT.parent / "shared" / "tools" / "slackload.py"))
QUESTION = "llama-3-70b full fine-tune on H100, 8k context"

# (label, gunicorn worker class, threads per worker, Bolt's process_before_response)
CONFIGS = [
    ("gthread x4, process_before_response", "gthread", 4, True),
    ("gthread x4, ack polling (Bolt default)", "gthread", 4, False),
    ("sync, process_before_response", "sync", 1, True),
    ("gthread x1, process_before_response", "gthread", 1, True),
]


BARE_COMMAND = [
    sys.executable,
    "-m",
    "gunicorn",
    "bare_app:application",
    "--config",
    "python:gpuplan.bot.slack.gunicorn_conf",
]


def load(port: int, n: int, c: int, text: str, expect: str) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            str(SLACKLOAD),
            "--url",
            f"http://127.0.0.1:{port}/slack/events",
            "--secret",
            SECRET,
            "--text",
            text,
            "-n",
            str(n),
            "-c",
            str(c),
            "--expect",
            expect,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"slackload failed: {out.stderr or out.stdout}")
    return json.loads(lines[-1])


def servers_for(env: dict[str, str], workers: int, tmp: Path, tag: str) -> dict[str, WebServer]:
    bare_env = {**env, "PYTHONPATH": str(ROOT / "bench") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    sized_env = {**bare_env, "BARE_BLOCKS_FILE": str(plan_blocks_file(tmp))}
    return {
        "bare": WebServer(bare_env, workers, log_path=tmp / f"bare-{tag}.log", command=BARE_COMMAND, health_status=404),
        "bare, plan-sized": WebServer(
            sized_env, workers, log_path=tmp / f"sized-{tag}.log", command=BARE_COMMAND, health_status=404
        ),
        "gpuplan": WebServer(env, workers, log_path=tmp / f"gpuplan-{tag}.log"),
        "gpuplan, no memo": WebServer({**env, "GPUPLAN_CACHE": "0"}, workers, log_path=tmp / f"nomemo-{tag}.log"),
    }


EXPECT = {
    "bare": "bare app",
    "bare, plan-sized": "bare app",
    "gpuplan": "Llama 3 70B",
    "gpuplan, no memo": "Llama 3 70B",
}


def plan_blocks_file(tmp: Path) -> Path:
    """The blocks of gpuplan's answer to QUESTION, for the plan-sized bare reply."""
    from gpuplan.bot.pipeline import answer
    from gpuplan.bot.slack.blocks import plan_message

    path = tmp / "plan-blocks.json"
    if not path.exists():
        path.write_text(json.dumps(plan_message(answer(QUESTION), "a2b3c4d5")["blocks"]), encoding="utf-8")
    return path


def measure(label: str, env: dict[str, str], args: argparse.Namespace, tmp: Path, no_memo: bool) -> dict[str, dict]:
    """Start the apps side by side, warm them up, then load them in turn, `rounds` times; medians."""
    tag = label.split(",")[0].replace(" ", "")
    servers = servers_for(env, args.workers, tmp, tag + str(len(label)))
    if not no_memo:  # the extra baselines only for the first (chosen) configuration
        servers.pop("gpuplan, no memo")
        servers.pop("bare, plan-sized")
    results: dict[str, list[dict]] = {name: [] for name in servers}
    try:
        for server in servers.values():
            server.start()
        for name, server in servers.items():
            load(server.port, max(50, args.n // 10), args.c, QUESTION, EXPECT[name])  # warm-up
        for _ in range(args.rounds):
            for name, server in servers.items():
                results[name].append(load(server.port, args.n, args.c, QUESTION, EXPECT[name]))
    finally:
        for server in servers.values():
            server.stop()
    return {name: _median(runs) for name, runs in results.items()}


def _median(runs: list[dict]) -> dict:
    ordered = sorted(runs, key=lambda r: r["rps"])
    middle = ordered[len(ordered) // 2]
    return {**middle, "errors": sum(r["errors"] for r in runs), "all_rps": [r["rps"] for r in runs]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=1000, help="requests per measurement")
    ap.add_argument("-c", type=int, default=8, help="concurrent connections (the same for every app)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3, help="measurements per app, taken in turn; the median is shown")
    ap.add_argument("--quick", action="store_true", help="only the chosen configuration")
    args = ap.parse_args()
    if not SLACKLOAD.exists():
        print(f"slackload.py not found at {SLACKLOAD}; set SLACKLOAD=/path/to/slackload.py", file=sys.stderr)
        return 2
    configs = CONFIGS[:1] if args.quick else CONFIGS
    rows = []
    with SlackStandIn() as slack, tempfile.TemporaryDirectory() as tmp:
        for i, (label, worker_class, threads, pbr) in enumerate(configs):
            env = {
                "SLACK_BOT_TOKEN": "xoxb-bench",
                "SLACK_SIGNING_SECRET": SECRET,
                "SLACK_API_URL": slack.api_url,
                "GPUPLAN_DATABASE_URL": f"sqlite:///{tmp}/bench-{i}.db",
                "GPUPLAN_WORKER_CLASS": worker_class,
                "GPUPLAN_THREADS": str(threads),
                "GPUPLAN_PROCESS_BEFORE_RESPONSE": str(pbr).lower(),
                "GPUPLAN_LOG_LEVEL": "INFO",  # as deployed: one JSON line per request (to the log file)
            }
            rows.append((label, measure(label, env, args, Path(tmp), no_memo=(i == 0))))
    print(
        f"{args.n} signed /gpuplan requests per measurement, concurrency {args.c}, {args.workers} gunicorn "
        f"workers, median of {args.rounds} rounds taken in turn; question {QUESTION!r}"
    )
    print(f"{'configuration':42} {'app':17} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}  rounds req/s")
    for label, result in rows:
        for name, r in result.items():
            rounds = " ".join(f"{x:.0f}" for x in r["all_rps"])
            figures = f"{r['rps']:>8.1f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['errors']:>6}"
            print(f"{label:42} {name:17} {figures}  {rounds}")
        bare = result["bare"]["rps"]
        for name in ("gpuplan", "gpuplan, no memo"):
            if name in result:
                print(
                    f"{'':42} {'ratio' + name.removeprefix('gpuplan'):17} {result[name]['rps'] / bare:>8.2f}"
                    "  (to the bare one-line app; target >= 0.5)"
                )
        if "bare, plan-sized" in result:
            sized = result["bare, plan-sized"]["rps"]
            print(
                f"{'':42} {'ratio':17} {result['gpuplan']['rps'] / sized:>8.2f}"
                "  (to the bare app sending a reply of the plan's size)"
            )
    best = max(rows, key=lambda row: row[1]["gpuplan"]["rps"])
    print(f"fastest for gpuplan: {best[0]} (bot/slack/gunicorn_conf.py and GPUPLAN_PROCESS_BEFORE_RESPONSE defaults)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
