#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 70B · infer · 2 x NVIDIA H100 SXM5 80GB
# Layout: tp=2 pp=1 dp=1 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# --max-num-seqs: the most sequences the plan's KV-cache budget holds at full load
# --max-model-len: prompt plus output, the plan's context
# --gpu-memory-utilization: the engine's share of GPU memory the plan assumed
# The server listens on every interface without an API key: keep it behind your gateway or add --api-key.
set -euo pipefail

vllm serve meta-llama/Llama-3.1-70B \
  --tensor-parallel-size 2 \
  --pipeline-parallel-size 1 \
  --max-model-len 4096 \
  --max-num-seqs 110 \
  --gpu-memory-utilization 0.9 \
  --quantization fp8 \
  --kv-cache-dtype fp8 \
  --host 0.0.0.0 \
  --port 8000
