"""Every way the Slack server can fail to start (bad settings, a token Slack refuses, Slack out of
reach, the port taken, the database closed) prints one line, "gpuplan: <what is wrong>: <what to do>",
and exits with its own status: under gunicorn (the Procfile's web command and `gpuplan serve`) as in
Socket Mode (the Procfile's worker), against the Slack stand-in."""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import subprocess
import sys
from urllib.error import URLError

import pytest
from servers import ROOT, free_port, procfile_command
from slack_standin import SlackStandIn

from gpuplan.bot.slack import serve, startup
from gpuplan.bot.slack.settings import load_settings

TOKEN, SECRET, APP_TOKEN, DB_PASSWORD = "xoxb-start-7f3a", "start-secret-9c1d", "xapp-1-start", "pw-4e8b"

# failure, how it is started, exit status, what the one line says
CASES = [
    ("settings", "web", 78, "gpuplan: SLACK_SIGNING_SECRET is not set"),
    ("settings", "serve", 78, "gpuplan: SLACK_SIGNING_SECRET is not set"),
    ("settings", "socket", 78, "gpuplan: SLACK_APP_TOKEN is not set"),
    ("bot_token_refused", "web", 77, "gpuplan: Slack refused SLACK_BOT_TOKEN (invalid_auth): copy the Bot User"),
    ("bot_token_refused", "serve", 77, "gpuplan: Slack refused SLACK_BOT_TOKEN (invalid_auth)"),
    ("bot_token_refused", "socket", 77, "gpuplan: Slack refused SLACK_BOT_TOKEN (token_revoked)"),
    ("app_token_refused", "socket", 77, "gpuplan: Slack refused SLACK_APP_TOKEN (invalid_auth): turn Socket Mode on"),
    ("slack_unreachable", "web", 69, "(connection refused): check the server's outbound HTTPS or a proxy"),
    ("slack_unreachable", "socket", 69, "(connection refused): check the server's outbound HTTPS or a proxy"),
    ("port_taken", "web", 71, "is taken: stop what listens there or set PORT"),
    ("port_taken", "serve", 71, "is taken: stop what listens there or set PORT"),  # the port given as --port
    ("database", "web", 74, "gpuplan: cannot open the database at postgresql://gp:***@127.0.0.1:"),
    ("database", "socket", 74, "Connection refused: check GPUPLAN_DATABASE_URL"),
]


def _arrange(failure: str, slack: SlackStandIn, env: dict[str, str], stack: contextlib.ExitStack) -> None:
    """Make `failure` happen: the stand-in refuses a token, Slack is a closed port, a port is held..."""
    if failure == "settings":
        env.pop("SLACK_SIGNING_SECRET" if "SLACK_APP_TOKEN" not in env else "SLACK_APP_TOKEN")
    elif failure == "bot_token_refused":
        slack.recorder.fail("auth.test", "token_revoked" if "SLACK_APP_TOKEN" in env else "invalid_auth")
    elif failure == "app_token_refused":
        slack.recorder.fail("apps.connections.open", "invalid_auth")
    elif failure == "slack_unreachable":
        env["SLACK_API_URL"] = f"http://127.0.0.1:{free_port()}/api/"  # nothing listens there
    elif failure == "port_taken":
        stack.enter_context(socket.create_server(("127.0.0.1", int(env["PORT"]))))
    elif failure == "database":
        env["GPUPLAN_DATABASE_URL"] = f"postgresql://gp:{DB_PASSWORD}@127.0.0.1:{free_port()}/gp"


def _start(mode: str, failure: str, tmp_path, debug: bool = False, extra: dict | None = None):
    """Start the server the way `mode` says, with `failure` arranged; the finished process."""
    port = free_port()
    env = {
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "GPUPLAN_DATABASE_URL": f"sqlite:///{tmp_path / 'start.db'}",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "PATH": "/usr/bin:/bin",
        **({"SLACK_APP_TOKEN": APP_TOKEN} if mode == "socket" else {}),
        **({"GPUPLAN_DEBUG": "1"} if debug else {}),
        **(extra or {}),
    }
    port_option = [] if extra and "PORT" in extra else ["--port", str(port)]
    command = {
        "web": procfile_command("web"),
        "socket": procfile_command("worker"),
        "serve": [sys.executable, "-m", "gpuplan.bot.cli", "serve", "--host", "127.0.0.1", *port_option],
    }[mode]
    with SlackStandIn() as slack, contextlib.ExitStack() as stack:
        env["SLACK_API_URL"] = slack.api_url
        _arrange(failure, slack, env, stack)
        if mode == "serve" and port_option:
            env["PORT"] = str(free_port())  # serve's --port wins over PORT: the check must look at --port
        env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")  # the checkout the tests run
        return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("failure,mode,status,words", CASES)
def test_a_failed_start_is_one_line_and_its_own_exit_status(failure, mode, status, words, tmp_path):
    done = _start(mode, failure, tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("gpuplan: ") and words in lines[0]
    assert done.returncode == status
    assert "Traceback" not in done.stderr and "Worker failed to boot" not in done.stderr
    for secret in (TOKEN, SECRET, APP_TOKEN, DB_PASSWORD):
        assert secret not in done.stderr


@pytest.mark.parametrize(
    "mode,key,value,words",
    [
        ("web", "PORT", "abc", "gpuplan: PORT must be a whole number from 1 to 65535: fix it in the server's"),
        ("serve", "PORT", "70000", "gpuplan: PORT must be a whole number from 1 to 65535"),
        ("web", "WEB_CONCURRENCY", "0", "gpuplan: WEB_CONCURRENCY must be a whole number of 1 or more"),
        ("serve", "WEB_CONCURRENCY", "two", "gpuplan: WEB_CONCURRENCY must be a whole number of 1 or more"),
        ("web", "GPUPLAN_THREADS", "4.5", "gpuplan: GPUPLAN_THREADS must be a whole number of 1 or more"),
    ],
)
def test_a_number_gunicorn_is_given_that_is_not_one(mode, key, value, words, tmp_path):
    """PORT=abc had been gunicorn's "Error: 'abc' is not a valid port number." (status 1), a bad
    WEB_CONCURRENCY a traceback, and WEB_CONCURRENCY=0 a server that listened with no worker."""
    done = _start(mode, "none", tmp_path, extra={key: value})
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(words), done.stderr[-3000:]
    assert done.returncode == 78 and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "value,number", [("", 3000), (" 8080 ", 8080), ("0", None), ("-1", None), ("3e3", None), ("65536", None)]
)
def test_whole_numbers_in_the_environment(monkeypatch, value, number):
    monkeypatch.setenv("PORT", value)
    if number is not None:
        assert startup.whole_number("PORT", 3000, 1, 65535) == number
        return
    with pytest.raises(startup.StartupFailure) as failure:
        startup.whole_number("PORT", 3000, 1, 65535)
    assert failure.value.status == 78 and value.strip() not in failure.value.line.replace("65535", "")


def test_gpuplan_debug_adds_the_traceback_before_the_line(tmp_path):
    done = _start("web", "bot_token_refused", tmp_path, debug=True)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" in done.stderr and "SlackApiError" in done.stderr
    assert lines[-1].startswith("gpuplan: Slack refused SLACK_BOT_TOKEN") and done.returncode == 77


def test_every_failure_has_a_distinct_documented_status():
    statuses = {status for status, _ in startup.FAILURES.values()}
    assert statuses == set(startup.STATUSES) and len(statuses) == 5
    assert not statuses & {0, 1, 2, 3, 4}  # the CLI's own, and gunicorn's worker-boot and app-load statuses
    help_text = " ".join(serve.parser().format_help().split())
    for status, meaning in startup.STATUSES.items():
        assert f"{status} {meaning}" in help_text
        assert f"{status} " in startup.__doc__


@pytest.mark.parametrize(
    "error,reason",
    [
        (URLError(ConnectionRefusedError(111, "Connection refused")), "connection refused"),
        (URLError(TimeoutError("timed out")), "timed out"),
        (TimeoutError("The read operation timed out"), "timed out"),
        (URLError(socket.gaierror(-2, "Name or service not known")), "host name not found"),
        (URLError(ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] verify failed")), "TLS failed"),
        (URLError("Tunnel connection failed: 407 Proxy Authentication Required\nmore"), "Tunnel connection failed"),
    ],
)
def test_why_slack_is_out_of_reach_in_a_few_words(error, reason):
    assert startup.network_reason(error).startswith(reason)
    assert "\n" not in startup.network_reason(error)


def test_a_slack_that_answers_too_late_timed_out(monkeypatch):
    with SlackStandIn() as slack:
        slack.recorder.fail("auth.test", ("timeout", 3))
        env = {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url}
        settings = load_settings(environ={**env, "SLACK_API_TIMEOUT": "1"})
        with pytest.raises(startup.StartupFailure) as failure:
            startup.check_slack(settings)
    assert failure.value.line.startswith(f"gpuplan: cannot reach Slack at {slack.api_url} (timed out): check")
    assert failure.value.status == 69


def test_a_database_file_that_cannot_be_made_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'no-such-dir' / 'gpuplan.db'}")
    monkeypatch.delenv("GPUPLAN_DATABASE_URL", raising=False)
    settings = load_settings(environ={"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SECRET})
    with pytest.raises(startup.StartupFailure) as failure:
        startup.open_store(settings)
    assert failure.value.line == (
        f"gpuplan: cannot open the database at sqlite:///{tmp_path / 'no-such-dir' / 'gpuplan.db'}: "
        "no such file or directory: check DATABASE_URL"
    )
    assert failure.value.status == 74


@pytest.mark.parametrize(
    "addresses,words",
    [
        ([("192.0.2.1", 3000)], "gpuplan: cannot listen on 192.0.2.1:3000 (cannot assign requested address)"),
        (["/tmp/gpuplan.sock", 5], None),  # a unix socket or an inherited fd names no port: nothing to check
    ],
)
def test_an_address_the_server_cannot_listen_on(addresses, words):
    if words is None:
        startup.check_listen(addresses)
        return
    with pytest.raises(startup.StartupFailure) as failure:
        startup.check_listen(addresses)
    assert failure.value.line.startswith(words) and failure.value.status == 71


def test_sockets_handed_over_are_not_probed(monkeypatch):
    """gunicorn's USR2 re-exec passes its bound sockets in GUNICORN_FD: the port is taken by itself."""
    with socket.create_server(("127.0.0.1", 0)) as held:
        monkeypatch.setenv("GUNICORN_FD", str(held.fileno()))
        startup.check_listen([held.getsockname()])


@pytest.mark.parametrize(
    "environ,line",
    [
        ({"SLACK_BOT_TOKEN": TOKEN}, "SLACK_SIGNING_SECRET is not set (Basic Information > App Credentials > "),
        ({}, "SLACK_BOT_TOKEN is not set (OAuth & Permissions > Bot User OAuth Token (xoxb-...)); SLACK_SIGNING_"),
    ],
)
def test_bad_settings_say_which_and_where(monkeypatch, environ, line):
    for key in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(startup.StartupFailure) as failure:
        startup.checked_settings(socket_mode=False)
    them = "it" if environ else "them"
    assert failure.value.line.startswith(f"gpuplan: {line}")
    assert failure.value.line.endswith(f": fix {them} in the server's environment (README, Settings)")
