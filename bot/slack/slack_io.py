"""Talking to Slack reliably: retries that cannot double-post, and a final failure that is logged.

What is safe to retry depends on whether Slack may already have acted:
- HTTP 429 (and a `ratelimited` error in a 200 body): Slack did nothing; wait as told, retry.
- A connection that never opened: nothing was sent; retry.
- A 5xx, a dropped connection or a timeout after the request went out: Slack may have posted.
  Views and message replacements are idempotent and are simply retried; a new thread reply is
  first looked up by the key it carries in its message metadata, and posted again only if it is
  not there (docs.slack.dev/messaging/message-metadata).
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from http.client import RemoteDisconnected
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.http_retry import RetryHandler, RetryIntervalCalculator, RetryState
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.jitter import Jitter
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.webhook import WebhookClient

from gpuplan.bot.slack import observe

log = logging.getLogger("gpuplan.slack")
RATE_LIMIT_RETRIES = 4  # each waits what Retry-After says
OTHER_RETRIES = 2
POST_ATTEMPTS = 5  # a thread reply: posted, looked up and posted again up to five times (~4 s of waits)


class ProportionalJitter(Jitter):
    """Up to half the wait again, at random: spreads retries without slack_sdk's default extra
    0-1 s on every short wait (aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter)."""

    def recalculate(self, duration: float) -> float:
        return duration * (1 + random.random() / 2)


BACKOFF = BackoffRetryIntervalCalculator(backoff_factor=0.25, jitter=ProportionalJitter())  # 0.25 s, 0.5 s, 1 s...
METADATA_TYPE = "gpuplan_reply"
LOOKUP_LIMIT = 100  # replies fetched when checking whether a reply already landed
# Slack's answers when the app may not upload: installed without files:write, or files are off in the workspace
NOT_PERMITTED = {"missing_scope": "the app lacks the files:write scope", "not_allowed": "uploads are not allowed here"}
_upload_refusals_said: set[str] = set()  # each reason is logged once per process


class RatelimitedBodyRetryHandler(RetryHandler):
    """A 200 response whose body says `ratelimited`: retried like a 429 (Retry-After, else backoff)."""

    def __init__(self, max_retry_count: int = RATE_LIMIT_RETRIES, interval: RetryIntervalCalculator = BACKOFF):
        super().__init__(max_retry_count, interval)

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        body = response.body if response is not None else None
        return isinstance(body, dict) and body.get("ok") is False and body.get("error") == "ratelimited"

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        state.next_attempt_requested = True
        headers = response.headers if response is not None else {}
        after = (headers.get("retry-after") or headers.get("Retry-After") or [None])[0]
        try:
            duration = (
                float(after)
                if after is not None
                else self.interval_calculator.calculate_sleep_duration(state.current_attempt)
            )
        except ValueError:
            duration = self.interval_calculator.calculate_sleep_duration(state.current_attempt)
        time.sleep(min(duration, 30.0))
        state.increment_current_attempt()


class NotSentRetryHandler(ConnectionErrorRetryHandler):
    """Connection failures before the request was sent (refused, unreachable, DNS): safe to repeat."""

    def __init__(self, max_retry_count: int = OTHER_RETRIES):
        super().__init__(max_retry_count, BACKOFF, error_types=[URLError])

    def _can_retry(self, *, state: RetryState, request: HttpRequest, response: Any = None, error: Any = None) -> bool:
        # urllib wraps connect failures in URLError; a timeout or reset after sending is not one
        return isinstance(error, URLError) and response is None and not isinstance(error.reason, TimeoutError)


def safe_retries() -> list[RetryHandler]:
    """Retries that never repeat something Slack may have done."""
    return [
        RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        RatelimitedBodyRetryHandler(),
        NotSentRetryHandler(),
    ]


def idempotent_retries() -> list[RetryHandler]:
    """For calls that may be repeated without effect (views, replacing a message): every fault."""
    return [
        *safe_retries(),
        ServerErrorRetryHandler(max_retry_count=OTHER_RETRIES, interval_calculator=BACKOFF),
        ConnectionErrorRetryHandler(
            max_retry_count=OTHER_RETRIES,
            interval_calculator=BACKOFF,
            error_types=[URLError, ConnectionResetError, RemoteDisconnected, TimeoutError],
        ),
    ]


def web_client(token: str, base_url: str, timeout: float, idempotent: bool = True) -> WebClient:
    return WebClient(
        token=token,
        base_url=base_url,
        timeout=max(1, round(timeout)),
        retry_handlers=idempotent_retries() if idempotent else safe_retries(),
    )


@dataclass
class ReplyPoster:
    """Posts thread replies exactly once: safe retries inside the client, and after an uncertain
    failure a look at the thread for the reply's key before posting again."""

    client: WebClient  # with safe_retries() only
    attempts: int = POST_ATTEMPTS

    def post(self, channel: str, thread_ts: str, message: dict[str, Any], key: str, plan_id: str | None) -> bool:
        metadata = {"event_type": METADATA_TYPE, "event_payload": {"key": key, "plan_id": plan_id or ""}}
        last_error = ""
        for attempt in range(self.attempts):
            if attempt and self._already_posted(channel, thread_ts, key):
                return True
            try:
                self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, metadata=metadata, **message)
                return True
            except SlackApiError as exc:
                last_error = _error_code(exc)
                status = exc.response.status_code if exc.response is not None else 0
                if status < 500 and last_error not in ("internal_error", "fatal_error", "service_unavailable"):
                    break  # Slack refused it (channel_not_found, not_in_channel, ...): retrying won't help
            except (OSError, RemoteDisconnected) as exc:  # timeout or reset after sending
                last_error = type(exc).__name__
            time.sleep(BACKOFF.calculate_sleep_duration(attempt))
        log.error("reply not posted: plan %s, key %s: %s", plan_id, key, last_error)
        observe.event("post", outcome="post_failed", plan_id=plan_id, key=key, error=last_error)
        return False

    def _already_posted(self, channel: str, thread_ts: str, key: str) -> bool:
        try:
            replies = self.client.conversations_replies(
                channel=channel, ts=thread_ts, include_all_metadata=True, limit=LOOKUP_LIMIT
            )
        except (SlackApiError, OSError, RemoteDisconnected):
            return False  # cannot tell: posting again risks a duplicate less than losing the reply
        for message in replies.get("messages", []) or []:
            metadata = message.get("metadata") or {}
            if metadata.get("event_type") == METADATA_TYPE and (metadata.get("event_payload") or {}).get("key") == key:
                return True
        return False


def send_response(
    response_url: str, message: dict[str, Any], idempotent: bool, timeout: float, plan_id: str | None
) -> bool:
    """POST to an interaction's response_url: replacing a message is retried on any fault,
    a new message (share in channel) only where Slack cannot have posted it."""
    client = WebhookClient(
        url=response_url,
        timeout=max(1, round(timeout)),
        retry_handlers=idempotent_retries() if idempotent else safe_retries(),
    )
    try:
        response = client.send_dict(message)
    except (OSError, RemoteDisconnected) as exc:
        error = type(exc).__name__
    else:
        if response.status_code == 200:
            return True
        error = f"HTTP {response.status_code}: {str(response.body)[:100]}"
    log.error("response not delivered: plan %s: %s", plan_id, error)
    observe.event("response_url", outcome="post_failed", plan_id=plan_id, error=error)
    return False


def _error_code(exc: SlackApiError) -> str:
    response = exc.response
    return str(response.get("error", "unknown")) if response is not None else "no response"


@dataclass
class SlackIO:
    """The Slack calls listeners make besides Bolt's own client: thread replies that land exactly
    once, and responses to an interaction's response_url."""

    poster: ReplyPoster
    timeout: float

    @classmethod
    def create(cls, token: str, base_url: str, timeout: float) -> SlackIO:
        return cls(ReplyPoster(web_client(token, base_url, timeout, idempotent=False)), timeout)

    def reply(self, channel: str, thread_ts: str, message: dict[str, Any], key: str, plan_id: str | None) -> bool:
        return self.poster.post(channel, thread_ts, message, key, plan_id)

    def upload(self, channel: str, thread_ts: str, data: bytes, *, filename: str, title: str, alt_text: str) -> bool:
        """A file into a thread, after its reply (files_upload_v2: files.getUploadURLExternal, the
        bytes to the URL it gives, files.completeUploadExternal). Not retried once sent: a second
        copy in the thread is worse than none. A refusal is logged once per process and reason."""
        try:
            self.poster.client.files_upload_v2(
                channel=channel, thread_ts=thread_ts, file=data, filename=filename, title=title, alt_txt=alt_text
            )
            return True
        except SlackApiError as exc:
            error = _error_code(exc)
        except (SlackRequestError, OSError, RemoteDisconnected) as exc:  # the upload URL refused it, or a timeout
            error = type(exc).__name__
        if error not in _upload_refusals_said:
            _upload_refusals_said.add(error)
            why = NOT_PERMITTED.get(error, "Slack did not take it")
            log.warning("file not uploaded, replies stand without it: %s (%s); said once per process", why, error)
        return False

    def respond(self, response_url: str, message: dict[str, Any], idempotent: bool, plan_id: str | None) -> bool:
        if not response_url.startswith(("https://", "http://")):
            log.warning("no response_url to answer on (plan %s)", plan_id)
            return False
        return send_response(response_url, message, idempotent, self.timeout, plan_id)
