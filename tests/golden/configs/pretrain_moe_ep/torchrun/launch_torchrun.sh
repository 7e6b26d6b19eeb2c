#!/usr/bin/env bash
# gpuplan plan: Mixtral 8x7B (MoE) · pretrain · 64 x NVIDIA H100 SXM5 80GB (8 nodes x 8)
# Layout: tp=2 pp=2 vpp=16 ep=4 dp=16 zero=1 offload=none ckpt=selective mbs=4 gbs=1536 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# Run this script on every node; the rendezvous at node 0 numbers the nodes.
# RoCE: if your switches keep a lossless traffic class for RDMA, set NCCL_IB_TC to it (your network team knows it).
set -euo pipefail

MASTER_ADDR="${MASTER_ADDR:-CHANGE_ME}"  # address of node 0, reachable from every node
MASTER_PORT="${MASTER_PORT:-29500}"  # a free TCP port on node 0
TRAIN_SCRIPT="${TRAIN_SCRIPT:-CHANGE_ME_train.py}"  # your training script (and the arguments it needs besides the ones below)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter
export NCCL_IB_HCA="${NCCL_IB_HCA:-mlx5}"  # the RDMA adapters to use (ibv_devices lists them; mlx5 takes every Mellanox port)

torchrun \
  --nnodes 8 \
  --nproc_per_node 8 \
  --rdzv_backend c10d \
  --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT \
  --rdzv_id gpuplan \
  "$TRAIN_SCRIPT"
