"""The facts a config file needs, read off a plan: every number here is one the plan decided
(layout, batch, sequence, precision, KV budget), none is computed a second way."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from importlib import resources

from gpuplan.estimator.schema import ADAPTER_METHODS, Plan
from gpuplan.knowledge import ModelSpec, Shape, catalog, read_yaml


class ConfigError(Exception):
    """The plan cannot be written in the asked format; `code` names a message, `params` fill it."""

    def __init__(self, code: str, **params):
        super().__init__(code)
        self.code = code
        self.params = params


@dataclass(frozen=True)
class Launch:
    """One planned job, as the launchers and config files see it."""

    model_name: str
    hf_id: str | None  # the Hugging Face id, when the catalog knows it
    spec: ModelSpec | None  # the catalog's entry: its id, release precision and context
    shape: Shape  # the model's architecture, for the model arguments
    method: str
    gpu_name: str
    gpus: int
    nodes: int
    per_node: int  # GPUs each node runs
    tp: int
    pp: int
    vpp: int
    ep: int
    cp: int
    dp: int  # data-parallel replicas (training) or serving replicas
    zero: int
    offload: str
    ckpt: str
    micro_batch: int  # per GPU (training); concurrent sequences the plan sized (serving)
    global_batch: int
    grad_accum: int
    seq_len: int
    precision: str
    optimizer: str
    lora_rank: int | None
    fabric: str | None
    train_tokens: float  # training tokens the plan sized (serving: tokens of the planned day)
    train_steps: int | None  # optimizer steps for the planned tokens
    save_every_steps: int | None  # the plan's checkpoint interval, in steps
    checkpoint_minutes: float | None  # that interval (Young's), in minutes
    max_num_seqs: int | None  # serving: the sequences the KV-cache budget holds at full load
    memory_fraction: float  # serving: the engine's share of GPU memory the plan assumed
    note: str = ""  # a header line about how the plan was made for this format
    loss: str = "chunked"  # the cross-entropy the plan's memory counts (loss=unchunked: Transformers' own)
    kv_cache: str | None = None  # serving: the KV cache's element type the plan counts
    etp: int = 1  # training with ep > 1: the experts' tensor-parallel size (Megatron-Core's default: tp)
    prefill_gpus: int = 0  # serving disaggregated: the GPUs that prefill the prompts (gpus counts them, dp does not)
    ep_overlap: bool = True  # MoE training: the all-to-all paired with another micro-batch where the layout allows

    @property
    def serving(self) -> bool:
        return self.method == "infer"

    @property
    def disaggregated(self) -> bool:
        """Prompts prefilled on GPUs of their own, apart from the dp replicas that decode."""
        return self.serving and self.prefill_gpus > 0

    @property
    def adapters(self) -> bool:
        return self.method in ADAPTER_METHODS

    @property
    def megatron_layout(self) -> bool:
        return self.tp > 1 or self.pp > 1 or self.ep > 1 or self.cp > 1


def launch_from(plan: Plan) -> Launch:
    """The Launch of a plan; ConfigError when the answer holds no plan (a question back, a diagnosis)."""
    est = plan.estimate
    if est is None or est.architecture is None:
        raise ConfigError("config_no_plan")
    r, cat = est.resolved, catalog()
    spec = cat.models.get(r.model) if r.model else None
    per_node = max(1, math.ceil(r.gpus / max(r.nodes, 1)))
    step_s, interval = est.compute.step_time_s, est.compute.checkpoint_interval_min
    steps = math.ceil(r.train_tokens / (r.global_batch * r.seq_len)) if r.method != "infer" else None
    save_every = max(1, round(interval * 60 / step_s)) if interval and step_s else None
    serving = est.serving
    return Launch(
        model_name=r.model_name,
        hf_id=hf_id(spec) if spec else _repo_like(r.model),
        spec=spec,
        # the catalog's shape where it has the model (a plan stored before the estimate kept the whole
        # shape kept only part of it), else the shape the plan was sized with
        shape=spec or est.architecture,
        method=r.method,
        gpu_name=r.gpu_name,
        gpus=r.gpus,
        nodes=max(r.nodes, 1),
        per_node=per_node,
        tp=r.tp,
        pp=r.pp,
        vpp=r.vpp,
        ep=r.ep,
        cp=r.cp,
        etp=r.etp if r.etp is not None else r.tp,
        dp=r.dp,  # data-parallel replicas (training) or serving replicas
        zero=r.zero,
        offload=r.offload,
        ckpt=r.ckpt,
        micro_batch=r.micro_batch,
        global_batch=r.global_batch,
        grad_accum=max(1, r.global_batch // max(r.micro_batch * r.dp, 1)),
        seq_len=r.seq_len,
        precision=r.precision,
        optimizer=r.optimizer,
        lora_rank=r.lora_rank,
        fabric=r.fabric,
        train_tokens=r.train_tokens,
        train_steps=steps,
        save_every_steps=save_every,
        checkpoint_minutes=interval if save_every else None,
        max_num_seqs=(serving.max_concurrency or serving.concurrency) if serving else None,
        memory_fraction=_engine_fraction(est, cat.defaults.number("inference", "engine_memory_fraction")),
        loss=r.loss or "chunked",
        kv_cache=r.kv_cache,
        prefill_gpus=serving.prefill_gpus if serving and serving.prefill == "disaggregated" else 0,
        ep_overlap=plan.request.ep_overlap is not False,  # the question's: the plan pairs unless it says off
    )


def _engine_fraction(est, default: float) -> float:
    """The engine's share of GPU memory to launch with: the default, or, when the plan misses it
    by a little (up to 98% of the card, the share the answer's warning names), that share."""
    m = est.memory
    if m.engine_limit_gib is None or m.fits or m.per_gpu_gib > 0.98 * m.capacity_gib:
        return default
    return math.ceil(m.per_gpu_gib / m.capacity_gib * 100) / 100


def hf_id(spec: ModelSpec) -> str | None:
    """The Hugging Face id of a catalog model: an alias written as org/name, else the one its
    source cites (huggingface.co/org/name)."""
    alias = next((a for a in spec.aliases if _repo_like(a)), None)
    if alias:
        return alias
    found = re.search(r"huggingface\.co/([\w.-]+/[\w.-]+)", spec.source)
    return found.group(1) if found else None


def _repo_like(name: str | None) -> str | None:
    return name if name and re.fullmatch(r"[\w.-]+/[\w.-]+", name) else None


def decoder_layer_class(launch: Launch) -> str | None:
    """The transformers class of one decoder layer (what FSDP wraps), from knowledge/exports.yaml."""
    return _family_entry(launch, "decoder_layers", "class")


def chat_template(launch: Launch) -> str | None:
    """LLaMA-Factory's template name for the model family, from knowledge/exports.yaml."""
    return _family_entry(launch, "llamafactory_templates", "template")


def liger_model_type(launch: Launch) -> str | None:
    """The model_type Liger-Kernel patches for the family (its fused linear cross-entropy), from
    knowledge/exports.yaml; None when it has no kernels for it."""
    return _family_entry(launch, "liger_kernels", "model_type")


def uses_liger(launch: Launch) -> bool:
    """Whether the Hugging Face formats switch on Liger's fused cross-entropy: where Liger has
    kernels for the family, unless the plan counts Transformers' own loss (loss=unchunked)."""
    return launch.loss != "unchunked" and liger_model_type(launch) is not None


def _family_entry(launch: Launch, table: str, field: str) -> str | None:
    """The first entry of an exports.yaml table whose `match` fits the catalog id; None without one."""
    if launch.spec is None:
        return None
    return next((e[field] for e in _exports()[table] if re.search(e["match"], launch.spec.id)), None)


@functools.cache
def _exports() -> dict:
    text = resources.files("gpuplan.knowledge").joinpath("exports.yaml").read_text(encoding="utf-8")
    return read_yaml(text)
