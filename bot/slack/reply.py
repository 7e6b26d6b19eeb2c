"""What one reply is (a message, or a view to open) and user text as gpuplan keeps it: the pieces
the reply builders share (replies.py, config_replies.py), below both."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplan.bot.answer import Answer


@dataclass
class Reply:
    """A message to post, or a view to open (then `message` is the fallback if it cannot open)."""

    message: dict[str, Any] | None = None
    view: dict[str, Any] | None = None
    plan_id: str | None = None
    plan: Answer | None = None
    outcome: str = "plan"  # for the request log: plan, clarify, troubleshoot, help, page, error, not_found
    extra: dict[str, Any] = field(default_factory=dict)


MAX_QUESTION = 8000  # the parser reads 4,000 characters; a ticket keeps a little more of the customer's words


def clean_text(text: object) -> str:
    """User text as gpuplan keeps it: a string, valid UTF-8 (lone surrogates replaced), bounded."""
    if not isinstance(text, str):
        return ""
    return text[:MAX_QUESTION].encode("utf-8", "replace").decode("utf-8")
