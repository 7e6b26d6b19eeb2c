#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 70B · full · 8 x NVIDIA A100 SXM4 80GB
# Layout: tp=1 pp=1 dp=8 zero=3 offload=cpu ckpt=selective mbs=1 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# One node: NCCL finds the GPUs' own links (NVLink, NVSwitch or PCIe) by itself.
set -euo pipefail

TRAIN_SCRIPT="${TRAIN_SCRIPT:-CHANGE_ME_train.py}"  # your training script (and the arguments it needs besides the ones below)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter

torchrun \
  --standalone \
  --nproc_per_node 8 \
  "$TRAIN_SCRIPT"
