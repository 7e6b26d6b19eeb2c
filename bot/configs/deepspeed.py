"""DeepSpeed: the config JSON (ZeRO stage, offload, precision, batch) and the deepspeed launch line.

Keys as DeepSpeed's config documents them (deepspeed.ai/docs/config-json): the batch triple must
agree (train_batch_size = micro-batch x accumulation x data-parallel GPUs), which DeepSpeed checks.
Activation checkpointing is the training script's switch (--gradient_checkpointing), not this file's.
"""

from __future__ import annotations

from typing import Any

from gpuplan.bot.configs import common
from gpuplan.bot.configs.launch import ConfigError, Launch
from gpuplan.bot.configs.text import CHANGE_ME, Script, Words, flag, json_text

OFFLOAD_DEVICE = {"cpu": "cpu", "cpu-all": "cpu", "nvme": "nvme", "nvme-all": "nvme"}


def check(launch: Launch, fmt: str = "deepspeed") -> None:
    """DeepSpeed's own engine shards data-parallel ranks only; model parallelism needs Megatron."""
    if launch.serving:
        raise ConfigError("config_training_only", format=fmt)
    if launch.megatron_layout:
        raise ConfigError("config_needs_megatron", format=fmt, layout=common.layout_line(launch))
    if launch.precision == "fp8-mixed":
        raise ConfigError("config_fp8_needs_megatron", format=fmt)
    if launch.offload.startswith("nvme") and launch.zero < 3:  # ZeRO-Infinity's NVMe tier is stage 3 only
        raise ConfigError("config_nvme_needs_zero3", zero=launch.zero)
    common.even_nodes(launch, fmt)


def config_name(launch: Launch) -> str:
    """LLaMA-Factory's naming (ds_z3_offload_config.json): the stage and offload show in the name."""
    offload = "_offload" if launch.offload != "none" else ""
    return f"ds_z{launch.zero}{offload}_config.json"


def config(launch: Launch) -> dict[str, Any]:
    out: dict[str, Any] = {
        "train_batch_size": launch.micro_batch * launch.grad_accum * launch.dp,
        "train_micro_batch_size_per_gpu": launch.micro_batch,
        "gradient_accumulation_steps": launch.grad_accum,
    }
    word = common.PRECISION_WORD.get(launch.precision)
    if word in ("bf16", "fp16"):
        out[word] = {"enabled": True}
    out["zero_optimization"] = _zero(launch)
    return out


def _zero(launch: Launch) -> dict[str, Any]:
    # overlap_comm: the plan's step time hides data-parallel communication behind the backward pass
    zero: dict[str, Any] = {"stage": launch.zero, "overlap_comm": True, "contiguous_gradients": True}
    device = OFFLOAD_DEVICE.get(launch.offload)
    if device:
        zero["offload_optimizer"] = _device(device)
    if launch.offload in ("cpu-all", "nvme-all"):
        zero["offload_param"] = _device(device)
    if launch.zero == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    return zero


def _device(device: str) -> dict[str, Any]:
    out: dict[str, Any] = {"device": device, "pin_memory": True}
    if device == "nvme":
        out["nvme_path"] = f"/{CHANGE_ME}/local_nvme"
    return out


def files(launch: Launch, words: Words) -> dict[str, str]:
    check(launch)
    name = config_name(launch)
    out = {name: json_text(config(launch))}
    extra = [words("header_run_once")] if launch.nodes > 1 else []
    extra += [words("header_trainer_args"), *common.loss_note(launch, words), *common.fabric_note(launch, words)]
    if launch.ckpt == "selective":
        extra.append(words("header_selective"))
    script = Script(common.header(launch, words, *extra))
    script.variables = [*common.rendezvous(launch, words, node_rank=False), common.train_script(words)]
    script.exports = common.nccl_exports(launch, words)
    command = ["deepspeed", flag("--num_nodes", launch.nodes), flag("--num_gpus", launch.per_node)]
    if launch.nodes > 1:
        command += [
            flag("--hostfile", "hostfile"),
            flag("--master_addr", "$MASTER_ADDR"),
            flag("--master_port", "$MASTER_PORT"),
        ]
        out["hostfile"] = hostfile(launch, words)
    command += ['"$TRAIN_SCRIPT"', flag("--deepspeed", name), *common.trainer_args(launch)]
    script.commands = [command]
    out["launch_deepspeed.sh"] = script.text()
    return out


def hostfile(launch: Launch, words: Words) -> str:
    lines = [f"# {words('hostfile')}"]
    lines += [f"{CHANGE_ME}-node-{i + 1} slots={launch.per_node}" for i in range(launch.nodes)]
    return "\n".join(lines) + "\n"
