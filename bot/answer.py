"""The answer gpuplan gives: the estimator's `Plan` (what it decided) beside the bot's `Reading` (what
it understood of the question), one object every surface renders.

The estimator never sees the reading: it takes a request and returns a Plan. The pipeline (bot/pipeline.py)
reads the question, asks the estimator, and puts the two together here. The answer keeps both sets of
fields side by side, as the JSON answer (bot/jsonout.py), the templates and the plans the Slack app stored
(bot/slack/store.py, the answer's JSON without defaults) have always had them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from gpuplan.estimator.answer_schema import Largest, Price
from gpuplan.estimator.schema import Lang, Note, Plan

Intent = Literal["plan", "troubleshoot", "compare", "help", "other"]


class Reading(BaseModel):
    """What was understood of the question: its kind, the language to answer in, what to ask back,
    how its words were read (notes), what was taken from pasted artifacts, the troubleshooting topics
    it raised and the words not understood."""

    intent: Intent = "plan"
    lang: Lang = "en"
    clarify: list[Note] = Field(default_factory=list)  # questions back when an essential is missing
    notes: list[Note] = Field(default_factory=list)  # how the question was read, and readings dropped
    topics: list[str] = Field(default_factory=list)  # troubleshooting topics the question raised
    unknown: list[str] = Field(default_factory=list)  # words the parser did not understand
    read: list[Note] = Field(default_factory=list)  # what was taken from pasted artifacts

    @property
    def not_understood(self) -> list[str]:
        """The unknown words no note already explains: a card the catalog lacks is said back by
        its unsupported_hardware note, so the answer does not list it again as not understood."""
        explained = {n.params.get("value") for n in self.notes if n.code == "unsupported_hardware"}
        return [w for w in self.unknown if w not in explained]


class Answer(Plan, Reading):
    """A Plan and the Reading of its question, together."""

    @classmethod
    def of(cls, plan: Plan, reading: Reading) -> Answer:
        return cls(**dict(plan), **dict(reading))

    @property
    def findings(self) -> list[Note]:
        """The answer to a question about the hardware without a plan (the largest model, a price),
        as the notes the surfaces write in the answer's language."""
        if self.largest is not None:
            return largest_findings(self.largest)
        if self.price is not None:
            return price_findings(self.price, self.lang)
        return []


def largest_findings(largest: Largest) -> list[Note]:
    rows = [Note(code="largest_heading", params={"gpu": largest.gpu, "gpus": largest.gpus})]
    for key, row in largest.methods.items():
        if row is None:
            rows.append(Note(code="largest_none", params={"method": key.split("_")[0]}))
        else:
            rows.append(Note(code="largest_row", params=row.model_dump()))
    in_time = largest.pretrain_in_time
    if in_time:
        rows.append(Note(code="largest_in_time", params={**in_time.model_dump(), "given": largest.deadline_given}))
    return rows


def price_findings(price: Price, lang: str) -> list[Note]:
    findings = [Note(code="price_line", params=price.model_dump())]
    if price.tier:
        title = getattr(price.tier.title, lang)
        findings.append(Note(code="price_tier", params={"title": title, "url": price.tier.url}))
    if not price.hours_given:
        findings.append(Note(code="price_hours_default"))
    return findings
