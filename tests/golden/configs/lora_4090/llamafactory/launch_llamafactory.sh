#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 8B · lora · 1 x NVIDIA GeForce RTX 4090 24GB
# Layout: tp=1 pp=1 dp=1 zero=0 offload=none ckpt=full mbs=2 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# The plan trains LoRA adapters of rank 16: your training script sets them up that way.
set -euo pipefail

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter

FORCE_TORCHRUN=1 NNODES=1 NPROC_PER_NODE=1 llamafactory-cli train \
  llamafactory_train.yaml
