"""What the Slack app says, without Slack: subcommands, questions, threads, buttons, tickets."""

import json
import re

import pytest
import slack_requests as sr

from gpuplan.bot.slack.blocks import violations
from gpuplan.bot.slack.replies import Replies, Who, split_subcommand
from gpuplan.bot.slack.store import Store

WHO = Who("T1", "U0ASKER1", "C1")


@pytest.fixture
def replies(tmp_path):
    settings = sr.settings_for(f"sqlite:///{tmp_path / 'r.db'}")
    store = Store(settings.database_url)
    yield Replies(store, settings)
    store.dispose()


def text_of(message):
    return json.dumps(message, ensure_ascii=False)


@pytest.mark.parametrize(
    "text,word,rest",
    [
        ("", "help", ""),
        ("help", "help", ""),
        ("帮助", "help", ""),
        ("tiers", "tiers", ""),
        ("方案", "tiers", ""),
        ("faq nccl timeout", "faq", "nccl timeout"),
        ("常见问题 显存爆了", "faq", "显存爆了"),
        ("常见问题显存爆了", "faq", "显存爆了"),
        ("gpus", "gpus", ""),
        ("显卡", "gpus", ""),
        ("models lang=zh", "models", ""),
        ("ticket We need to fine-tune 70B", "ticket", "We need to fine-tune 70B"),
        ("工单我们想微调70B", "ticket", "我们想微调70B"),
        ("history", "history", ""),
        ("show ab23cd45", "show", "ab23cd45"),
        ("查看 ab23cd45", "show", "ab23cd45"),
        ("70b full", None, "70b full"),
        ("gpus for 70b full", None, "gpus for 70b full"),  # a question that starts with a subcommand word
        ("help me size 70b", None, "help me size 70b"),
        ("serve llama-3-70b", None, "serve llama-3-70b"),
    ],
)
def test_subcommands_in_both_languages(text, word, rest):
    assert split_subcommand(text) == (word, rest)


def test_a_question_is_answered_and_stored(replies):
    reply = replies.command("llama-3-70b lora", WHO)
    assert reply.outcome == "plan" and reply.plan_id
    assert not violations(reply.message)
    assert reply.message["blocks"][-1]["type"] == "actions"
    stored = replies.store.get_plan(reply.plan_id)
    assert stored.user_id == "U0ASKER1" and stored.source == "command" and "Llama 3 70B" in stored.summary


def test_pages(replies):
    for text, needle in [
        ("help", "/gpuplan tiers"),
        ("tiers", "Growth plan"),
        ("gpus", "h100-80gb"),
        ("models", "llama-3-70b"),
        ("faq", "nccl_timeout"),
        ("帮助", "常见问题"),
        ("方案", "配置档位"),
        ("history", "No plans yet"),
    ]:
        reply = replies.command(text, WHO)
        assert needle in text_of(reply.message), text
        assert not violations(reply.message)


def test_default_language_setting_applies_to_pages(tmp_path):
    settings = sr.settings_for(f"sqlite:///{tmp_path / 'z.db'}", GPUPLAN_LANG="zh")
    r = Replies(Store(settings.database_url), settings)
    assert "配置档位" in text_of(r.command("tiers", WHO).message)
    assert "Configuration tiers" in text_of(r.command("tiers lang=en", WHO).message)


def test_faq_topics(replies):
    reply = replies.command("faq nccl_timeout", WHO)
    assert reply.outcome == "troubleshoot" and "NCCL" in text_of(reply.message)
    reply = replies.command("常见问题 显存爆了", WHO)
    assert reply.outcome == "troubleshoot" and reply.plan.lang == "zh"
    reply = replies.command("faq <!channel> zebra", WHO)
    assert reply.outcome == "not_found" and "&lt;!channel&gt;" in text_of(reply.message)


def test_history_and_show(replies):
    first = replies.command("7b lora", WHO)
    second = replies.command("70b full", WHO)
    history = replies.command("history", WHO)
    body = text_of(history.message)
    assert body.index(second.plan_id) < body.index(first.plan_id)
    shown = replies.command(f"show {first.plan_id}", WHO)
    assert shown.plan == replies.store.get_plan(first.plan_id).plan()
    assert replies.command("show zzzzzzzz", WHO).outcome == "not_found"
    assert first.plan_id in text_of(replies.command("show", WHO).message) or second.plan_id in text_of(
        replies.command("show", WHO).message
    )


def test_errors_are_messages_not_exceptions(replies):
    reply = replies.command("gpu=zz9000 70b", WHO)
    assert reply.outcome == "error" and not violations(reply.message)
    reply = replies.command("70b seq=abc", WHO)
    assert reply.outcome == "error"


def test_a_thread_follow_up_changes_the_request(replies):
    thread = ("C1", "1700000000.000100")
    first = replies.question("llama-3.1-70b full on 16 A100 80G", WHO, "mention", thread)
    assert first.plan.estimate.resolved.gpus == 16
    second = replies.question("what about 16k context?", WHO, "mention", thread)
    assert second.plan.estimate.resolved.seq_len == 16384 and second.plan.estimate.resolved.gpus == 16
    assert second.plan.notes[0].code == "follow_up_changed"
    third = replies.question("用H800呢？", WHO, "thread", thread)
    assert third.plan.lang == "zh" and third.plan.estimate.resolved.gpu == "h800-80gb"
    assert third.plan.estimate.resolved.seq_len == 16384
    fourth = replies.question("gpus=32", WHO, "thread", thread)
    assert fourth.plan.lang == "zh"  # no words: the thread's language


def test_a_clarifying_thread_continues(replies):
    thread = ("C1", "1700000000.000200")
    first = replies.question("how many GPUs for a full fine-tune?", WHO, "mention", thread)
    assert first.outcome == "clarify"
    second = replies.question("70b", WHO, "thread", thread)
    assert second.outcome == "plan" and second.plan.estimate.resolved.method == "full"


def test_is_follow_up():
    assert Replies.is_follow_up("what about 16k context?")
    assert Replies.is_follow_up("用H800呢？")
    assert Replies.is_follow_up("GPU utilization is low")
    assert not Replies.is_follow_up("thanks!")
    assert not Replies.is_follow_up("好的，谢谢")


def test_buttons(replies):
    plan = replies.command("llama-3-70b full", WHO)
    switched = replies.switch(plan.plan_id, "method", "qlora", WHO)
    assert switched.plan.estimate.resolved.method == "qlora" and switched.plan_id != plan.plan_id
    gpu = replies.switch(plan.plan_id, "gpu", "h100-80gb", WHO)
    assert gpu.plan.estimate.resolved.gpu == "h100-80gb"
    assert replies.switch(plan.plan_id, "method", "sgd-magic", WHO).outcome == "error"
    assert replies.switch("zzzzzzzz", "method", "lora", WHO).outcome == "not_found"
    shared = replies.shared(plan.plan_id, WHO)
    assert "<@U0ASKER1>" in text_of(shared.message) and all(b["type"] != "actions" for b in shared.message["blocks"])
    math = replies.math(plan.plan_id)
    assert math.view["type"] == "modal" and not violations(math.view, "modal")
    ticket = replies.ticket_for_plan(plan.plan_id)
    assert ticket.view and not violations(ticket.view, "modal")


@pytest.mark.parametrize(
    "question,name,value,expected",
    [
        # fp8 weights and KV cache on H100 halve the replica: 4 -> 2 GPUs
        ("serve llama-3.1-70b on H100", "precision", "fp8", {"precision": "fp8", "kv_cache": "fp8", "gpus": 2}),
        ("部署 llama-3.1-70b，用 H100", "precision", "fp8", {"precision": "fp8", "kv_cache": "fp8", "gpus": 2}),
        # 16 sequences of 32k tokens hold 8x the KV cache of 4k: 4 -> 8 GPUs
        ("serve llama-3.1-70b on H100", "seq_len", "32768", {"seq_len": 32768, "micro_batch": 16, "gpus": 8}),
        ("部署 llama-3.1-70b，用 H100", "seq_len", "32768", {"seq_len": 32768, "micro_batch": 16, "gpus": 8}),
        ("serve llama-3.1-70b on H100", "micro_batch", "128", {"seq_len": 4096, "micro_batch": 128, "gpus": 8}),
        ("serve llama-3.1-70b on H100", "method", "lora", {"method": "lora", "precision": "bf16-mixed"}),
    ],
)
def test_serving_selects_replan_with_the_field(replies, question, name, value, expected):
    first = replies.command(question, WHO)
    assert first.plan.estimate.resolved.gpus == 4
    switched = replies.switch(first.plan_id, name, value, WHO)
    resolved = switched.plan.estimate.resolved.model_dump()
    assert {k: resolved[k] for k in expected} == expected and switched.plan.lang == first.plan.lang
    assert switched.outcome == "plan" and not violations(switched.message)


@pytest.mark.parametrize(
    "question,name,value",
    [
        ("serve llama-3-70b", "precision", "fp9"),
        ("serve llama-3-70b", "seq_len", "-5"),
        ("serve llama-3-70b", "micro_batch", "9" * 5000),
        ("serve llama-3-70b", "zero", "3"),
        ("llama-3-70b full", "precision", "fp8"),  # serving choices belong to serving plans
        ("llama-3-70b full", "seq_len", "8192"),
        ("llama-3-70b full", "method", "ppo"),
    ],
)
def test_selects_refuse_what_the_plan_never_offered(replies, question, name, value):
    first = replies.command(question, WHO)
    assert replies.switch(first.plan_id, name, value, WHO).outcome == "error"


def test_buttons_on_older_messages_carry_the_request(replies):
    ref = json.dumps({"model": "llama-3-8b", "method": "full", "lang": "en"})
    assert replies.switch(ref, "method", "lora", WHO).plan.estimate.resolved.method == "lora"
    assert replies.load('{"model": 5}') is None


def test_ticket_from_customer_text(replies):
    reply = replies.ticket_for_text("我们想用QLoRA微调一个33B的模型，单卡48G够吗？", WHO)
    assert reply.plan.lang == "zh" and reply.view and "工单" in reply.view["title"]["text"]
    assert replies.store.get_plan(reply.plan_id).source == "ticket"
    assert replies.ticket_for_text("   ", WHO).outcome == "error"


def test_home(replies):
    view = replies.home(WHO)
    assert view["type"] == "home" and "None yet" in text_of(view)
    plan = replies.command("700亿 全参微调", WHO)
    view = replies.home(WHO)
    assert plan.plan_id in text_of(view) and "配置档位" in text_of(view)  # the user's last language
    assert not violations(view, "modal")


# --- property: any text a user can type gets a reply within Slack's limits ------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SLACK_MARKUP = st.sampled_from(["<!channel>", "<!here>", "<@U123>", "<https://evil.example|click>", "&", "<#C1|x>"])
WORDS = st.sampled_from(
    [
        "70b",
        "full",
        "qlora",
        "tiers",
        "faq",
        "show",
        "ticket",
        "history",
        "gpus=8",
        "8张H100",
        "显存爆了",
        "help",
        "帮助",
        "seq=32k",
        "gpu=h100",
        "lang=zh",
        "工单",
        "查看",
        "{{7*7}}",
    ]
)
TEXT = st.lists(st.one_of(WORDS, SLACK_MARKUP, st.text(max_size=30)), max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_any_command_text_gets_a_valid_reply(replies, text):
    reply = replies.command(text, WHO)
    if reply.message is not None:
        assert violations(reply.message) == []
        dumped = json.dumps(reply.message)
        for raw in ("<!channel>", "<!here>", "<@U123>", "<https://evil"):
            assert raw not in dumped
    if reply.view is not None:
        assert violations(reply.view, "modal") == []


def test_pages_have_no_stray_angle_brackets(replies):
    """mrkdwn reserves < and >: a placeholder like <question> must be written &lt;question&gt;."""
    stray = re.compile(r"<(?![@#!]|https?:|mailto:)")
    for text in ("help", "帮助", "faq", "常见问题", "tiers", "gpus", "models", "history"):
        message = replies.command(text, WHO).message
        for block in message["blocks"]:
            body = block.get("text", {}).get("text", "") if block["type"] != "header" else ""
            assert not stray.search(body), (text, body[:200])
