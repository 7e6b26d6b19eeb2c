"""Each listener, called the way Bolt calls it, with mocks for ack and the Web API client and a
recorder for the replies and responses it sends through gpuplan.bot.slack.slack_io."""

from __future__ import annotations

import io
import json
import logging
import threading
from dataclasses import dataclass
from unittest.mock import MagicMock

import pytest
import slack_requests as sr
from PIL import Image
from slack_bolt import BoltContext
from slack_sdk.errors import SlackApiError

from gpuplan.bot import charts
from gpuplan.bot.pipeline import answer
from gpuplan.bot.slack.blocks import violations
from gpuplan.bot.slack.chart_poster import ChartPoster
from gpuplan.bot.slack.listeners import actions, commands, events, shortcuts
from gpuplan.bot.slack.listeners.services import Services, context_for, services
from gpuplan.bot.slack.replies import Replies
from gpuplan.bot.slack.store import Store

TEAM, USER, CHANNEL = "T0TEST", "U0ASKER1", "C0PLANS"


class FakeIO:
    """Records thread replies and response_url posts (gpuplan.bot.slack.slack_io.SlackIO's interface)."""

    def __init__(self):
        self.replies, self.responses, self.uploads = [], [], []
        self.order = []  # "reply" and "upload", as they happened
        self.reply_result = True

    def reply(self, channel, thread_ts, message, key, plan_id):
        self.replies.append({"channel": channel, "thread_ts": thread_ts, "key": key, "plan_id": plan_id, **message})
        self.order.append("reply")
        return self.reply_result

    def upload(self, channel, thread_ts, data, *, filename, title, alt_text):
        self.uploads.append({"channel": channel, "thread_ts": thread_ts, "data": data, "title": title, "alt": alt_text})
        self.order.append("upload")
        return True

    def respond(self, response_url, message, idempotent, plan_id):
        self.responses.append({"url": response_url, "idempotent": idempotent, "plan_id": plan_id, **message})
        return True


@dataclass
class Setup:
    """What a listener sees: its context (leading to the replies and the I/O recorder)."""

    context: BoltContext
    replies: Replies
    io: FakeIO


@pytest.fixture
def setup(tmp_path):
    settings = sr.settings_for(f"sqlite:///{tmp_path / 'l.db'}")
    store = Store(settings.database_url)
    replies, io = Replies(store, settings), FakeIO()
    context = BoltContext({"bot_user_id": "U0GPUPLAN", **context_for(Services(replies, io))})
    yield Setup(context, replies, io)
    store.dispose()


def slash(text):
    return {"team_id": TEAM, "user_id": USER, "channel_id": CHANNEL, "text": text, "trigger_id": "t.1"}


def only_call(mock):
    assert mock.call_count == 1, mock.call_args_list
    return mock.call_args.kwargs


# --- the slash command ------------------------------------------------------------------------


def test_command_answers_in_the_ack(setup):
    ack, client = MagicMock(), MagicMock()
    commands.answer_command(ack=ack, command=slash("llama-3-70b lora"), client=client, context=setup.context)
    kwargs = only_call(ack)
    assert kwargs["response_type"] == "ephemeral" and not violations(
        {"text": kwargs["text"], "blocks": kwargs["blocks"]}
    )
    client.views_open.assert_not_called()


def test_command_ticket_opens_a_modal(setup):
    ack, client = MagicMock(), MagicMock()
    commands.answer_command(
        ack=ack, command=slash("ticket We want to LoRA fine-tune Llama 3 70B"), client=client, context=setup.context
    )
    assert only_call(client.views_open)["view"]["type"] == "modal"
    assert ack.call_args.kwargs == {}


def test_command_ticket_falls_back_to_a_message_when_the_modal_fails(setup):
    ack, client = MagicMock(), MagicMock()
    client.views_open.side_effect = SlackApiError("expired", {"ok": False, "error": "expired_trigger_id"})
    commands.answer_command(
        ack=ack, command=slash("ticket We want to LoRA fine-tune Llama 3 70B"), client=client, context=setup.context
    )
    assert "blocks" in only_call(ack)


def test_command_bug_is_reported_with_a_reference(setup, monkeypatch):
    replies = setup.replies
    monkeypatch.setattr(replies, "command", MagicMock(side_effect=RuntimeError("boom")))
    ack = MagicMock()
    ack.response = None  # as Bolt's Ack before it is called
    commands.answer_command(ack=ack, command=slash("70b"), client=MagicMock(), context=setup.context)
    assert "err-" in only_call(ack)["text"]


# --- events -------------------------------------------------------------------------------------


def mention_event(text, ts="1700000000.000100", thread_ts=None):
    ev = {"type": "app_mention", "user": USER, "text": f"<@U0GPUPLAN> {text}", "ts": ts, "channel": CHANNEL}
    if thread_ts:
        ev["thread_ts"] = thread_ts
    return ev


LAZY = {"app_mention": events.on_mention, "message": events.on_message, "app_home_opened": events.on_home}


def run_event(setup, name, event, client):
    """As Bolt runs an event: the ack at once, then the lazy listener with the arguments it names."""
    ack = MagicMock()
    events.acknowledge(ack=ack)
    ack.assert_called_once_with()
    body = {"team_id": TEAM, "event_id": "Ev" + event.get("ts", "0"), "event": event}
    listener = LAZY[name]
    available = {"event": event, "body": body, "client": client, "context": setup.context}
    names = listener.__wrapped__.__code__.co_varnames[: listener.__wrapped__.__code__.co_argcount]
    listener(**{n: available[n] for n in names})


def test_mention_replies_in_a_thread(setup):
    run_event(setup, "app_mention", mention_event("llama-3-70b lora"), MagicMock())
    [reply] = setup.io.replies
    assert reply["thread_ts"] == "1700000000.000100" and reply["channel"] == CHANNEL
    assert reply["key"] == "Ev1700000000.000100" and reply["plan_id"]  # the event id keys the reply


def test_mention_follow_up_in_the_thread(setup):
    run_event(setup, "app_mention", mention_event("llama-3.1-70b full on 16 H100"), MagicMock())
    follow = {
        "type": "message",
        "user": USER,
        "text": "what about 16k context?",
        "channel": CHANNEL,
        "channel_type": "channel",
        "ts": "1700000000.000300",
        "thread_ts": "1700000000.000100",
    }
    run_event(setup, "message", follow, MagicMock())
    assert len(setup.io.replies) == 2
    second = setup.io.replies[1]
    assert second["thread_ts"] == "1700000000.000100" and "16,384" in str(second["blocks"])


@pytest.mark.parametrize(
    "event",
    [
        {"type": "message", "subtype": "message_changed", "channel": CHANNEL, "channel_type": "im", "ts": "1.1"},
        {"type": "message", "bot_id": "B1", "text": "70b full", "channel": "D1", "channel_type": "im", "ts": "1.2"},
        {
            "type": "message",
            "subtype": "bot_message",
            "text": "70b",
            "channel": "D1",
            "channel_type": "im",
            "ts": "1.3",
        },
        {
            "type": "message",
            "user": USER,
            "text": "70b full",
            "channel": CHANNEL,
            "channel_type": "channel",
            "ts": "1.4",
        },
        {
            "type": "message",
            "user": USER,
            "text": "thanks!",
            "channel": CHANNEL,
            "channel_type": "channel",
            "ts": "1.5",
            "thread_ts": "1.0",
        },
    ],
    ids=["edit", "bot", "bot_message", "channel_chatter", "unknown_thread"],
)
def test_messages_that_are_not_for_us_are_ignored(setup, event):
    run_event(setup, "message", event, MagicMock())
    assert setup.io.replies == []


def test_chatter_in_our_thread_is_ignored_but_changes_are_answered(setup):
    run_event(setup, "app_mention", mention_event("7b lora", ts="2.0"), MagicMock())
    chatter = {
        "type": "message",
        "user": USER,
        "text": "thanks, looks good",
        "channel": CHANNEL,
        "channel_type": "channel",
        "ts": "2.1",
        "thread_ts": "2.0",
    }
    run_event(setup, "message", chatter, MagicMock())
    assert len(setup.io.replies) == 1
    run_event(setup, "message", dict(chatter, text="and with QLoRA", ts="2.2"), MagicMock())
    assert len(setup.io.replies) == 2


def test_thread_mention_is_left_to_the_mention_listener(setup):
    run_event(setup, "app_mention", mention_event("7b lora", ts="3.0"), MagicMock())
    both = {
        "type": "message",
        "user": USER,
        "text": "<@U0GPUPLAN> and with QLoRA",
        "channel": CHANNEL,
        "channel_type": "channel",
        "ts": "3.1",
        "thread_ts": "3.0",
    }
    run_event(setup, "message", both, MagicMock())
    assert len(setup.io.replies) == 1


def test_direct_message(setup):
    dm = {
        "type": "message",
        "user": USER,
        "text": "8张卡还是喂不满怎么办",
        "channel": "D1",
        "channel_type": "im",
        "ts": "4.0",
    }
    run_event(setup, "message", dm, MagicMock())
    [reply] = setup.io.replies
    assert reply["thread_ts"] == "4.0" and "GPU" in reply["text"]


def test_a_bug_still_answers_in_the_thread(setup, monkeypatch):
    replies = setup.replies
    monkeypatch.setattr(replies, "question", MagicMock(side_effect=RuntimeError("boom")))
    run_event(setup, "app_mention", mention_event("7b lora", ts="6.0"), MagicMock())
    assert "err-" in setup.io.replies[0]["text"]


@pytest.mark.parametrize(
    "name,event,title",
    [
        ("app_mention", mention_event("llama-3-70b lora", ts="8.0"), "gpuplan: memory per GPU, time and cost"),
        (
            "message",
            {
                "type": "message",
                "user": USER,
                "text": "700亿 全参微调 8张H100",
                "channel": "D1",
                "channel_type": "im",
                "ts": "8.1",
            },
            "gpuplan：每卡显存、时间与费用",
        ),
    ],
    ids=["mention-en", "dm-zh"],
)
def test_a_plans_chart_follows_its_reply_into_the_thread(setup, name, event, title):
    run_event(setup, name, event, MagicMock())
    assert services(setup.context).charts.wait()
    [reply], [upload] = setup.io.replies, setup.io.uploads
    assert setup.io.order == ["reply", "upload"]  # drawn after the reply, itself after the acknowledgement
    assert (upload["channel"], upload["thread_ts"]) == (reply["channel"], reply["thread_ts"])
    assert upload["title"] == title and upload["alt"]
    image = Image.open(io.BytesIO(upload["data"]))
    stored = setup.replies.store.get_plan(reply["plan_id"]).plan()
    shown = json.loads(image.text[charts.METADATA_KEY])
    assert shown["per_gpu_gib"] == stored.estimate.memory.per_gpu_gib and shown["lang"] == stored.lang


@pytest.mark.parametrize(
    "text,files_upload",
    [("8张卡还是喂不满怎么办", "true"), ("NCCL timeout after 30 minutes", "true"), ("llama-3-70b lora", "false")],
    ids=["troubleshoot-zh", "troubleshoot-en", "uploads-off"],
)
def test_no_chart_without_a_plan_or_without_uploads(tmp_path, text, files_upload):
    settings = sr.settings_for(f"sqlite:///{tmp_path / 'c.db'}", GPUPLAN_FILES_UPLOAD=files_upload)
    store = Store(settings.database_url)
    found = Services(Replies(store, settings), FakeIO())
    context = BoltContext({"bot_user_id": "U0GPUPLAN", **context_for(found)})
    dm = {"type": "message", "user": USER, "text": text, "channel": "D1", "channel_type": "im", "ts": "9.0"}
    run_event(Setup(context, found.replies, found.io), "message", dm, MagicMock())
    assert found.charts.wait()
    assert len(found.io.replies) == 1 and found.io.uploads == []
    store.dispose()


def test_a_chart_that_fails_to_draw_leaves_the_reply(setup, monkeypatch, caplog):
    monkeypatch.setattr(charts, "chart_file", MagicMock(side_effect=RuntimeError("boom")))
    with caplog.at_level(logging.ERROR, logger="gpuplan.charts"):
        run_event(setup, "app_mention", mention_event("7b lora", ts="9.1"), MagicMock())
        assert services(setup.context).charts.wait()
    assert len(setup.io.replies) == 1 and setup.io.uploads == []
    assert any("chart failed" in r.getMessage() for r in caplog.records)


def test_charts_past_the_backlog_are_skipped_and_said_once(caplog):
    """One chart at a time: while it waits, those past the backlog are skipped, not queued."""
    held = threading.Event()
    slow = FakeIO()
    slow.upload = lambda *a, **k: held.wait(10)
    poster, plan = ChartPoster(backlog=1), answer("7b lora")
    with caplog.at_level(logging.WARNING, logger="gpuplan.charts"):
        outcomes = [poster.submit(slow, plan, "p", ("C1", "1.0")) for _ in range(3)]
    held.set()
    assert poster.wait() and outcomes == ["queued", "skipped", "skipped"]
    assert sum("charts skipped" in r.getMessage() for r in caplog.records) == 1


def test_home_is_published(setup):
    client = MagicMock()
    run_event(setup, "app_home_opened", {"type": "app_home_opened", "user": USER, "tab": "home", "ts": "7.0"}, client)
    kwargs = only_call(client.views_publish)
    assert kwargs["user_id"] == USER and kwargs["view"]["type"] == "home"
    run_event(
        setup, "app_home_opened", {"type": "app_home_opened", "user": USER, "tab": "messages", "ts": "7.1"}, client
    )
    assert client.views_publish.call_count == 1


# --- actions ------------------------------------------------------------------------------------


def plan_id(replies, text="llama-3-70b full"):
    from gpuplan.bot.slack.replies import Who

    return replies.command(text, Who(TEAM, USER, CHANNEL)).plan_id


def action_body(message=None):
    body = {
        "team": {"id": TEAM},
        "user": {"id": USER},
        "channel": {"id": CHANNEL},
        "trigger_id": "t.2",
        "response_url": "https://hooks.slack.com/actions/T/1/x",
    }
    if message:
        body["message"] = message
    return body


def test_switch_method_replaces_the_message(setup):
    replies = setup.replies
    ref = plan_id(replies)
    ack = MagicMock()
    action = {
        "type": "static_select",
        "action_id": "set_method",
        "block_id": f"plan:{ref}",
        "selected_option": {"value": "qlora"},
    }
    actions.switch(ack=ack, body=action_body(), action=action, context=setup.context)
    ack.assert_called_once()
    [response] = setup.io.responses
    assert response["replace_original"] is True and "QLoRA" in response["text"] and response["idempotent"]
    assert response["url"] == "https://hooks.slack.com/actions/T/1/x"


def test_switch_gpu_in_a_thread_updates_the_thread(setup):
    replies = setup.replies
    from gpuplan.bot.slack.replies import Who

    first = replies.question("llama-3-70b full", Who(TEAM, USER, CHANNEL), "mention", (CHANNEL, "8.0"))
    action = {
        "type": "static_select",
        "action_id": "set_gpu",
        "block_id": f"plan:{first.plan_id}",
        "selected_option": {"value": "h800-80gb"},
    }
    actions.switch(
        ack=MagicMock(), body=action_body({"ts": "8.1", "thread_ts": "8.0"}), action=action, context=setup.context
    )
    assert replies.store.thread(CHANNEL, "8.0")[0].gpu == "h800-80gb"


@pytest.mark.parametrize(
    "question,action_id,value,said",
    [
        ("serve llama-3.1-70b on H100", "set_method", "precision=fp8", "2 x H100 80GB"),
        ("serve llama-3.1-70b on H100", "set_method", "seq_len=32768", "up to 32,768 tokens"),
        ("部署 llama-3.1-70b，用 H100", "set_method", "micro_batch=128", "同时服务 128 条"),
        ("serve llama-3.1-70b on H100", "set_gpu", "gpu=h200-141gb", "H200"),
        ("llama-3-70b full", "set_method", "lora", "LoRA"),  # a message posted before options named their field
        ("llama-3-70b full", "set_gpu", "a100-80gb", "A100"),
    ],
)
def test_switch_reads_the_field_the_option_names(setup, question, action_id, value, said):
    ref = plan_id(setup.replies, question)
    action = {"type": "static_select", "action_id": action_id, "block_id": f"plan:{ref}"}
    action["selected_option"] = {"value": value}
    actions.switch(ack=MagicMock(), body=action_body(), action=action, context=setup.context)
    [response] = setup.io.responses
    assert response["replace_original"] is True and said in response["text"], response["text"]


def test_share_posts_in_channel_without_unsafe_retries(setup):
    replies = setup.replies
    ref = plan_id(replies)
    actions.share(ack=MagicMock(), body=action_body(), action={"type": "button", "value": ref}, context=setup.context)
    [response] = setup.io.responses
    assert response["response_type"] == "in_channel" and response["replace_original"] is False
    assert response["idempotent"] is False  # a new message: never repeated where Slack may have posted it
    assert f"<@{USER}>" in str(response["blocks"])


@pytest.mark.parametrize("action_id", ["show_math", "draft_ticket", "show_plan"])
def test_modal_buttons_open_views(setup, action_id):
    replies = setup.replies
    ref = plan_id(replies)
    client = MagicMock()
    listener = getattr(actions, action_id)
    listener(
        ack=MagicMock(),
        body=action_body(),
        action={"type": "button", "value": ref},
        client=client,
        context=setup.context,
    )
    view = only_call(client.views_open)["view"]
    assert view["type"] == "modal" and not violations(view, "modal")
    assert setup.io.responses == []


def test_modal_that_cannot_open_falls_back_to_a_message(setup):
    replies = setup.replies
    ref = plan_id(replies)
    client = MagicMock()
    client.views_open.side_effect = SlackApiError("expired", {"ok": False, "error": "expired_trigger_id"})
    actions.show_math(
        ack=MagicMock(),
        body=action_body(),
        action={"type": "button", "value": ref},
        client=client,
        context=setup.context,
    )
    assert setup.io.responses[0]["response_type"] == "ephemeral"


def test_expired_plan_buttons_say_so(setup):
    actions.share(
        ack=MagicMock(), body=action_body(), action={"type": "button", "value": "zzzzzzzz"}, context=setup.context
    )
    assert setup.io.responses[0]["response_type"] == "ephemeral"


# --- config files ------------------------------------------------------------------------------


def _config_modal(setup, question="llama-3.1-70b full gpus=8 zero=3 offload=cpu tp=1"):
    ref = plan_id(setup.replies, question)
    client = MagicMock()
    actions.show_configs(
        ack=MagicMock(),
        body=action_body(),
        action={"type": "button", "value": ref},
        client=client,
        context=setup.context,
    )
    return ref, only_call(client.views_open)["view"]


def _elements(view, block_id="config_picker"):
    return next(b for b in view["blocks"] if b.get("block_id") == block_id)["elements"]


def test_config_files_button_opens_the_modal_with_the_first_format(setup):
    _, view = _config_modal(setup)
    assert view["type"] == "modal" and not violations(view, "modal")
    select, send = _elements(view)
    assert [o["value"] for o in select["options"]] == ["deepspeed", "torchrun", "llamafactory", "megatron"]
    assert select["initial_option"]["value"] == "deepspeed" and send["action_id"] == "upload_configs"
    text = str(view["blocks"])
    assert "ds_z3_offload_config.json" in text and '"stage": 3' in text


def test_config_format_select_updates_the_modal_in_place(setup):
    ref, view = _config_modal(setup)
    client = MagicMock()
    body = {**action_body(), "view": {"id": "V1", "hash": "h1", "private_metadata": view["private_metadata"]}}
    action = {"type": "static_select", "action_id": "config_format", "selected_option": {"value": "megatron"}}
    actions.pick_format(ack=MagicMock(), body=body, action=action, client=client, context=setup.context)
    update = only_call(client.views_update)
    assert update["view_id"] == "V1" and update["hash"] == "h1"
    assert "pretrain_megatron.sh" in str(update["view"]["blocks"]) and not violations(update["view"], "modal")


def test_send_as_files_uploads_each_file_to_the_users_direct_messages(setup):
    ref, view = _config_modal(setup)
    client = MagicMock()
    client.conversations_open.return_value = {"channel": {"id": "D0ASKER1"}}
    _, send = _elements(view)
    body = {**action_body(), "view": {"id": "V1", "private_metadata": view["private_metadata"]}}
    actions.upload_configs(ack=MagicMock(), body=body, action=send, client=client, context=setup.context)
    assert only_call(client.conversations_open)["users"] == USER
    upload = only_call(client.files_upload_v2)
    assert upload["channel"] == "D0ASKER1" and "deepspeed" in upload["initial_comment"]
    assert {u["filename"] for u in upload["file_uploads"]} == {"ds_z3_offload_config.json", "launch_deepspeed.sh"}


def test_send_as_files_without_the_scope_says_so_in_the_modal(setup):
    ref, view = _config_modal(setup)
    client = MagicMock()
    client.conversations_open.side_effect = SlackApiError("scope", {"ok": False, "error": "missing_scope"})
    _, send = _elements(view)
    body = {**action_body(), "view": {"id": "V1", "private_metadata": view["private_metadata"]}}
    actions.upload_configs(ack=MagicMock(), body=body, action=send, client=client, context=setup.context)
    update = only_call(client.views_update)
    blocks = str(update["view"]["blocks"])
    assert "missing_scope" in blocks and "files:write" in blocks
    assert "ds_z3_offload_config.json" in blocks  # the files stay in the modal under the notice


def test_config_files_of_an_answer_without_a_plan_explains(setup):
    from gpuplan.bot.slack import config_replies

    reply = config_replies.modal(setup.replies, '{"lang":"en","method":"full"}')  # no model: a question back
    assert reply.plan is None and "no plan" in str(reply.view["blocks"])


@pytest.mark.parametrize(
    "text, fmt, expect",
    [
        ("config vllm llama-3.1-70b infer gpus=2 gpu=h100", "vllm", "--tensor-parallel-size 2"),
        ("配置文件 deepspeed 用8张A100全参微调llama-3.1-8b", "deepspeed", "train_micro_batch_size_per_gpu"),
    ],
)
def test_command_config_subcommand_answers_with_the_files(setup, text, fmt, expect):
    ack = MagicMock()
    commands.answer_command(ack=ack, command=slash(text), client=MagicMock(), context=setup.context)
    kwargs = only_call(ack)
    assert expect in str(kwargs["blocks"]) and fmt in kwargs["text"]
    assert not violations({"text": kwargs["text"], "blocks": kwargs["blocks"]})


def test_command_config_with_a_format_that_cannot_express_the_plan(setup):
    ack = MagicMock()
    commands.answer_command(
        ack=ack,
        command=slash("config vllm llama-3.1-8b lora gpu=rtx-4090 gpus=1"),
        client=MagicMock(),
        context=setup.context,
    )
    assert "deepspeed, torchrun, llamafactory" in str(only_call(ack)["blocks"])


def test_command_config_without_a_format_is_a_question(setup):
    ack = MagicMock()
    commands.answer_command(ack=ack, command=slash("config for 70b full"), client=MagicMock(), context=setup.context)
    assert "70B" in only_call(ack)["text"]


def test_tier_link_buttons_are_acknowledged(setup):
    ack = MagicMock()
    actions.link(ack=ack)
    ack.assert_called_once()


# --- the message shortcut -----------------------------------------------------------------------


def test_shortcut_opens_the_ticket_modal_in_the_message_language(setup):
    client = MagicMock()
    shortcut = {
        "team": {"id": TEAM},
        "user": {"id": USER},
        "channel": {"id": CHANNEL},
        "trigger_id": "t.3",
        "message": {"text": "我们想用QLoRA微调一个33B的模型，单卡48G够吗？"},
    }
    shortcuts.draft_reply(ack=MagicMock(), shortcut=shortcut, client=client, context=setup.context)
    view = only_call(client.views_open)["view"]
    assert "工单" in view["title"]["text"] and not violations(view, "modal")


def test_shortcut_reads_forwarded_messages(setup):
    assert shortcuts.message_text({"text": "", "attachments": [{"text": "70b full on 8 H100"}]}) == "70b full on 8 H100"


def test_shortcut_on_an_empty_message_opens_an_explanation(setup):
    client = MagicMock()
    shortcut = {"team": {"id": TEAM}, "user": {"id": USER}, "trigger_id": "t.4", "message": {"text": ""}}
    shortcuts.draft_reply(ack=MagicMock(), shortcut=shortcut, client=client, context=setup.context)
    assert only_call(client.views_open)["view"]["type"] == "modal"


def test_lazy_listeners_get_the_same_services_from_the_copied_context(setup):
    """Bolt copies the context for lazy listeners; the services come through shared, not copied."""
    copied = setup.context.to_copyable()
    assert copied["gpuplan_services"].replies is setup.replies and copied.bot_user_id == "U0GPUPLAN"
    run_event(setup, "app_mention", mention_event("7b lora", ts="9.0"), MagicMock())
    assert setup.io.replies  # the listener found its services
