"""The least memory per method on one GPU ("how much VRAM does X need?"): the estimator's own
figures at the leanest settings, the smallest cards that hold them, and when the answer shows them."""

import contextlib
import io
import json

import pytest

from gpuplan.bot import cli
from gpuplan.bot.language.parser import parse
from gpuplan.estimator import fit
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.footprint import footprint
from gpuplan.estimator.schema import Request
from gpuplan.knowledge import catalog


def rows_of(**fields):
    return {(r.method, r.precision): r for r in footprint(Request(**fields), catalog())}


def test_rows_order_and_monotone():
    rows = rows_of(model="llama-3-8b")
    assert list(rows) == [
        ("full", "bf16-mixed"),
        ("lora", "bf16-mixed"),
        ("qlora", "bf16-mixed"),
        ("infer", "bf16"),
        ("infer", "int8"),
        ("infer", "int4"),
    ]
    gib = {k: r.per_gpu_gib for k, r in rows.items()}
    assert gib[("qlora", "bf16-mixed")] < gib[("lora", "bf16-mixed")] < gib[("full", "bf16-mixed")]
    assert gib[("infer", "int4")] < gib[("infer", "int8")] < gib[("infer", "bf16")]


def test_a_method_asked_for_comes_first():
    rows = footprint(Request(model="qwen2.5-7b", method="dpo"), catalog())
    assert rows[0].method == "dpo" and len(rows) == 7
    assert rows[0].per_gpu_gib > next(r for r in rows if r.method == "full").per_gpu_gib * 0.9  # a second model


def test_each_row_is_the_estimators_figure_at_the_leanest_setting():
    rows = rows_of(model="llama-3-8b")
    lean = estimate(Request(model="llama-3-8b", method="lora", gpus=1, gpu="h100-80gb", micro_batch=1, ckpt="full"))
    assert rows[("lora", "bf16-mixed")].per_gpu_gib == pytest.approx(lean.memory.per_gpu_gib)
    one = estimate(Request(model="llama-3-8b", method="infer", gpus=1, gpu="h100-80gb", micro_batch=1))
    assert rows[("infer", "bf16")].per_gpu_gib == pytest.approx(one.memory.per_gpu_gib)


def test_bf16_serving_is_about_two_bytes_a_parameter_plus_one_sequence():
    """Llama 3 8B: 8.03B x 2 bytes = 15.0 GiB of weights, one 4k sequence's KV cache (0.5 GiB at
    128 KiB a token) and the CUDA context: 16-18 GiB."""
    assert 16 < rows_of(model="llama-3-8b")[("infer", "bf16")].per_gpu_gib < 18


def test_smallest_cards_hold_the_row_and_none_smaller_does():
    """A card holds a row within its usable memory (fit.usable: a training plan's share, or the
    serving engine's); cards of one memory class ("24 GB" cards report 23.6-24 GiB) count as one size."""
    cat = catalog()
    modern = [g for g in cat.gpus.values() if g.family not in ("kepler", "maxwell", "pascal")]
    for row in footprint(Request(model="qwen2.5-14b"), cat):
        holding = {g.id for g in modern if fit.fits(row.per_gpu_gib, g.memory_gib, cat.defaults, row.method == "infer")}
        named = [g for g in modern if g.name in row.cards]
        assert named and all(g.id in holding for g in named)
        least = min(g.memory_gib for g in named)
        assert not [g for g in modern if g.id in holding and g.memory_gib < least / 1.02]


def test_no_single_card_for_a_671b_model_and_no_int8_row_for_an_fp8_checkpoint():
    rows = rows_of(model="deepseek-v3")
    assert ("infer", "fp8") in rows and ("infer", "int8") not in rows
    assert all(not r.cards for r in rows.values() if r.method != "qlora")


def answer_json(question: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["--json", question]) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    "question, asked",
    [
        ("How much VRAM does llama-3-8b need?", True),
        ("what is the minimum memory to fine-tune qwen2.5-7b with lora", True),
        ("qwen2.5-7b 显存最低要多少？", True),
        ("7b 模型全参微调需要多少显存", True),
        ("What GPU do I need to run Llama 3.2 3B locally?", True),
        ("minimum hardware requirements for llama 3 8b", True),
        ("ChatGLM3-6B 本地部署最低配置", True),
        ("跑qwen2.5-7b需要什么显卡", True),
        ("70b full", False),
        ("how long to fine-tune llama-3-8b on 8 H100?", False),
        ("训练 qwen2.5-7b 要多久", False),
    ],
)
def test_memory_questions_get_the_footprint(question, asked):
    assert parse(question).memory_asked is asked
    data = answer_json(question)
    assert bool(data["footprint"]) is asked


def test_footprint_in_both_languages_of_the_text_answer():
    for question, heading in [
        ("How much VRAM does llama-3-8b need?", "On one GPU at its leanest"),
        ("qwen2.5-7b 显存最低要多少？", "单卡最省显存"),
    ]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert cli.main([question]) == 0
        assert heading in out.getvalue()


def test_a_ticket_reply_gives_the_memory_and_asks_what_serving_needs():
    for question, memory, ask in [
        (
            "How much VRAM does llama-3-8b need for our chatbot?",
            "The least memory the model needs",
            "16 concurrent sequences assumed.",
        ),
        ("请问 qwen2.5-7b 部署需要多少显存？", "模型在单卡上最少需要的显存", "按同时服务 16 条序列估算。"),
    ]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert cli.main(["--ticket", question]) == 0
        reply = out.getvalue().split("INTERNAL NOTE")[0]
        assert memory in reply and ask in reply
