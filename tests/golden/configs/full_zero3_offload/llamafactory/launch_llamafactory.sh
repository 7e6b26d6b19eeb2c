#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 70B · full · 8 x NVIDIA A100 SXM4 80GB
# Layout: tp=1 pp=1 dp=8 zero=3 offload=cpu ckpt=selective mbs=1 gbs=64 seq=2048
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# The plan recomputes selected activations (Megatron's selective checkpointing); this tool only recomputes whole layers, which needs no more memory but runs slower than the plan's time.
set -euo pipefail

export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"  # print NCCL's warnings, not its chatter

FORCE_TORCHRUN=1 NNODES=1 NPROC_PER_NODE=8 llamafactory-cli train \
  llamafactory_train.yaml
