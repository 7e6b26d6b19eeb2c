"""Socket Mode end to end: the Procfile's worker process connects to a local WebSocket stand-in
(through the Web API stand-in's apps.connections.open) and answers envelopes as Slack sends them."""

from __future__ import annotations

import json
import os
import subprocess
import time

import slack_requests as sr
from servers import ROOT, procfile_command
from slack_standin import SlackStandIn
from socket_standin import SocketModeStandIn

from gpuplan.bot.slack.blocks import violations


def test_socket_mode_worker_answers_commands_events_and_clicks(tmp_path):
    with SlackStandIn() as slack, SocketModeStandIn() as socket_mode:
        slack.recorder.socket_url = socket_mode.url
        env = {
            "SLACK_BOT_TOKEN": "xoxb-socket",
            "SLACK_APP_TOKEN": "xapp-1-socket",
            "SLACK_API_URL": slack.api_url,
            "GPUPLAN_DATABASE_URL": f"sqlite:///{tmp_path / 'socket.db'}",
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # the checkout under test, not an installed copy
        }
        log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115 (closed below)
        worker = subprocess.Popen(procfile_command("worker"), env=env, cwd=ROOT, stdout=log, stderr=log)
        try:
            # a slash command: the plan comes back in the acknowledgement
            command = {
                "team_id": sr.TEAM,
                "channel_id": sr.CHANNEL,
                "user_id": sr.USER,
                "command": "/gpuplan",
                "text": "llama-3-70b lora",
                "trigger_id": "t.1",
                "response_url": slack.response_url("sock"),
            }
            socket_mode.send(
                {
                    "envelope_id": "env-cmd",
                    "type": "slash_commands",
                    "accepts_response_payload": True,
                    "payload": command,
                }
            )
            ack = socket_mode.ack_for("env-cmd")
            payload = ack["payload"]
            assert "Llama 3 70B" in payload["text"] and payload["response_type"] == "ephemeral"
            assert violations({"text": payload["text"], "blocks": payload["blocks"]}) == []
            plan_id = payload["blocks"][-1]["block_id"][len("plan:") :]

            # a mention: acknowledged at once, answered in the thread through the Web API
            ts = f"{time.time():.6f}"
            event = json.loads(sr.mention("8张卡还是喂不满怎么办", ts, "EvSocket1")[0])
            socket_mode.send(
                {"envelope_id": "env-ev", "type": "events_api", "accepts_response_payload": False, "payload": event}
            )
            assert socket_mode.ack_for("env-ev")["envelope_id"] == "env-ev"
            posts = slack.recorder.wait_for("chat.postMessage", 1)
            assert posts[0]["args"]["thread_ts"] == ts

            # a button: the plan's method changes through the response_url
            click = json.loads(
                __import__("urllib.parse").parse.parse_qs(
                    sr.block_action(
                        sr.select("set_method", "qlora", f"plan:{plan_id}"), slack.response_url("sockclick")
                    )[0].decode()
                )["payload"][0]
            )
            socket_mode.send(
                {"envelope_id": "env-click", "type": "interactive", "accepts_response_payload": False, "payload": click}
            )
            socket_mode.ack_for("env-click")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not slack.recorder.of("response_url"):
                time.sleep(0.05)
            [response] = slack.recorder.of("response_url")
            assert response["args"]["replace_original"] is True and "QLoRA" in response["args"]["text"]
            assert slack.recorder.violations() == []
        finally:
            worker.terminate()
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
            log.close()
        assert "Traceback" not in (tmp_path / "worker.log").read_text()
