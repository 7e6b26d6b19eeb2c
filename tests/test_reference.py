"""Every published case in ../shared/reference/ within the tolerance the file states.

The query goes through the same path as `gpuplan --json`: parse -> estimate -> JSON contract.
"""

from pathlib import Path

import pytest
import yaml

from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.pipeline import answer

LIVE = Path(__file__).resolve().parents[2] / "shared" / "reference"
SNAPSHOT = Path(__file__).resolve().parent / "data" / "reference"
REFERENCE = LIVE if LIVE.is_dir() else SNAPSHOT
LOCAL = Path(__file__).resolve().parent / "data" / "local_reference"  # cases gathered here, same format


# Cases the estimator does not meet yet, each with what is missing ("source:" where the source
# itself leaves the figure uncertain). Strict, so a case that starts passing must be unmarked here.
LABELLED_TP = "source: labelled TP, run attention-data-parallel with EP (TensorRT-LLM PR #7848)"
PENDING = {
    # the source packs documents into 32k-token sequences (attention only within a document, lengths
    # not stated); gpuplan times causal attention over the whole 32k, 39% of each layer's kernel
    # time with the recomputed forward: 0.61 of the rate (0.87 on the kernels alone, before A100's
    # fitted step share)
    "ms-swift-qwen25-7b-32k-full-4xa100-1": "source: packed length an upper bound, document lengths unstated",
    # TensorRT-LLM's perf overview at 00f37686 labels its MoE columns TP8 / TP4 but ran them with
    # attention data-parallel and EP (the header of tests/data/calibration/serving.yaml: the options
    # it prints nest enable_attention_dp where the LLM API refuses it, the review of that page asked
    # for it at the top level, and its figures sit within 4-5% of the newer page's DEP8 rows). These
    # two cases' queries (../shared/reference/moe_scale.yaml) state tensor parallelism, which on the
    # 80 GB card plans 2.3x (Maverick) and 1.8x (Scout) the published rate; asked as the page ran
    # them (tp=1 ep=8 / ep=4, prefill=chunked) gpuplan plans 0.97 and 1.18 of it. The other rows of
    # that table are asked as run in tests/data/local_reference/trtllm_perf_overview.yaml
    "trtllm-llama4-maverick-h100-tp8-fp8-1k1k-0": LABELLED_TP,
    "trtllm-llama4-scout-h100-tp4-fp8-1k1k-0": LABELLED_TP,
    # DeepSeek's own deployment: FP8 weights, a ~6-bit KV cache and data-parallel attention with
    # expert parallelism. The query leaves concurrency at 16, where tensor parallelism is cheaper per
    # token (855 tok/s/GPU at full load); the plan's full-load alternative (the shape that generates
    # most on the 8 GPUs) is a pipeline of 8 at 5,920, expert-parallel replicas about 4,100 at 4k
    # tokens (ep=8); the service's lengths are not stated and the ~6-bit KV cache is not modelled
    "deepseek-v2-8xh800-generation-min-0": "source: lengths 'not stated numerically', a ~6-bit KV cache",
    # FSDP with CPU parameter offload. What offload leaves on the GPU is counted: FSDP's root unit, two
    # gathered layers, the replicated NF4 constants, one dequantised matrix, the layer inputs, the loss,
    # and the block the allocator keeps for the host-to-device shard copies (memory._offload_copy);
    # Answer.AI's Yi 34B and Llama-2 70B rows and Schmid's run pass with it. These do not:
    # - PEFT's W&B reading: its no-offload sibling (peft-fsdp-qlora-llama2-70b-2gpu) is 4.4 GiB above
    #   gpuplan as well (0.87); the docs see 15.0 GiB saved by offload where gpuplan moves 17.2 to the host,
    #   and they say "GPU Memory saving when using CPU Offloading is untested at present"
    "peft-fsdp-qlora-llama2-70b-2x24gb-offload-0": "source: offload's GPU saving 'untested at present' (11.5 vs 18.25)",
    # - axolotl's README VRAM notes are no measured peaks: the same list gives its 8B LoRA recipe (8-bit
    #   linear layers, 2 x 4,096 packed tokens, Transformers' loss) 11 GB, less than its weights (8.5 GiB)
    #   and its fp32 logits (3.9 GiB) together
    "axolotl-llama3-70b-qlora-fsdp-offload-2gpu-0": "source's notes are not peaks: below its own recipes' needs",
    # Meta's Llama 2 34B: 1.04M GPU-hours for 2T tokens, 535 tokens/s a GPU (38% MFU), where its 7B, 13B
    # and 70B siblings' hours mean 42-46% and Llama 1's 33B 47%. The paper states no GPU count, layout or
    # what "total GPU time required for training" counts besides the steps. The same shape measured
    # elsewhere runs 1.3-1.5x faster: IBM's fms-fsdp (llama2_34b, FSDP, 128 A100) 700 tokens/s with full
    # recomputation and 820 with selective, and says its 7B ran "roughly 20% faster than the Llama2
    # published training time". gpuplan plans 768 here (0.70 of the hours) and meets IBM's rows at
    # 0.87-1.05 (fms-fsdp-llama2-34b-* in tests/data/calibration/). Only 579-669 tokens/s would meet
    # both sources within 25%, below what IBM's stack does with the layout gpuplan picks.
    # Tried (2026-12-06): the 350 W cap of its cluster (2-5%), the 4M-token batch, 2,048 GPUs
    "llama2-34b-gpu-hours-0": "source: its hours mean 535 tokens/s/GPU; the same shape measures 700-820 (fms-fsdp)",
}

# What a case's source states about its run that the query leaves unsaid, added to the query.
# Each entry quotes its evidence; none changes what is measured.
STATED_BY_SOURCE = {
    # Megatron-LM's README (2021) reports 138 TFLOP/s per GPU at 96 tokens/s: 96 x 175e9 x 8
    # FLOPs per token = 134 TFLOP/s counts a recomputed forward pass (6 x N would give 101), so
    # every layer was recomputed; left open, gpuplan now recomputes selectively, as Megatron has
    # since Korthikanti et al. 2022 (the 12,288-GPU Megatron-LM and Nemotron-4 runs).
    "megatron-gpt3-175b-1024-a100-0": "ckpt=full",
    # torchtune's 70B_full.yaml shards tok_embeddings and output as FSDP units of their own
    # (custom_sharded_layers) and takes the loss in chunks (CEWithChunkedOutputLoss): the head's
    # 2.0 GiB gathered beside a layer, its 2.0 GiB gradient, a 0.25 GiB copy block where the root unit
    # held 3.9 GiB of weights and 3.9 of gradients. 21.2 -> 13.6 GiB against 13.9 (1.53 -> 0.98)
    "torchtune-llama31-70b-full-offload-8x-a100-0": "framework=torchtune",
}
# Every case measured with one framework's own training script: Answer.AI's 17 rows all ran its
# fsdp_qlora train.py (benchmarks_03_2024.md), so each runs with that script's habits (0.68-1.07 ->
# 0.79-1.12 over the 17). It keeps the model's output, its fp32 logits, until after loss.backward()
# (`output = None` follows the optimizer step): 4 bytes a logit beside the loss's 12, 2.4 GiB at 10 x
# 2,048 x 32,000 logits (knowledge/frameworks.yaml); the dual-4090 LoRA row at batch 10 went 15.4 ->
# 17.9 GiB against 22.69 (0.68 -> 0.79)
STATED_BY_PREFIX = {"answerai-": "framework=answerai-fsdp-qlora"}

def _cases():
    cases = []
    for path in [*sorted(REFERENCE.glob("*.yaml")), *sorted(LOCAL.glob("*.yaml"))]:
        for case in yaml.safe_load(path.read_text())["cases"]:
            for i, expect in enumerate(case["expect"]):
                case_id = f"{case['id']}-{i}"
                marks = [pytest.mark.xfail(reason=PENDING[case_id], strict=True)] if case_id in PENDING else []
                by_prefix = next((v for k, v in STATED_BY_PREFIX.items() if case_id.startswith(k)), None)
                query = " ".join(filter(None, [case["query"], STATED_BY_SOURCE.get(case_id), by_prefix]))
                cases.append(pytest.param(query, expect, id=case_id, marks=marks))
    return cases


CASES = _cases()


def test_reference_cases_present():
    assert len(CASES) >= 18, f"expected the shared reference cases in {REFERENCE}"


def _lookup(data: dict, path: str):
    aliases = {"tokens_per_s_per_gpu": "compute.tokens_per_s_per_gpu"}
    for key in aliases.get(path, path).split("."):
        data = data[key]
    return data


@pytest.mark.parametrize("query, expect", CASES)
def test_reference_case(query, expect):
    got = _lookup(plan_json(answer(query)), expect["path"])
    if "equals" in expect:
        assert got == expect["equals"]
    if "max" in expect:
        assert got <= expect["max"]
    if "min" in expect:
        assert got >= expect["min"]
    if "value" in expect:
        assert got == pytest.approx(expect["value"], rel=expect["tolerance"]), f"{query}: {got} vs {expect['value']}"
