"""A serving export that serves: when the plan behind a vLLM or SGLang export holds fewer sequences
at full load than it is sized for, the export is planned again with the smallest change that
gives them, and its header says the trade.

The target is the concurrency the user asked (mbs=), else the catalog's default serving
concurrency (knowledge/defaults.yaml micro_batch.infer, 16): the load the plan itself assumes, so
an engine capped below it (`--max-num-seqs 3`) cannot serve what the answer promised. The changes,
in order of preference, each only where the user left the field open (precision=, kv=, seq= and
mbs= as asked are never changed):
1. an fp8 KV cache, on GPUs with FP8 tensor cores (Ada, Hopper, Blackwell, MI300);
2. fp8 weights, on those GPUs and on Ampere, which runs them weight-only (W8A16) with FP8 Marlin;
3. a context half as long, on top of the last 8-bit change the GPU allows;
4. int4 weights (an AWQ/GPTQ checkpoint), then with the shorter context too.
The first that reaches the target is taken; when none does, the one that holds the most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuplan.bot.answer import Answer
from gpuplan.bot.configs.text import Words
from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.knowledge import GPU, catalog

SIXTEEN_BIT = ("bf16", "fp16")
# estimate: one halving, the same 2x an fp8 KV cache gives; a deeper cut would refuse the prompts
# the plan was sized for, and a context the user wrote (seq=) is never cut at all
CONTEXT_CUT = 2
# how the files tell the user to keep a field as first planned (gpuplan's own setting names)
SETTING_NAMES = {"kv_cache": "kv", "precision": "precision", "seq_len": "seq"}


@dataclass(frozen=True)
class Replanned:
    """The plan the files are written for, and the header line that says what it traded."""

    plan: Answer
    note: str


def held(plan: Answer) -> int:
    """Sequences one replica's engine holds at once at full load (0 when not one fits)."""
    serving = plan.estimate.serving if plan.estimate else None
    return (serving.max_concurrency or 0) if serving else 0


def target(plan: Answer) -> int:
    """The sequences the plan should hold: the concurrency asked, else the default it is sized for."""
    return plan.request.micro_batch or int(catalog().defaults.micro_batch["infer"])


def serves(plan: Answer, wanted: int) -> bool:
    """Whether the plan fits and its engine holds `wanted` sequences at once at full load."""
    return plan.estimate is not None and plan.estimate.memory.fits and held(plan) >= wanted


def replan(text: str, plan: Answer) -> Replanned | None:
    """The question planned again for real concurrency, when its serving plan holds too few
    sequences and some open field gives more; None when the plan serves as it is."""
    est = plan.estimate
    if est is None or est.resolved.method != "infer" or serves(plan, target(plan)):
        return None
    best: Answer | None = None
    for settings in candidates(plan):
        try:
            again = answer(text, lang=plan.lang, settings=settings)
        except QuestionError:
            continue
        if serves(again, target(plan)):
            return Replanned(again, trade(plan, again, Words(plan.lang)))
        if serves(again, 1) and held(again) > held(best or plan):
            best = again
    return Replanned(best, trade(plan, best, Words(plan.lang))) if best else None


def candidates(plan: Answer) -> list[dict[str, Any]]:
    """The Request settings to try, smallest change first (the module's docstring gives the order);
    the int4 steps keep the fp8 KV cache of the first step, which is preferred to them."""
    asked, planned = plan.request, plan.estimate.resolved
    gpu = catalog().gpus.get(planned.gpu)
    fp8_cores = gpu is not None and fp8_tensor_cores(gpu)
    kv = {"kv_cache": "fp8"} if asked.kv_cache is None and planned.kv_cache != "fp8" and fp8_cores else {}
    eight_bit = [kv] if kv else []
    if asked.precision is None and planned.precision in SIXTEEN_BIT and gpu is not None and fp8_weights(gpu):
        # fp8 weights bring an fp8 KV cache into the plan; without FP8 tensor cores the cache stays 16-bit
        cache = {} if asked.kv_cache or fp8_cores else {"kv_cache": "bf16"}
        eight_bit.append({"precision": "fp8", **cache})
    shorter = {"seq_len": planned.seq_len // CONTEXT_CUT} if asked.seq_len is None else {}
    steps = eight_bit + ([{**(eight_bit[-1] if eight_bit else {}), **shorter}] if shorter else [])
    if asked.precision is None and planned.precision != "int4":
        int4 = {"precision": "int4", **kv}
        steps += [int4] + ([{**int4, **shorter}] if shorter else [])
    return steps


def fp8_tensor_cores(gpu: GPU) -> bool:
    """FP8 matmuls and attention in hardware (compute capability 8.9 and up): vLLM's and SGLang's
    quantized KV cache docs warn that a cache dequantized outside the attention kernel is slow."""
    return bool(gpu.fp8_tflops)


def fp8_weights(gpu: GPU) -> bool:
    """FP8 weights the engines can serve (the estimator's rule, estimator/serving.py _types_for):
    W8A8 with FP8 tensor cores, else weight-only W8A16 on Ampere with FP8 Marlin (vLLM docs,
    features/quantization/fp8: 'Turing/Ampere GPUs are supported for W8A16'; SGLang's Fp8LinearMethod
    turns Marlin on by itself where the GPU lacks FP8, can_auto_enable_marlin_fp8)."""
    return fp8_tensor_cores(gpu) or gpu.family.startswith("ampere")


def trade(asked: Answer, served: Answer, words: Words) -> str:
    """One header line: what changed, the sequences before and after, what it costs, how to undo it."""
    before, after = asked.estimate.resolved, served.estimate.resolved
    changed = {f: getattr(before, f) for f in SETTING_NAMES if getattr(before, f) != getattr(after, f)}
    gpu = catalog().gpus.get(after.gpu)
    return words(
        "serving_replanned",
        weights=after.precision if "precision" in changed else None,
        weight_only=gpu is not None and not fp8_tensor_cores(gpu),
        kv="kv_cache" in changed and after.kv_cache == "fp8",
        context_from=changed.get("seq_len"),
        seq=after.seq_len,
        before=held(asked),
        after=held(served),
        target=target(asked),
        asked=asked.request.micro_batch is not None,
        replicas=after.dp,
        undo=" ".join(f"{SETTING_NAMES[f]}={value}" for f, value in changed.items()),
    )
