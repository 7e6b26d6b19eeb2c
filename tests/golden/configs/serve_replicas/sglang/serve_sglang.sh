#!/usr/bin/env bash
# gpuplan plan: Qwen2.5 14B · infer · 4 x NVIDIA L40S 48GB
# Layout: tp=2 pp=1 dp=2 seq=4096
# Every number comes from the plan; CHANGE_ME marks what the plan does not decide (paths, addresses, data).
# 2 replicas of 2 GPUs each: the engine spreads requests over them.
# --max-running-requests: the most sequences the plan's KV-cache budget holds at full load
# --context-length: prompt plus output, the plan's context
# --mem-fraction-static: the engine's share of GPU memory the plan assumed
# The server listens on every interface without an API key: keep it behind your gateway or add --api-key.
set -euo pipefail

python -m sglang.launch_server \
  --model-path Qwen/Qwen2.5-14B \
  --tp-size 2 \
  --dp-size 2 \
  --context-length 4096 \
  --max-running-requests 65 \
  --mem-fraction-static 0.9 \
  --host 0.0.0.0 \
  --port 30000
