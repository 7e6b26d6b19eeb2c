"""Socket Mode (`Procfile`: `worker: python -m gpuplan.bot.slack.socket_mode`), for workspaces without a public URL.

The same app and listeners as HTTP mode; Slack delivers over a WebSocket opened with the
app-level token (SLACK_APP_TOKEN), so no request signing is involved.
"""

from __future__ import annotations

import sys

from slack_bolt.adapter.socket_mode import SocketModeHandler

from gpuplan.bot.slack import observe
from gpuplan.bot.slack.server import create_app
from gpuplan.bot.slack.settings import SettingsError, load_settings
from gpuplan.bot.slack.store import Store


def run() -> int:
    try:
        settings = load_settings(socket_mode=True)
        observe.configure(settings.log_level)
        store = Store(settings.database_url)
        app = create_app(settings, store)
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 1
    handler = SocketModeHandler(app, settings.slack_app_token.get_secret_value(), web_client=app.client)
    handler.start()
    return 0


if __name__ == "__main__":
    sys.exit(run())
