"""The one pipeline every surface calls: text -> Request -> Estimate -> Plan."""

from __future__ import annotations

from bot.parser import parse
from estimator.advise import advise
from estimator.errors import RequestError
from estimator.schema import Note, Plan


class QuestionError(ValueError):
    """The question cannot be answered as written; `notes` name what was wrong."""

    def __init__(self, notes: list[Note], lang: str):
        self.notes = notes
        self.lang = lang
        super().__init__("; ".join(n.code for n in notes))


def answer(text: str, lang: str | None = None) -> Plan:
    """Read a question and answer it; raises QuestionError when it cannot be read."""
    parsed = parse(text)
    lang = lang if lang in ("en", "zh") and not parsed.lang_given else parsed.lang
    if parsed.errors:
        raise QuestionError(parsed.errors, lang)
    request = parsed.request
    if request.model is None and request.params_b is None:
        return Plan(
            intent=parsed.intent, lang=lang, request=request, clarify=[Note(code="need_model")], notes=parsed.notes
        )
    try:
        return advise(request, lang, intent=parsed.intent, notes=parsed.notes)
    except RequestError as exc:
        raise QuestionError(exc.notes, lang) from exc
