"""gpuplan serve and Socket Mode start-up: settings checked first, the Procfile's command used."""

from unittest.mock import MagicMock

from servers import procfile_command

from gpuplan.bot.cli import main
from gpuplan.bot.slack import serve, socket_mode


def test_serve_without_settings_names_them(capsys, monkeypatch):
    for key in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    assert main(["serve"]) == 78  # sysexits.h EX_CONFIG
    err = capsys.readouterr().err
    assert "SLACK_BOT_TOKEN" in err and "SLACK_SIGNING_SECRET" in err and err.startswith("gpuplan: ")


def test_socket_mode_needs_the_app_token(capsys, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    monkeypatch.delenv("SLACK_APP_TOKEN", raising=False)
    assert main(["serve", "--socket"]) == 78
    assert "SLACK_APP_TOKEN" in capsys.readouterr().err


def test_serve_runs_the_procfile_web_command():
    argv = serve.gunicorn_argv("127.0.0.1", 4000, 3)
    web = procfile_command("web")
    assert argv[: len(web)] == web
    assert argv[len(web) :] == ["--bind", "127.0.0.1:4000", "--workers", "3"]


def test_serve_execs_gunicorn(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    execv = MagicMock()
    monkeypatch.setattr(serve.os, "execv", execv)
    serve.main(["--port", "3100"])
    path, argv = execv.call_args.args
    assert "gunicorn" in argv and "127.0.0.1:3100" not in argv and "0.0.0.0:3100" in argv


def test_socket_mode_starts_the_handler_with_the_app_client(monkeypatch, tmp_path):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-abc")
    monkeypatch.setenv("GPUPLAN_DATABASE_URL", f"sqlite:///{tmp_path / 'sock.db'}")
    app = MagicMock()
    monkeypatch.setattr(socket_mode.startup, "check_slack", MagicMock())  # tests/test_startup.py asks the stand-in
    monkeypatch.setattr(socket_mode, "create_app", MagicMock(return_value=app))
    handler = MagicMock()
    monkeypatch.setattr(socket_mode, "SocketModeHandler", handler)
    assert socket_mode.run() == 0
    args, kwargs = handler.call_args
    assert args == (app, "xapp-1-abc") and kwargs["web_client"] is app.client
    handler.return_value.start.assert_called_once()


def test_procfile_has_both_processes():
    assert procfile_command("web")[-3:] == [
        "gpuplan.bot.slack.wsgi:application",
        "--config",
        "python:gpuplan.bot.slack.gunicorn_conf",
    ]
    assert procfile_command("worker")[-2:] == ["-m", "gpuplan.bot.slack.socket_mode"]
