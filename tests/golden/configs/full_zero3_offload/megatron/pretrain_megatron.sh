#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 70B · full · 8 x NVIDIA A100 SXM4 80GB
# Layout: tp=1 pp=1 dp=8 zero=3 offload=cpu ckpt=selective mbs=1 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# One node: NCCL finds the GPUs' own links (NVLink, NVSwitch or PCIe) by itself.
# The model shape below is Llama 3.1 70B's published config; check it against the checkpoint you start from.
set -euo pipefail

MEGATRON_DIR="${MEGATRON_DIR:-/CHANGE_ME/Megatron-LM}"  # your Megatron-LM checkout
DATA_PATH="${DATA_PATH:-/CHANGE_ME/dataset_text_document}"  # your tokenized dataset (Megatron's indexed .bin/.idx prefix)
CHECKPOINT_DIR="${CHECKPOINT_DIR:-/CHANGE_ME/checkpoints}"  # where checkpoints are written and resumed from
LR="${LR:-CHANGE_ME}"  # not sized by gpuplan: choose your own
PRETRAINED_CHECKPOINT="${PRETRAINED_CHECKPOINT:-/CHANGE_ME/megatron-checkpoint}"  # the model's weights converted to Megatron's format (Megatron-Bridge or Megatron-LM's checkpoint converter)
ROPE_THETA="${ROPE_THETA:-CHANGE_ME}"  # rope_theta from the model's config.json (Megatron's default is 10000)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter

torchrun \
  --standalone \
  --nproc_per_node 8 \
  "$MEGATRON_DIR/pretrain_gpt.py" \
  --tensor-model-parallel-size 1 \
  --pipeline-model-parallel-size 1 \
  --use-distributed-optimizer \
  --use-megatron-fsdp \
  --data-parallel-sharding-strategy optim_grads_params \
  --ckpt-format fsdp_dtensor \
  --overlap-grad-reduce \
  --overlap-param-gather \
  --optimizer-cpu-offload \
  --use-precision-aware-optimizer \
  --micro-batch-size 1 \
  --global-batch-size 64 \
  --seq-length 2048 \
  --recompute-granularity selective \
  --bf16 \
  --num-layers 80 \
  --hidden-size 8192 \
  --ffn-hidden-size 28672 \
  --num-attention-heads 64 \
  --max-position-embeddings 131072 \
  --group-query-attention \
  --num-query-groups 8 \
  --swiglu \
  --normalization RMSNorm \
  --position-embedding-type rope \
  --rotary-base $ROPE_THETA \
  --untie-embeddings-and-output-weights \
  --disable-bias-linear \
  --train-iters 763 \
  --save-interval 763 \
  --eval-iters 0 \
  --lr $LR \
  --data-path $DATA_PATH \
  --tokenizer-type HuggingFaceTokenizer \
  --tokenizer-model meta-llama/Llama-3.1-70B \
  --save $CHECKPOINT_DIR \
  --load $CHECKPOINT_DIR \
  --log-interval 10 \
  --pretrained-checkpoint $PRETRAINED_CHECKPOINT
