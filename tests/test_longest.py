"""Asked the longest sequence, the first line gives what the plan's GPUs hold, one sequence at a
time, beside the model's own context."""


from gpuplan.bot import render
from gpuplan.bot.pipeline import answer
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.longest import STEP
from gpuplan.estimator.schema import Request


def test_the_longest_training_sequence_fits_and_one_step_more_does_not(cat):
    plan = answer("max sequence length for qwen2.5-7b lora on one 4090?")
    v = plan.verdict
    assert v.kind == "longest" and v.model_context == 131_072 and v.longest_tokens < v.model_context
    assert v.longest_tokens % STEP == 0
    on_it = dict(model="qwen2.5-7b", method="lora", gpu="rtx-4090-24gb", gpus=1, micro_batch=1)
    at, over = (estimate(Request(**on_it, seq_len=n), cat).memory for n in (v.longest_tokens, v.longest_tokens + STEP))
    assert at.fits and not at.tight and (not over.fits or over.tight)
    assert render.headline(plan).startswith(f"Up to {v.longest_tokens:,} tokens in one sequence")


def test_serving_beyond_the_models_context_says_its_limit_and_how_many_of_that_length():
    plan = answer("what's the max context I can serve llama 3 70b with on 8 H100?")
    v = plan.verdict
    assert v.model_context == 8_192 and v.longest_tokens > v.model_context and v.at_context > 16
    said = render.headline(plan)
    assert said.startswith("Up to 8,192 tokens, the model's own limit") and f"{v.at_context:,} sequences" in said


def test_nothing_held_with_headroom_falls_back_to_the_plan():
    plan = answer("qwen2.5-72b 推理 2张A100 最长上下文多少")  # bf16 weights fill 94% of each card
    assert plan.verdict.kind != "longest"


def test_the_largest_micro_batch_fits_on_the_plans_layout_and_one_more_does_not(cat):
    plan = answer("what batch size can I use for llama 3 8b lora on one A100")
    v, r = plan.verdict, plan.estimate.resolved
    assert v.kind == "batch" and v.ckpt == "full" and 0 < v.plain_sequences < v.most_sequences
    on_it = dict(
        model="llama-3-8b", method="lora", gpu="a100-80gb", gpus=1, seq_len=r.seq_len, zero=r.zero, ckpt="full"
    )
    at, over = (estimate(Request(**on_it, micro_batch=n), cat).memory for n in (v.most_sequences, v.most_sequences + 1))
    assert at.fits and not at.tight and (not over.fits or over.tight)
    assert render.headline(plan).startswith(f"A micro-batch of up to {v.most_sequences} sequences of 2,048 tokens")


def test_a_served_batch_is_the_sequences_at_once():
    plan = answer("max batch size for serving llama 3 8b on an L40S")
    assert plan.verdict.kind == "capacity" and plan.request.full_load
