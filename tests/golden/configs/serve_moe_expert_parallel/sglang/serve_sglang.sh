#!/usr/bin/env bash
# gpuplan plan: DeepSeek-V2 (MoE, MLA) · infer · 8 x NVIDIA H800 SXM5 80GB
# Layout: tp=1 pp=1 ep=8 dp=1 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# One replica of 8 GPUs: attention data-parallel over them, the routed experts split over them.
# --max-running-requests: the most sequences the plan's KV-cache budget holds at full load
# --context-length: prompt plus output, the plan's context
# --mem-fraction-static: the engine's share of GPU memory the plan assumed
# The server listens on every interface without an API key: keep it behind your gateway or add --api-key.
set -euo pipefail

python -m sglang.launch_server \
  --model-path deepseek-ai/DeepSeek-V2 \
  --tp-size 8 \
  --dp-size 8 \
  --enable-dp-attention \
  --ep-size 8 \
  --context-length 4096 \
  --max-running-requests 1616 \
  --mem-fraction-static 0.9 \
  --quantization fp8 \
  --kv-cache-dtype fp8_e4m3 \
  --host 0.0.0.0 \
  --port 30000
