#!/usr/bin/env bash
# gpuplan plan: Llama 3.1 70B · infer · 2 x NVIDIA H100 SXM5 80GB
# Layout: tp=2 pp=1 dp=1 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# --max-running-requests: the most sequences the plan's KV-cache budget holds at full load
# --context-length: prompt plus output, the plan's context
# --mem-fraction-static: the engine's share of GPU memory the plan assumed
# The server listens on every interface without an API key: keep it behind your gateway or add --api-key.
set -euo pipefail

python -m sglang.launch_server \
  --model-path meta-llama/Llama-3.1-70B \
  --tp-size 2 \
  --context-length 4096 \
  --max-running-requests 110 \
  --mem-fraction-static 0.9 \
  --quantization fp8 \
  --kv-cache-dtype fp8_e4m3 \
  --host 0.0.0.0 \
  --port 30000
