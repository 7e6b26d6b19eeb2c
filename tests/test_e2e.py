"""End to end, as Slack drives it: the Procfile's gunicorn, a local stand-in for Slack's Web API,
and signed requests for every surface. Every message that reaches the stand-in must pass the
Block Kit limits check."""

from __future__ import annotations

import io
import json
import time

import pytest
import slack_requests as sr
from dbs import BACKENDS, fresh_url
from PIL import Image
from servers import WebServer
from slack_standin import SlackStandIn

from gpuplan.bot import charts
from gpuplan.bot.pipeline import answer
from gpuplan.bot.slack.blocks import violations


@pytest.fixture(scope="module", params=BACKENDS)
def stack(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"e2e-{request.param}")
    with SlackStandIn() as slack:
        env = {
            "SLACK_BOT_TOKEN": "xoxb-e2e",
            "SLACK_SIGNING_SECRET": sr.SECRET,
            "SLACK_API_URL": slack.api_url,
            "GPUPLAN_DATABASE_URL": fresh_url(request.param, tmp),
        }
        server = WebServer(env, workers=2, log_path=tmp / "gunicorn.log").start()
        try:
            yield server, slack
        finally:
            server.stop()
        assert slack.recorder.violations() == []
        assert "Traceback" not in (tmp / "gunicorn.log").read_text(), server.log()


def post(server, factory_result, **kw):
    body, ctype = factory_result
    return sr.post(server.port, body, ctype, **kw)


def new_ts():
    return f"{time.time():.6f}"


def test_health(stack):
    server, _ = stack
    assert server.healthy()


def test_slash_command_answers_in_the_response(stack):
    server, slack = stack
    status, body = post(server, sr.command("How many H100s to fully fine-tune Llama 3 70B with 8k context?"))
    assert status == 200
    message = json.loads(body)
    assert message["response_type"] == "ephemeral" and "Llama 3 70B" in message["text"]
    assert not violations({"text": message["text"], "blocks": message["blocks"]})
    assert message["blocks"][-1]["type"] == "actions"


def test_slash_subcommands(stack):
    server, _ = stack
    for text, needle in [
        ("help", "/gpuplan tiers"),
        ("方案", "配置档位"),
        ("faq nccl_timeout", "NCCL"),
        ("gpus", "h100-80gb"),
        ("history", "plans"),
        ("config deepspeed llama-3.1-8b full gpus=8 gpu=a100-80gb", "train_micro_batch_size_per_gpu"),
        ("配置文件 vllm 用两张H100部署llama-3.1-70b", "--tensor-parallel-size"),
    ]:
        status, body = post(server, sr.command(text))
        payload = json.loads(body)
        assert status == 200
        assert needle in payload["text"] + json.dumps(payload["blocks"], ensure_ascii=False), text


def test_mention_and_thread_follow_up(stack):
    server, slack = stack
    ts = new_ts()
    before = len(slack.recorder.of("chat.postMessage"))
    assert post(server, sr.mention("llama-3.1-70b full on 16 H100", ts, "EvM" + ts))[0] == 200
    posts = slack.recorder.wait_for("chat.postMessage", before + 1)
    first = posts[-1]["args"]
    assert first["thread_ts"] == ts and first["channel"] == sr.CHANNEL
    reply_ts = new_ts()
    assert post(server, sr.message("what about 16k context?", reply_ts, "EvF" + reply_ts, thread_ts=ts))[0] == 200
    posts = slack.recorder.wait_for("chat.postMessage", before + 2)
    second = posts[-1]["args"]
    assert second["thread_ts"] == ts and "16,384" in json.dumps(second["blocks"])
    assert "Changed from the previous plan" in json.dumps(second["blocks"])


def test_a_plans_chart_is_uploaded_into_its_thread_after_the_reply(stack):
    """The event is acknowledged at once, the reply lands, and then the chart, drawn after both,
    is uploaded into the same thread (files.getUploadURLExternal, the bytes, completeUploadExternal)
    with the plan's numbers in it."""
    server, slack = stack
    ts, question = new_ts(), "700亿 全参微调 8张H100"
    started = time.monotonic()
    assert post(server, sr.mention(question, ts, "EvChart" + ts))[0] == 200
    assert time.monotonic() - started < 3.0  # Slack's limit for the acknowledgement
    deadline = time.monotonic() + 30  # a worker's first chart imports matplotlib
    while time.monotonic() < deadline and not slack.recorder.shared(sr.CHANNEL, ts):
        time.sleep(0.05)
    [(shared, png)] = slack.recorder.shared(sr.CHANNEL, ts)
    assert shared["title"] == "gpuplan：每卡显存、时间与费用"
    [reply] = [c for c in slack.recorder.of("chat.postMessage") if c["args"].get("thread_ts") == ts]
    [done] = [c for c in slack.recorder.of("files.completeUploadExternal") if c["args"].get("thread_ts") == ts]
    assert reply["at"] <= done["at"]
    image = Image.open(io.BytesIO(png))
    assert image.size == (round(charts.FIGSIZE[0] * charts.DPI), round(charts.FIGSIZE[1] * charts.DPI))
    shown = json.loads(image.text[charts.METADATA_KEY])
    memory = answer(question).estimate.memory
    assert shown["per_gpu_gib"] == pytest.approx(memory.per_gpu_gib) and shown["lang"] == "zh"


def test_direct_message_in_chinese(stack):
    server, slack = stack
    ts = new_ts()
    before = len(slack.recorder.of("chat.postMessage"))
    post(server, sr.message("8张卡还是喂不满怎么办", ts, "EvD" + ts, channel_type="im"))
    reply = slack.recorder.wait_for("chat.postMessage", before + 1)[-1]["args"]
    assert reply["thread_ts"] == ts and "数据" in json.dumps(reply["blocks"], ensure_ascii=False)


def test_bots_and_edits_get_no_reply(stack):
    server, slack = stack
    before = len(slack.recorder.of("chat.postMessage"))
    ts = new_ts()
    post(server, sr.message("70b full", ts, "EvB" + ts, channel_type="im", bot_id="B0OTHER"))
    post(server, sr.message("70b full", ts, "EvE" + ts, channel_type="im", subtype="message_changed"))
    time.sleep(1.0)
    assert len(slack.recorder.of("chat.postMessage")) == before


def test_a_retried_event_is_answered_once(stack):
    server, slack = stack
    ts = new_ts()
    before = len(slack.recorder.of("chat.postMessage"))
    event = sr.mention("7b lora", ts, "EvRetry" + ts)
    statuses = [post(server, event)[0]]
    for retry in (1, 2):
        statuses.append(
            post(server, event, headers={"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})[0]
        )
    assert statuses == [200, 200, 200]
    slack.recorder.wait_for("chat.postMessage", before + 1)
    time.sleep(1.0)
    assert len([c for c in slack.recorder.of("chat.postMessage") if c["args"].get("thread_ts") == ts]) == 1


def plan_from_command(server, text="llama-3-70b full"):
    message = json.loads(post(server, sr.command(text))[1])
    actions = message["blocks"][-1]
    return actions["block_id"][len("plan:") :], actions


def test_button_changes_the_method(stack):
    server, slack = stack
    ref, _ = plan_from_command(server)
    hook = "switch-" + ref
    status, _ = post(server, sr.block_action(sr.select("set_method", "qlora", f"plan:{ref}"), slack.response_url(hook)))
    assert status == 200
    calls = [c for c in slack.recorder.of("response_url") if c["args"]["_hook"] == hook]
    assert len(calls) == 1 and calls[0]["args"]["replace_original"] is True
    assert "QLoRA" in calls[0]["args"]["text"]


def test_serving_select_changes_the_precision(stack):
    """The serving plan's select offers fp8 on H100 (its value names the field); choosing it
    re-plans in place: 4 -> 2 GPUs a replica."""
    server, slack = stack
    ref, buttons = plan_from_command(server, "serve llama-3.1-70b on H100")
    groups = buttons["elements"][0]["option_groups"]
    assert "precision=fp8" in [o["value"] for g in groups for o in g["options"]]
    hook = "fp8-" + ref
    post(server, sr.block_action(sr.select("set_method", "precision=fp8", f"plan:{ref}"), slack.response_url(hook)))
    calls = [c for c in slack.recorder.of("response_url") if c["args"]["_hook"] == hook]
    assert len(calls) == 1 and calls[0]["args"]["replace_original"] is True
    assert calls[0]["args"]["text"].startswith("2 x H100 80GB for serving Llama 3.1 70B")


def test_share_posts_in_the_channel(stack):
    server, slack = stack
    ref, _ = plan_from_command(server)
    hook = "share-" + ref
    post(server, sr.block_action(sr.press("share", ref), slack.response_url(hook)))
    call = [c for c in slack.recorder.of("response_url") if c["args"]["_hook"] == hook][0]["args"]
    assert call["response_type"] == "in_channel" and f"<@{sr.USER}>" in json.dumps(call["blocks"])


@pytest.mark.parametrize("action_id", ["show_math", "draft_ticket"])
def test_buttons_open_modals(stack, action_id):
    server, slack = stack
    ref, _ = plan_from_command(server)
    before = len(slack.recorder.of("views.open"))
    assert post(server, sr.block_action(sr.press(action_id, ref), slack.response_url("m")))[0] == 200
    view = slack.recorder.wait_for("views.open", before + 1)[-1]["args"]["view"]
    assert view["type"] == "modal"


def test_config_files_modal_format_select_and_upload(stack):
    """The Config files button opens the modal; its select swaps the files (views.update); Send as
    files uploads them to the user's direct messages through files_upload_v2."""
    server, slack = stack
    ref, _ = plan_from_command(server)
    opened = len(slack.recorder.of("views.open"))
    post(server, sr.block_action(sr.press("show_configs", ref), slack.response_url("cfg")))
    view = slack.recorder.wait_for("views.open", opened + 1)[-1]["args"]["view"]
    picker = next(b for b in view["blocks"] if b.get("block_id") == "config_picker")
    formats = [o["value"] for o in picker["elements"][0]["options"]]
    assert formats and view["private_metadata"]

    inside = {"id": "V0CONFIG", "hash": "h.1", "private_metadata": view["private_metadata"]}
    updated = len(slack.recorder.of("views.update"))
    post(server, sr.block_action(sr.select("config_format", formats[-1], "config_picker"), "", view=inside))
    new_view = slack.recorder.wait_for("views.update", updated + 1)[-1]["args"]
    assert new_view["view_id"] == "V0CONFIG" and formats[-1] in json.dumps(new_view["view"])

    send = picker["elements"][1]
    completed = len(slack.recorder.of("files.completeUploadExternal"))
    post(server, sr.block_action(sr.press("upload_configs", send["value"], "config_picker"), "", view=inside))
    done = slack.recorder.wait_for("files.completeUploadExternal", completed + 1)[-1]["args"]
    assert done["channel_id"] == f"D{sr.USER[1:]}"
    uploads = slack.recorder.of("file_upload")
    assert uploads and all(u["args"]["_bytes"] > 0 for u in uploads)


def test_shortcut_opens_the_ticket_modal(stack):
    server, slack = stack
    before = len(slack.recorder.of("views.open"))
    assert post(server, sr.message_shortcut("我们想用QLoRA微调一个33B的模型，单卡48G够吗？"))[0] == 200
    view = slack.recorder.wait_for("views.open", before + 1)[-1]["args"]["view"]
    assert "工单" in view["title"]["text"]
    assert "33B" in json.dumps(view, ensure_ascii=False)


def test_app_home(stack):
    server, slack = stack
    post(server, sr.command("qwen2.5-72b qlora"))
    before = len(slack.recorder.of("views.publish"))
    assert post(server, sr.home_opened("EvH" + new_ts()))[0] == 200
    call = slack.recorder.wait_for("views.publish", before + 1)[-1]["args"]
    assert call["user_id"] == sr.USER and call["view"]["type"] == "home"
    assert "Qwen2.5 72B" in json.dumps(call["view"])


def test_unsigned_and_stale_requests_get_401(stack):
    server, _ = stack
    body, ctype = sr.command("70b full")
    assert sr.post(server.port, body, ctype, signed=False)[0] == 401
    stale = sr.sign(body, timestamp=int(time.time()) - 600)
    assert sr.post(server.port, body, ctype, headers=stale, signed=False)[0] == 401


def test_the_bot_token_reaches_slack(stack):
    _, slack = stack
    calls = slack.recorder.of("chat.postMessage")
    assert calls and all(c["auth"] == "Bearer xoxb-e2e" for c in calls)
