"""gunicorn settings for the Procfile's `web:` line
(`gunicorn gpuplan.bot.slack.wsgi:application --config python:gpuplan.bot.slack.gunicorn_conf`).

PORT and WEB_CONCURRENCY follow the Heroku/Procfile convention; the worker class and threads
were chosen by bench/bench_http.py (README, "Performance"). The master checks that the server
can start before it binds or forks (nworkers_changed below): a failure is one line and an exit status,
as is a PORT, WEB_CONCURRENCY or GPUPLAN_THREADS that is not a number (_numbers, read on import).
"""

from __future__ import annotations

import os
import sys
from typing import Any


def _numbers() -> tuple[int, int, int]:
    """PORT, WEB_CONCURRENCY and GPUPLAN_THREADS; one that is not a number ends the start in one line."""
    from gpuplan.bot.slack import startup  # lazy: Slack's SDK and SQLAlchemy, loaded by the hook that uses them

    try:
        port = startup.whole_number("PORT", 3000, 1, 65535)
        return port, startup.whole_number("WEB_CONCURRENCY", 2), startup.whole_number("GPUPLAN_THREADS", 4)
    except startup.StartupFailure as failure:
        sys.exit(startup.report(failure))


_port, workers, threads = _numbers()
bind = f"{os.environ.get('HOST', '0.0.0.0')}:{_port}"
worker_class = os.environ.get("GPUPLAN_WORKER_CLASS", "gthread")
timeout = 30
graceful_timeout = 20
keepalive = 5
accesslog = None  # gpuplan.bot.slack.observe writes one structured line per request instead
errorlog = "-"
control_socket_disable = True  # gunicorn 23+'s control socket: one fixed path would clash between instances
loglevel = os.environ.get("GPUPLAN_LOG_LEVEL", "info").lower()


def nworkers_changed(server: Any, new_value: int, old_value: int | None) -> None:
    """The start-up checks (gpuplan.bot.slack.startup), once, in the master: old_value is None only at
    start. This is gunicorn's first hook with the whole configuration (--bind included) and it runs
    before gunicorn writes a line or binds (on_starting comes after "Starting gunicorn"), so a failure
    is the only line on stderr and no worker is forked to fail to boot."""
    if old_value is not None:
        return  # TTIN/TTOU or a reload: the server is already up
    from gpuplan.bot.slack import startup  # lazy: Slack's SDK and SQLAlchemy, loaded by the hook that uses them

    try:
        startup.check_http(server.cfg.address, server.cfg.reuse_port)
    except startup.StartupFailure as failure:
        sys.exit(startup.report(failure))
