"""Start-up checks of the Slack app: every way the server can fail to start ends in one line on
stderr, "gpuplan: <what is wrong>: <what to do>", and an exit status of its own:

  78  a setting is missing or malformed (SLACK_*, GPUPLAN_*, PORT, WEB_CONCURRENCY, a price list)
  77  Slack refused a token (SLACK_BOT_TOKEN at auth.test, SLACK_APP_TOKEN at apps.connections.open)
  69  Slack cannot be reached (connection refused, DNS, TLS, timeout, an answer that is not Slack's)
  71  the server cannot listen (the port is taken, a port it may not use, a HOST not of this machine)
  74  the database cannot be opened (unreachable, refused, a file that cannot be written)

No traceback follows unless GPUPLAN_DEBUG=1. HTTP mode runs the checks in gunicorn's master before
it writes a line (gunicorn_conf.nworkers_changed), Socket Mode in its own process (socket_mode.run).
"""

from __future__ import annotations

import errno
import http.client
import logging
import os
import socket
import ssl
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any
from urllib.error import URLError

import sqlalchemy as sa
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from gpuplan.bot.slack import slack_io
from gpuplan.bot.slack.settings import Settings, SettingsError, database_display, load_settings
from gpuplan.bot.slack.store import Store

# sysexits.h (FreeBSD sysexits(3)): apart from 1, 2 and gunicorn's own 3 (worker boot) and 4 (app load)
EX_UNAVAILABLE, EX_OSERR, EX_IOERR, EX_NOPERM, EX_CONFIG = 69, 71, 74, 77, 78

# Every start-up failure: its exit status and its line, "what is wrong: what to do" (kept here, in one place)
FAILURES: dict[str, tuple[int, str]] = {
    "settings": (EX_CONFIG, "{problems}: fix {them} in the server's environment (README, Settings)"),
    "bot_token_refused": (
        EX_NOPERM,
        "Slack refused SLACK_BOT_TOKEN ({error}): copy the Bot User OAuth Token (xoxb-...) from your app's "
        "OAuth & Permissions page (install the app again if it was revoked)",
    ),
    "app_token_refused": (
        EX_NOPERM,
        "Slack refused SLACK_APP_TOKEN ({error}): turn Socket Mode on in your app's settings and copy an "
        "app-level token with the connections:write scope (xapp-...) from Basic Information > App-Level Tokens",
    ),
    "slack_unreachable": (
        EX_UNAVAILABLE,
        "cannot reach Slack at {url} ({reason}): check the server's outbound HTTPS or a proxy (HTTPS_PROXY)",
    ),
    "port_taken": (EX_OSERR, "port {port} is taken: stop what listens there or set PORT"),
    "cannot_listen": (
        EX_OSERR,
        "cannot listen on {address} ({reason}): set HOST to an address of this machine (or 0.0.0.0) "
        "and PORT to a free port above 1023",
    ),
    "database": (EX_IOERR, "cannot open the database at {url}: {reason}: check {variable}"),
}

# What each status means, for the help of `gpuplan serve`
STATUSES = {
    EX_CONFIG: "a setting is missing or malformed",
    EX_NOPERM: "Slack refused SLACK_BOT_TOKEN or SLACK_APP_TOKEN",
    EX_UNAVAILABLE: "Slack cannot be reached",
    EX_OSERR: "the server cannot listen on HOST:PORT (the port is taken)",
    EX_IOERR: "the database cannot be opened",
}

_QUIET = logging.getLogger("gpuplan.startup.slack")  # slack_sdk logs each failed attempt; the one line says it
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class StartupFailure(Exception):
    """A reason the server cannot start, with the details its line needs (never a token or a password)."""

    def __init__(self, kind: str, **details: Any):
        self.kind = kind
        self.status, template = FAILURES[kind]
        self.line = "gpuplan: " + " ".join(template.format(**details).split())  # one line, whatever the details hold
        super().__init__(self.line)


def report(failure: StartupFailure) -> int:
    """Print the failure's one line (after its traceback under GPUPLAN_DEBUG=1); return its exit status."""
    if os.environ.get("GPUPLAN_DEBUG", "").strip().lower() in ("1", "true", "yes", "on"):
        traceback.print_exception(failure, file=sys.stderr)
    print(failure.line, file=sys.stderr, flush=True)
    return failure.status


def check_http(addresses: Iterable[Any], reuse_port: bool = False) -> Settings:
    """Everything HTTP mode needs before gunicorn binds and forks: settings, the address, the database, Slack."""
    settings = checked_settings(socket_mode=False)
    check_listen(addresses, reuse_port)
    open_store(settings).dispose()  # each worker opens its own after the fork
    check_slack(settings)
    return settings


def checked_settings(socket_mode: bool) -> Settings:
    try:
        return load_settings(socket_mode=socket_mode)
    except SettingsError as exc:
        them = "them" if len(exc.problems) > 1 else "it"
        raise StartupFailure("settings", problems="; ".join(exc.problems), them=them) from exc


def whole_number(name: str, default: int, low: int = 1, high: int | None = None) -> int:
    """A number gunicorn is given (PORT, WEB_CONCURRENCY, GPUPLAN_THREADS): the variable's, else `default`."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if text.isdigit() and int(text) >= low and (high is None or int(text) <= high):
        return int(text)
    bounds = f"from {low} to {high}" if high is not None else f"of {low} or more"
    raise StartupFailure("settings", problems=f"{name} must be a whole number {bounds}", them="it")


def open_store(settings: Settings) -> Store:
    """The store, its tables created; a database that cannot be opened is a StartupFailure naming its URL."""
    try:
        return Store(settings.database_url)
    except (sa.exc.SQLAlchemyError, ImportError, OSError) as exc:
        url = database_display(settings.database_url)
        password = sa.engine.make_url(settings.database_url).password
        reason = _database_reason(exc).replace(password, "***") if password else _database_reason(exc)
        raise StartupFailure("database", url=url, reason=reason, variable=_database_variable()) from exc


def check_listen(addresses: Iterable[Any], reuse_port: bool = False) -> None:
    """Bind each TCP address the way gunicorn will, and let go at once (gunicorn binds it next)."""
    if os.environ.get("GUNICORN_FD") or os.environ.get("LISTEN_FDS"):
        return  # the sockets are handed over (gunicorn's USR2 re-exec, systemd socket activation): already bound
    for address in addresses:
        if isinstance(address, tuple):  # unix:path and fd:// addresses name no port
            _try_bind(str(address[0]), int(address[1]), reuse_port)


def _try_bind(host: str, port: int, reuse_port: bool) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn's listeners (gunicorn/sock.py)
        if reuse_port and hasattr(socket, "SO_REUSEPORT"):
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise StartupFailure("port_taken", port=port) from exc
            reason = (exc.strerror or str(exc)).lower()
            raise StartupFailure("cannot_listen", address=f"{host}:{port}", reason=reason) from exc


def check_slack(settings: Settings, socket_mode: bool = False) -> None:
    """auth.test with the bot token, and in Socket Mode apps.connections.open with the app-level token."""
    client = WebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        timeout=max(1, round(settings.slack_api_timeout)),
        retry_handlers=slack_io.safe_retries(),  # a connection that never opened is tried again, a timeout is not
        logger=_QUIET,
    )
    url = settings.slack_api_url
    _ask_slack(client.auth_test, url, "bot_token_refused")
    if socket_mode and settings.slack_app_token is not None:
        app_token = settings.slack_app_token.get_secret_value()
        _ask_slack(lambda: client.apps_connections_open(app_token=app_token), url, "app_token_refused")


def _ask_slack(call: Callable[[], Any], url: str, refused: str) -> None:
    try:
        call()
    except SlackApiError as exc:
        data = getattr(exc.response, "data", None)
        if isinstance(data, dict) and data.get("error"):
            raise StartupFailure(refused, error=data["error"]) from exc
        status = getattr(exc.response, "status_code", None)
        raise StartupFailure("slack_unreachable", url=url, reason=f"HTTP {status}, not an answer from Slack") from exc
    except (OSError, SlackClientError, http.client.HTTPException) as exc:
        raise StartupFailure("slack_unreachable", url=url, reason=network_reason(exc)) from exc


def network_reason(exc: BaseException) -> str:
    """Why a connection failed, in a few words (urllib wraps the socket's error in URLError)."""
    reason = exc.reason if isinstance(exc, URLError) else exc
    if isinstance(reason, TimeoutError):
        return "timed out"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return "host name not found"
    if isinstance(reason, ssl.SSLError):
        detail = getattr(reason, "verify_message", None) or getattr(reason, "reason", None) or reason
        return f"TLS failed: {detail}"
    text = str(reason).strip()
    return text.splitlines()[0][:120] if text else type(reason).__name__


def _database_reason(exc: BaseException) -> str:
    cause = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    if isinstance(cause, ImportError):
        return f"its driver is not installed ({cause.name or cause})"
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror.lower()
    text = str(cause).strip()
    return text.splitlines()[0][:160] if text else type(cause).__name__


def _database_variable() -> str:
    """The variable the URL came from (GPUPLAN_DATABASE_URL wins, as in settings), for "check ..."."""
    if os.environ.get("DATABASE_URL") and not os.environ.get("GPUPLAN_DATABASE_URL"):
        return "DATABASE_URL"
    return "GPUPLAN_DATABASE_URL"
