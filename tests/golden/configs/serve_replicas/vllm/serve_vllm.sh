#!/usr/bin/env bash
# gpuplan plan: Qwen2.5 14B · infer · 4 x NVIDIA L40S 48GB
# Layout: tp=2 pp=1 dp=2 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# 2 replicas of 2 GPUs each: the engine spreads requests over them.
# --max-num-seqs: the most sequences the plan's KV-cache budget holds at full load
# --max-model-len: prompt plus output, the plan's context
# --gpu-memory-utilization: the engine's share of GPU memory the plan assumed
# The server listens on every interface without an API key: keep it behind your gateway or add --api-key.
set -euo pipefail

vllm serve Qwen/Qwen2.5-14B \
  --tensor-parallel-size 2 \
  --pipeline-parallel-size 1 \
  --data-parallel-size 2 \
  --max-model-len 4096 \
  --max-num-seqs 65 \
  --gpu-memory-utilization 0.9 \
  --host 0.0.0.0 \
  --port 8000
