"""The Slack app: Bolt configured for gpuplan, and the WSGI application gunicorn serves.

The WSGI layer in front of Bolt's adapter answers `GET /healthz`, refuses any other request that
Slack did not sign (401, before Bolt or a listener sees it), refuses malformed bodies (400) and
oversized ones (413), and writes one structured log line per request.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import logging
import time
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.error import BoltError
from slack_bolt.middleware import Middleware
from slack_sdk import WebClient

from gpuplan.bot.pipeline import answer
from gpuplan.bot.slack import observe, slack_io
from gpuplan.bot.slack.blocks import plan_message
from gpuplan.bot.slack.listeners import register_listeners
from gpuplan.bot.slack.payloads import well_formed
from gpuplan.bot.slack.replies import Replies
from gpuplan.bot.slack.settings import Settings, SettingsError
from gpuplan.bot.slack.startup import StartupFailure
from gpuplan.bot.slack.store import Store
from gpuplan.knowledge import catalog

log = logging.getLogger("gpuplan.server")
SLACK_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
MAX_BODY = 1 << 20  # Slack's payloads are a few KB; a megabyte is far past any real one
SIGNATURE_MAX_AGE_S = 60 * 5  # Slack's rule: refuse timestamps older than five minutes


def web_client(settings: Settings) -> WebClient:
    """Bolt's Web API client (views, auth.test): at SLACK_API_URL, retrying every fault, since
    what it sends is idempotent. Thread replies go through gpuplan.bot.slack.slack_io.ReplyPoster instead."""
    return slack_io.web_client(
        settings.slack_bot_token.get_secret_value(), settings.slack_api_url, settings.slack_api_timeout
    )


def create_app(settings: Settings, store: Store, verify_token: bool = True) -> App:
    """Bolt with gpuplan's listeners. Answers are computed in milliseconds, so commands and
    actions reply inside the request (process_before_response); events ack first and post later."""
    catalog()  # load and validate the knowledge once, before the first request
    bolt_log = logging.getLogger("slack_bolt.gpuplan")
    level = bolt_log.level
    bolt_log.setLevel(logging.ERROR)  # Bolt notes that SLACK_BOT_TOKEN in the environment goes unused: by design
    try:
        app = App(
            client=web_client(settings),
            signing_secret=settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None,
            process_before_response=settings.process_before_response,
            token_verification_enabled=verify_token,
            # SlackWSGI checks every signature before Bolt sees the request (and Socket Mode has none)
            request_verification_enabled=False,
            logger=bolt_log,
        )
    except BoltError as exc:  # auth.test refused the token: say which setting, never its value
        raise StartupFailure("bot_token_refused", error=_reason(exc)) from None
    finally:
        bolt_log.setLevel(level)
    replies = Replies(store, settings)
    io = slack_io.SlackIO.create(
        settings.slack_bot_token.get_secret_value(), settings.slack_api_url, settings.slack_api_timeout
    )
    app.use(DedupeEvents(store))
    register_listeners(app, replies, io)
    warm_up()
    return app


def warm_up() -> None:
    """Answer and render one question per language so the first real request pays no compile cost."""
    for question in ("llama-3-70b lora", "700亿 全参微调"):
        plan_message(answer(question), "warmup00")


def _reason(exc: Exception) -> str:
    text = str(exc)
    return "invalid_auth" if "invalid_auth" in text else text.split("\n")[0][:120]


class DedupeEvents(Middleware):
    """Slack retries an event it thinks we missed; the first delivery claims its id, repeats stop
    here. A class middleware: Bolt calls it without building keyword arguments per request."""

    def __init__(self, store: Store):
        self.store = store

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]) -> BoltResponse:  # noqa: A002
        body = req.body
        is_event = body.get("type") == "event_callback" and body.get("event_id")
        if is_event and not self.store.claim_event(str(body["event_id"])):
            observe.note(outcome="duplicate")
            return BoltResponse(status=200, body="")
        return next()


class SlackWSGI:
    """The WSGI application: health check, signature gate, body checks, then Bolt's WSGI adapter."""

    def __init__(self, app: App, store: Store, signing_secret: str, debug: bool = False):
        self.bolt = SlackRequestHandler(app, path=SLACK_PATH)
        self.store = store
        self.secret = signing_secret.encode()
        self.debug = debug

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "")
        if path == HEALTH_PATH and method in ("GET", "HEAD"):
            return self._health(start_response)
        record = observe.start(path=path)
        status, headers, body = self._handle(environ, method, path, record)
        observe.finish(record, status=int(status.split()[0]))
        start_response(status, headers)
        return [body]

    def _handle(self, environ: dict[str, Any], method: str, path: str, record: dict) -> tuple[str, list, bytes]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _plain(400, "bad content length")
        if length > MAX_BODY:
            record["type"] = "too_large"
            return _plain(413, "payload too large")
        raw = environ["wsgi.input"].read(length) if length else b""
        timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", "")
        signature = environ.get("HTTP_X_SLACK_SIGNATURE", "")
        if not self._signed(raw, timestamp, signature):
            record["type"] = "unsigned"
            return _plain(401, "invalid signature")
        if method != "POST" or path != SLACK_PATH:
            record["type"] = "not_found"
            return _plain(404, "not found")
        kind = request_kind(raw, environ.get("CONTENT_TYPE", ""))
        record["type"] = kind
        if kind == "malformed":
            return _plain(400, "malformed Slack payload")
        if environ.get("HTTP_X_SLACK_RETRY_NUM"):
            record["retry"] = environ["HTTP_X_SLACK_RETRY_NUM"]
        if self.debug:
            record["body"] = raw[:2000].decode("utf-8", "replace")
        inner = dict(environ, **{"wsgi.input": io.BytesIO(raw), "CONTENT_LENGTH": str(len(raw))})
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list) -> None:
            captured.update(status=status, headers=headers)

        try:
            body = b"".join(self.bolt(inner, capture))
        except Exception:  # a bug in Bolt or below: log it, answer without the traceback
            log.exception("request failed (%s)", kind)
            record["outcome"] = "bug"
            return _plain(500, "internal error")
        return captured["status"], captured["headers"], body

    def _signed(self, raw: bytes, timestamp: str, signature: str) -> bool:
        if not signature or not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
            return False  # Slack sends whole seconds since the epoch, digits only
        age = abs(time.time() - int(timestamp))
        if age > SIGNATURE_MAX_AGE_S:
            return False
        # Slack v0 signing: HMAC-SHA256 of "v0:{timestamp}:{raw body}" (api.slack.com/authentication)
        digest = hmac.new(self.secret, b"v0:" + timestamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
        return hmac.compare_digest("v0=" + digest, signature)

    def _health(self, start_response: Callable) -> Iterable[bytes]:
        try:
            self.store.ping()
            status, body = "200 OK", {"status": "ok"}
        except Exception as exc:  # the database is down: say so without the URL or credentials
            status, body = "503 Service Unavailable", {"status": "database unavailable", "error": type(exc).__name__}
        payload = json.dumps(body).encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
        return [payload]


def request_kind(raw: bytes, content_type: str) -> str:
    """What a signed body is (command, event:<type>, interactive type) or "malformed"."""
    try:
        text = raw.decode("utf-8")
        if "application/json" in content_type:
            return _json_kind(json.loads(text))
        fields = _form_fields(text)
        if fields is None:
            return "malformed"
        if "payload" in fields:
            payload = json.loads(urllib.parse.unquote_plus(fields["payload"]))
            return payload["type"] if well_formed(payload) else "malformed"
        if "command" in fields:
            return "command"
        if "ssl_check" in fields:
            return "ssl_check"
        return "malformed"
    except (UnicodeDecodeError, ValueError):
        return "malformed"


def _json_kind(body: Any) -> str:
    if not well_formed(body):
        return "malformed"
    if body["type"] == "event_callback":
        return f"event:{body['event']['type']}"
    return body["type"]


def _form_fields(text: str) -> dict[str, str] | None:
    """A form body's fields, values still URL-encoded (only the payload is decoded, when there is one)."""
    fields = {}
    for pair in text.split("&"):
        key, sep, value = pair.partition("=")
        if not sep or not key:
            return None
        fields[key] = value
    return fields


def _plain(code: int, text: str) -> tuple[str, list, bytes]:
    reasons = {
        400: "Bad Request",
        401: "Unauthorized",
        404: "Not Found",
        413: "Payload Too Large",
        500: "Internal Server Error",
    }
    body = text.encode()
    return (
        f"{code} {reasons[code]}",
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))],
        body,
    )


def build(settings: Settings, verify_token: bool = True) -> tuple[SlackWSGI, App, Store]:
    """Everything one process serves in HTTP mode: the store, the Bolt app, the WSGI application."""
    if settings.slack_signing_secret is None:
        raise SettingsError("gpuplan cannot start in HTTP mode: SLACK_SIGNING_SECRET is not set")
    secret = settings.slack_signing_secret.get_secret_value()
    store = Store(settings.database_url)
    app = create_app(settings, store, verify_token=verify_token)
    return SlackWSGI(app, store, secret, debug=settings.debug), app, store
