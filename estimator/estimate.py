"""Request -> Estimate: check the request, resolve its model and method, and hand it to the
training or serving plan (estimator/training.py, estimator/serving.py), which fill what is open
(each default a stated assumption), choose the layout and report memory, time and cost.
"""

from __future__ import annotations

import functools
import math
from collections import Counter

from gpuplan.estimator import architecture, compute, memo, memory
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.context import Context
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.hardware import MAX_GPU_MEMORY_GIB
from gpuplan.estimator.schema import SERVE_PRECISIONS, TRAIN_PRECISIONS, Estimate, Note, Request
from gpuplan.estimator.serving import estimate_serving
from gpuplan.estimator.training import estimate_training
from gpuplan.knowledge import GPU, Catalog, catalog

MAX_PARAMS_B = 100_000  # 100T parameters: beyond any model built so far
# One machine holds at most 16 GPUs: NVIDIA's DGX-2 / HGX-2 put 16 on one NVSwitch fabric (DGX-2
# datasheet); more per node than a type's usual server is planned as written, up to this.
MAX_GPUS_PER_NODE = 16
# Upper bounds on the other numbers (nodes, tp and pp share limits.max_gpus). Not sourced: each is
# far beyond any published job, so a typo or a pasted counter is an error, not an overflow.
LARGEST_VALUES: dict[str, float] = {
    "seq_len": 1 << 30,
    "prompt_tokens": 1 << 30,
    "micro_batch": 1_000_000,
    "global_batch": 1_000_000_000,
    "lora_rank": 1 << 20,
    "samples": 1e15,
    "sample_tokens": 1 << 30,
    "train_tokens": 1e18,
    "epochs": 10_000,
    "dataset_gb": 1e9,
    "deadline_days": 36_500,
    "budget_usd": 1e13,
}

# --- checks -------------------------------------------------------------------------------


def check_request(req: Request, cat: Catalog) -> list[Note]:
    """Values that make no sense on their own, whatever the model (each names the offender)."""
    bad: list[Note] = []

    def reject(code: str, **params: object) -> None:
        bad.append(Note(code=code, params=params))

    max_gpus = int(cat.defaults.number("limits", "max_gpus"))
    if req.params_b is not None and not (0 < req.params_b <= MAX_PARAMS_B):
        reject("bad_model_size", value=req.params_b)
    bad += _out_of_range(req, max_gpus)
    if req.gpu_memory_gib is not None and not (1 <= req.gpu_memory_gib <= MAX_GPU_MEMORY_GIB):
        reject("bad_gpu_memory", value=req.gpu_memory_gib, limit=MAX_GPU_MEMORY_GIB)
    if req.gpus is not None and req.gpus < 1:
        reject("bad_gpus", value=req.gpus)
    elif req.gpus is not None and req.gpus > max_gpus:
        reject("too_many_gpus", value=req.gpus, limit=max_gpus)
    if req.zero is not None and req.zero not in (0, 1, 2, 3):
        reject("bad_zero", value=req.zero)
    if req.mfu is not None and not (0 < req.mfu <= 1):
        reject("bad_mfu", value=req.mfu)
    if req.gpus and req.nodes and req.nodes >= 1 and req.gpus % req.nodes:
        reject("gpus_nodes_mismatch", gpus=req.gpus, nodes=req.nodes)
    if req.gpus and req.tp and req.pp and req.tp >= 1 and req.pp >= 1 and req.gpus % (req.tp * req.pp):
        reject("tp_pp_not_dividing", gpus=req.gpus, tp=req.tp, pp=req.pp)
    if req.prompt_tokens and req.seq_len and req.prompt_tokens >= req.seq_len:
        reject("prompt_not_shorter", prompt=req.prompt_tokens, seq=req.seq_len)
    bad += _decode_pool_problems(req)
    if (req.vpp or 1) > 1 and (req.method == "infer" or req.pp == 1):  # interleaving splits a pipeline's stages
        reject("vpp_needs_pipeline", vpp=req.vpp)
    serving_ep = req.method == "infer" and (req.ep or 1) > 1
    if serving_ep and ((req.tp or 1) > 1 or (req.pp or 1) > 1):
        reject("serving_ep_with_tp", ep=req.ep, tp=req.tp or 1, pp=req.pp or 1)
    elif req.gpus and (req.ep or req.cp) and _parallel_not_dividing(req):
        sizes = {"tp": req.tp or 1, "pp": req.pp or 1, "ep": req.ep or 1, "cp": req.cp or 1, "etp": req.etp or 1}
        reject("parallel_not_dividing", gpus=req.gpus, **sizes)
    return bad


def _decode_pool_problems(req: Request) -> list[Note]:
    """A decode pool (`decode_gpus`) serves, with its prompts prefilled on GPUs apart: within the GPUs
    given in all with room left for them, and holding whole replicas of the sizes given."""
    pool = req.decode_gpus
    if not pool or pool < 1:
        return []
    notes = []
    if req.method and req.method != "infer":
        notes.append(Note(code="decode_gpus_not_serving", params={"decode_gpus": pool, "method": req.method}))
    if req.prefill == "chunked":
        notes.append(Note(code="decode_gpus_chunked", params={"decode_gpus": pool}))
    if req.gpus and req.gpus <= pool:
        notes.append(Note(code="decode_gpus_over_gpus", params={"decode_gpus": pool, "gpus": req.gpus}))
    shape = max(1, req.tp or 1) * max(1, req.pp or 1) * max(1, req.ep or 1)
    if pool % shape:
        sizes = {"tp": req.tp or 1, "pp": req.pp or 1, "ep": req.ep or 1}
        notes.append(Note(code="decode_gpus_not_dividing", params={"decode_gpus": pool, **sizes}))
    return notes


def _parallel_not_dividing(req: Request) -> bool:
    """The search's rule (search._consistent, after Megatron-Core): tp x pp x cp divide the GPUs and
    ep x etp divide a pipeline stage's GPUs (parallel folding: parallel_state.py requires world_size %
    (etp x ep x pp) == 0); etp left open is 1 where ep x tp would not divide them."""
    etp = req.etp if req.method != "infer" else None  # serving has no expert tensor parallel (etp_not_planned)
    tp, pp, ep, cp, etp = (max(1, v or 1) for v in (req.tp, req.pp, req.ep, req.cp, etp))
    return bool(req.gpus % (tp * pp * cp) or (req.gpus // pp) % (ep * etp))


def _out_of_range(req: Request, max_gpus: int) -> list[Note]:
    """Counts below one, quantities not positive, and values beyond LARGEST_VALUES."""
    bad: list[Note] = []
    counts = (
        "seq_len",
        "prompt_tokens",
        "micro_batch",
        "global_batch",
        "nodes",
        "decode_gpus",
        "tp",
        "pp",
        "ep",
        "cp",
        "etp",
        "vpp",
        "lora_rank",
        "samples",
        "sample_tokens",
    )
    for field in counts:
        value, limit = getattr(req, field), LARGEST_VALUES.get(field, max_gpus)
        if value is not None and value < 1:
            bad.append(Note(code="not_positive", params={"field": field, "value": value}))
        elif value is not None and value > limit:
            bad.append(Note(code="too_large", params={"field": field, "value": value, "limit": limit}))
    for field in ("train_tokens", "epochs", "dataset_gb", "deadline_days", "budget_usd"):
        value, limit = getattr(req, field), LARGEST_VALUES[field]
        if value is not None and not (value > 0 and math.isfinite(value)):
            bad.append(Note(code="not_positive", params={"field": field, "value": value}))
        elif value is not None and value > limit:
            bad.append(Note(code="too_large", params={"field": field, "value": value, "limit": limit}))
    return bad


def _check_against_model(ctx: Context, seq: int) -> list[Note]:
    req, arch, gpu = ctx.req, ctx.arch, ctx.gpu
    bad: list[Note] = []
    hard_limit = int(ctx.number("limits", "generic_max_context"))
    native = arch.max_context or hard_limit
    if seq > hard_limit:
        bad.append(Note(code="seq_over_limit", params={"seq": seq, "context": hard_limit, "model": arch.name}))
    elif seq > native and ctx.method == "infer":
        # serving engines refuse a length beyond the model's positions (vLLM's max_model_len check)
        # unless RoPE scaling extends them (vLLM --rope-scaling / --hf-overrides, a long-context variant)
        ctx.warn("seq_beyond_context_serving", seq=seq, context=native, model=arch.name)
    elif seq > native:  # training longer than the model was (LongLoRA, YaRN, continued pretraining)
        ctx.warn("seq_beyond_context", seq=seq, context=native, model=arch.name)
    if req.tp and req.tp >= 1 and (arch.heads % req.tp):
        bad.append(Note(code="tp_not_dividing_heads", params={"tp": req.tp, "heads": arch.heads, "model": arch.name}))
    if req.ep and req.ep > 1 and not arch.is_moe:
        bad.append(Note(code="ep_needs_moe", params={"ep": req.ep, "model": arch.name}))
    elif req.ep and arch.is_moe and arch.experts % req.ep and ctx.method != "infer":
        # Megatron-Core asserts num_moe_experts % expert_model_parallel_size == 0 (moe_layer.py)
        params = {"ep": req.ep, "experts": arch.experts, "model": arch.name}
        bad.append(Note(code="ep_not_dividing_experts", params=params))
    elif req.ep and arch.is_moe and arch.experts % req.ep:  # serving: redundant experts fill the slots
        slots = int(memory.serving_expert_slots(arch, req.ep))
        redundant = slots * req.ep - arch.experts
        ctx.assume("redundant_experts", ep=req.ep, experts=arch.experts, slots=slots, redundant=redundant)
    if (req.etp or 1) > 1 and (not arch.is_moe or ctx.method == "infer" or req.ep == 1):
        bad.append(Note(code="etp_not_planned", params={"etp": req.etp, "model": arch.name}))
    if req.pp and req.pp > arch.layers:
        bad.append(Note(code="pp_over_layers", params={"pp": req.pp, "layers": arch.layers, "model": arch.name}))
    if ctx.method != "infer" and req.train_tokens is not None and req.train_tokens < seq:
        # a training set smaller than one sequence is a misreading (a version number, a count of
        # something else), not a job: refused as a setting, dropped as a reading of the text
        bad.append(Note(code="tokens_below_a_sequence", params={"tokens": req.train_tokens, "seq": seq}))
    if req.lora_rank and req.lora_rank > arch.hidden:
        bad.append(Note(code="lora_rank_too_big", params={"rank": req.lora_rank, "hidden": arch.hidden}))
    if gpu and req.nodes and req.gpus and req.gpus // req.nodes > max(gpu.gpus_per_node, MAX_GPUS_PER_NODE):
        bad.append(
            Note(
                code="too_many_per_node",
                params={"per_node": req.gpus // req.nodes, "gpu": gpu.name, "limit": MAX_GPUS_PER_NODE},
            )
        )
    precision = req.precision
    if precision:
        allowed = SERVE_PRECISIONS if ctx.method == "infer" else TRAIN_PRECISIONS
        if precision not in allowed:
            bad.append(
                Note(code="bad_precision", params={"value": precision, "method": ctx.method, "allowed": list(allowed)})
            )
        elif gpu and precision.startswith("bf16") and not gpu.supports_bf16:
            bad.append(Note(code="no_bf16", params={"gpu": gpu.name}))
        elif gpu and precision == "fp8-mixed" and not gpu.fp8_tflops:
            bad.append(Note(code="no_fp8", params={"gpu": gpu.name}))
    if req.fabric and req.fabric not in ctx.cat.fabrics:
        bad.append(Note(code="unknown_fabric", params={"value": req.fabric, "fabrics": list(ctx.cat.fabrics)}))
    if ctx.method != "infer" and req.offload and req.offload != "none":
        needed = 3 if req.offload.endswith("-all") else 1
        if req.zero is not None and req.zero < needed:
            bad.append(
                Note(code="offload_needs_zero", params={"offload": req.offload, "zero": req.zero, "needed": needed})
            )
    return bad


# --- defaults ----------------------------------------------------------------------------


# by id(cat.models), which the entry keeps alive: (the models, the index by stated size, the shared
# shapes found of the sizes asked)
_NAMED_BY_SIZE: dict[int, tuple[dict, dict[float, list], dict[float, tuple]]] = {}
SHARED_SIZES = 1024  # the shared shapes one catalog keeps, at most (bare sizes asked)


def _by_size(cat: Catalog) -> tuple[dict, dict[float, list], dict[float, tuple]]:
    """The catalog's models by the size their names state (an index built once per catalog: a scan
    of every name cost some 40 us per bare size), with the shared shapes found so far."""
    key = id(cat.models)
    if key not in _NAMED_BY_SIZE:
        if len(_NAMED_BY_SIZE) > 64:  # catalogs made per request (a model read at run time): a bound
            _NAMED_BY_SIZE.clear()
        index: dict[float, list] = {}
        for spec in cat.models.values():
            index.setdefault(architecture.stated_size(spec.name), []).append(spec)
        _NAMED_BY_SIZE[key] = (cat.models, index, {})
    return _NAMED_BY_SIZE[key]


def _shared_at(params_b: float, cat: Catalog) -> tuple[tuple[int, ...] | None, list[str]]:
    """architecture.shared_shape of the models named at `params_b`, found once per catalog and size
    (25 models are named 7B: some 25 us a bare size, asked twice an estimate)."""
    _, index, shared = _by_size(cat)
    found = shared.get(params_b)  # one look-up: another thread may empty the dictionary meanwhile
    if found is None:
        found = architecture.shared_shape(params_b, index.get(params_b, []))
        if len(shared) >= SHARED_SIZES:
            shared.clear()
        shared[params_b] = found
    shape, names = found
    return shape, list(names)


def _resolve_model(req: Request, cat: Catalog) -> tuple[Arch, str | None]:
    if req.model:
        spec = cat.models.get(req.model)
        if spec is None:
            raise RequestError([Note(code="unknown_model", params={"value": req.model, "suggestions": []})])
        return architecture.for_spec(spec), spec.id
    if req.params_b is None:
        raise RequestError([Note(code="model_missing")])
    if req.active_params_b and req.active_params_b < req.params_b:
        return architecture.generic_moe(req.params_b, req.active_params_b), None
    shape, _ = _shared_at(req.params_b, cat)
    return architecture.generic(req.params_b, shape), None


def _seq_len(ctx: Context) -> int:
    if ctx.req.seq_len:
        return ctx.req.seq_len
    default = int(getattr(ctx.cat.defaults.seq_len, "continue_" if ctx.method == "continue" else ctx.method))
    if ctx.method == "infer" and ctx.req.prompt_tokens:
        return _prompt_and_default_output(ctx, ctx.req.prompt_tokens, default)
    if ctx.req.sample_tokens and ctx.req.sample_tokens > default:
        default = 1 << math.ceil(math.log2(ctx.req.sample_tokens))  # room for an average sample: next power of two
    seq = min(default, ctx.arch.max_context or default)
    ctx.assume("default_seq", seq=seq)
    return seq


def _prompt_and_default_output(ctx: Context, prompt: int, default: int) -> int:
    """A serving question that gives the prompt, not the output: the default context's output (its
    half after the prompt, compute.PROMPT_SHARE), within the model's context; said."""
    output = max(1, round(default * (1 - compute.PROMPT_SHARE)))
    if ctx.arch.max_context and prompt < ctx.arch.max_context:
        output = min(output, ctx.arch.max_context - prompt)
    ctx.assume("default_output", prompt=prompt, output=output)
    return prompt + output


# --- entry point ---------------------------------------------------------------------------


def estimate(req: Request, cat: Catalog | None = None) -> Estimate:
    """Estimate memory, time and cost; raises RequestError naming every value it cannot accept.

    With the process's own catalog the result is memoised by request: an estimate is a pure
    function of the request and the knowledge, which is loaded once per process. Callers never
    mutate an Estimate (tests/test_memo.py checks that cached and fresh answers agree)."""
    if (cat is None or cat is catalog()) and memo.enabled():
        return _estimate_memo(req.model_dump_json())
    return _estimate(req, cat or catalog())


@functools.lru_cache(maxsize=4096)
def _estimate_memo(request_json: str) -> Estimate:
    return _estimate(Request.model_validate_json(request_json), catalog())


def _users_servers(req: Request, cat: Catalog, gpu: GPU | None, assumptions: list[Note]) -> tuple[Catalog, GPU | None]:
    """ "16 A10 in one machine", "two machines with 2 x 3090 each", "2 nodes with 4 GPUs each": the
    user's own servers, denser or sparser than a type's usual one, taken as written; with the type
    left open, every type whose usual server holds more is planned in servers of that size."""
    per_node = req.gpus // req.nodes if req.nodes and req.gpus and req.gpus % req.nodes == 0 else 0
    if not 1 <= per_node <= MAX_GPUS_PER_NODE:
        return cat, gpu
    if gpu is None:
        sizes = Counter(g.gpus_per_node for g in cat.gpus.values())
        # sparser servers of any type (fewer cards fitted); a denser one only of a type named
        resized = [g for g in cat.gpus.values() if g.gpus_per_node > per_node]
        for other in resized:
            cat = cat.with_gpu(other.model_copy(update={"gpus_per_node": per_node}), other.id)
        if resized and per_node != sizes.most_common(1)[0][0]:  # servers of the usual size need no word
            assumptions.append(Note(code="servers_as_written", params={"per_node": per_node, "nodes": req.nodes}))
        return cat, None
    if per_node == gpu.gpus_per_node:
        return cat, gpu
    code = "dense_node" if per_node > gpu.gpus_per_node else "sparse_node"
    gpu = gpu.model_copy(update={"gpus_per_node": per_node})
    assumptions.append(Note(code=code, params={"per_node": per_node, "gpu": gpu.name, "nodes": req.nodes}))
    return cat.with_gpu(gpu, gpu.id), gpu


def _estimate(req: Request, cat: Catalog) -> Estimate:
    given = cat  # the catalog asked with, before the request's own servers and stock are applied
    problems = check_request(req, cat)
    if problems:
        raise RequestError(problems)
    arch, model_id = _resolve_model(req, cat)
    assumptions: list[Note] = []
    if arch.generic:
        assumptions.append(
            Note(
                code="generic_moe_arch" if arch.is_moe else "generic_arch",
                params={
                    "params_b": req.params_b,
                    **architecture.describe_generic(arch),
                    "vocab": arch.vocab,
                    "like": _shared_at(req.params_b, cat)[1],
                },
            )
        )
    if arch.vision_params:
        assumptions.append(Note(code="vision_encoder", params={"vision_b": arch.vision_params / 1e9}))
    method = req.method or ("infer" if req.decode_gpus else str(cat.defaults.method.value))  # a decode pool serves
    if not req.method:
        assumptions.append(Note(code="default_method", params={"method": method}))
    gpu = None
    if req.gpu:
        gpu = cat.gpus.get(req.gpu)
        if gpu is None:
            raise RequestError([Note(code="unknown_gpu", params={"value": req.gpu, "suggestions": []})])
    cat, gpu = _users_servers(req, cat, gpu, assumptions)
    warnings: list[Note] = []
    if gpu and cat.stock(gpu.id, req.region)[0] == 0:
        # a named type the provider does not stock: the user's own or another provider's, any count
        cat = cat.with_stock(gpu.id, int(cat.defaults.number("limits", "max_gpus")), req.region)
        warnings.append(Note(code="not_stocked", params={"gpu": gpu.name, "region": req.region or ""}))
    ctx = Context(cat, req, arch, model_id, gpu, method, assumptions, warnings)
    seq = _seq_len(ctx)
    problems = _check_against_model(ctx, seq)
    if problems:
        raise RequestError(problems)
    if method == "infer":
        return estimate_serving(ctx, seq)
    planned = estimate_training(ctx, seq)
    _friendlier_count(req, given, planned)
    return planned


def friendly_count(gpus: int) -> int:
    """The largest count up to `gpus` of the form 2^k or 3 x 2^k (k >= 3): one that tensor,
    pipeline, expert and data parallel sizes in powers of two divide (98,304 of 100,000); `gpus`
    itself below 8."""
    counts = [c for k in range(3, 40) for c in (2**k, 3 * 2**k) if c <= gpus]
    return max(counts, default=gpus)


def _friendlier_count(req: Request, cat: Catalog, planned: Estimate) -> None:
    """A fixed count of GPUs that parallel sizes in powers of two do not divide (100,000 = 2^5 x
    5^5 leaves expert parallelism 4 at most): the plan on the largest count of them they do
    divide, said when it finishes a fifth sooner or more."""
    if not req.gpus or req.gpus < 64 or (req.nodes and req.nodes > 1) or planned.compute.days is None:
        return
    fewer = friendly_count(req.gpus)
    if fewer == req.gpus or fewer < 0.75 * req.gpus:
        return
    try:
        probe = estimate(req.model_copy(update={"gpus": fewer, "nodes": None}), cat)  # memoised
    except RequestError:
        return
    if probe.memory.fits and probe.compute.days < 0.8 * planned.compute.days:
        planned.warnings.append(
            Note(
                code="friendlier_count",
                params={
                    "gpus": req.gpus,
                    "fewer": fewer,
                    "days": probe.compute.days,
                    "planned_days": planned.compute.days,
                    "mfu": probe.compute.mfu,
                    "tp": probe.resolved.tp,
                    "pp": probe.resolved.pp,
                    "ep": probe.resolved.ep,
                },
            )
        )
