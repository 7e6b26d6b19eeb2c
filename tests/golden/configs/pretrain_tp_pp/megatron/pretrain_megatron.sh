#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 70B · pretrain · 64 x NVIDIA H100 SXM5 80GB (8 nodes x 8)
# Layout: tp=8 pp=2 dp=4 zero=2 offload=none ckpt=none mbs=4 gbs=4096 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# Run this script on every node; the rendezvous at node 0 numbers the nodes.
# The model shape below is Llama 3.1 70B's published config; check it against the checkpoint you start from.
set -euo pipefail

MASTER_ADDR="${MASTER_ADDR:-CHANGE_ME}"  # address of node 0, reachable from every node
MASTER_PORT="${MASTER_PORT:-29500}"  # a free TCP port on node 0
MEGATRON_DIR="${MEGATRON_DIR:-/CHANGE_ME/Megatron-LM}"  # your Megatron-LM checkout
DATA_PATH="${DATA_PATH:-/CHANGE_ME/dataset_text_document}"  # your tokenized dataset (Megatron's indexed .bin/.idx prefix)
CHECKPOINT_DIR="${CHECKPOINT_DIR:-/CHANGE_ME/checkpoints}"  # where checkpoints are written and resumed from
LR="${LR:-CHANGE_ME}"  # not sized by gpuplan: choose your own
ROPE_THETA="${ROPE_THETA:-CHANGE_ME}"  # rope_theta from the model's config.json (Megatron's default is 10000)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter
export NCCL_IB_HCA="${NCCL_IB_HCA:-mlx5}"  # the RDMA adapters to use (ibv_devices lists them; mlx5 takes every Mellanox port)

torchrun \
  --nnodes 8 \
  --nproc_per_node 8 \
  --rdzv_backend c10d \
  --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
  --rdzv_id gpuplan \
  "$MEGATRON_DIR/pretrain_gpt.py" \
  --tensor-model-parallel-size 8 \
  --pipeline-model-parallel-size 2 \
  --sequence-parallel \
  --use-distributed-optimizer \
  --use-megatron-fsdp \
  --data-parallel-sharding-strategy optim_grads \
  --ckpt-format fsdp_dtensor \
  --overlap-grad-reduce \
  --overlap-param-gather \
  --micro-batch-size 4 \
  --global-batch-size 4096 \
  --seq-length 4096 \
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
  --train-iters 59605 \
  --save-interval 34 \
  --eval-iters 0 \
  --lr $LR \
  --data-path $DATA_PATH \
  --tokenizer-type HuggingFaceTokenizer \
  --tokenizer-model meta-llama/Llama-3.1-70B \
  --save $CHECKPOINT_DIR \
  --load $CHECKPOINT_DIR \
  --log-interval 10
