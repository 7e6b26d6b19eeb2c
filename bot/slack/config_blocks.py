"""The Config files modal and message: a plan's exported files as code blocks, a format picker,
and a button that sends them as files. Pure builders, no Slack calls."""

from __future__ import annotations

import json

from gpuplan.bot import render
from gpuplan.bot.slack.blocks import LIMITS, button, escape, fit, fit_modal, section

FENCE = "```"


def _ui(key: str, lang: str) -> str:
    """A control's label from the message catalog (ui.<key>)."""
    return render.label("ui", key, lang)


# a section's text holds 3,000 characters: each chunk of a file, fenced, stays under it
CHUNK = LIMITS["section_text"] - 2 * len(FENCE) - 16


def chunks(text: str, limit: int = CHUNK) -> list[str]:
    """The text in pieces of at most `limit` characters, cut at line ends where a line allows."""
    out: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while len(line) > limit:  # a line longer than a block: cut it
            if current:
                out.append(current)
                current = ""
            out.append(line[:limit])
            line = line[limit:]
        if len(current) + len(line) > limit:
            out.append(current)
            current = ""
        current += line
    if current or not out:
        out.append(current)
    return out


def file_blocks(files: dict[str, str]) -> list[dict]:
    """Each file: its name, then its text in fenced sections (cut after escaping, which lengthens
    `&`, `<` and `>`)."""
    blocks: list[dict] = []
    for name, text in files.items():
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"*{escape(name)}*"}]})
        blocks += [section(FENCE + piece.rstrip("\n") + FENCE) for piece in chunks(escape(text))]
    return blocks


def _picker(formats: list[str], fmt: str, lang: str, can_upload: bool) -> dict:
    """The format select and Send as files (which carries only the format: the plan's ref is in
    the modal's private_metadata, which holds more than a button's value)."""
    options = [{"text": {"type": "plain_text", "text": f}, "value": f} for f in formats]
    elements: list[dict] = [
        {
            "type": "static_select",
            "action_id": "config_format",
            "placeholder": {"type": "plain_text", "text": _ui("config_format", lang)},
            "options": options,
            "initial_option": next(o for o in options if o["value"] == fmt),
        }
    ]
    if can_upload:
        elements.append(button(_ui("send_files", lang), "upload_configs", fmt))
    return {"type": "actions", "block_id": "config_picker", "elements": elements}


def config_modal(
    formats: list[str], fmt: str, files: dict[str, str], ref: str, lang: str, can_upload: bool, notice: str = ""
) -> dict:
    """The modal: what the files are (or `notice`), the format picker and Send as files, the files.
    A ref too long for private_metadata leaves the picker without its plan: the files still show."""
    metadata = json.dumps({"ref": ref, "format": fmt}, separators=(",", ":"))
    intro = section(escape(notice or _ui("config_intro", lang)))
    blocks = [intro, _picker(formats, fmt, lang, can_upload)]
    return fit_modal(
        {
            "type": "modal",
            "callback_id": "show_configs",
            "title": {"type": "plain_text", "text": _ui("config_title", lang)},
            "close": {"type": "plain_text", "text": _ui("close", lang)},
            "private_metadata": metadata if len(metadata) <= LIMITS["private_metadata"] else "",
            "blocks": blocks + file_blocks(files),
        },
        lang,
    )


def config_message(fmt: str, files: dict[str, str], lang: str) -> dict:
    """The files as a message (the slash command's `config FORMAT question`)."""
    intro = section(f"*{escape(fmt)}* · " + escape(_ui("config_intro", lang)))
    return fit({"text": f"{_ui('config_title', lang)}: {fmt}", "blocks": [intro, *file_blocks(files)]}, lang)


def no_files_modal(text: str, lang: str) -> dict:
    """When an answer holds no plan to export: say why, in a modal of its own."""
    return fit_modal(
        {
            "type": "modal",
            "callback_id": "show_configs",
            "title": {"type": "plain_text", "text": _ui("config_title", lang)},
            "close": {"type": "plain_text", "text": _ui("close", lang)},
            "blocks": [section(escape(text))],
        },
        lang,
    )
