#!/usr/bin/env bash
# gpuplan plan: Qwen2.5 7B · full · 16 x NVIDIA A100 SXM4 80GB (2 nodes x 8)
# Layout: tp=1 pp=1 dp=16 zero=2 offload=none ckpt=none mbs=4 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# Run this script once, on node 0: the launcher starts the other nodes listed in the hostfile over ssh.
# The arguments after the script are Hugging Face Trainer arguments; a script of your own must accept them or drop them.
# The plan's memory counts a loss that never holds the whole sequence's logits: Liger's fused cross-entropy is switched on for this model (pip install liger-kernel).
set -euo pipefail

MASTER_ADDR="${MASTER_ADDR:-CHANGE_ME}"  # address of node 0, reachable from every node
MASTER_PORT="${MASTER_PORT:-29500}"  # a free TCP port on node 0
TRAIN_SCRIPT="${TRAIN_SCRIPT:-CHANGE_ME_train.py}"  # your training script (and the arguments it needs besides the ones below)

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter
export NCCL_IB_DISABLE="${NCCL_IB_DISABLE:-1}"  # plain Ethernet: NCCL uses TCP sockets, not RDMA
export NCCL_SOCKET_NTHREADS="${NCCL_SOCKET_NTHREADS:-4}"  # TCP: more sockets per connection to fill a fast Ethernet link (threads x sockets at most 64)
export NCCL_NSOCKS_PERTHREAD="${NCCL_NSOCKS_PERTHREAD:-4}"  # TCP: more sockets per connection to fill a fast Ethernet link (threads x sockets at most 64)

deepspeed \
  --num_nodes 2 \
  --num_gpus 8 \
  --hostfile hostfile \
  --master_addr $MASTER_ADDR \
  --master_port $MASTER_PORT \
  "$TRAIN_SCRIPT" \
  --deepspeed ds_z2_config.json \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 1 \
  --bf16 true \
  --use_liger_kernel true
