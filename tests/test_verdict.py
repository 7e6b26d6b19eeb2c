"""The answer to the question asked comes first: each kind of question gets its verdict (estimator/verdict.py)
and a headline in its language (bot/render.py), the same on every surface."""

from __future__ import annotations

import json
import re

import pytest

from gpuplan.bot import cli, render
from gpuplan.bot.pipeline import answer
from gpuplan.bot.slack import blocks


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_HF_LOOKUP", "0")


# (question, the verdict's kind, patterns the headline must match: the yes or no, the figure, the pick, the cause)
CASES = [
    # can it run / does it fit / is N enough
    ("will llama-3-70b fit on 4 A6000 for inference?", "fits", [r"^Yes", r"4 x RTX A6000 48GB", r"GiB"]),
    ("4张4090能跑qwen2.5-14b推理吗", "fits", [r"^可以", r"4 张 RTX 4090 24GB"]),
    ("单张A100 80G能全参微调Qwen2.5-7B吗", "does_not_fit", [r"^不行", r"每卡需要约 [\d.]+ GiB", r"要装下，可以"]),
    ("can I full fine-tune llama-3-8b on one 4090?", "does_not_fit", [r"^No:", r"to fit, "]),
    (
        "llama-3-70b on 2 4090 for inference, will it fit?",
        "does_not_fit",
        [r"^No:", r"to fit, serve with .*int4 weights"],
    ),
    # how long / how much: the figure, or the rate and a question back when the data size is not given
    ("8张4090 LoRA 微调 Qwen2.5-14B，5万条数据，要多久", "duration", [r"^约 [\d.]+ (小时|天)", r"3.07亿 token"]),
    ("how long to full fine-tune llama-3-8b on 8 H100?", "duration", [r"per 100M training tokens", r"how much data"]),
    ("全参微调 llama 3 8b 要多久", "duration", [r"每 1亿 训练 token 约需", r"你打算用多少数据"]),
    ("how much will it cost to fine-tune llama 70b", "duration", [r"^About \$[\d,.]+ \(", r"per 100M"]),
    ("how long to pretrain llama-3-8b on 1T tokens with 64 H100?", "duration", [r"^About [\d.]+ days", r"1T training"]),
    # samples of a stated length are samples x length (it had planned "2k tokens" in all: 1 second, $0.00)
    (
        "how long to qlora qwen2.5-32b on one H100 with 20k samples of 2k tokens?",
        "duration",
        [r"^About [\d.]+ hours \(\$[\d.,]+\)", r"123M training tokens"],
    ),
    (
        "2万条样本，每条2k token，8张A100 LoRA 微调 qwen2.5-14b 要多久",
        "duration",
        [r"^约 [\d.]+ (小时|天)", r"1.23亿 token"],
    ),
    # how many / which GPUs: the count and type
    ("how many H100 to serve gpt-oss-120b?", "count", [r"^\d+ x H100 80GB", r"tokens/s each"]),
    ("部署 qwen2.5-72b 需要几张卡", "count", [r"\d+ 张 ", r"token/s"]),
    ("how much VRAM does llama-3-8b need?", "count", [r"^At least [\d.]+ GiB on one GPU", r"As planned"]),
    ("llama 3 8b 全参微调需要多少显存", "count", [r"单卡至少需要 [\d.]+ GiB", r"按方案"]),
    # H100 and A100 plans cost within 2% of each other here; either heads the answer
    ("70b full", "plan", [r"^\d+ x (H100|A100) 80GB", r"full fine-tune of a 70B model"]),
    # X or Y: the pick and why in one clause
    ("L40S or A100 for fine-tuning llama-3-8b?", "choice", [r"^\d+ x (L40S 48GB|A100 80GB):", r"cheaper"]),
    ("H100 or H200 for serving llama-3.1-70b?", "choice", [r"^\d+ x H\d00", r"per token"]),
    ("A100和H100哪个更适合训练13b？", "choice", [r"^选 \d+ 张 (A100|H100)", r"更省钱"]),
    ("2x 3090 vs 1x 4090 for llama 13b lora", "choice", [r"^2 x RTX 3090 24GB: the only option that fits"]),
    # why: the most likely cause and the first thing to try
    ("my qwen2.5-7b lora on 2 A10 keeps OOMing at seq 8192", "diagnosis", [r"^Most likely cause", r"First try:"]),
    ("GPU utilisation only 40% on 8 GPUs", "diagnosis", [r"^Most likely cause: the GPUs wait for data"]),
    ("8张卡还是喂不满怎么办", "diagnosis", [r"^最可能的原因：GPU 在等数据", r"先试"]),
    (
        "NCCL watchdog Timeout(ms)=60000 ran for 60012 milliseconds, llama 7b lora on 8 a100",
        "diagnosis",
        [r"^Most likely cause: one rank never reached the collective"],
    ),
    # a deadline or budget that cannot be met: said first, with what the limit affords
    (
        "we have $10k to pretrain a 3B on 300B tokens",
        "infeasible",
        [r"^No: \$10,000 does not cover", r"about \d+B tokens"],
    ),
    ("pretrain a 1T model", "infeasible", [r"would take [\d.]+ years", r"In 30 days"]),
    # ten days read as the deadline, the budget the limit that decides
    ("we have $30k and 10 days to pretrain a 3B model on 1T tokens", "infeasible", [r"^No: ", r"\$30,000"]),
    ("预算1万美元，预训练3B模型，3000亿token", "infeasible", [r"^做不到：\$10,000 不够", r"约能训练"]),
    # largest model, price: the figure
    ("we own 32 L40S, what is the largest model we could pretrain?", "largest", [r"^About [\d.]+B parameters"]),
    ("现有8张A800，最大能全参微调多大的模型？", "largest", [r"^约 [\d.]+B 参数"]),
    ("8 H100 for two weeks in Tokyo, how much?", "price", [r"^About \$[\d,]+: 8 x H100 80GB for 14 days"]),
    ("租8张H100两周，在新加坡大概多少钱？", "price", [r"^约 \$[\d,]+：8 张 H100 80GB 用 14 天"]),
    # no figures: what gpuplan does, or the question back
    ('how do I fix "ImportError: libcudart.so.12"?', "other", [r"^That is outside what gpuplan does"]),
    ("llama 3 full fine-tune", "other", [r"^Which model, or how large\?"]),
]


@pytest.mark.parametrize("question, kind, patterns", CASES)
def test_the_headline_answers_the_question(question, kind, patterns):
    plan = answer(question)
    assert plan.verdict is not None and plan.verdict.kind == kind, plan.verdict
    line = render.headline(plan)
    for pattern in patterns:
        assert re.search(pattern, line), (pattern, line)


@pytest.mark.parametrize("question", [case[0] for case in CASES[::3]])
def test_every_surface_says_the_headline_first(question, capsys):
    """The terminal's first line, the JSON's headline, the Slack header and the ticket reply's first
    line are one verdict."""
    plan = answer(question)
    line = render.headline(plan)
    cli.main([question])
    assert capsys.readouterr().out.splitlines()[0] == line
    cli.main(["--json", question])
    assert json.loads(capsys.readouterr().out)["headline"] == line
    message = blocks.plan_message(plan)
    head, rest = blocks.split_headline(line)
    assert message["blocks"][0]["type"] == "header"
    assert message["blocks"][0]["text"]["text"] == blocks.escape(head)
    assert render.ticket(plan, question)[0].splitlines()[0] == line


def test_the_json_verdict_holds_the_values_the_headline_quotes():
    data = json.loads(_cli_json("单张A100 80G能全参微调Qwen2.5-7B吗"))
    verdict = data["verdict"]
    assert verdict["kind"] == "does_not_fit" and verdict["asked"] == "fit"
    assert verdict["per_gpu_gib"] > verdict["usable_gib"]
    assert verdict["remedies"], "the smallest change that makes it fit"
    fix = verdict["remedies"][0]
    assert fix["per_gpu_gib"] <= fix["usable_gib"]


def test_remedies_start_with_the_smallest_change():
    """A run's own settings come before hardware, hardware before a change of method."""
    plan = answer("my qwen2.5-7b lora on 2 A10 keeps OOMing at seq 8192")
    changes = [r.change for r in plan.verdict.remedies]
    assert changes[0] in ("ckpt", "loss", "loss+ckpt", "loss+ckpt+zero", "ckpt+zero")
    plan = answer("llama-3-70b on 2 4090 for inference, will it fit?")
    assert plan.verdict.remedies[0].change.split("+")[-1] in ("kv_cache", "precision")


@pytest.mark.parametrize(
    "text, head_ends",
    [
        ("Short enough.", "Short enough."),
        ("x" * 100 + ". " + "y" * 100 + ".", "x" * 100 + "."),
        ("a" * 80 + ", " + "b" * 200, "a" * 80),
        ("不行：" + "字" * 70 + "；" + "句" * 100 + "。", "不行：" + "字" * 70),
    ],
)
def test_a_long_headline_splits_between_clauses(text, head_ends):
    head, rest = blocks.split_headline(text)
    assert head == head_ends and len(head) <= 150
    assert (head + rest).replace(" ", "").replace("，", "") != ""


def test_a_headline_never_splits_inside_brackets():
    text = "No: " + "w" * 60 + " (one, two, three " + "z" * 90 + ") and more " + "q" * 40
    head, _ = blocks.split_headline(text)
    assert head.count("(") == head.count(")")


def _cli_json(question: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(["--json", question])
    return out.getvalue()


SLACK_CASES = [
    ("llama-3-70b full seq=4096 gpu=h100 gpus=8 zero=3", "plan"),
    ("L40S or A100 for fine-tuning llama-3-8b?", "comparison"),
    ("my qwen2.5-7b lora on 2 A10 keeps OOMing at seq 8192", "diagnosis"),
    ("单张A100 80G能全参微调Qwen2.5-7B吗", "plan"),
    ("A100和H100哪个更适合训练13b？", "comparison"),
    ("8张卡还是喂不满怎么办", "diagnosis"),
]


@pytest.mark.parametrize("question, kind", SLACK_CASES)
def test_slack_leads_with_the_verdict_within_the_block_budget(question, kind):
    """The verdict is the header; a plan takes at most 12 blocks, buttons included; a troubleshooting
    answer tells its diagnosis right under the verdict; Slack's limits hold."""
    plan = answer(question)
    message = blocks.plan_message(plan, plan_id="p1")
    head, rest = blocks.split_headline(render.headline(plan))
    assert message["blocks"][0] == {"type": "header", "text": {"type": "plain_text", "text": head, "emoji": True}}
    assert len(message["blocks"]) <= 12 and blocks.violations(message) == []
    after = message["blocks"][2 if rest else 1]
    if kind == "diagnosis":
        title = render.diagnoses(plan)[0]["title"] if plan.verdict.kind == "diagnosis" else ""
        assert after["type"] == "section" and blocks.escape(title) in after["text"]["text"]
    if kind == "comparison":
        joined = json.dumps(message, ensure_ascii=False)
        assert "Compared" in joined or "对比" in joined
    details = blocks.details_modal(plan)
    assert details["blocks"][0]["type"] == "header" and blocks.violations(details, "modal") == []


SETTING_SYNTAX = re.compile(
    r"\b(?:model|method|seq|mbs|gbs|tokens|samples|gpu|gpus|nodes|zero|offload|tp|pp|ep|cp|ckpt|precision|"
    r"optim|lora_r|mfu|deadline|budget|region|lang|kv|data|loss|users|objective|fabric)="
)


@pytest.mark.parametrize(
    "question",
    [
        "8张4090 LoRA 微调 Qwen2.5-14B，5万条数据，要多久",
        "we want to fine-tune a 70b model, what do we need?",
        "How much VRAM does llama-3-8b need for our chatbot?",
        "单张A100 80G能全参微调Qwen2.5-7B吗",
        "GPU utilisation only 40% on 8 GPUs, dataloader is slow",
        "serve qwen2.5-72b for 200 concurrent users in Singapore",
    ],
)
def test_a_ticket_reply_is_for_the_customer(question):
    """The reply opens with the headline, names no gpuplan setting (seq=, mbs=, ...) and asks for
    nothing the ticket says."""
    plan = answer(question)
    reply, note = render.ticket(plan, question)
    assert reply.splitlines()[0] == render.headline(plan)
    assert not SETTING_SYNTAX.search(reply), SETTING_SYNTAX.search(reply)
    for said in ("parameter count", "whether you plan LoRA/QLoRA or a full fine-tune", "参数规模"):
        assert said not in reply


def test_a_pasted_trainer_launch_is_planned_without_tensor_parallel():
    """The Hugging Face Trainer under DeepSpeed runs data parallel with ZeRO only: no tensor or
    pipeline parallel is planned for it, and the answer says what it read."""
    plan = answer(
        "deepspeed --num_gpus 8 train.py --model_name_or_path meta-llama/Llama-2-70b-hf "
        "--deepspeed ds_z3.json --per_device_train_batch_size 1  GPU util 30%, why?"
    )
    assert plan.estimate.resolved.tp == 1 and plan.estimate.resolved.pp == 1
    assert any(n.code == "data_parallel_stack" for n in plan.read)
    text = render.text_answer(plan)
    assert "cheapest that fits" not in render.plan_text(plan, details=True) or plan.estimate.memory.fits
    assert len(text.splitlines()) <= 30


def test_a_bare_size_is_a_current_model_and_says_so():
    plan = answer("serve a 70b model")
    arch = plan.estimate.architecture
    assert arch.kv_heads == 8 and arch.vocab >= 128_000
    note = next(n for n in plan.estimate.assumptions if n.code == "generic_arch")
    assert "8 key-value heads" in render.message(note, "en") or "8 组 KV" in render.message(note, "zh")


def test_nothing_is_said_three_times_in_a_serving_answer():
    """Region advice once in the whole answer (it had come from the region line, the deployment tier
    and the deployment rule), no 'A100 or H100' note beside an H100-or-H200 comparison."""
    plan = answer("serve llama-3-70b for 32 users, where should we deploy?")
    details = render.plan_text(plan, details=True)
    assert len(re.findall(r"South-?East Asia|Southeast Asia", details, re.I)) <= 1
    plan = answer("H100 or H200 for serving llama-3.1-70b?")
    assert not any(d.id == "gpu_choice_a100_h100" for d in plan.diagnoses)


@pytest.mark.parametrize("question", ["qwen2.5-7b lora on one H100", "70b full"])
def test_no_zero_second_checkpoint_and_traffic_named_by_where_it_goes(question):
    details = render.plan_text(answer(question), details=True)
    assert "about 0 s" not in details and "约 0 秒" not in details
    network = [line for line in details.splitlines() if line.startswith("Network")]
    assert all("between servers" in line or "inside the server" in line for line in network)


def test_an_oom_report_is_diagnosed_as_the_trainer_runs_it_data_parallel():
    """The plan may split a layer over two cards; the run that reported the OOM most likely did
    not (the Trainer runs data parallel): the cause is its memory as it runs, ZeRO-3 over both."""
    plan = answer("finetune llama 7b with lora, OOM on 2 16G A4000")
    v = plan.verdict
    assert plan.estimate.memory.fits and plan.estimate.resolved.tp == 2
    assert v.as_run and v.per_gpu_gib > v.usable_gib
    assert render.headline(plan).startswith("Most likely cause: a LoRA fine-tune of LLaMA 7B needs about 18.1 GiB")


def test_a_serving_plan_near_its_full_load_says_how_many_it_holds():
    """Serving at 100 of the 106 sequences the KV cache holds says so, not that memory is tight; a
    replica whose weights fill the card, serving 1 of 4, is tight in memory and says that."""
    near = answer("serve llama 3.1 8b for 100 users")
    assert near.verdict.tight and near.verdict.full_load == 106
    assert render.headline(near).endswith("(close to its full load: at most 106 sequences at once).")
    weights = answer("convert a 70b llama to a trt engine with --max_batch_size=1 on 2 A100 80GB")
    assert weights.verdict.tight and weights.verdict.full_load >= 4
    said = render.headline(weights)
    assert "only just" in said and "69.9 of the 72.0 GiB" in said and "full load" not in said
