#!/usr/bin/env bash
# gpuplan plan: Qwen2.5 7B · full · 16 x NVIDIA A100 SXM4 80GB (2 nodes x 8)
# Layout: tp=1 pp=1 dp=16 zero=2 offload=none ckpt=none mbs=4 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# Run this script on every node; the rendezvous at node 0 numbers the nodes.
# The model shape below is Qwen2.5 7B's published config; check it against the checkpoint you start from.
set -euo pipefail

MASTER_ADDR="${MASTER_ADDR:-CHANGE_ME}"  # address of node 0, reachable from every node
MASTER_PORT="${MASTER_PORT:-29500}"  # a free TCP port on node 0
MEGATRON_DIR="${MEGATRON_DIR:-/CHANGE_ME/Megatron-LM}"  # your Megatron-LM checkout
DATA_PATH="${DATA_PATH:-/CHANGE_ME/dataset_text_document}"  # your tokenized dataset (Megatron's indexed .bin/.idx prefix)
CHECKPOINT_DIR="${CHECKPOINT_DIR:-/CHANGE_ME/checkpoints}"  # where checkpoints are written and resumed from
LR="${LR:-CHANGE_ME}"  # not sized by gpuplan: choose your own
PRETRAINED_CHECKPOINT="${PRETRAINED_CHECKPOINT:-/CHANGE_ME/megatron-checkpoint}"  # the model's weights converted to Megatron's format (Megatron-Bridge or Megatron-LM's checkpoint converter)
ROPE_THETA="${ROPE_THETA:-CHANGE_ME}"  # rope_theta from the model's config.json (Megatron's default is 10000)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter
export NCCL_IB_DISABLE="${NCCL_IB_DISABLE:-1}"  # plain Ethernet: NCCL uses TCP sockets, not RDMA
export NCCL_SOCKET_NTHREADS="${NCCL_SOCKET_NTHREADS:-4}"  # TCP: more sockets per connection to fill a fast Ethernet link (threads x sockets at most 64)
export NCCL_NSOCKS_PERTHREAD="${NCCL_NSOCKS_PERTHREAD:-4}"  # TCP: more sockets per connection to fill a fast Ethernet link (threads x sockets at most 64)

torchrun \
  --nnodes 2 \
  --nproc_per_node 8 \
  --rdzv_backend c10d \
  --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
  --rdzv_id gpuplan \
  "$MEGATRON_DIR/pretrain_gpt.py" \
  --tensor-model-parallel-size 1 \
  --pipeline-model-parallel-size 1 \
  --use-distributed-optimizer \
  --use-megatron-fsdp \
  --data-parallel-sharding-strategy optim_grads \
  --ckpt-format fsdp_dtensor \
  --overlap-grad-reduce \
  --overlap-param-gather \
  --micro-batch-size 4 \
  --global-batch-size 64 \
  --seq-length 2048 \
  --bf16 \
  --num-layers 28 \
  --hidden-size 3584 \
  --ffn-hidden-size 18944 \
  --num-attention-heads 28 \
  --max-position-embeddings 131072 \
  --group-query-attention \
  --num-query-groups 4 \
  --swiglu \
  --normalization RMSNorm \
  --position-embedding-type rope \
  --rotary-base $ROPE_THETA \
  --untie-embeddings-and-output-weights \
  --disable-bias-linear \
  --add-qkv-bias \
  --train-iters 763 \
  --save-interval 763 \
  --eval-iters 0 \
  --lr $LR \
  --data-path $DATA_PATH \
  --tokenizer-type HuggingFaceTokenizer \
  --tokenizer-model Qwen/Qwen2.5-7B \
  --save $CHECKPOINT_DIR \
  --load $CHECKPOINT_DIR \
  --log-interval 10 \
  --pretrained-checkpoint $PRETRAINED_CHECKPOINT
