#!/usr/bin/env bash
# gpuplan plan: Mixtral 8x7B (MoE) · pretrain · 64 x NVIDIA H100 SXM5 80GB (8 nodes x 8)
# Layout: tp=2 pp=2 vpp=16 ep=4 dp=16 zero=1 offload=none ckpt=selective mbs=4 gbs=1536 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# Run this script on every node; the rendezvous at node 0 numbers the nodes.
# RoCE: if your switches keep a lossless traffic class for RDMA, set NCCL_IB_TC to it (your network team knows it).
# The model shape below is Mixtral 8x7B (MoE)'s published config; check it against the checkpoint you start from.
set -euo pipefail

MASTER_ADDR="${MASTER_ADDR:-CHANGE_ME}"  # address of node 0, reachable from every node
MASTER_PORT="${MASTER_PORT:-29500}"  # a free TCP port on node 0
MEGATRON_DIR="${MEGATRON_DIR:-/CHANGE_ME/Megatron-LM}"  # your Megatron-LM checkout
DATA_PATH="${DATA_PATH:-/CHANGE_ME/dataset_text_document}"  # your tokenized dataset (Megatron's indexed .bin/.idx prefix)
CHECKPOINT_DIR="${CHECKPOINT_DIR:-/CHANGE_ME/checkpoints}"  # where checkpoints are written and resumed from
LR="${LR:-CHANGE_ME}"  # not sized by gpuplan: choose your own
ROPE_THETA="${ROPE_THETA:-CHANGE_ME}"  # rope_theta from the model's config.json (Megatron's default is 10000)
MOE_AUX_LOSS_COEFF="${MOE_AUX_LOSS_COEFF:-CHANGE_ME}"  # the router's load-balancing loss weight (router_aux_loss_coef in the model's config.json)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter
export NCCL_IB_HCA="${NCCL_IB_HCA:-mlx5}"  # the RDMA adapters to use (ibv_devices lists them; mlx5 takes every Mellanox port)
export CUDA_DEVICE_MAX_CONNECTIONS="${CUDA_DEVICE_MAX_CONNECTIONS:-1}"  # one CUDA queue, so tensor/context-parallel communication overlaps compute in order

torchrun \
  --nnodes 8 \
  --nproc_per_node 8 \
  --rdzv_backend c10d \
  --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
  --rdzv_id gpuplan \
  "$MEGATRON_DIR/pretrain_gpt.py" \
  --tensor-model-parallel-size 2 \
  --pipeline-model-parallel-size 2 \
  --num-virtual-stages-per-pipeline-rank 16 \
  --sequence-parallel \
  --expert-model-parallel-size 4 \
  --use-distributed-optimizer \
  --overlap-grad-reduce \
  --overlap-param-gather \
  --micro-batch-size 4 \
  --global-batch-size 1536 \
  --seq-length 4096 \
  --recompute-granularity selective \
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
  --rotary-base $ROPE_THETA \
  --untie-embeddings-and-output-weights \
  --disable-bias-linear \
  --num-experts 8 \
  --moe-router-topk 2 \
  --moe-ffn-hidden-size 14336 \
  --moe-grouped-gemm \
  --moe-token-dispatcher-type alltoall \
  --overlap-moe-expert-parallel-comm \
  --moe-aux-loss-coeff $MOE_AUX_LOSS_COEFF \
  --train-iters 79473 \
  --save-interval 401 \
  --eval-iters 0 \
  --lr $LR \
  --data-path $DATA_PATH \
  --tokenizer-type HuggingFaceTokenizer \
  --tokenizer-model mistralai/Mixtral-8x7B-v0.1 \
  --save $CHECKPOINT_DIR \
  --load $CHECKPOINT_DIR \
  --log-interval 10
