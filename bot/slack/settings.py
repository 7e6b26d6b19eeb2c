"""Settings for the Slack app, read from the environment and validated once at start.

A missing or malformed setting stops the start with a message naming the variable; values are
never echoed (tokens and secrets are SecretStr and pydantic's own error text, which quotes the
input, is not shown).
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from gpuplan.knowledge import SettingError, catalog

# Where to find each value in Slack's app settings, for the start-up message
WHERE = {
    "SLACK_BOT_TOKEN": "OAuth & Permissions > Bot User OAuth Token (xoxb-...)",
    "SLACK_SIGNING_SECRET": "Basic Information > App Credentials > Signing Secret",
    "SLACK_APP_TOKEN": "Basic Information > App-Level Tokens, scope connections:write (xapp-...)",
}


class SettingsError(RuntimeError):
    """The environment cannot start the app; the message names each bad variable, `problems` lists them."""

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = problems or [message]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    slack_bot_token: SecretStr = Field(validation_alias=AliasChoices("SLACK_BOT_TOKEN"))
    slack_signing_secret: SecretStr | None = Field(  # HTTP mode only: Socket Mode has nothing to sign
        default=None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET")
    )
    slack_app_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN"))
    slack_api_url: str = Field(default="https://slack.com/api/", validation_alias=AliasChoices("SLACK_API_URL"))
    slack_api_timeout: float = Field(default=10.0, gt=0, le=60, validation_alias=AliasChoices("SLACK_API_TIMEOUT"))
    database_url: str = Field(  # repr=False: the URL may carry a password
        default="sqlite:///gpuplan.db",
        validation_alias=AliasChoices("GPUPLAN_DATABASE_URL", "DATABASE_URL"),
        repr=False,
    )
    tier_base_url: str | None = Field(default=None, validation_alias=AliasChoices("GPUPLAN_TIER_BASE_URL"))
    default_lang: Literal["en", "zh"] = Field(default="en", validation_alias=AliasChoices("GPUPLAN_LANG"))
    command: str = Field(default="/gpuplan", validation_alias=AliasChoices("GPUPLAN_COMMAND"))
    debug: bool = Field(default=False, validation_alias=AliasChoices("GPUPLAN_DEBUG"))
    # Bolt's option, measured by bench/bench_http.py: True answers inside the request (no ack polling)
    process_before_response: bool = Field(
        default=True, validation_alias=AliasChoices("GPUPLAN_PROCESS_BEFORE_RESPONSE")
    )
    # the app was installed with files:write and im:write (the manifest asks for both): the Config
    # files modal offers Send as files, and each plan's chart follows its reply into the thread;
    # false hides the button and posts no charts
    files_upload: bool = Field(default=True, validation_alias=AliasChoices("GPUPLAN_FILES_UPLOAD"))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", validation_alias=AliasChoices("GPUPLAN_LOG_LEVEL")
    )

    @field_validator("slack_bot_token")
    @classmethod
    def _bot_token(cls, value: SecretStr) -> SecretStr:
        if not value.get_secret_value().startswith("xoxb-"):
            raise ValueError("must be a bot token starting with xoxb-")
        return value

    @field_validator("slack_app_token")
    @classmethod
    def _app_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            raise ValueError("must be an app-level token starting with xapp-")
        return value

    @field_validator("slack_signing_secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("is empty")
        return value

    @field_validator("slack_api_url", "tier_base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        if value is not None and not value.endswith("/"):
            value += "/"
        return value

    @field_validator("database_url")
    @classmethod
    def _database(cls, value: str) -> str:
        if value.startswith("postgres://"):  # the Heroku-style spelling SQLAlchemy does not accept
            value = "postgresql://" + value[len("postgres://") :]
        if value.startswith("postgresql://"):  # psycopg 3 is the driver we install
            value = "postgresql+psycopg://" + value[len("postgresql://") :]
        if not value.startswith(("sqlite:", "postgresql+")):
            raise ValueError("must be a sqlite:/// or postgresql:// URL")
        return value

    @field_validator("command")
    @classmethod
    def _command(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with /")
        return value


def database_display(url: str) -> str:
    """The database URL with any password masked, for logs and start-up lines, without the driver
    gpuplan added (postgresql://, as the deployer wrote it, not postgresql+psycopg://)."""
    from sqlalchemy.engine import make_url  # lazy: SQLAlchemy is heavy; settings load without a database

    parsed = make_url(url)
    return parsed.set(drivername=parsed.get_backend_name()).render_as_string(hide_password=True)


def load_settings(socket_mode: bool = False, environ: dict[str, str] | None = None) -> Settings:
    """Validate the environment; raise SettingsError naming every variable that is missing or wrong.
    HTTP mode needs the signing secret; Socket Mode needs the app-level token instead."""
    env = dict(os.environ if environ is None else environ)
    problems: list[str] = []
    settings: Settings | None = None
    try:
        settings = Settings(**{k: v for k, v in env.items() if k in _VARIABLES})
    except ValidationError as exc:
        problems += [_problem(err) for err in exc.errors(include_input=False, include_url=False)]
    needed = "SLACK_APP_TOKEN" if socket_mode else "SLACK_SIGNING_SECRET"
    if not env.get(needed) and not any(p.startswith(needed) for p in problems):
        problems.append(f"{needed} is not set ({WHERE[needed]})")
    if settings is not None and settings.tier_base_url:  # the knowledge loader reads the same variable
        os.environ["GPUPLAN_TIER_BASE_URL"] = settings.tier_base_url
    try:  # the knowledge reads the deployer's price list (GPUPLAN_PRICES): a bad one stops the start too
        catalog()
    except SettingError as exc:
        problems.append(str(exc))
    if problems or settings is None:
        mode = " in Socket Mode" if socket_mode else ""
        raise SettingsError(f"gpuplan cannot start{mode}: " + "; ".join(problems), problems)
    return settings


def _problem(err: dict) -> str:
    variable = _variable(err["loc"])
    where = f" ({WHERE[variable]})" if variable in WHERE else ""
    if err["type"] == "missing":
        return f"{variable} is not set{where}"
    reason = err["msg"].removeprefix("Value error, ")
    if not reason.startswith(("must", "is ")):
        reason = f"is invalid: {reason[:1].lower()}{reason[1:]}"
    return f"{variable} {reason}{where}"


_VARIABLES = {
    alias for field in Settings.model_fields.values() for alias in getattr(field.validation_alias, "choices", ())
}


def _variable(loc: tuple) -> str:
    name = str(loc[0]) if loc else "?"
    if name in _VARIABLES:
        return name
    field = Settings.model_fields.get(name)
    choices = getattr(field.validation_alias, "choices", ()) if field else ()
    return choices[0] if choices else name.upper()
