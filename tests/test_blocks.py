"""Slack messages: structure, Slack's limits under any input, escaping, Chinese mrkdwn spacing."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.bot.slack import blocks
from gpuplan.estimator.schema import Note

NASTY = [
    "<!channel>",
    "<!here>",
    "<@U123>",
    "<https://evil.example|click>",
    "&",
    "<#C1|general>",
    "{{7*7}}",
    "@@ header",
]


def texts(payload):
    """Every string Slack will render from a message or modal."""
    out = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("text", "value", "url") and isinstance(value, str):
                    out.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(payload)
    return out


def test_plan_message_structure():
    """The verdict is the header; the job, four fields with the memory bar, the tier with its link
    and the buttons follow, in at most 12 blocks."""
    plan = answer("llama-3-70b full seq=4096 gpu=h100 gpus=8 zero=3")
    msg = blocks.plan_message(plan, plan_id="p123")
    kinds = [b["type"] for b in msg["blocks"]]
    assert kinds[0] == "header" and kinds[-1] == "actions" and "context" in kinds
    assert msg["blocks"][0]["text"]["text"].startswith("Does not fit: a full fine-tune of Llama 3 70B")
    assert len(msg["blocks"]) <= 12
    fields = next(b for b in msg["blocks"] if "fields" in b)["fields"]
    assert 2 <= len(fields) <= 10
    assert any("`" in f["text"] and "█" in f["text"] for f in fields)
    actions = msg["blocks"][-1]["elements"]
    assert [e["action_id"] for e in actions] == [
        "set_method",
        "set_gpu",
        "show_details",
        "show_math",
        "show_configs",
        "share",
        "draft_ticket",
    ]
    assert all(e.get("value") == "p123" for e in actions if e["type"] == "button")
    tier = next(b for b in msg["blocks"] if b.get("accessory", {}).get("action_id") == "open_tier")
    assert tier["accessory"]["url"].startswith("https://")
    assert msg["text"].startswith("Does not fit")
    assert blocks.violations(msg) == []


def test_troubleshooting_message_in_chinese():
    msg = blocks.plan_message(answer("8张卡还是喂不满怎么办"))
    joined = "\n".join(texts(msg))
    assert "GPU 在等数据" in joined and "nvidia-smi dmon" in joined
    assert blocks.violations(msg) == []


def test_help_error_and_modals_fit():
    assert blocks.violations(blocks.help_message("zh")) == []
    assert blocks.violations(blocks.error_message([Note(code="bad_gpus", params={"value": 0})], "en")) == []
    plan = answer("70b full")
    assert blocks.violations(blocks.math_modal(plan), "modal") == []
    assert blocks.violations(blocks.ticket_modal(plan, "customer text"), "modal") == []


def test_oversized_content_is_shortened_not_rejected():
    long = "x" * 5000
    msg = blocks.fit(
        {
            "text": long,
            "blocks": [
                {"type": "header", "text": {"type": "plain_text", "text": long}},
                {"type": "section", "fields": [{"type": "mrkdwn", "text": long} for _ in range(14)]},
                *[blocks.section(long) for _ in range(60)],
                {"type": "context", "elements": [{"type": "mrkdwn", "text": long} for _ in range(15)]},
                {"type": "actions", "elements": [blocks.button(long, "a" * 300, long * 2)]},
            ],
        },
        "zh",
    )
    assert blocks.violations(msg) == []
    assert "更多内容见「查看详情」" in " ".join(texts(msg))
    assert msg["blocks"][-1]["type"] == "actions"


def test_user_text_comes_back_inert():
    plan = answer("70b full")
    plan = plan.model_copy(
        update={
            "unknown": NASTY,
            "notes": [Note(code="unsupported_hardware", params={"value": n}) for n in NASTY],
        }
    )
    rendered = "\n".join(texts(blocks.plan_message(plan)) + texts(blocks.details_modal(plan)))
    for raw in ("<!channel>", "<!here>", "<@U123>", "<https://evil", "<#C1"):
        assert raw not in rendered
    assert "&lt;!channel&gt;" in rendered and "&amp;" in rendered and "{{7*7}}" in rendered
    assert "@@ header" not in rendered
    modal = "\n".join(texts(blocks.ticket_modal(answer("70b full"), "please <!channel> & <@U123> help")))
    assert "<!channel>" not in modal and "&lt;!channel&gt;" in modal


BOLD = re.compile(r"(.)?\*[^*\n]+\*(.)?")
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_chinese_keeps_spaces_around_mrkdwn_markers():
    for question in (
        "700亿 全参微调 8张H100",
        "部署 通义千问72B，面向东南亚用户",
        "8张卡还是喂不满怎么办",
        "A100还是H100，13b全参微调",
    ):
        for text in texts(blocks.plan_message(answer(question))):
            for match in BOLD.finditer(text):
                before, after = match.group(1), match.group(2)
                assert not (before and CJK.match(before)), (question, match.group(0))
                assert not (after and CJK.match(after)), (question, match.group(0))


WORDS = st.sampled_from(
    [
        "70b",
        "7b",
        "全参",
        "lora",
        "qlora",
        "推理",
        "8卡",
        "H100",
        "4090",
        "gpus=16",
        "seq=32k",
        "zero=3",
        "offload=cpu",
        "deepseek-v3",
        "mixtral 8x7b",
        "喂不满",
        "OOM",
        "NCCL timeout",
        "A100 vs H100",
        "2台8卡",
        "budget=$5k",
        "deadline=2d",
        *NASTY,
        "x" * 300,
        "💥",
        "\u202e",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDS, max_size=10).map(" ".join))
def test_any_question_yields_blocks_within_limits(text):
    try:
        plan = answer(text)
    except QuestionError as exc:
        msg = blocks.error_message(exc.notes, exc.lang)
    else:
        msg = blocks.plan_message(plan)
    assert blocks.violations(msg) == []
    rendered = "\n".join(texts(msg))
    for raw in ("<!channel>", "<!here>", "<@U123>", "<https://evil"):
        assert raw not in rendered


def _math_text(plan) -> str:
    return "\n".join(texts(blocks.math_modal(plan)))


def test_math_modal_quotes_the_shape_the_estimate_used():
    plan = answer("qwen2.5-72b lora on 8 H100")
    shape = plan.estimate.architecture
    assert shape.layers == 80 and shape.hidden == 8192  # Qwen2.5-72B's config.json
    text = _math_text(plan)
    assert "80 layers, hidden 8,192" in text and "7B" not in text.split("*The model*")[1][:80]


def test_math_modal_of_a_bare_size_uses_its_generic_shape_not_seven_billion():
    plan = answer("30b full")
    shape = plan.estimate.architecture
    assert f"{shape.layers} layers, hidden {shape.hidden:,}" in _math_text(plan) and shape.hidden > 4096


def test_math_modal_of_a_plan_stored_before_shapes_were_kept():
    plan = answer("70b full")
    old = plan.model_copy(update={"estimate": plan.estimate.model_copy(update={"architecture": None})})
    text = _math_text(old)
    assert "layers" not in text.split("*The model*")[1].split("\n")[0] and "B parameters" in text
    assert blocks.violations(blocks.math_modal(old), "modal") == []


def _select(msg, action_id):
    return next(e for e in msg["blocks"][-1]["elements"] if e["action_id"] == action_id)


def _options(select):
    """{group label: [(option text, value)]}; a select without groups under ""."""
    groups = select.get("option_groups") or [{"label": {"text": ""}, "options": select["options"]}]
    return {g["label"]["text"]: [(o["text"]["text"], o["value"]) for o in g["options"]] for g in groups}


@pytest.mark.parametrize(
    "question,placeholder,expected",
    [
        (
            "serve llama-3.1-70b on H100",
            "Change precision, context or load",
            {
                "Weights precision": [
                    ("bf16 (current)", "precision=bf16"),
                    ("fp8", "precision=fp8"),
                    ("int4", "precision=int4"),
                ],
                "Context per sequence": [
                    ("4,096 tokens (current)", "seq_len=4096"),
                    ("8,192 tokens", "seq_len=8192"),
                    ("32,768 tokens", "seq_len=32768"),
                    ("131,072 tokens", "seq_len=131072"),
                ],
                "Sequences served at once": [
                    ("1 at once", "micro_batch=1"),
                    ("8 at once", "micro_batch=8"),
                    ("16 at once (current)", "micro_batch=16"),
                    ("32 at once", "micro_batch=32"),
                    ("128 at once", "micro_batch=128"),
                ],
                "Fine-tune it instead": [
                    ("full fine-tune", "method=full"),
                    ("LoRA fine-tune", "method=lora"),
                    ("QLoRA fine-tune", "method=qlora"),
                ],
            },
        ),
        (  # A100 has no FP8 tensor cores; Llama 3 holds 8,192 positions
            "部署 llama-3-70b，用 A100",
            "改精度、上下文或并发",
            {
                "权重精度": [("bf16（当前）", "precision=bf16"), ("int4", "precision=int4")],
                "每条序列的上下文": [("4,096 个 token（当前）", "seq_len=4096"), ("8,192 个 token", "seq_len=8192")],
                "同时服务的序列数": [
                    ("同时 1 条", "micro_batch=1"),
                    ("同时 8 条", "micro_batch=8"),
                    ("同时 16 条（当前）", "micro_batch=16"),
                    ("同时 32 条", "micro_batch=32"),
                    ("同时 128 条", "micro_batch=128"),
                ],
                "改为微调": [("全参微调", "method=full"), ("LoRA 微调", "method=lora"), ("QLoRA 微调", "method=qlora")],
            },
        ),
        (  # a GPU without bf16 serves in fp16; the plan's own 2k context is offered beside the usual ones
            "serve llama-3-8b on V100 seq=2048 mbs=4",
            "Change precision, context or load",
            {
                "Weights precision": [("fp16 (current)", "precision=fp16"), ("int4", "precision=int4")],
                "Context per sequence": [
                    ("2,048 tokens (current)", "seq_len=2048"),
                    ("4,096 tokens", "seq_len=4096"),
                    ("8,192 tokens", "seq_len=8192"),
                ],
                "Sequences served at once": [
                    ("1 at once", "micro_batch=1"),
                    ("4 at once (current)", "micro_batch=4"),
                    ("8 at once", "micro_batch=8"),
                    ("32 at once", "micro_batch=32"),
                    ("128 at once", "micro_batch=128"),
                ],
                "Fine-tune it instead": [
                    ("full fine-tune", "method=full"),
                    ("LoRA fine-tune", "method=lora"),
                    ("QLoRA fine-tune", "method=qlora"),
                ],
            },
        ),
        (
            "llama-3-70b lora",
            "Change method",
            {
                "": [
                    ("full fine-tune", "method=full"),
                    ("LoRA fine-tune (current)", "method=lora"),
                    ("QLoRA fine-tune", "method=qlora"),
                ]
            },
        ),
        (
            "700亿 全参微调",
            "换训练方式",
            {"": [("全参微调（当前）", "method=full"), ("LoRA 微调", "method=lora"), ("QLoRA 微调", "method=qlora")]},
        ),
        (  # a method outside the three is named first, as the current one
            "llama-3-8b pretrain",
            "Change method",
            {
                "": [
                    ("pretraining (current)", "method=pretrain"),
                    ("full fine-tune", "method=full"),
                    ("LoRA fine-tune", "method=lora"),
                    ("QLoRA fine-tune", "method=qlora"),
                ]
            },
        ),
    ],
)
def test_method_select_fits_the_plan(question, placeholder, expected):
    """A serving plan's select changes precision, context and concurrency (grouped), or goes back to
    fine-tuning; a training plan's offers the fine-tuning methods; the plan's own choice is marked."""
    msg = blocks.plan_message(answer(question), plan_id="p123")
    select = _select(msg, "set_method")
    assert select["placeholder"]["text"] == placeholder
    assert _options(select) == expected
    assert blocks.violations(msg) == []


@pytest.mark.parametrize(
    "question,expected",
    [
        # the inventory (knowledge/inventory.yaml) holds A100 and H100 80GB
        (
            "llama-3-70b full",
            [("NVIDIA H100 SXM5 80GB (current)", "gpu=h100-80gb"), ("NVIDIA A100 SXM4 80GB", "gpu=a100-80gb")],
        ),
        # the user's own L40S, in no region's stock, comes first; then what the inventory holds
        (
            "serve llama-3.1-70b on our own 4 L40S",
            [
                ("NVIDIA L40S 48GB (current)", "gpu=l40s-48gb"),
                ("NVIDIA A100 SXM4 80GB", "gpu=a100-80gb"),
                ("NVIDIA H100 SXM5 80GB", "gpu=h100-80gb"),
            ],
        ),
        (
            "部署 llama-3-8b，用自己的 4090",
            [
                ("NVIDIA GeForce RTX 4090 24GB（当前）", "gpu=rtx-4090-24gb"),
                ("NVIDIA A100 SXM4 80GB", "gpu=a100-80gb"),
                ("NVIDIA H100 SXM5 80GB", "gpu=h100-80gb"),
            ],
        ),
        # Korea holds 128 H100 but 64 A100: 96 GPUs there cannot be A100s
        ("llama-3-8b full gpus=96 gpu=h100 region=kr", [("NVIDIA H100 SXM5 80GB (current)", "gpu=h100-80gb")]),
        ("8b 全参微调 96张H100 region=kr", [("NVIDIA H100 SXM5 80GB（当前）", "gpu=h100-80gb")]),
        # no region holds 2,048 of any type, and "48GB cards" name none: every type in stock, never an empty select
        (
            "llama-3-405b pretrain on 2048 48GB cards",
            [("NVIDIA A100 SXM4 80GB", "gpu=a100-80gb"), ("NVIDIA H100 SXM5 80GB", "gpu=h100-80gb")],
        ),
    ],
)
def test_gpu_select_offers_what_can_deliver_the_plan(question, expected):
    msg = blocks.plan_message(answer(question), plan_id="p123")
    assert _options(_select(msg, "set_gpu")) == {"": expected}
    assert blocks.violations(msg) == []


def test_grouped_selects_are_fitted_to_slack_limits():
    long = "x" * 300
    groups = [{"label": {"type": "plain_text", "text": long}, "options": []} for _ in range(120)]
    groups[0]["options"] = [{"text": {"type": "plain_text", "text": long}, "value": long} for _ in range(150)]
    select = {"type": "static_select", "action_id": "set_method", "option_groups": groups}
    msg = {"text": "t", "blocks": [{"type": "actions", "elements": [select]}]}
    found = {v.split(": ", 1)[1] for v in blocks.violations(msg)}
    assert {"150 options", "120 option groups", "option group label too long", "option too long"} == found
    assert blocks.violations(blocks.fit(msg)) == []
