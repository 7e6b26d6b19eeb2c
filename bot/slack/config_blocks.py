"""The Config files modal and message: a plan's exported files as code blocks, a format picker,
and a button that sends them as files. Pure builders, no Slack calls."""

from __future__ import annotations

import json

from gpuplan.bot.slack.blocks import LIMITS, _ui, button, escape, fit, fit_modal, section

FENCE = "```"
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
    """Each file: its name, then its text in fenced sections."""
    blocks: list[dict] = []
    for name, text in files.items():
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"*{escape(name)}*"}]})
        blocks += [section(FENCE + escape(piece.rstrip("\n")) + FENCE) for piece in chunks(text)]
    return blocks


def _picker(formats: list[str], fmt: str, ref: str, lang: str, can_upload: bool) -> dict:
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
        value = json.dumps({"ref": ref, "format": fmt}, separators=(",", ":"))
        elements.append(button(_ui("send_files", lang), "upload_configs", value))
    return {"type": "actions", "block_id": "config_picker", "elements": elements}


def config_modal(formats: list[str], fmt: str, files: dict[str, str], ref: str, lang: str, can_upload: bool) -> dict:
    """The modal: what the files are, the format picker (and Send as files), the files."""
    metadata = json.dumps({"ref": ref, "format": fmt}, separators=(",", ":"))
    blocks = [section(escape(_ui("config_intro", lang))), _picker(formats, fmt, ref, lang, can_upload)]
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
