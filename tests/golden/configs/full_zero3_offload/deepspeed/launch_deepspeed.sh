#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 70B · full · 8 x NVIDIA A100 SXM4 80GB
# Layout: tp=1 pp=1 dp=8 zero=3 offload=cpu ckpt=selective mbs=1 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# The arguments after the script are Hugging Face Trainer arguments; a script of your own must accept them or drop them.
# The plan's memory counts a loss that never holds the whole sequence's logits: Liger's fused cross-entropy is switched on for this model (pip install liger-kernel).
# One node: NCCL finds the GPUs' own links (NVLink, NVSwitch or PCIe) by itself.
# The plan recomputes selected activations (Megatron's selective checkpointing); this tool only recomputes whole layers, which needs no more memory but runs slower than the plan's time.
set -euo pipefail

TRAIN_SCRIPT="${TRAIN_SCRIPT:-CHANGE_ME_train.py}"  # your training script (and the arguments it needs besides the ones below)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter

deepspeed \
  --num_nodes 1 \
  --num_gpus 8 \
  "$TRAIN_SCRIPT" \
  --deepspeed ds_z3_offload_config.json \
  --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 8 \
  --bf16 true \
  --gradient_checkpointing true \
  --use_liger_kernel true
