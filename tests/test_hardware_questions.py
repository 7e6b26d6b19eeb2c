"""Questions about hardware rather than a model: the largest model some GPUs hold, what they cost,
and a card named by its memory alone, which is made up for that one question and never for the next."""

from __future__ import annotations

import math
import re
import threading

import pytest

from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.bot.render import message
from gpuplan.estimator import capacity
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request

# --- capacity: bisection and price arithmetic --------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.1, 0.37, 7.0, 70.0, 812.5, 2999.0])
def test_bisect_finds_the_largest_size_that_holds_rounded_down(threshold):
    found = capacity._bisect(lambda b: b <= threshold)
    assert found <= threshold
    assert found >= threshold * 0.98  # ten halvings of ln(30000): about 1%, then rounding down


def test_bisect_says_when_nothing_or_everything_holds():
    assert capacity._bisect(lambda b: False) is None
    assert capacity._bisect(lambda b: True) == capacity.LARGEST_B


def test_largest_sizes_fit_and_a_little_more_does_not(cat):
    request = Request(gpu="h100-80gb", gpus=8)
    largest = capacity.largest(request, cat)
    assert largest.gpus == 8 and largest.gpu == "h100-80gb"
    rows = {key: row for key, row in largest.methods.items() if row}
    sizes = {key: row.params_b for key, row in rows.items()}
    assert sizes["pretrain"] <= sizes["full"] < sizes["lora"] < sizes["qlora"]
    assert sizes["infer"] < sizes["infer_int4"]  # one sequence served, in 16 and in 4 bits
    assert rows["infer"].sequences == rows["infer_int4"].sequences == 1
    for key, row in rows.items():
        if row.params_b < capacity.LARGEST_B:
            serving = {"micro_batch": 1, "precision": row.precision} if row.method == "infer" else {}
            same = dict(method=row.method, gpu="h100-80gb", gpus=8, **serving)
            fits = estimate(Request(params_b=row.params_b, **same), cat).memory.fits
            bigger = estimate(Request(params_b=row.params_b * 1.05, **same), cat)
            assert fits and not bigger.memory.fits, key


@pytest.mark.parametrize(
    "gpus, key, at_least",
    [
        (512, "qlora", True),  # 3,000B fits on 512 H100: the search's bound, not the answer
        (512, "infer_int4", True),
        (512, "full", False),  # about 1,850B: a size the bisection found below the bound
        (8, "qlora", False),
    ],
)
def test_a_row_at_the_search_bound_says_the_largest_is_larger(cat, gpus, key, at_least):
    row = capacity.largest(Request(gpu="h100-80gb", gpus=gpus), cat).methods[key]
    assert row.at_least is at_least
    assert (row.params_b == capacity.LARGEST_B) is at_least
    assert row.per_gpu_gib <= row.usable_gib < row.capacity_gib


def test_the_bound_is_beyond_every_catalog_model(cat):
    """The row at the bound says so in words ("beyond every model it knows"), which holds while the
    catalog's largest model is smaller than LARGEST_B."""
    assert max(m.params_b for m in cat.models.values()) < capacity.LARGEST_B


@pytest.mark.parametrize(
    "question, bound, size",
    [
        (
            "we own 512 H100, what is the largest model we could train?",
            "3,000B parameters or more",
            r"about 1,\d{3}\.0B",
        ),
        ("我们有512张H100，最大能训练多大的模型？", "3,000B 参数或更大", r"约 1,\d{3}\.0B"),
    ],
)
def test_the_answer_says_the_bound_in_words_not_as_the_figure(question, bound, size):
    plan = answer(question)
    text = "\n".join(message(n, plan.lang) for n in plan.findings)
    assert bound in text and re.search(size, text)
    assert "about 3,000" not in text and "约 3,000" not in text


def test_largest_honours_the_settings_the_question_fixes(cat):
    free = capacity.largest(Request(gpu="h100-80gb", gpus=8), cat)
    zero1 = capacity.largest(Request(gpu="h100-80gb", gpus=8, zero=1, tp=1, pp=1), cat)
    assert (zero1.methods["full"].zero, zero1.methods["full"].tp) == (1, 1)
    assert zero1.methods["full"].params_b < free.methods["full"].params_b


def test_largest_refuses_settings_no_size_can_meet(cat):
    with pytest.raises(RequestError) as raised:
        capacity.largest(Request(gpu="h100-80gb", gpus=8, tp=3), cat)
    assert raised.value.notes[0].code == "tp_not_dividing_heads"


def test_price_is_gpus_times_hours_times_the_regional_rate(cat):
    price = capacity.price(Request(gpu="h100-80gb", gpus=8, deadline_days=14, region="jp"), cat)
    assert price.hours == 14 * 24 and price.region == "jp"
    assert price.usd_per_gpu_hour == cat.price("h100-80gb", "jp")
    assert price.cost_usd == pytest.approx(8 * 14 * 24 * cat.price("h100-80gb", "jp"))
    one_node = capacity.price(Request(gpu="h100-80gb", nodes=2), cat)
    assert one_node.gpus == 2 * cat.gpus["h100-80gb"].gpus_per_node and not one_node.hours_given


def test_price_refuses_impossible_settings(cat):
    with pytest.raises(RequestError):
        capacity.price(Request(gpu="h100-80gb", gpus=8, deadline_days=1e9), cat)


# --- a card named by its memory: made up for one question only --------------------------------------


def test_a_made_up_card_is_not_offered_to_the_next_question(cat):
    before = (set(cat.gpus), {region: dict(stock) for region, stock in cat.inventory.items()})
    for size in (12, 20, 36, 64, 256, 500):
        plan = answer(f"lora llama 13b on a {size}GB card")
        assert plan.estimate.resolved.gpu == f"gpu-{size}gb"
    assert (set(cat.gpus), {region: dict(stock) for region, stock in cat.inventory.items()}) == before
    for question in ("pretrain a 70B model on 2T tokens in 30 days", "fine-tune a 400B model in a week"):
        assert not answer(question).estimate.resolved.gpu.startswith("gpu-"), question


def test_a_made_up_card_serves_a_follow_up(cat):
    from gpuplan.bot.language.conversation import follow_up
    from gpuplan.bot.pipeline import answer_parsed

    first = answer("lora llama 13b on a 64GB card")
    again = answer_parsed(follow_up(first.request, "what about 1k context?"), "en")
    assert again.estimate.resolved.gpu == "gpu-64gb" and again.estimate.resolved.seq_len == 1024


@pytest.mark.parametrize(
    "question, gpu, base, gib",
    [
        ("8 * H20 (140GB) 部署 glm-4.5", "h20-140gb", "h20-96gb", 140),  # the H20 of 141 GB, not in the catalog
        ("4x RTX 4090 48GB lora qwen 72b", "rtx-4090-48gb", "rtx-4090-24gb", 48),  # memory modded
        ("lora qwen2.5 32b on 2x 4090 48G", "rtx-4090-48gb", "rtx-4090-24gb", 48),
        ("8*2080ti 22g 能跑 qwen 32b 吗", "rtx-2080ti-22gb", "rtx-2080ti-11gb", 22),
    ],
)
def test_a_catalog_card_written_with_other_memory_is_planned_with_it(cat, question, gpu, base, gib):
    """Planned as that card with the memory written, under an id that says the memory (the JSON's
    request.gpu), and again so in a follow-up that brings the id back."""
    from gpuplan.bot.language.conversation import follow_up
    from gpuplan.bot.pipeline import answer_parsed

    plan = answer(question)
    assert plan.estimate.resolved.gpu == gpu and plan.estimate.memory.capacity_gib == pytest.approx(gib)
    assert plan.request.gpu == gpu and gpu not in cat.gpus
    assert "gpu_memory_as_written" in [n.code for n in plan.notes]
    assert cat.gpus[base].memory_gib != pytest.approx(gib)  # the shared catalog keeps its own card
    again = answer_parsed(follow_up(plan.request, "what about 1k context?"), plan.lang)
    assert again.estimate.resolved.gpu == gpu
    assert again.estimate.memory.capacity_gib == pytest.approx(gib)
    other = answer_parsed(follow_up(plan.request, "what about H100?"), plan.lang)
    assert other.estimate.resolved.gpu == "h100-80gb" and other.estimate.memory.capacity_gib < 81


def test_a_card_written_with_its_own_memory_is_the_catalogs(cat):
    plan = answer("lora qwen 7b on an A100 80GB")
    assert plan.estimate.memory.capacity_gib == cat.gpus["a100-80gb"].memory_gib
    assert "gpu_memory_as_written" not in [n.code for n in plan.notes]


def test_memory_only_questions_in_parallel_do_not_disturb_each_other():
    errors: list[BaseException] = []

    def ask(size: int) -> None:
        try:
            for _ in range(3):
                assert answer(f"lora llama 7b on a {size}GB card").estimate.resolved.gpu == f"gpu-{size}gb"
                assert not answer("full llama 7b on 8 gpus").estimate.resolved.gpu.startswith("gpu-")
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(size,)) for size in (12, 20, 36, 64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


# --- what reaches the hardware answers, and what is refused -----------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "what is the largest model we could train on gpu=h100 gpus=8",
        "largest model 8 H100 can train",
        "现有8张A800，最大能全参微调多大的模型？",
    ],
)
def test_largest_questions_are_answered_whatever_the_classifier_says(question):
    plan = answer(question)
    assert plan.intent == "plan" and plan.largest and plan.largest.methods["lora"]


def test_a_tensor_parallel_size_read_from_text_is_dropped_not_fatal():
    plan = answer("largest model on 16 h100 with tp 3")
    assert plan.largest.methods["lora"] and "reading_dropped" in [n.code for n in plan.notes]


@pytest.mark.parametrize(
    "question, code",
    [
        ("gpu_mem=2000 how much for two weeks", "bad_gpu_memory"),
        ("gpu_mem=0.5 llama 7b lora", "bad_gpu_memory"),
        ("mbs=99999999999999 llama 70b", "too_large"),
        ("tp=3 largest model on 24 h100", "tp_not_dividing_heads"),
    ],
)
def test_impossible_settings_are_errors_that_name_them(question, code):
    with pytest.raises(QuestionError) as raised:
        answer(question)
    assert code in [n.code for n in raised.value.notes]


@pytest.mark.parametrize(
    "question",
    [
        "pretrain a 200T model",
        "fine-tune a 0.00B model",
        "0B model on 8 H100",
        "推理 lora qlora",
        "llama 70b " + "9" * 400 + " epochs",
        "llama 70b batch size " + "9" * 40,
        "Tried to allocate . GiB. GPU 0 has a total capacity of 1.2.3 GiB",
        "NCCL watchdog: ran for " + "9" * 5000 + " ms",
        "seq=4k,",
    ],
)
def test_impossible_readings_never_stop_an_answer(question):
    plan = answer(question)
    assert plan.estimate or plan.clarify or plan.diagnoses or plan.intent == "other", question
    if plan.estimate:
        assert math.isfinite(plan.estimate.compute.cost_usd)


def test_largest_serving_keeps_the_concurrency_asked_and_training_ignores_it(cat):
    """ "32 L40S ... serve with 64 concurrent users": the serving rows hold 64 sequences, the
    training rows are sized as without them (concurrency is no training micro-batch)."""
    asked = capacity.largest(Request(gpu="l40s-48gb", gpus=32, method="infer", micro_batch=64), cat)
    plain = capacity.largest(Request(gpu="l40s-48gb", gpus=32), cat)
    assert asked.methods["infer"].sequences == 64
    assert asked.methods["infer"].params_b < plain.methods["infer"].params_b
    assert asked.methods["full"].params_b == plain.methods["full"].params_b
    assert asked.pretrain_in_time.params_b == plain.pretrain_in_time.params_b


@pytest.mark.parametrize(
    "question, gpu",
    [
        ("Can I run qwen2.5 7b on i9-14900K, RTX 3090, 96GB DD5?", "rtx-3090-24gb"),  # the host's RAM
        ("能在 4090 上 lora qwen 7b 吗，系统是 96GB DDR5 内存条 4090 96G", "rtx-4090-24gb"),
    ],
)
def test_a_memory_no_card_of_that_type_has_is_not_the_cards(question, gpu):
    """Beyond what the type comes with or is modded to (half to a little over double), a memory
    written beside a card is something else's: the card keeps its own, and the answer says so."""
    plan = answer(question)
    assert plan.estimate.resolved.gpu == gpu
    assert "gpu_memory_not_the_cards" in [n.code for n in plan.notes]
    assert plan.request.gpu_memory_gib is None


@pytest.mark.parametrize(
    "question",
    [
        "I have 4 * A6000 GPUS, i.e. 192 GB VRAM in total, qlora llama 3.1 70b",
        "4张4090，每张24G，加起来也就96G显存，lora llama 3.1 8b",
    ],
)
def test_a_memory_of_all_the_cards_together_is_no_cards_own(question):
    plan = answer(question)
    assert plan.estimate.resolved.gpus == 4 and plan.estimate.memory.capacity_gib < 50


@pytest.mark.parametrize(
    "question, gpu",
    [
        ("大佬你好，用您的框架，一张48G的4090显卡可以训练吗？", "rtx-4090-48gb"),
        ("int4 下 8G显存够 lora 微调吗", "gpu-8gb"),
    ],
)
def test_a_question_back_names_the_card_a_memory_makes(question, gpu):
    """No model to plan: the answer asks for one, and its request already names the card (the JSON's
    request.gpu), which a follow-up naming the model plans on."""
    from gpuplan.bot.language.conversation import follow_up
    from gpuplan.bot.pipeline import answer_parsed

    plan = answer(question)
    assert plan.clarify and plan.request.gpu == gpu
    again = answer_parsed(follow_up(plan.request, "qwen 7b lora"), plan.lang)
    assert again.estimate.resolved.gpu == gpu


def test_a_memory_that_makes_another_catalog_card_is_that_card():
    """gpu=a100-80gb written with 40 GB is the catalog's own A100 40GB, not a copy of the 80 GB card."""
    plan = answer("gpu=a100-80gb 每卡40G显存, lora llama 13b")
    assert plan.estimate.resolved.gpu == "a100-40gb" and "gpu_memory_as_written" not in [n.code for n in plan.notes]


@pytest.mark.parametrize("question", ["8 H100 for two weeks in Tokyo, how much?", "8张H100在东京用两周多少钱？"])
def test_a_price_answer_plans_no_method(question):
    """A price is of the GPUs, whatever runs on them: the serving-by-default reading (a question in
    words naming no training) is neither stated nor kept in the request."""
    plan = answer(question)
    assert plan.price and plan.request.method is None
    assert "no_training_word_serving" not in {n.code for n in plan.notes}
