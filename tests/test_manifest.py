import yaml
from servers import ROOT

from gpuplan.bot.cli import main
from gpuplan.bot.slack import manifest
from gpuplan.bot.slack.listeners import shortcuts
from gpuplan.bot.slack.server import SLACK_PATH


def test_repository_manifest_is_the_generated_one():
    assert (ROOT / "manifest.yaml").read_text() == manifest.render()


def test_manifest_matches_what_the_app_listens_for():
    m = manifest.manifest("https://bot.example.org")
    url = "https://bot.example.org" + SLACK_PATH
    assert m["features"]["slash_commands"][0]["url"] == url
    assert m["settings"]["event_subscriptions"]["request_url"] == url
    assert m["settings"]["interactivity"] == {"is_enabled": True, "request_url": url}
    assert m["features"]["shortcuts"][0]["callback_id"] == shortcuts.CALLBACK_ID
    assert m["features"]["app_home"]["home_tab_enabled"]
    events = set(m["settings"]["event_subscriptions"]["bot_events"])
    assert {"app_mention", "app_home_opened", "message.im", "message.channels"} <= events
    scopes = set(m["oauth_config"]["scopes"]["bot"])
    assert {"commands", "chat:write", "app_mentions:read", "im:history", "channels:history"} <= scopes
    assert 174 <= len(m["display_information"]["long_description"]) <= 4000
    assert len(m["display_information"]["description"]) <= 140


def test_manifest_lets_the_app_upload_charts_and_files():
    """files_upload_v2 (each plan's chart in its thread, Config files > Send as files) needs files:write."""
    for socket_mode in (False, True):
        assert "files:write" in manifest.manifest(socket_mode=socket_mode)["oauth_config"]["scopes"]["bot"]
    assert "- files:write" in (ROOT / "manifest.yaml").read_text()


def test_socket_mode_manifest_has_no_urls():
    m = manifest.manifest(socket_mode=True)
    assert m["settings"]["socket_mode_enabled"] is True
    assert "request_url" not in m["settings"]["event_subscriptions"]
    assert "url" not in m["features"]["slash_commands"][0]


def test_cli_prints_it(capsys):
    assert main(["manifest", "--url", "https://bot.example.org"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["settings"]["interactivity"]["request_url"].startswith(
        "https://bot.example.org/"
    )
    assert main(["manifest", "--url", "http://insecure.example.org"]) == 2


def test_questions_that_start_with_serve_are_questions(capsys):
    assert main(["serve llama-3-70b for users in South-East Asia"]) == 0
    assert "Llama 3 70B" in capsys.readouterr().out
