"""LLaMA-Factory: the training YAML `llamafactory-cli train` reads, the DeepSpeed file it points
to, and the launch line (its FORCE_TORCHRUN / NNODES / NPROC_PER_NODE environment). Key names as
in LLaMA-Factory's examples/train_lora/*.yaml and src/llamafactory/hparams/."""

from __future__ import annotations

from typing import Any

from gpuplan.bot.configs import common, deepspeed
from gpuplan.bot.configs.launch import Launch, chat_template, decoder_layer_class, uses_liger
from gpuplan.bot.configs.text import CHANGE_ME, Script, Words, flag, json_text, yaml_text
from gpuplan.bot.render import human

CONFIG_NAME = "llamafactory_train.yaml"
STAGE = {"full": "sft", "lora": "sft", "qlora": "sft", "continue": "pt", "pretrain": "pt", "dpo": "dpo", "ppo": "ppo"}
# LLaMA-Factory's example learning rates (examples/train_lora/llama3_lora_sft.yaml: 1.0e-4;
# examples/train_full/llama3_full_sft.yaml: 1.0e-5), not a gpuplan figure
EXAMPLE_LR = {True: 1.0e-4, False: 1.0e-5}


def check(launch: Launch) -> None:
    deepspeed.check(launch, "llamafactory")


def config_entries(launch: Launch, words: Words) -> list[tuple[str, Any, str]]:
    model = launch.hf_id or f"{CHANGE_ME}/{launch.model_name.replace(' ', '-')}"
    entries: list[tuple[str, Any, str]] = [("model_name_or_path", model, "" if launch.hf_id else words("model_path"))]
    if launch.spec is not None and decoder_layer_class(launch) is None:  # the model ships its own code
        entries.append(("trust_remote_code", True, words("trust_remote_code")))
    entries += [
        ("stage", STAGE[launch.method], ""),
        ("do_train", True, ""),
        ("finetuning_type", "lora" if launch.adapters else "full", ""),
    ]
    if launch.adapters:
        entries += [
            ("lora_rank", launch.lora_rank, words("lora_rank")),
            lora_target(launch, words),
        ]
    if launch.method == "qlora":
        entries += [("quantization_bit", 4, words("quantization_bit")), ("quantization_method", "bitsandbytes", "")]
    if launch.method == "ppo":
        entries.append(("reward_model", f"{CHANGE_ME}/reward-model", words("reward_model")))
    if launch.zero > 0:
        entries.append(("deepspeed", deepspeed.config_name(launch), words("deepspeed_file")))
    template = chat_template(launch)
    entries += [
        ("dataset", f"{CHANGE_ME}_dataset", words("dataset")),
        ("template", template or f"{CHANGE_ME}_template", words("template" if template else "template_unknown")),
        ("cutoff_len", launch.seq_len, words("cutoff_len")),
        ("output_dir", f"saves/{CHANGE_ME}", words("output_dir")),
        ("logging_steps", 10, words("logging_steps")),
        _save_steps(launch, words),
        ("per_device_train_batch_size", launch.micro_batch, words("micro_batch")),
        ("gradient_accumulation_steps", launch.grad_accum, _accum_words(launch, words)),
        ("learning_rate", EXAMPLE_LR[launch.adapters], words("learning_rate_example", method=launch.method)),
        _max_steps(launch, words),
    ]
    word = common.PRECISION_WORD.get(launch.precision)
    if word in ("bf16", "fp16"):
        entries.append((word, True, words(word)))
    entries.append(
        ("disable_gradient_checkpointing", launch.ckpt == "none", words("gradient_checkpointing", ckpt=launch.ckpt))
    )
    if launch.optimizer in common.HF_OPTIM:
        entries.append(("optim", common.HF_OPTIM[launch.optimizer], words("optimizer", optimizer=launch.optimizer)))
    if uses_liger(launch):
        entries.append(("enable_liger_kernel", True, words("enable_liger_kernel")))
    return entries


# attention projections by their transformers names: a MoE model's adapters stay off the routed
# experts (as the plan counts them), which "all" would reach where experts are Linear modules
ATTENTION = "q_proj,k_proj,v_proj,o_proj"
MLA_ATTENTION = "q_a_proj,q_b_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj"


def lora_target(launch: Launch, words: Words) -> tuple[str, Any, str]:
    if launch.shape.experts <= 1:
        return ("lora_target", "all", words("lora_target"))
    mla = launch.shape.mla
    names = MLA_ATTENTION if mla else ATTENTION
    if mla and not mla.q_lora_rank:
        names = names.replace("q_a_proj,q_b_proj", "q_proj")
    return ("lora_target", names, words("lora_target_moe"))


def _accum_words(launch: Launch, words: Words) -> str:
    return words(
        "grad_accum", micro=launch.micro_batch, accum=launch.grad_accum, dp=launch.dp, global_batch=launch.global_batch
    )


def _save_steps(launch: Launch, words: Words) -> tuple[str, Any, str]:
    if launch.save_every_steps and launch.checkpoint_minutes:
        minutes = round(launch.checkpoint_minutes)
        return ("save_steps", launch.save_every_steps, words("save_steps", minutes=minutes))
    return ("save_steps", 500, words("save_steps_default"))


def _max_steps(launch: Launch, words: Words) -> tuple[str, Any, str]:
    note = words(
        "max_steps",
        tokens=human(launch.train_tokens, words.lang),
        steps=launch.train_steps,
        global_batch=launch.global_batch,
        seq=launch.seq_len,
    )
    return ("max_steps", launch.train_steps, note)


def files(launch: Launch, words: Words) -> dict[str, str]:
    check(launch)
    out = {
        CONFIG_NAME: yaml_text(
            common.header(launch, words, *common.loss_note(launch, words)), config_entries(launch, words)
        )
    }
    if launch.zero > 0:
        out[deepspeed.config_name(launch)] = json_text(deepspeed.config(launch))
    extra = [words("header_run_all")] if launch.nodes > 1 else []
    if launch.ckpt == "selective":
        extra.append(words("header_selective"))
    script = Script(common.header(launch, words, *extra))
    script.variables = common.rendezvous(launch, words)
    script.exports = common.nccl_exports(launch, words)
    env = ["FORCE_TORCHRUN=1", f"NNODES={launch.nodes}", f"NPROC_PER_NODE={launch.per_node}"]
    if launch.nodes > 1:
        env += ["NODE_RANK=$NODE_RANK", "MASTER_ADDR=$MASTER_ADDR", "MASTER_PORT=$MASTER_PORT"]
    script.commands = [[" ".join([*env, "llamafactory-cli train"]), flag(CONFIG_NAME)]]
    out["launch_llamafactory.sh"] = script.text()
    return out
