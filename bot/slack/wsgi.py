"""The WSGI entry point gunicorn loads (`Procfile`: `web: gunicorn gpuplan.bot.slack.wsgi:application ...`).

Each worker builds its own app, store and database pool after the fork.
"""

from __future__ import annotations

from gpuplan.bot.slack import observe
from gpuplan.bot.slack.server import build
from gpuplan.bot.slack.settings import load_settings

settings = load_settings()
observe.configure(settings.log_level)
application, bolt_app, store = build(settings)
