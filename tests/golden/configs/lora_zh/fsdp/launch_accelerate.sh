#!/usr/bin/env bash
# gpuplan 方案：Qwen2.5 14B · lora · 4 x NVIDIA A100 SXM4 80GB
# 并行布局：tp=1 pp=1 dp=4 zero=3 offload=none ckpt=none mbs=4 gbs=64 seq=2048
# 所有数值都来自方案；CHANGE_ME 标出方案不决定的内容（路径、地址、数据）。
# 方案训练秩为 16 的 LoRA 适配器：训练脚本需按此设置。
# 脚本后面的参数是 Hugging Face Trainer 的参数；如果是你自己的脚本，要么支持它们，要么删掉。
# 方案的显存按不保留整段序列 logits 的损失计算：已为这个模型打开 Liger 的融合交叉熵（需 pip install liger-kernel）。
# 单节点：NCCL 会自动使用 GPU 之间的互联（NVLink、NVSwitch 或 PCIe）。
set -euo pipefail

TRAIN_SCRIPT="${TRAIN_SCRIPT:-CHANGE_ME_train.py}"  # 你的训练脚本（以及下面这些之外它还需要的参数）

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # 只打印 NCCL 的警告

accelerate launch \
  --config_file accelerate_fsdp.yaml \
  "$TRAIN_SCRIPT" \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 4 \
  --bf16 true \
  --use_liger_kernel true
