"""PyTorch FSDP through Hugging Face Accelerate: the `accelerate config` YAML and the launch line.

Keys as `accelerate config` writes them (accelerate/commands/config/cluster.py, FSDP version 1
names, which current Accelerate still reads): ZeRO-3 is FULL_SHARD, ZeRO-2 SHARD_GRAD_OP, no
ZeRO NO_SHARD; FSDP offloads parameters, gradients and optimizer state together.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gpuplan.bot.configs import common
from gpuplan.bot.configs.launch import ConfigError, Launch, decoder_layer_class
from gpuplan.bot.configs.text import CHANGE_ME, Script, Words, flag, yaml_text

STRATEGY = {3: "FULL_SHARD", 2: "SHARD_GRAD_OP", 1: "SHARD_GRAD_OP", 0: "NO_SHARD"}
CONFIG_NAME = "accelerate_fsdp.yaml"


def check(launch: Launch) -> None:
    if launch.serving:
        raise ConfigError("config_training_only", format="fsdp")
    if launch.gpus == 1:
        raise ConfigError("config_fsdp_one_gpu")
    if launch.megatron_layout:
        raise ConfigError("config_needs_megatron", format="fsdp", layout=common.layout_line(launch))
    if launch.precision == "fp8-mixed":
        raise ConfigError("config_fp8_needs_megatron", format="fsdp")
    if launch.offload in ("cpu", "nvme", "nvme-all"):  # FSDP's CPUOffload moves everything, to CPU memory only
        raise ConfigError("config_fsdp_offload", offload=launch.offload)
    common.even_nodes(launch, "fsdp")


def config_entries(launch: Launch, words: Words) -> list[tuple[str, Any, str]]:
    layer = decoder_layer_class(launch)
    offload = launch.offload == "cpu-all"
    fsdp: list[tuple[str, Any, str]] = [
        ("fsdp_version", 1, ""),
        (
            "fsdp_sharding_strategy",
            STRATEGY[launch.zero],
            words("sharding", strategy=STRATEGY[launch.zero], zero=launch.zero),
        ),
        ("fsdp_offload_params", offload, words("offload_params" if offload else "no_offload")),
        ("fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP", ""),
    ]
    if layer:
        fsdp.append(("fsdp_transformer_layer_cls_to_wrap", layer, words("wrap_class")))
    else:
        fsdp[-1] = ("fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP", words("wrap_default"))
    fsdp += [
        ("fsdp_activation_checkpointing", launch.ckpt != "none", words("gradient_checkpointing", ckpt=launch.ckpt)),
        ("fsdp_backward_prefetch", "BACKWARD_PRE", ""),
        ("fsdp_forward_prefetch", False, ""),
        ("fsdp_state_dict_type", "SHARDED_STATE_DICT", ""),
        ("fsdp_cpu_ram_efficient_loading", True, ""),
        ("fsdp_sync_module_states", True, ""),
        # PEFT's FSDP guide: use_orig_params must be false for adapters to save GPU memory
        ("fsdp_use_orig_params", not launch.adapters, words("orig_params_adapters") if launch.adapters else ""),
    ]
    return [
        ("compute_environment", "LOCAL_MACHINE", ""),
        ("distributed_type", "FSDP", ""),
        ("mixed_precision", common.PRECISION_WORD.get(launch.precision, "no"), words("mixed_precision")),
        ("downcast_bf16", "no", ""),
        ("fsdp_config", fsdp, ""),
        ("machine_rank", 0, words("machine_rank") if launch.nodes > 1 else ""),
        (
            "main_process_ip",
            CHANGE_ME if launch.nodes > 1 else "127.0.0.1",
            words("main_process_ip") if launch.nodes > 1 else "",
        ),
        ("main_process_port", 29500, ""),
        ("main_training_function", "main", ""),
        ("num_machines", launch.nodes, words("num_machines")),
        ("num_processes", launch.gpus, words("num_processes")),
        ("rdzv_backend", "static", ""),
        ("same_network", True, ""),
        ("use_cpu", False, ""),
    ]


def files(launch: Launch, words: Words) -> dict[str, str]:
    check(launch)
    extra = [words("header_run_all")] if launch.nodes > 1 else []
    extra += [words("header_trainer_args"), *common.loss_note(launch, words), *common.fabric_note(launch, words)]
    if launch.ckpt == "selective":
        extra.append(words("header_selective"))
    if launch.optimizer == "paged-adamw8bit":
        extra.append(words("header_fsdp_paged_optim"))
    script = Script(common.header(launch, words, *extra))
    script.variables = [*common.rendezvous(launch, words), common.train_script(words)]
    script.exports = common.nccl_exports(launch, words)
    command = ["accelerate launch", flag("--config_file", CONFIG_NAME)]
    if launch.nodes > 1:
        command += [
            flag("--machine_rank", "$NODE_RANK"),
            flag("--main_process_ip", "$MASTER_ADDR"),
            flag("--main_process_port", "$MASTER_PORT"),
        ]
    command += ['"$TRAIN_SCRIPT"', *common.trainer_args(_saveable_optimizer(launch), checkpointing=False)]
    script.commands = [command]
    return {
        CONFIG_NAME: yaml_text(common.header(launch, words), config_entries(launch, words)),
        "launch_accelerate.sh": script.text(),
    }


def _saveable_optimizer(launch: Launch) -> Launch:
    """Paged 8-bit AdamW fails to save a checkpoint under FSDP with QLoRA (PEFT's FSDP guide, known
    issues); plain 8-bit AdamW keeps the plan's optimizer state size."""
    if launch.optimizer != "paged-adamw8bit":
        return launch
    return dataclasses.replace(launch, optimizer="adamw8bit")
