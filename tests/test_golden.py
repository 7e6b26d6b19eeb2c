"""Golden outputs: a plan, a troubleshooting answer and a ticket reply in each language, and the
Slack blocks of a plan. Regenerate deliberately with UPDATE_GOLDEN=1 and read the diff."""

import json
import os
from pathlib import Path

import pytest

from gpuplan.bot.cli import main
from gpuplan.bot.pipeline import answer
from gpuplan.bot.slack import blocks

GOLDEN = Path(__file__).parent / "golden"
CLI_CASES = {
    "plan_en.txt": ["llama-3-70b lora gpu=a100 gpus=2"],
    "plan_zh.txt": ["700亿 全参微调 8张H100"],
    "troubleshoot_en.txt": ["GPU utilization only 40% on 8 GPUs, dataloader is slow"],
    "troubleshoot_zh.txt": ["8张卡还是喂不满怎么办"],
    "ticket_en.txt": [
        "--ticket",
        "Hi, we want to fine-tune Llama 3 70B (full parameters) on about 20k support "
        "tickets. We have budget for 8 H100s. Will that work and how long will it take?",
    ],
    "ticket_zh.txt": ["--ticket", "我们想用QLoRA微调一个33B的模型，单卡48G够吗？"],
}
SLACK_CASES = {
    "slack_plan_en.json": "qwen2.5-7b qlora gpu=4090",
    "slack_plan_zh.json": "部署 通义千问72B，面向东南亚用户",
}


def check(name: str, got: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden file {name}: run with UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(CLI_CASES))
def test_cli_golden(capsys, name):
    assert main(CLI_CASES[name]) == 0
    check(name, capsys.readouterr().out)


@pytest.mark.parametrize("name", sorted(SLACK_CASES))
def test_slack_golden(name):
    message = blocks.plan_message(answer(SLACK_CASES[name]), plan_id="P0001")
    check(name, json.dumps(message, ensure_ascii=False, indent=1) + "\n")
