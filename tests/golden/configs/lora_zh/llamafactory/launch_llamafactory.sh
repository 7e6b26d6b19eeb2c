#!/usr/bin/env bash
# gpuplan 方案：Qwen2.5 14B · lora · 4 x NVIDIA A100 SXM4 80GB
# 并行布局：tp=1 pp=1 dp=4 zero=3 offload=none ckpt=none mbs=4 gbs=64 seq=2048
# 所有数值都来自方案；CHANGE_ME 标出方案不决定的内容（路径、地址、数据）。
# 方案训练秩为 16 的 LoRA 适配器：训练脚本需按此设置。
set -euo pipefail

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # 只打印 NCCL 的警告

FORCE_TORCHRUN=1 NNODES=1 NPROC_PER_NODE=4 llamafactory-cli train \
  llamafactory_train.yaml
