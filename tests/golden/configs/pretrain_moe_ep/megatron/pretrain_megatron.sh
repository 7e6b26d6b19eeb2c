#!/usr/bin/env bash
# gpuplan plan: Mixtral 8x7B (MoE) · pretrain · 64 x NVIDIA H100 SXM5 80GB (8 nodes x 8)
# Layout: tp=2 pp=2 ep=4 dp=16 zero=0 offload=none ckpt=none mbs=1 gbs=1536 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# Run this script on every node; the rendezvous at node 0 numbers the nodes.
# The model shape below is Mixtral 8x7B (MoE)'s published config; check it against the checkpoint you start from.
set -euo pipefail

MASTER_ADDR="${MASTER_ADDR:-CHANGE_ME}"  # address of node 0, reachable from every node
MASTER_PORT="${MASTER_PORT:-29500}"  # a free TCP port on node 0
MEGATRON_DIR="${MEGATRON_DIR:-/CHANGE_ME/Megatron-LM}"  # your Megatron-LM checkout
DATA_PATH="${DATA_PATH:-/CHANGE_ME/dataset_text_document}"  # your tokenized dataset (Megatron's indexed .bin/.idx prefix)
CHECKPOINT_DIR="${CHECKPOINT_DIR:-/CHANGE_ME/checkpoints}"  # where checkpoints are written and resumed from
LR="${LR:-CHANGE_ME}"  # not sized by gpuplan: choose your own

export NCCL_DEBUG=WARN  # print NCCL's warnings, not its chatter
export NCCL_SOCKET_IFNAME='^lo,docker'  # network interfaces NCCL may use to bootstrap (here: any but loopback and docker)
export NCCL_IB_DISABLE=0  # use the RDMA network (InfiniBand verbs) for GPU traffic between nodes
export NCCL_IB_HCA=mlx5  # the RDMA adapters to use (ibv_devices lists them; mlx5 takes every Mellanox port)
export NCCL_IB_GID_INDEX=3  # RoCE v2: the GID index of the RoCE v2 address on your NICs (show_gids lists them; 3 is the usual one)
export NCCL_IB_TC=CHANGE_ME  # RoCE: the traffic class your switches keep lossless for RDMA (ask your network team)
export CUDA_DEVICE_MAX_CONNECTIONS=1

torchrun \
  --nnodes 8 \
  --nproc_per_node 8 \
  --rdzv_backend c10d \
  --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
  --rdzv_id gpuplan \
  "$MEGATRON_DIR/pretrain_gpt.py" \
  --tensor-model-parallel-size 2 \
  --pipeline-model-parallel-size 2 \
  --sequence-parallel \
  --expert-model-parallel-size 4 \
  --micro-batch-size 1 \
  --global-batch-size 1536 \
  --seq-length 4096 \
  --bf16 \
  --num-layers 32 \
  --hidden-size 4096 \
  --ffn-hidden-size 14336 \
  --num-attention-heads 32 \
  --max-position-embeddings 32768 \
  --group-query-attention \
  --num-query-groups 8 \
  --swiglu \
  --normalization RMSNorm \
  --position-embedding-type rope \
  --untie-embeddings-and-output-weights \
  --disable-bias-linear \
  --num-experts 8 \
  --moe-router-topk 2 \
  --moe-ffn-hidden-size 14336 \
  --moe-grouped-gemm \
  --moe-token-dispatcher-type alltoall \
  --train-iters 79473 \
  --save-interval 79473 \
  --eval-iters 0 \
  --lr $LR \
  --data-path $DATA_PATH \
  --tokenizer-type HuggingFaceTokenizer \
  --tokenizer-model mistralai/Mixtral-8x7B-v0.1 \
  --save $CHECKPOINT_DIR \
  --load $CHECKPOINT_DIR \
  --log-interval 10
