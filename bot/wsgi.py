"""The WSGI entry point gunicorn loads (`Procfile`: `web: gunicorn bot.wsgi:application ...`).

Each worker builds its own app, store and database pool after the fork.
"""

from __future__ import annotations

from bot import observe
from bot.server import build
from bot.settings import load_settings

settings = load_settings()
observe.configure(settings.log_level)
application, bolt_app, store = build(settings)
