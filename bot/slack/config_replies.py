"""What the Slack app answers about config files: the Config files modal for a plan, the files
for an upload, and the slash command's `config FORMAT question`. Decisions only; the listeners
make the Slack calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplan.bot import configs, render
from gpuplan.bot.answer import Answer
from gpuplan.bot.configs import ConfigError
from gpuplan.bot.language.parser import detect_lang
from gpuplan.bot.pipeline import QuestionError
from gpuplan.bot.slack import blocks, config_blocks, pages
from gpuplan.bot.slack.reply import Reply, clean_text
from gpuplan.estimator.schema import Note

if TYPE_CHECKING:  # the replies call this module; it needs their type only
    from gpuplan.bot.slack.replies import Replies


def modal(replies: Replies, ref: str, fmt: str | None = None, notice: str = "") -> Reply:
    """The Config files modal of the plan a button refers to, in `fmt` (else the first format
    that can express it), with `notice` above the files (a failed upload)."""
    loaded = replies.load(ref)
    if loaded is None:
        return Reply(message=pages.notice("expired_action", replies.settings.default_lang), outcome="not_found")
    plan, _ = loaded
    formats = configs.formats_for(plan)
    if not formats:
        text = render.message(Note(code="config_no_plan"), plan.lang)
        return Reply(view=config_blocks.no_files_modal(text, plan.lang), outcome="page")
    fmt = fmt if fmt in formats else formats[0]
    files = configs.export(plan, fmt)
    can_upload = replies.settings.files_upload
    view = config_blocks.config_modal(formats, fmt, files, ref, plan.lang, can_upload, notice)
    return Reply(view=view, message=config_blocks.config_message(fmt, files, plan.lang), plan=plan, outcome="page")


def files_for(replies: Replies, ref: str, fmt: str) -> tuple[Answer, dict[str, str]] | None:
    """The plan and its files in `fmt`, for an upload; None when the plan or format is gone."""
    loaded = replies.load(ref)
    if loaded is None:
        return None
    plan, _ = loaded
    try:
        return plan, configs.export(plan, fmt)
    except ConfigError:
        return None


def command(replies: Replies, rest: str, lang: str) -> Reply | None:
    """`/gpuplan config deepspeed 70b full`: the files as a message. None when the first word is
    not a format ("config for 70b?" is a question)."""
    fmt, question = ([*clean_text(rest).split(maxsplit=1), "", ""])[:2]
    if fmt.lower() not in configs.FORMATS:
        return None
    if not question.strip():
        return Reply(message=blocks.error_message([Note(code="config_no_plan")], lang), outcome="error")
    try:
        plan, files = configs.export_for_question(question, fmt.lower())
    except QuestionError as exc:
        return Reply(message=blocks.error_message(exc.notes, exc.lang), outcome="error")
    except ConfigError as exc:
        note = Note(code=exc.code, params=exc.params)
        return Reply(message=blocks.error_message([note], detect_lang(question)), outcome="error")
    return Reply(message=config_blocks.config_message(fmt.lower(), files, plan.lang), plan=plan, outcome="page")
