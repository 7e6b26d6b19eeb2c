"""`gpuplan serve`: run the Slack app locally, the way the Procfile runs it in production.

HTTP mode execs gunicorn with the Procfile's `web:` command (so local and deployed behave the
same); `--socket` runs Socket Mode (`worker:`) in this process.
"""

from __future__ import annotations

import argparse
import os
import sys

from gpuplan.bot.slack.settings import SettingsError, load_settings


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gpuplan serve",
        description="Run the gpuplan Slack app. HTTP mode needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET and a "
        "public URL pointing at /slack/events; Socket Mode also needs SLACK_APP_TOKEN and no public URL.",
    )
    p.add_argument("--socket", action="store_true", help="Socket Mode instead of HTTP")
    p.add_argument("--host", default=os.environ.get("HOST", "0.0.0.0"), help="HTTP: address to bind (default 0.0.0.0)")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")), help="HTTP: port (default 3000)")
    p.add_argument(
        "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2")), help="HTTP: gunicorn workers"
    )
    return p


def gunicorn_argv(host: str, port: int, workers: int) -> list[str]:
    """The Procfile's web command, with the bind address and worker count given here."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "gpuplan.bot.slack.wsgi:application",
        "--config",
        "python:gpuplan.bot.slack.gunicorn_conf",
        "--bind",
        f"{host}:{port}",
        "--workers",
        str(workers),
    ]


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        load_settings(socket_mode=args.socket)  # fail here, with the variable's name, not in a worker
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.socket:
        from gpuplan.bot.slack.socket_mode import run

        return run()
    command = gunicorn_argv(args.host, args.port, args.workers)
    os.execv(command[0], command)
    return 0  # not reached: exec replaced this process
