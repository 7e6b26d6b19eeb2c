"""Socket Mode (`Procfile`: `worker: python -m gpuplan.bot.slack.socket_mode`), for workspaces without a public URL.

The same app and listeners as HTTP mode; Slack delivers over a WebSocket opened with the
app-level token (SLACK_APP_TOKEN), so no request signing is involved. A start that cannot go on
(settings, database, a token Slack refuses, Slack out of reach) ends in one line and the exit
status gpuplan.bot.slack.startup gives it.
"""

from __future__ import annotations

import sys

from slack_bolt.adapter.socket_mode import SocketModeHandler

from gpuplan.bot.slack import observe, startup
from gpuplan.bot.slack.server import create_app


def run() -> int:
    try:
        settings = startup.checked_settings(socket_mode=True)
        observe.configure(settings.log_level)
        store = startup.open_store(settings)
        startup.check_slack(settings, socket_mode=True)
        app = create_app(settings, store)
    except startup.StartupFailure as failure:
        return startup.report(failure)
    handler = SocketModeHandler(app, settings.slack_app_token.get_secret_value(), web_client=app.client)
    handler.start()
    return 0


if __name__ == "__main__":
    sys.exit(run())
