#!/usr/bin/env bash
# gpuplan 方案：Qwen2.5 14B · lora · 4 x NVIDIA A100 SXM4 80GB
# 并行布局：tp=1 pp=1 dp=4 zero=3 offload=none ckpt=none mbs=4 gbs=64 seq=2048
# 所有数值都来自方案；CHANGE_ME 标出方案不决定的内容（路径、地址、数据）。
# 方案训练秩为 16 的 LoRA 适配器：训练脚本需按此设置。
# 单节点：NCCL 会自动使用 GPU 之间的互联（NVLink、NVSwitch 或 PCIe）。
set -euo pipefail

TRAIN_SCRIPT="${TRAIN_SCRIPT:-CHANGE_ME_train.py}"  # 你的训练脚本（以及下面这些之外它还需要的参数）

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # 只打印 NCCL 的警告

torchrun \
  --standalone \
  --nproc_per_node 4 \
  "$TRAIN_SCRIPT"
