"""A training framework's memory habits (knowledge/frameworks.yaml) against hand-worked numbers, the
setting and reading that name one, and the answer that says whose habits the memory follows."""

import pytest

from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.language.parser import parse
from gpuplan.bot.pipeline import answer
from gpuplan.estimator.architecture import from_spec
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.memory import OFFLOAD_CODE, Job, Layout, Overheads, training_memory
from gpuplan.estimator.schema import Request

NO_OVERHEAD = Overheads(0.0, 0.0, 0.0)
# Llama 3.1 70B: embeddings and head 128,256 x 8,192 each; a decoder layer 8,192 x (8,192 x 2 + 1,024 x 2)
# attention + 3 x 8,192 x 28,672 MLP + 2 x 8,192 norms; the final norm 8,192
EMBED = HEAD = 128_256 * 8_192
LAYER = 8_192 * (2 * 8_192 + 2 * 1_024) + 3 * 8_192 * 28_672 + 2 * 8_192
NORM = 8_192


def _70b_offloaded(cat, **habits) -> dict:
    """Llama 3.1 70B full fine-tune, ZeRO-3 with parameter offload on 8 GPUs (torchtune's README run)."""
    a = from_spec(cat.models["llama-3.1-70b"])
    job = Job(a, "full", "bf16-mixed", "adamw", 2048, **habits)
    layout = Layout(8, zero=3, offload=OFFLOAD_CODE["cpu-all"], ckpt=2, micro_batch=2)
    return {k: float(v) for k, v in training_memory(job, layout, NO_OVERHEAD).items()}


def test_embeddings_and_head_in_the_root_unit_or_apart(cat):
    """Root unit (Accelerate's auto-wrap): embeddings, head and final norm gathered in 16-bit for the
    whole step plus two layers, their gradients unsharded beside one layer's. Apart (torchtune's
    custom_sharded_layers): the final norm alone in the root, a layer beside the largest unit (the
    head), and the head's gradient is the largest held unsharded."""
    root, apart = _70b_offloaded(cat), _70b_offloaded(cat, fsdp_ends="apart")
    assert root["weights"] == pytest.approx((EMBED + HEAD + NORM) * 2 + 2 * LAYER * 2)
    assert apart["weights"] == pytest.approx(NORM * 2 + (LAYER + HEAD) * 2)
    assert root["gradients"] == pytest.approx((EMBED + HEAD + NORM + LAYER) * 2)
    assert apart["gradients"] == pytest.approx((NORM + HEAD) * 2)
    assert root["activations"] == apart["activations"]


def test_a_loop_that_keeps_its_logits_holds_4_bytes_more_per_logit(cat):
    """Answer.AI's train.py: the output's fp32 logits live through loss.backward(), 10 x 2,048 x
    32,000 logits x 4 bytes beside Transformers' loss (Llama-2 7B, LoRA, batch 10)."""
    a = from_spec(cat.models["llama-2-7b"])
    layout = Layout(2, zero=3, ckpt=2, micro_batch=10)

    def activations(**habits) -> float:
        job = Job(a, "lora", "bf16", "adamw", 2048, lora_rank=64, loss="unchunked", **habits)
        return float(training_memory(job, layout, NO_OVERHEAD)["activations"])

    assert activations(keeps_logits=True) - activations() == pytest.approx(10 * 2048 * 32_000 * 4)


def test_unsloths_loss_holds_the_16_bit_logits_alone(cat):
    """Unsloth writes the gradient over the bf16 logits: 2 bytes a logit against the chunked 2 + 8/8."""
    a = from_spec(cat.models["llama-3-8b"])

    def activations(loss: str) -> float:
        job = Job(a, "lora", "bf16-mixed", "adamw", 2048, loss=loss)
        return float(training_memory(job, Layout(1, ckpt=2), NO_OVERHEAD)["activations"])

    assert activations("chunked") - activations("inplace") == pytest.approx(2048 * 128_256 * 1)


def test_megatron_core_keeps_its_habits_with_data_parallelism_alone(cat):
    """Megatron-Core on one GPU: fp32 gradients (4 bytes, not 2) and its fp32 loss (6 bytes a logit);
    without checkpointing no recomputed layer outgrows the loss's peak."""
    a = from_spec(cat.models["llama-2-7b"])

    def parts(**habits) -> dict:
        job = Job(a, "full", "bf16-mixed", "adamw", 4096, **habits)
        return {k: float(v) for k, v in training_memory(job, Layout(1, ckpt=0), NO_OVERHEAD).items()}

    plain, megatron = parts(), parts(megatron_core=True)
    assert megatron["gradients"] - plain["gradients"] == pytest.approx(a.params * 2)
    assert megatron["activations"] - plain["activations"] == pytest.approx(4096 * 32_000 * (6 - 3))


def _torchtune_70b(**fields) -> Request:
    return Request(
        model="llama-3.1-70b",
        method="full",
        gpu="a100-80gb",
        gpus=8,
        tp=1,
        zero=3,
        offload="cpu-all",
        micro_batch=2,
        seq_len=2048,
        ckpt="full",
        **fields,
    )


def test_the_framework_named_sets_the_habits_and_the_answer_says_so():
    """torchtune's README run: 21.2 GiB as the root unit holds the ends, 13.6 as torchtune shards them."""
    default, torchtune = estimate(_torchtune_70b()), estimate(_torchtune_70b(framework="torchtune"))
    assert default.memory.per_gpu_gib == pytest.approx(21.2, abs=0.05)
    assert torchtune.memory.per_gpu_gib == pytest.approx(13.6, abs=0.1)
    codes = {a.code for a in default.assumptions}
    assert "framework_habits" not in codes and "activation_conventions" in codes
    note = next(a for a in torchtune.assumptions if a.code == "framework_habits")
    assert note.params["framework"] == "torchtune" and note.params["apart"] and note.params["loss"] == "chunked"
    assert next(a for a in torchtune.assumptions if a.code == "sharded_gathers").params["apart"]


def test_only_the_habits_a_framework_has_are_said():
    """DeepSpeed says nothing of the loss: the default's is stated as ever; Megatron-Core's loss
    replaces it, with data parallelism alone too."""
    deepspeed = {a.code for a in estimate(_torchtune_70b(framework="deepspeed")).assumptions}
    assert {"framework_habits", "activation_conventions"} <= deepspeed
    megatron = estimate(
        Request(model="llama-3-8b", method="full", gpu="h100-80gb", gpus=8, tp=1, pp=1, framework="megatron")
    )
    codes = [a.code for a in megatron.assumptions]
    assert "framework_habits" in codes and "activation_conventions" not in codes


def test_a_loss_asked_for_comes_before_the_frameworks():
    est = estimate(_torchtune_70b(framework="torchtune", loss="unchunked"))
    note = next(a for a in est.assumptions if a.code == "framework_habits")
    assert note.params["loss"] == "unchunked" and est.resolved.loss == "unchunked"


@pytest.mark.parametrize(
    "question, words",
    [
        (
            "lora model=llama-2-7b gpu=rtx-4090 gpus=2 tp=1 zero=3 offload=cpu-all seq=2048 mbs=10 ckpt=full "
            "lora_r=64 precision=bf16 optim=adamw framework=answerai-fsdp-qlora",
            ["Answer.AI fsdp_qlora's habits", "2.4 GiB of it the model's fp32 logits"],
        ),
        (
            "用Answer.AI的fsdp_qlora在两张4090上lora微调llama-2-7b, seq=2048 mbs=10 zero=3 offload=cpu-all tp=1 "
            "ckpt=full lora_r=64 precision=bf16",
            ["按 Answer.AI fsdp_qlora 的做法估算", "2.4 GiB 是模型输出的 fp32 logits"],
        ),
        (
            "full model=llama-3.1-70b gpu=a100-80gb gpus=8 tp=1 zero=3 offload=cpu-all mbs=2 seq=2048 ckpt=full "
            "framework=torchtune",
            ["torchtune's habits", "sharded as units of their own", "only while they run, as units of their own"],
        ),
        (
            "用torchtune全参微调llama-3.1-70b，8张a100-80gb，gpus=8 tp=1 zero=3 offload=cpu-all mbs=2 seq=2048 "
            "ckpt=full",
            ["按 torchtune 的做法估算", "作为独立单元分片", "作为独立单元只在用到时聚合"],
        ),
    ],
)
def test_the_answer_names_whose_habits_in_both_languages(question, words):
    said = " ".join(plan_json(answer(question))["assumptions"])
    for word in words:
        assert word in said


@pytest.mark.parametrize(
    "setting, framework",
    [
        ("framework=torchtune", "torchtune"),
        ("framework=LLaMA-Factory", "llama-factory"),
        ("framework=megatron-lm", "megatron"),
    ],
)
def test_the_setting_takes_an_id_or_a_name(setting, framework):
    assert parse(f"70b lora {setting}").request.framework == framework


def test_a_framework_the_catalog_lacks_is_refused_by_name():
    parsed = parse("70b lora framework=colossalai")
    assert [e.code for e in parsed.errors] == ["bad_value"]
