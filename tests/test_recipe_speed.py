"""A framework whose published performance recipes set the step rate (knowledge/frameworks.yaml
recipe_speed): NVIDIA NeMo and Megatron-Bridge, read from the question and fitted on the calibration
split's fit cases."""

import statistics

import numpy as np
import pytest
from test_calibration_data import CASES, ratios

from gpuplan.bot.language.parser import parse
from gpuplan.bot.pipeline import answer
from gpuplan.bot.render import text_answer, ticket
from gpuplan.estimator.architecture import from_spec
from gpuplan.estimator.compute import hardware_for, kernel_time
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.memory import Job, Layout
from gpuplan.estimator.network import links_for_types
from gpuplan.estimator.schema import Request
from gpuplan.knowledge import catalog

SPEED = float(catalog().frameworks["nemo"].recipe_speed.value)


@pytest.mark.parametrize(
    "text, framework",
    [
        ("full fine-tune llama 3 70b with nemo on 64 h100", "nemo"),
        ("pretrain llama 3 8b with Megatron-Bridge on 8 h100", "nemo"),
        ("用 NeMo 在 8 张 H100 上预训练 llama 3.1 8b", "nemo"),
        ("pretrain llama 3 70b with Megatron-LM on 64 h100", "megatron"),
        ("full fine-tune llama 3 8b with megatron on 8 h100", "megatron"),
        # a model and NeMo's other products are not the training framework
        ("lora fine-tune mistral-nemo 12b on 2 4090", None),
        ("Mistral NeMo 12B lora on one 4090", None),
        ("sft llama 3.1 8b with NeMo AutoModel on 8 h100", None),
        ("grpo qwen2.5 7b with nemo-rl on 8 h100", None),
    ],
)
def test_framework_read_from_the_question(text, framework):
    assert parse(text).request.framework == framework


LAYOUT = dict(
    model="llama-3.1-8b",
    method="pretrain",
    gpu="h100-80gb",
    gpus=8,
    seq_len=8192,
    global_batch=128,
    micro_batch=1,
    tp=1,
    pp=1,
    zero=1,
    ckpt="none",
    train_tokens=1e12,
)


def test_recipes_run_the_same_layout_faster_by_at_most_their_speed():
    plain = estimate(Request(**LAYOUT, framework="megatron"))  # Megatron-Core's memory habits as well
    tuned = estimate(Request(**LAYOUT, framework="nemo"))
    assert tuned.memory.per_gpu_gib == plain.memory.per_gpu_gib
    faster = tuned.compute.tokens_per_s_per_gpu / plain.compute.tokens_per_s_per_gpu
    # the kernels' share of the step grows by the recipe speed; what waits on the network does not shrink
    assert 1.3 < faster <= SPEED + 1e-9


def test_the_answer_says_whose_recipes_set_the_pace():
    tuned = {n.code: n.params for n in estimate(Request(**LAYOUT, framework="nemo")).assumptions}
    plain = {n.code: n.params for n in estimate(Request(**LAYOUT, framework="megatron")).assumptions}
    assert tuned["recipe_speed"] == {"framework": "NVIDIA NeMo / Megatron-Bridge", "speed": SPEED}
    assert "recipe_speed" not in plain and "mfu_model" in plain


@pytest.mark.parametrize("lang, words", [("en", "published performance recipes"), ("zh", "官方公布的性能配方")])
def test_the_pace_is_among_the_few_assumptions_shown(lang, words):
    """It changes the time by up to the fitted recipe_speed (1.35x): the default answer and a ticket's reply say it."""
    question = "how long to pretrain llama 3 8b on 1T tokens with 64 H100 using NeMo"
    plan = answer(question, lang=lang)
    assert words in text_answer(plan)
    assert words in ticket(plan, question)[0]


def test_no_step_takes_less_than_its_kernels(cat):
    """However fast a recipe, a step's kernels take their own time: their share of the step stops at
    1 (H100's step_share 0.60 reaches it at a speed of 1 / 0.60)."""
    gpu, share = cat.gpus["h100-80gb"], float(cat.kernels.generations["hopper"].step_share.value)
    job = Job(from_spec(cat.models["llama-2-7b"]), "full", "bf16-mixed", "adamw", 2048)
    lay = Layout(gpus=8, zero=1, micro_batches=8)
    links = links_for_types([gpu], [cat.fabrics["ib-ndr400"]], 0.8)

    def kernels_at(speed: float) -> float:
        hw = hardware_for([gpu], "full", "bf16-mixed", cat, links, recipe_speed=speed)
        return float(np.asarray(kernel_time(job, hw, lay, cat.defaults).compute).ravel()[0])

    assert kernels_at(10.0) == kernels_at(1 / share) == pytest.approx(kernels_at(1.0) * share, rel=1e-12)


def test_recipe_speed_is_what_the_fit_split_gives():
    """bench/fit_recipe_speed.py fits the value that puts the median speed ratio of the fit cases
    naming NeMo at 1; a change to the time model that moves them calls for a refit."""
    fit = [case for case in CASES if case["layout"].get("framework") == "nemo" and case["split"] == "fit"]
    assert len(fit) >= 25
    median = statistics.median(r for _, r in ratios(fit) if isinstance(r, float))
    assert 0.97 <= median <= 1.03
