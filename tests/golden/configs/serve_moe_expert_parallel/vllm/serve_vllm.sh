#!/usr/bin/env bash
# gpuplan plan: DeepSeek-V2 (MoE, MLA) · infer · 8 x NVIDIA H800 SXM5 80GB
# Layout: tp=1 pp=1 ep=8 dp=1 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# One replica of 8 GPUs: attention data-parallel over them, the routed experts split over them.
# --max-num-seqs (per attention rank): the most sequences the plan's KV-cache budget holds at full load
# --max-model-len: prompt plus output, the plan's context
# --gpu-memory-utilization: the engine's share of GPU memory the plan assumed
# The server listens on every interface without an API key: keep it behind your gateway or add --api-key.
set -euo pipefail

vllm serve deepseek-ai/DeepSeek-V2 \
  --tensor-parallel-size 1 \
  --pipeline-parallel-size 1 \
  --data-parallel-size 8 \
  --enable-expert-parallel \
  --max-model-len 4096 \
  --max-num-seqs 202 \
  --gpu-memory-utilization 0.9 \
  --quantization fp8 \
  --kv-cache-dtype fp8 \
  --host 0.0.0.0 \
  --port 8000
