"""`gpuplan serve`: run the Slack app locally, the way the Procfile runs it in production.

HTTP mode execs gunicorn with the Procfile's `web:` command (so local and deployed behave the
same); `--socket` runs Socket Mode (`worker:`) in this process. A start that cannot go on prints one
line, "gpuplan: <what is wrong>: <what to do>", and exits with its own status
(gpuplan.bot.slack.startup): 78 a setting, 77 a token Slack refused, 69 Slack out of reach,
71 the port taken, 74 the database. HTTP mode checks the settings here, before exec'ing gunicorn,
and everything in gunicorn's master before it binds (gunicorn_conf.nworkers_changed).
"""

from __future__ import annotations

import argparse
import os
import sys


def parser() -> argparse.ArgumentParser:
    from gpuplan.bot.slack import startup  # here, not at the top: a question to the CLI needs no Slack

    p = argparse.ArgumentParser(
        prog="gpuplan serve",
        description="Run the gpuplan Slack app. HTTP mode needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET and a "
        "public URL pointing at /slack/events; Socket Mode also needs SLACK_APP_TOKEN and no public URL.",
        epilog="A start that cannot go on prints one line starting with 'gpuplan: ' and exits with: "
        + "; ".join(f"{status} {meaning}" for status, meaning in startup.STATUSES.items())
        + ". GPUPLAN_DEBUG=1 adds the traceback.",
    )
    p.add_argument("--socket", action="store_true", help="Socket Mode instead of HTTP")
    p.add_argument("--host", help="HTTP: address to bind (default: HOST, else 0.0.0.0)")
    p.add_argument("--port", type=int, help="HTTP: port (default: PORT, else 3000)")
    p.add_argument("--workers", type=int, help="HTTP: gunicorn workers (default: WEB_CONCURRENCY, else 2)")
    return p


def http_command(args: argparse.Namespace) -> list[str]:
    """gunicorn's command for the options given, else HOST, PORT and WEB_CONCURRENCY (a bad one: StartupFailure)."""
    from gpuplan.bot.slack import startup  # lazy: Slack's SDK and SQLAlchemy, for serving only

    host = args.host or os.environ.get("HOST", "0.0.0.0")
    port = args.port if args.port is not None else startup.whole_number("PORT", 3000, 1, 65535)
    workers = args.workers if args.workers is not None else startup.whole_number("WEB_CONCURRENCY", 2)
    return gunicorn_argv(host, port, workers)


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
    from gpuplan.bot.slack import startup  # lazy: Slack's SDK and SQLAlchemy, for serving only

    args = parser().parse_args(argv)
    if args.socket:
        from gpuplan.bot.slack.socket_mode import run  # lazy: Socket Mode's client, for --socket only

        return run()
    try:  # the settings fail here, without exec'ing gunicorn; the rest is checked in its master
        command = http_command(args)
        startup.checked_settings(socket_mode=False)
    except startup.StartupFailure as failure:
        return startup.report(failure)
    os.execv(command[0], command)
    return 0  # not reached: exec replaced this process
