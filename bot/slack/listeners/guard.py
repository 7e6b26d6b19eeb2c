"""Listeners never let an exception reach Slack as a bare failure: the user gets a short
message with a reference, the log gets the traceback under the same reference."""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Callable
from typing import Any

from gpuplan.bot import render
from gpuplan.bot.slack import blocks, observe
from gpuplan.estimator.schema import Note

log = logging.getLogger("gpuplan.listeners")


def internal_error_message(lang: str, ref: str) -> dict[str, Any]:
    text = render.message(Note(code="internal_error", params={"ref": ref}), lang)
    return blocks.fit({"text": text, "blocks": [blocks.section(":warning: " + blocks.escape(text))]}, lang)


def slack_error(exc: Exception) -> str:
    """Slack's error code from a failed Web API call, for logs."""
    response = getattr(exc, "response", None)
    return str(response.get("error", "unknown")) if response is not None else type(exc).__name__


def guarded(kind: str, lang: Callable[[], str] = lambda: "en") -> Callable:
    """Wrap a listener: on an exception, log it with a reference and tell the user via `ack` or `respond`."""

    def wrap(listener: Callable) -> Callable:
        @functools.wraps(listener)
        def run(**kwargs: Any) -> None:
            try:
                listener(**kwargs)
            except Exception:
                ref = "err-" + secrets.token_hex(4)
                log.exception("listener %s failed (ref %s)", kind, ref)
                observe.note(outcome="bug", error_ref=ref)
                message = internal_error_message(lang(), ref)
                ack = kwargs.get("ack")
                respond = kwargs.get("respond")
                try:
                    if ack is not None and getattr(ack, "response", None) is None:
                        if kind == "command":
                            ack(response_type="ephemeral", **message)
                        else:
                            ack()
                    elif respond is not None:
                        respond(replace_original=False, response_type="ephemeral", **message)
                except Exception:  # telling the user failed too: the log line above is what remains
                    log.warning("could not report failure %s to the user", ref)

        return run  # bolt reads the argument names through functools.wraps (inspect.unwrap)

    return wrap
