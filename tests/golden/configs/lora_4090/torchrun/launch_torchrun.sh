#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 8B · lora · 1 x NVIDIA GeForce RTX 4090 24GB
# Layout: tp=1 pp=1 dp=1 zero=0 offload=none ckpt=full mbs=2 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# The plan trains LoRA adapters of rank 16: your training script sets them up that way.
# One node: NCCL finds the GPUs' own links (NVLink, NVSwitch or PCIe) by itself.
set -euo pipefail

TRAIN_SCRIPT="${TRAIN_SCRIPT:-CHANGE_ME_train.py}"  # your training script (and the arguments it needs besides the ones below)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter

torchrun \
  --standalone \
  --nproc_per_node 1 \
  "$TRAIN_SCRIPT"
