"""What the Slack app answers, as messages and views. The listeners make the Slack calls; this
module decides what to say: it runs the pipeline, remembers plans and threads in the store,
and builds the Block Kit payloads.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from gpuplan.bot.answer import Answer, Reading
from gpuplan.bot.language.conversation import change, follow_up
from gpuplan.bot.language.parser import CJK, Parsed, parse
from gpuplan.bot.pipeline import QuestionError, answer, answer_parsed
from gpuplan.bot.slack import blocks, config_replies, pages, selects
from gpuplan.bot.slack.reply import MAX_QUESTION, Reply, clean_text  # noqa: F401 - the listeners' names for them
from gpuplan.bot.slack.settings import Settings
from gpuplan.bot.slack.store import ID_ALPHABET, ID_LENGTH, Store
from gpuplan.estimator import memo
from gpuplan.estimator.advise import advise_without_plan
from gpuplan.estimator.schema import SERVE_PRECISIONS, Note, Request
from gpuplan.knowledge import catalog

log = logging.getLogger("gpuplan.replies")

# Subcommands of the slash command, in both languages: word -> what it does
SUBCOMMANDS = {
    "help": "help",
    "帮助": "help",
    "?": "help",
    "tiers": "tiers",
    "tier": "tiers",
    "方案": "tiers",
    "档位": "tiers",
    "配置档位": "tiers",
    "faq": "faq",
    "常见问题": "faq",
    "排障": "faq",
    "gpus": "gpus",
    "显卡": "gpus",
    "models": "models",
    "模型": "models",
    "ticket": "ticket",
    "工单": "ticket",
    "history": "history",
    "历史": "history",
    "show": "show",
    "查看": "show",
    "config": "config",
    "configs": "config",
    "配置文件": "config",
    "导出配置": "config",
}
TAKES_TEXT = {"faq", "ticket", "show", "config"}  # the others stand alone: "gpus for 70b" is a question
_CJK_SUBCOMMAND = re.compile(r"^(工单|常见问题|排障|查看|配置文件|导出配置)\s*(.*)$", re.S)
_LANG_TOKEN = re.compile(r"(?:^|\s)lang\s*=\s*(en|zh)\b", re.I)
_PLAN_ID = re.compile(rf"^[{ID_ALPHABET}]{{{ID_LENGTH}}}$")
_WORD = re.compile(r"[A-Za-z]{3,}")
_KEY_VALUE = re.compile(r"\b[a-z_]+\s*=\s*\S+", re.I)
SERVING_SWITCHES = ("precision", "seq_len", "micro_batch")  # the serving select's fields (bot/slack/selects.py)
HISTORY_SIZE = 10


@dataclass(frozen=True)
class Who:
    """Where a request came from."""

    team_id: str = ""
    user_id: str = ""
    channel_id: str = ""


def split_subcommand(text: str) -> tuple[str | None, str]:
    """("faq", "nccl") for "faq nccl"; (None, text) when the text is a question."""
    stripped = _LANG_TOKEN.sub(" ", text).strip()
    if not stripped:
        return "help", ""
    match = _CJK_SUBCOMMAND.match(stripped)
    if match:
        return SUBCOMMANDS[match.group(1)], match.group(2).strip()
    first, _, rest = stripped.partition(" ")
    word = SUBCOMMANDS.get(first.lower())
    if word is None or (rest.strip() and word not in TAKES_TEXT):
        return None, text
    return word, rest.strip()


@dataclass(frozen=True)
class Answered:
    """A plan and everything derived from it that does not depend on who asked or its id."""

    plan: Answer
    plan_json: str
    summary: str
    fallback: str
    body: str  # the blocks without buttons, as JSON

    @classmethod
    def of(cls, plan: Answer) -> Answered:
        plan_json = plan.model_dump_json(exclude_defaults=True)
        fallback, body = blocks.plan_body(plan, plan_json) if plan.intent != "help" else ("", "[]")
        summary = pages.summary(plan) if plan.intent != "help" else ""
        return cls(plan, plan_json, summary, fallback, body)


def answer_text(text: str) -> Answered:
    """`answer(text)` and its rendering, memoised by the text: a new question's answer is a pure
    function of its text and the knowledge (estimator/memo.py; GPUPLAN_CACHE=0 turns it off)."""
    return _answer_memo(text) if memo.enabled() else Answered.of(answer(text))


@functools.lru_cache(maxsize=2048)
def _answer_memo(text: str) -> Answered:
    return Answered.of(answer(text))


def outcome_of(plan: Answer) -> str:
    if plan.intent == "help":
        return "help"
    if plan.estimate is None:
        return "troubleshoot" if plan.diagnoses else "clarify"
    return plan.intent


class Replies:
    def __init__(self, store: Store, settings: Settings):
        self.store = store
        self.settings = settings
        self.command_name = settings.command

    # --- language --------------------------------------------------------------------------

    def page_lang(self, text: str) -> str:
        """Pages follow `lang=`, then Chinese words, then the deployment's default language."""
        token = _LANG_TOKEN.search(text)
        if token:
            return token.group(1).lower()
        return "zh" if CJK.search(text) else self.settings.default_lang

    @staticmethod
    def follow_up_lang(text: str, parsed: Parsed, thread_lang: str) -> str:
        """A follow-up answers in its own language when it has words; "gpus=16" keeps the thread's."""
        if parsed.lang_given or CJK.search(text):
            return parsed.lang
        return "en" if _WORD.search(_KEY_VALUE.sub(" ", text)) else thread_lang

    @staticmethod
    def is_follow_up(text: str) -> bool:
        """A thread message meant for the bot: it states something, compares, raises a symptom or asks for help."""
        parsed = parse(text)
        return bool(
            parsed.request.given() or parsed.topics or parsed.compare or parsed.intent == "help" or parsed.errors
        )

    # --- the slash command -----------------------------------------------------------------

    def command(self, text: str, who: Who) -> Reply:
        text = clean_text(text)
        word, rest = split_subcommand(text)
        if word is None:
            return self.question(text, who, source="command")
        lang = self.page_lang(text if word != "ticket" else "")
        cmd = self.command_name
        if word == "help":
            return Reply(message=pages.help_page(lang, cmd), outcome="help")
        if word == "tiers":
            return Reply(message=pages.tiers_page(lang), outcome="page")
        if word in ("gpus", "models"):
            return Reply(message=pages.catalog_page(word, lang), outcome="page")
        if word == "history":
            return Reply(message=pages.history_page(self.history(who), lang, cmd), outcome="page")
        if word == "faq":
            return self.faq(rest, self.page_lang(rest) if rest else lang)
        if word == "show":
            return self.show(rest, lang, who)
        if word == "config":
            return config_replies.command(self, rest, lang) or self.question(text, who, source="command")
        return self.ticket_for_text(rest, who, lang)

    def faq(self, words: str, lang: str) -> Reply:
        cat = catalog()
        if not words:
            return Reply(message=pages.faq_page(lang, self.command_name), outcome="page")
        key = words.strip().lower().replace("-", "_").replace(" ", "_")
        ids = [r.id for r in cat.rules if key in (r.id, r.topic)]
        if not ids:
            ids = parse(words).topics
        if not ids:
            return Reply(message=pages.faq_page(lang, self.command_name, missed=words[:100]), outcome="not_found")
        plan = Answer.of(advise_without_plan(Request(), ids[:3]), Reading(intent="troubleshoot", lang=lang))
        if not plan.diagnoses:
            return Reply(message=pages.faq_page(lang, self.command_name, missed=words[:100]), outcome="not_found")
        return Reply(message=blocks.plan_message(plan), plan=plan, outcome="troubleshoot")

    def show(self, ref: str, lang: str, who: Who | None = None) -> Reply:
        ref = ref.strip().strip("`").lower()
        if not ref:
            recent = self.history(who)[:1] if who else []
            example = recent[0].id if recent else "a2b3c4d5"
            return Reply(
                message=pages.notice("show_needs_id", lang, command=self.command_name, example=example), outcome="error"
            )
        stored = self.store.get_plan(ref) if _PLAN_ID.match(ref) else None
        if stored is None:
            return Reply(
                message=pages.notice("plan_not_found", lang, id=ref[:40], command=self.command_name),
                outcome="not_found",
            )
        plan = stored.plan()
        return Reply(message=blocks.plan_message(plan, stored.id), plan=plan, plan_id=stored.id, outcome="page")

    def history(self, who: Who) -> list[pages.HistoryItem]:
        return [
            pages.HistoryItem(id=p.id, created_at=p.created_at, summary=p.summary, question=p.question)
            for p in self.store.recent_plans(who.team_id, who.user_id, HISTORY_SIZE)
        ]

    # --- questions, in a command, a mention, a DM or a thread ------------------------------

    def question(self, text: str, who: Who, source: str, thread: tuple[str, str] | None = None) -> Reply:
        """Answer `text`; in a known thread it changes the thread's request instead of starting over."""
        text = clean_text(text)
        known = self.store.thread(*thread) if thread else None
        try:
            if known is not None:
                previous, thread_lang, _ = known
                parsed = follow_up(previous, text)
                lang = self.follow_up_lang(text, parsed, thread_lang)
                if parsed.errors:
                    raise QuestionError(parsed.errors, lang)
                answered = Answered.of(answer_parsed(parsed, lang))
                source = "thread"
            else:
                answered = answer_text(text)
        except QuestionError as exc:
            return Reply(message=blocks.error_message(exc.notes, exc.lang), outcome="error")
        return self._answered(answered, text, who, source, thread)

    def _answered(
        self, answered: Answered, question: str, who: Who, source: str, thread: tuple[str, str] | None
    ) -> Reply:
        plan = answered.plan
        if plan.intent == "help":
            return Reply(message=pages.help_page(plan.lang, self.command_name), outcome="help")
        plan_id = None
        if plan.estimate is not None or plan.diagnoses:
            plan_id = self.store.save_plan(
                plan,
                question=question,
                summary=answered.summary,
                source=source,
                team_id=who.team_id,
                user_id=who.user_id,
                channel_id=who.channel_id,
                plan_json=answered.plan_json,
            )
        if thread:
            self.store.remember_thread(thread[0], thread[1], plan.request, plan.lang, plan_id)
        message = blocks.message_from_body(plan, answered.fallback, answered.body, plan_id)
        return Reply(message=message, plan=plan, plan_id=plan_id, outcome=outcome_of(plan))

    # --- buttons on a plan -----------------------------------------------------------------

    def load(self, ref: str) -> tuple[Answer, str] | None:
        """The plan a button refers to and its question: a stored id, or (older messages) the request."""
        ref = (ref or "").strip()
        if ref.startswith("{"):
            try:
                fields = json.loads(ref)
                lang = fields.pop("lang", self.settings.default_lang)
                request = Request(**fields)
                parsed = Parsed(request=request, lang=lang if lang in ("en", "zh") else "en")
                return answer_parsed(parsed, parsed.lang), ""
            except (ValueError, TypeError, QuestionError):
                return None
        stored = self.store.get_plan(ref) if _PLAN_ID.match(ref.lower()) else None
        return (stored.plan(), stored.question) if stored else None

    def switch(self, ref: str, name: str, value: str, who: Who, thread: tuple[str, str] | None = None) -> Reply:
        """Change one field of a plan from the selects on its message: the method, the GPU type, or a
        serving plan's precision, context (seq_len) or concurrency (micro_batch)."""
        loaded = self.load(ref)
        lang = self.settings.default_lang
        if loaded is None:
            return Reply(message=pages.notice("expired_action", lang), outcome="not_found")
        plan, question = loaded
        new_value = switched_value(plan, name, value)
        if new_value is None:
            return Reply(message=pages.notice("expired_action", plan.lang), outcome="error")
        request, notes = change(plan.request, {name: new_value})
        parsed = Parsed(request=request, lang=plan.lang, notes=notes + _kept_notes(plan))
        try:
            new_plan = answer_parsed(parsed, plan.lang)
        except QuestionError as exc:
            return Reply(message=blocks.error_message(exc.notes, exc.lang), outcome="error")
        label = f"{question} [{name}={value}]" if question else f"{name}={value}"
        return self._answered(Answered.of(new_plan), label, who, "action", thread)

    def shared(self, ref: str, who: Who) -> Reply:
        """The plan as posted to the channel: no buttons, and who shared it."""
        loaded = self.load(ref)
        if loaded is None:
            return Reply(message=pages.notice("expired_action", self.settings.default_lang), outcome="not_found")
        plan, _ = loaded
        message = blocks.plan_message(plan, ref if _PLAN_ID.match(ref) else None, with_actions=False)
        message["blocks"].append(pages.shared_context(who.user_id, plan.lang))
        return Reply(message=blocks.fit(message, plan.lang), plan=plan, outcome="plan")

    def math(self, ref: str) -> Reply:
        loaded = self.load(ref)
        if loaded is None:
            return Reply(message=pages.notice("expired_action", self.settings.default_lang), outcome="not_found")
        plan, _ = loaded
        if plan.estimate is None:
            return Reply(message=blocks.plan_message(plan), outcome="page")
        return Reply(view=blocks.math_modal(plan), message=blocks.plan_message(plan), plan=plan, outcome="page")

    def details(self, ref: str) -> Reply:
        """The whole plan in a modal: every assumption, data, storage, network, all diagnoses."""
        loaded = self.load(ref)
        if loaded is None:
            return Reply(message=pages.notice("expired_action", self.settings.default_lang), outcome="not_found")
        plan, _ = loaded
        return Reply(view=blocks.details_modal(plan), message=blocks.plan_message(plan), plan=plan, outcome="page")

    def ticket_for_plan(self, ref: str) -> Reply:
        loaded = self.load(ref)
        if loaded is None:
            return Reply(message=pages.notice("expired_action", self.settings.default_lang), outcome="not_found")
        plan, question = loaded
        return Reply(view=blocks.ticket_modal(plan, question), message=_ticket_message(plan, question), plan=plan)

    def ticket_for_text(self, text: str, who: Who, lang: str | None = None) -> Reply:
        """A customer's message (the shortcut, or `ticket <text>`): the reply and the internal note."""
        text = clean_text(text)
        if not text.strip():
            lang = lang or self.settings.default_lang
            return Reply(message=pages.notice("ticket_needs_text", lang, command=self.command_name), outcome="error")
        try:
            answered = answer_text(text)
        except QuestionError as exc:
            return Reply(message=blocks.error_message(exc.notes, exc.lang), outcome="error")
        plan = answered.plan
        if plan.intent == "help":
            return Reply(message=pages.help_page(plan.lang, self.command_name), outcome="help")
        reply = self._answered(answered, text, who, "ticket", None)
        reply.view = blocks.ticket_modal(plan, text)
        reply.message = _ticket_message(plan, text)
        return reply

    def show_modal(self, ref: str) -> Reply:
        stored = self.store.get_plan(ref) if _PLAN_ID.match((ref or "").lower()) else None
        if stored is None:
            lang = self.settings.default_lang
            return Reply(message=pages.notice("plan_not_found", lang, id=(ref or "")[:40], command=self.command_name))
        plan = stored.plan()
        return Reply(view=pages.plan_modal(plan, stored.id), message=blocks.plan_message(plan, stored.id), plan=plan)

    # --- App Home --------------------------------------------------------------------------

    def home(self, who: Who) -> dict[str, Any]:
        items = self.history(who)
        stored = self.store.get_plan(items[0].id) if items else None
        lang = stored.lang if stored else self.settings.default_lang
        return pages.home_view(items, lang, self.command_name)


def switched_value(plan: Answer, name: str, value: str) -> str | int | None:
    """The Request value a select sets, or None when the plan offers no such choice: the training
    methods (or the plan's own), any catalog GPU; for a serving plan a serving precision, or a
    positive context or concurrency (the estimator bounds them)."""
    method = plan.estimate.resolved.method if plan.estimate is not None else plan.request.method
    if name == "method":
        return value if value in (*selects.TRAINING_METHODS, method) else None
    if name == "gpu":
        return value if value in catalog().gpus else None
    if method != "infer" or name not in SERVING_SWITCHES:
        return None
    if name == "precision":
        return value if value in SERVE_PRECISIONS else None
    return int(value) if value.isdecimal() and len(value) <= 9 and int(value) > 0 else None


def _kept_notes(plan: Answer) -> list[Note]:
    """Notes from the question that still hold after a button changes one field."""
    return [n for n in plan.notes if not n.code.startswith("follow_up")]


def _ticket_message(plan: Answer, question: str) -> dict[str, Any]:
    """The ticket draft as a message, for when a modal cannot be opened."""
    modal = blocks.ticket_modal(plan, question)
    return blocks.fit({"text": modal["title"]["text"], "blocks": modal["blocks"]}, plan.lang)
