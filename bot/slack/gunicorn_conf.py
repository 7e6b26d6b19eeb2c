"""gunicorn settings for the Procfile's `web:` line
(`gunicorn gpuplan.bot.slack.wsgi:application --config python:gpuplan.bot.slack.gunicorn_conf`).

PORT and WEB_CONCURRENCY follow the Heroku/Procfile convention; the worker class and threads
were chosen by bench/bench_http.py (README, "Performance").
"""

from __future__ import annotations

import os
import sys

bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '3000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = os.environ.get("GPUPLAN_WORKER_CLASS", "gthread")
threads = int(os.environ.get("GPUPLAN_THREADS", "4"))
timeout = 30
graceful_timeout = 20
keepalive = 5
accesslog = None  # gpuplan.bot.slack.observe writes one structured line per request instead
errorlog = "-"
control_socket_disable = True  # gunicorn 23+'s control socket: one fixed path would clash between instances
loglevel = os.environ.get("GPUPLAN_LOG_LEVEL", "info").lower()


def on_starting(server: object) -> None:
    """Check the settings once in the master, so a missing one stops the start with its name."""
    from gpuplan.bot.slack.settings import SettingsError, load_settings

    try:
        load_settings()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
