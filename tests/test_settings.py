import pytest

from gpuplan.bot.slack.settings import Settings, SettingsError, database_display, load_settings

BASE = {"SLACK_BOT_TOKEN": "xoxb-123-abc", "SLACK_SIGNING_SECRET": "s3cr3t-value"}


def test_defaults():
    s = load_settings(environ=BASE)
    assert s.slack_api_url == "https://slack.com/api/"
    assert s.database_url == "sqlite:///gpuplan.db"
    assert s.default_lang == "en" and s.command == "/gpuplan" and not s.debug


@pytest.mark.parametrize("missing", ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"])
def test_a_missing_setting_is_named(missing):
    env = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(SettingsError, match=missing):
        load_settings(environ=env)


def test_every_missing_setting_is_named_at_once():
    with pytest.raises(SettingsError) as err:
        load_settings(environ={})
    assert "SLACK_BOT_TOKEN" in str(err.value) and "SLACK_SIGNING_SECRET" in str(err.value)


def test_socket_mode_needs_the_app_token():
    with pytest.raises(SettingsError, match="SLACK_APP_TOKEN"):
        load_settings(socket_mode=True, environ=BASE)
    assert load_settings(socket_mode=True, environ={**BASE, "SLACK_APP_TOKEN": "xapp-1-x"}).slack_app_token


@pytest.mark.parametrize(
    "key,value,words",
    [
        ("SLACK_BOT_TOKEN", "xoxp-user-token", "xoxb-"),
        ("SLACK_APP_TOKEN", "xoxb-wrong-kind", "xapp-"),
        ("SLACK_API_URL", "slack.example/api", "http"),
        ("GPUPLAN_DATABASE_URL", "mysql://x/y", "sqlite"),
        ("GPUPLAN_LANG", "fr", "GPUPLAN_LANG"),
        ("GPUPLAN_COMMAND", "planbot", "/"),
    ],
)
def test_wrong_values_are_explained_without_echoing_them(key, value, words):
    with pytest.raises(SettingsError) as err:
        load_settings(environ={**BASE, key: value})
    assert key in str(err.value) and words in str(err.value)
    assert value not in str(err.value)


def test_secrets_never_show():
    s = load_settings(environ={**BASE, "GPUPLAN_DATABASE_URL": "postgresql://gp:hunter2@db/gp"})
    for text in (repr(s), str(s)):
        assert "s3cr3t-value" not in text and "xoxb-123-abc" not in text and "hunter2" not in text
    assert "hunter2" not in database_display(s.database_url)


def test_database_urls_are_normalised():
    for given in ("postgres://u:p@h/db", "postgresql://u:p@h/db"):
        assert load_settings(environ={**BASE, "GPUPLAN_DATABASE_URL": given}).database_url == (
            "postgresql+psycopg://u:p@h/db"
        )


def test_api_url_gets_its_trailing_slash():
    assert load_settings(environ={**BASE, "SLACK_API_URL": "http://127.0.0.1:9/api"}).slack_api_url.endswith("/api/")


def test_settings_model_is_strict_about_types():
    with pytest.raises(ValueError):
        Settings.model_validate({**BASE, "GPUPLAN_DEBUG": "maybe"})


def test_socket_mode_needs_no_signing_secret():
    settings = load_settings(socket_mode=True, environ={"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"})
    assert settings.slack_signing_secret is None
    with pytest.raises(SettingsError, match="SLACK_SIGNING_SECRET"):
        load_settings(environ={"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"})
