#!/usr/bin/env bash
# gpuplan plan: Qwen2.5 7B · full · 16 x NVIDIA A100 SXM4 80GB (2 nodes x 8)
# Layout: tp=1 pp=1 dp=16 zero=2 offload=none ckpt=none mbs=4 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# Run this script on every node, with NODE_RANK set to 0 on the first node, 1 on the next, and so on.
set -euo pipefail

MASTER_ADDR="${MASTER_ADDR:-CHANGE_ME}"  # address of node 0, reachable from every node
MASTER_PORT="${MASTER_PORT:-29500}"  # a free TCP port on node 0
NODE_RANK="${NODE_RANK:-0}"  # 0 on the first node, 1 on the next, ...

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter
export NCCL_IB_DISABLE="${NCCL_IB_DISABLE:-1}"  # plain Ethernet: NCCL uses TCP sockets, not RDMA
export NCCL_SOCKET_NTHREADS="${NCCL_SOCKET_NTHREADS:-4}"  # TCP: more sockets per connection to fill a fast Ethernet link (threads x sockets at most 64)
export NCCL_NSOCKS_PERTHREAD="${NCCL_NSOCKS_PERTHREAD:-4}"  # TCP: more sockets per connection to fill a fast Ethernet link (threads x sockets at most 64)

FORCE_TORCHRUN=1 NNODES=2 NPROC_PER_NODE=8 NODE_RANK=$NODE_RANK MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT llamafactory-cli train \
  llamafactory_train.yaml
