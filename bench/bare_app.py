"""The baseline for bench_http.py: a bare Bolt app whose slash command acks with one line of text.

Served exactly like gpuplan (gunicorn, Bolt's WSGI adapter, the same Web API stand-in for
auth.test), so the difference in throughput is what gpuplan's answer costs. With
BARE_BLOCKS_FILE set it acks with those blocks instead (a reply as large as a plan, computed by
nobody), which separates the cost of the reply's size from the cost of making it.
"""

from __future__ import annotations

import json
import os

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient

app = App(
    client=WebClient(token=os.environ["SLACK_BOT_TOKEN"], base_url=os.environ["SLACK_API_URL"]),
    signing_secret=os.environ["SLACK_SIGNING_SECRET"],
    process_before_response=os.environ.get("GPUPLAN_PROCESS_BEFORE_RESPONSE", "true").lower() == "true",
    token_verification_enabled=False,
)


BLOCKS_FILE = os.environ.get("BARE_BLOCKS_FILE")
BLOCKS = json.loads(open(BLOCKS_FILE, encoding="utf-8").read()) if BLOCKS_FILE else None  # noqa: SIM115


@app.command("/gpuplan")
def answer(ack) -> None:  # noqa: ANN001 (bolt injects it)
    if BLOCKS is None:
        ack("ok: this is the bare app")
    else:
        ack(text="ok: this is the bare app", blocks=json.loads(json.dumps(BLOCKS)))


application = SlackRequestHandler(app)
