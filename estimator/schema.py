"""The pydantic models that flow through the pipeline: Request -> Estimate -> Plan.

Nothing here renders text. Assumptions, warnings and errors are `Note`s (a code plus the numbers
to quote); the bot renders them in the reader's language from `templates/<lang>/messages.yaml`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypeAliasType

from gpuplan.estimator.answer_schema import ComparisonRow, Diagnosis, Facts, FootprintRow, Largest, Price, Tier
from gpuplan.knowledge import Shape, catalog

Method = Literal["pretrain", "continue", "full", "lora", "qlora", "dpo", "ppo", "infer"]
TrainPrecision = Literal["bf16-mixed", "fp16-mixed", "bf16", "fp32", "fp8-mixed"]
ServePrecision = Literal["bf16", "fp16", "fp8", "int8", "int4"]
Optimizer = Literal["adamw", "adamw8bit", "paged-adamw8bit", "sgd", "adafactor"]
Offload = Literal["none", "cpu", "nvme", "cpu-all", "nvme-all"]
Ckpt = Literal["none", "selective", "full"]
Loss = Literal["chunked", "unchunked"]  # unchunked: Transformers' own cross-entropy over the whole sequence
KvCache = Literal["bf16", "fp8", "int8", "int4"]  # serving: the KV cache's element type (vLLM --kv-cache-dtype)
# serving: prompts prefilled in the decode steps (vLLM's chunked prefill) or on GPUs apart (disaggregated)
Prefill = Literal["chunked", "disaggregated"]
Region = Literal["us", "hk", "sg", "jp", "kr"]
Objective = Literal["cheapest", "fastest", "fewest"]
DataKind = Literal["tokens", "text", "image", "video"]
Area = Literal["na", "eu", "cn", "sea", "nea", "jp", "kr", "in", "oce", "global"]
Lang = Literal["en", "zh"]

METHODS: tuple[str, ...] = Method.__args__  # type: ignore[attr-defined]
TRAIN_PRECISIONS: tuple[str, ...] = TrainPrecision.__args__  # type: ignore[attr-defined]
SERVE_PRECISIONS: tuple[str, ...] = ServePrecision.__args__  # type: ignore[attr-defined]
OPTIMIZERS: tuple[str, ...] = Optimizer.__args__  # type: ignore[attr-defined]
OFFLOADS: tuple[str, ...] = Offload.__args__  # type: ignore[attr-defined]
CKPTS: tuple[str, ...] = Ckpt.__args__  # type: ignore[attr-defined]
LOSSES: tuple[str, ...] = Loss.__args__  # type: ignore[attr-defined]
KV_CACHES: tuple[str, ...] = KvCache.__args__  # type: ignore[attr-defined]
PREFILLS: tuple[str, ...] = Prefill.__args__  # type: ignore[attr-defined]
REGIONS: tuple[str, ...] = Region.__args__  # type: ignore[attr-defined]
OBJECTIVES: tuple[str, ...] = Objective.__args__  # type: ignore[attr-defined]
DATA_KINDS: tuple[str, ...] = DataKind.__args__  # type: ignore[attr-defined]
AREAS: tuple[str, ...] = Area.__args__  # type: ignore[attr-defined]
ADAPTER_METHODS = ("lora", "qlora")


# a value a message quotes: JSON's (a renderer passing a model's fields passes them as a dict)
NoteValue = TypeAliasType(
    "NoteValue", "str | int | float | bool | None | list[NoteValue] | tuple[NoteValue, ...] | dict[str, NoteValue]"
)


class Note(BaseModel):
    """An assumption, warning or error: a message code and the values it quotes."""

    model_config = ConfigDict(frozen=True)

    code: str
    params: dict[str, NoteValue] = Field(default_factory=dict)


class Request(BaseModel):
    """What the user asked for. None means "left open": the estimator chooses and says so."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    params_b: float | None = None
    active_params_b: float | None = None  # a Mixture-of-Experts model's parameters per token ("32B active")
    method: Method | None = None
    seq_len: int | None = None
    prompt_tokens: int | None = None  # serving: a sequence's average prompt, within seq_len ("5000-token prompts")
    micro_batch: int | None = None
    global_batch: int | None = None
    train_tokens: float | None = None
    samples: int | None = None
    sample_tokens: int | None = None  # average tokens per sample ("100k samples averaging 1500 tokens")
    epochs: float | None = None
    dataset_gb: float | None = None
    precision: str | None = None
    optimizer: Optimizer | None = None
    gpu: str | None = None
    gpu_memory_gib: float | None = None  # a GPU named by its memory only ("a 48GB card")
    host_ram_gib: float | None = None  # the RAM of the user's own servers, per node ("内存 256G")
    gpus: int | None = None
    nodes: int | None = None
    zero: int | None = None
    offload: Offload | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None  # expert parallel (MoE)
    cp: int | None = None  # context parallel
    etp: int | None = None  # expert tensor parallel (MoE, Megatron-Core's --expert-tensor-parallel-size)
    # interleaved pipeline: model chunks per GPU (Megatron's --virtual-pipeline-model-parallel-size;
    # 1: plain 1F1B); None lets the search choose
    vpp: int | None = None
    # MoE training: one micro-batch's expert all-to-all beside another's compute (Megatron-Core's
    # --overlap-moe-expert-parallel-comm, combined 1F1B); None: on wherever the layout allows it
    ep_overlap: bool | None = None
    ckpt: Ckpt | None = None
    loss: Loss | None = None
    framework: str | None = None  # training: whose memory habits to follow (knowledge/frameworks.yaml id)
    kv_cache: KvCache | None = None  # serving: None keeps it 16-bit, or fp8 beside fp8 weights
    prefill: Prefill | None = None  # serving: None lets the estimator choose the cheaper per generated token
    # serving: the decode pool's GPUs, the prefill pool sized to keep up with it added on top (prefill apart)
    decode_gpus: int | None = None
    # serving: planned at the most sequences the GPUs hold with the usual headroom (the question asks
    # how many at once), on the shape that generates most per GPU at full load; ignored with micro_batch
    full_load: bool | None = None
    lora_rank: int | None = None
    mfu: float | None = None
    deadline_days: float | None = None
    budget_usd: float | None = None
    region: Region | None = None
    objective: Objective | None = None
    fabric: str | None = None
    data: DataKind | None = None
    users: Area | None = None

    def given(self) -> set[str]:
        return {k for k, v in self.model_dump().items() if v is not None}


class Resolved(BaseModel):
    """A complete request: every choice made, by the user or by the estimator."""

    model: str | None
    model_name: str
    params_b: float
    active_params_b: float
    method: Method
    seq_len: int
    micro_batch: int
    global_batch: int
    train_tokens: float
    precision: str
    optimizer: Optimizer
    gpu: str
    gpu_name: str
    gpus: int
    nodes: int
    zero: int
    offload: Offload
    tp: int
    pp: int
    dp: int
    ckpt: Ckpt
    loss: Loss | None = None  # training: the cross-entropy the memory counts; None for serving
    kv_cache: KvCache | None = None  # serving: the KV cache's element type; None for training
    prompt_tokens: int | None = None  # serving: each sequence's prompt, the rest of seq_len its output
    prefill: Prefill | None = None  # serving: where the prompts are prefilled
    vpp: int = 1  # interleaved pipeline: model chunks per GPU (1: plain 1F1B)
    ep: int = 1  # expert parallel: routed experts sharded over ep ranks of the data-parallel group
    cp: int = 1  # context parallel: each sequence split over cp ranks
    # expert tensor parallel (training with ep > 1): the routed experts over ep x etp GPUs of a stage
    etp: int | None = None
    lora_rank: int | None
    mfu: float | None
    deadline_days: float | None
    budget_usd: float | None
    region: Region | None
    objective: Objective
    fabric: str | None


class MemoryBreakdown(BaseModel):
    weights: float
    gradients: float
    optimizer: float
    activations: float
    adapters: float
    kv_cache: float
    overhead: float


class MemoryEstimate(BaseModel):
    per_gpu_gib: float
    capacity_gib: float
    usable_gib: float  # what a plan may fill: a share of the card for training, the engine's for serving (fit.py)
    fits: bool  # per_gpu_gib <= usable_gib
    tight: bool = False  # fits, within overhead.tight_fraction of usable_gib
    host_ram_gib: float
    nvme_gib: float
    breakdown_gib: MemoryBreakdown
    # serving: the share of the GPU an engine takes by default (vLLM's gpu_memory_utilization)
    engine_limit_gib: float | None = None


class ComputeEstimate(BaseModel):
    total_flops: float
    flops_per_token: float
    train_tokens: float
    mfu: float
    tokens_per_s_per_gpu: float
    step_time_s: float | None
    days: float
    gpu_hours: float
    cost_usd: float
    price_usd_per_gpu_hour: float
    cost_per_million_tokens_usd: float | None = None
    # training: the share of wall-clock that trains, from interruptions and checkpoints
    goodput: float | None = None
    mtbi_hours: float | None = None  # mean time between interruptions of the whole job
    interruptions: float | None = None  # expected over the run
    checkpoint_interval_min: float | None = None  # Young's interval; None when an interruption is unlikely


class Alternative(BaseModel):
    # other_gpu | fewer_gpus_offload | with_offload | faster | cheaper_slower | quantized | fewer_gpus |
    # full_load_layout (serving: the shape that generates most at full load)
    reason: str
    gpu: str
    gpu_name: str
    gpus: int
    zero: int
    tp: int
    pp: int
    ckpt: Ckpt
    offload: Offload
    micro_batch: int
    region: str | None
    days: float
    cost_usd: float
    per_gpu_gib: float
    # serving alternatives: the weights' precision, generated tokens/s per GPU, cost per million
    # (their days and cost_usd are a day of serving, as the serving plan's own figures)
    precision: str | None = None
    tokens_per_s_per_gpu: float | None = None
    cost_per_million_tokens_usd: float | None = None
    ep: int = 1  # serving: expert parallel with data-parallel attention (MoE)


def _is_none(value: object) -> bool:
    return value is None


class _Sparse(BaseModel):
    """A report whose training and serving forms carry different fields: the ones a form does not
    have are None and left out of its dump (and of the JSON answer). Each optional field is marked
    `exclude_if` None, so that the published JSON schema names every field a form may have."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: object) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for field in cls.model_fields.values():
            if not field.is_required():
                field.exclude_if = _is_none
        cls.model_rebuild(force=True)


class IOEstimate(_Sparse):
    """Around the GPUs: the data read, checkpoints written, storage and host RAM (estimator/io.py)."""

    data: str  # tokens | text | image | video, or "weights" for serving
    bytes_per_token: float | None = None
    read_mb_s: float
    read_mb_s_per_node: float | None = None
    decode_cores_per_node: float | None = None
    cpu_bound: bool | None = None
    dataloader_workers_per_gpu: int | None = None
    dataset_gb: float
    checkpoint_gb: float
    retained_checkpoints: int | None = None
    export_gb: float | None = None
    base_gb: float | None = None  # training: the weights it starts from, as released (none from scratch)
    checkpoint_write_s: float
    load_s: float | None = None  # serving: reading the weights at start-up
    storage_tb: float
    storage_tb_per_node: float | None = None
    storage: str
    storage_reason: str | None = None
    storage_read_gb_s: float | None = None
    host_ram_gib: float
    nodes: int


class FabricOption(BaseModel):
    fabric: str
    name: str
    step_s: float
    comm_fraction: float


class NetworkEstimate(_Sparse):
    """Traffic per step and the share of the step spent waiting on it (estimator/network.py)."""

    per_step_gb: float  # every GPU's traffic per step, inside a node (NVLink, PCIe) and between nodes
    between_nodes_gb: float | None = None  # of it, what crosses the fabric between nodes
    fabric: str
    assumed_fabric: str | None = None  # multi-node training: the fabric the plan's time assumes
    assumed_comm_fraction: float | None = None
    single_node: bool
    comm_fraction: float
    comm_total_fraction: float | None = None
    by_dimension_gb: dict[str, float]
    options: list[FabricOption] = Field(default_factory=list)


class MigSlice(BaseModel):
    gpu: str
    gpu_name: str
    profile: str
    memory_gib: float
    per_gpu: int


class ServingEstimate(BaseModel):
    """One serving replica: KV cache, weights, speed at the planned concurrency, a MIG slice."""

    kv_bytes_per_token: float
    kv_cache_gib: float
    weights_gib: float
    concurrency: int
    context: int
    replica_gpus: int
    tokens_per_s_ceiling: float
    tokens_per_s_per_sequence: float
    # at full load (estimator/saturation.py): the most sequences the KV-cache budget holds
    max_concurrency: int | None = None
    max_tokens_per_s_per_gpu: float | None = None
    max_tokens_per_s_per_sequence: float | None = None
    max_capped: bool = False  # stopped by the engine's batch or step token limit, not by memory
    prompt_tokens: int | None = None  # each sequence's prompt; context - prompt_tokens is its output
    prefill: Prefill = "chunked"  # where the prompts are prefilled
    # disaggregated: the GPUs of each pool (gpus counts both) and the prompt tokens/s a prefill GPU computes
    decode_gpus: int | None = None
    prefill_gpus: int = 0
    prefill_tokens_per_s_per_gpu: float | None = None
    decode_tokens_per_s_per_gpu: float | None = None  # disaggregated: generated tokens/s per decode-pool GPU
    mig: MigSlice | None
    region: str | None
    users: str | None


class NamedShape(Shape):
    """The model shape an estimate was computed with, under the model's name and with its frozen vision
    encoder's parameters, kept so that what quotes it (the "show the math" modal, a stored plan opened
    later, the config files) never rebuilds or guesses it."""

    name: str
    vision_params: int = 0


# the fields an estimate kept of its model's shape before it kept the whole Shape (ArchitectureUsed)
SHAPE_PART_STORED_BEFORE = {"name", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab"} | {
    "tied",
    "experts",
    "experts_per_token",
    "vision_params",
    "kv_lora_rank",
}


def shape_stored_before(value: Any) -> Any:
    """A plan stored before the estimate kept the whole Shape kept the part above: that part becomes
    its catalog model's shape; without a catalog model of its name, a dense shape stands as kept
    (the rest at its defaults) and a mixture of experts or MLA becomes None (as in a plan stored
    before any shape was kept: its expert width is unknown). Other values as given."""
    if not isinstance(value, dict) or not set(value) <= SHAPE_PART_STORED_BEFORE:
        return value
    known = (m for m in catalog().models.values() if m.name == value.get("name"))
    spec = next((m for m in known if (m.layers, m.hidden) == (value.get("layers"), value.get("hidden"))), None)
    if spec is not None:
        return {**spec.shape_fields(), "name": spec.name, "vision_params": value.get("vision_params", 0)}
    if value.get("kv_lora_rank") or value.get("experts", 1) > 1:
        return None
    return {key: item for key, item in value.items() if key != "kv_lora_rank"}


class Estimate(BaseModel):
    resolved: Resolved
    memory: MemoryEstimate
    compute: ComputeEstimate
    io: IOEstimate
    network: NetworkEstimate | None = None
    serving: ServingEstimate | None = None
    architecture: NamedShape | None = None  # None only in plans stored before it was kept
    alternatives: list[Alternative] = Field(default_factory=list)
    candidates: int = 0
    assumptions: list[Note] = Field(default_factory=list)
    warnings: list[Note] = Field(default_factory=list)

    @field_validator("architecture", mode="before")
    @classmethod
    def _architecture_stored_before(cls, value: Any) -> Any:
        return shape_stored_before(value)


# a figure a question asks for whose verdict is named as the question (bot/language/intent.py question_kind)
FigureAsked = Literal["storage", "host_ram", "longest", "batch", "throughput", "gpu_hours"]
VerdictKind = Literal[
    "fits",
    "does_not_fit",
    "duration",
    "count",
    "choice",
    "diagnosis",
    "infeasible",
    "largest",
    "price",
    "plan",
    "capacity",
    FigureAsked,
    "other",
]
# what the question asked to be told (bot/language/intent.py question_kind, plus the kinds of question
# the parser tells apart on its own)
Asked = Literal[
    "fit",
    "time",
    "cost",
    "count",
    "memory",
    "concurrency",
    FigureAsked,
    "plan",
    "choice",
    "why",
    "largest",
    "price",
    "other",
]


class Remedy(_Sparse):
    """One change that makes a plan that does not fit fit, with the plan it gives (estimator/remedy.py)."""

    # gpus | offload | method | seq_len, or the steps of a ladder joined by "+": loss, micro_batch, ckpt,
    # zero (training), kv_cache, precision, micro_batch, seq_len (serving)
    change: str
    value: str | int | float
    gpus: int
    gpu_name: str
    per_gpu_gib: float
    usable_gib: float
    days: float | None = None  # training: the whole run; serving: None
    cost_usd: float | None = None
    host_ram_gib: float | None = None  # offload: what the host must hold
    concurrency: int | None = None  # serving: sequences at once
    precision: str | None = None  # serving: the weights' precision it takes
    kv_cache: str | None = None  # serving: the KV cache's element type it takes
    seq_len: int | None = None  # the sequence (serving: context) length it takes


class Verdict(_Sparse):
    """What the answer's first line says, as data: its kind and the values the sentence quotes.
    Every surface renders the same verdict (bot/render.py `headline`)."""

    kind: VerdictKind
    asked: Asked
    reason: str | None = None  # other: help | out_of_scope | clarify; choice: why the pick
    model_name: str | None = None
    generic: bool | None = None  # a bare size, no catalog model: "a 70B model"
    method: str | None = None
    seq_len: int | None = None
    gpu_name: str | None = None
    gpus: int | None = None
    nodes: int | None = None
    gpus_given: bool | None = None  # the count is the user's own, not one gpuplan chose
    per_gpu_gib: float | None = None
    usable_gib: float | None = None
    tight: bool | None = None
    remedies: list[Remedy] | None = None  # smallest change first
    as_run: bool | None = None  # diagnosis: the memory is the run's as the HF Trainer runs it by default
    least_gib: float | None = None  # memory asked: the least one GPU needs for the method (footprint)
    least_cards: list[str] | None = None  # the cheapest catalog cards of the least memory that hold it
    least_card_gib: float | None = None  # their memory
    # storage asked: the disk the plan keeps in all (20% spare included), and what it holds
    storage_gb: float | None = None
    storage_gb_per_node: float | None = None  # what each server keeps, where the storage is its own
    storage: str | None = None  # the storage option that holds it (knowledge/storage.yaml id)
    base_gb: float | None = None  # the weights a run starts from (serving: the weights served)
    dataset_gb: float | None = None
    checkpoint_gb: float | None = None
    checkpoints: int | None = None  # checkpoints kept
    export_gb: float | None = None  # the final model (a fine-tune's adapter alone)
    host_ram_gib: float | None = None  # host RAM asked: per server, offloaded state included
    offload: str | None = None  # host RAM asked: what the plan offloads to the host (none | cpu | ...)
    longest_tokens: int | None = None  # longest asked: one sequence's tokens on the plan's GPUs
    model_context: int | None = None  # longest asked: what the model reads by itself (max_position_embeddings)
    at_context: int | None = None  # longest asked, serving: sequences of model_context one replica holds at once
    most_sequences: int | None = None  # batch asked (training): the largest micro-batch a GPU holds
    ckpt: str | None = None  # batch asked: the activation checkpointing it takes (none | selective | full)
    plain_sequences: int | None = None  # batch asked: the largest micro-batch without checkpointing (0: none)
    tokens_per_s_per_gpu: float | None = None  # throughput asked: tokens/s a GPU trains on or generates
    mfu: float | None = None  # throughput asked, training: model FLOPs utilisation
    full_load_tokens_per_s: float | None = None  # throughput asked, serving: tokens/s generated at full load
    gpu_hours: float | None = None  # GPU-hours asked: the whole run's, interruptions included
    days: float | None = None
    cost_usd: float | None = None
    train_tokens: float | None = None
    data_given: bool | None = None  # the dataset's size was stated (tokens, samples, a dataset size)
    epochs: float | None = None
    hours_per_unit: float | None = None  # no data size given: hours per `unit_tokens` of training data
    unit_tokens: float | None = None
    concurrency: int | None = None  # serving: a replica's sequences at once
    replicas: int | None = None  # serving: replicas, each serving `concurrency`
    served: int | None = None  # serving: the sequences at once in all (replicas left idle serve none)
    full_load: int | None = None  # serving: the most sequences at once the replicas' KV caches hold in all
    context: int | None = None
    tokens_per_s_per_sequence: float | None = None
    usd_per_million_tokens: float | None = None
    usd_per_hour: float | None = None
    usd_per_month: float | None = None  # serving, a month asked: usd_per_hour around the clock, 730 hours
    # serving on a decode pool given (decode_gpus): the two pools, the generated tokens/s of the whole
    # deployment and of one decode GPU
    decode_gpus: int | None = None
    prefill_gpus: int | None = None
    tokens_per_s: float | None = None
    decode_tokens_per_s_per_gpu: float | None = None
    pick: str | None = None  # choice: the option picked, as it is named
    other: str | None = None  # choice: the option it is weighed against
    pick_value: float | None = None  # choice: the figure that decided (days, $, $/Mtok, tokens/s)
    other_value: float | None = None
    other_days: float | None = None  # choice: the other option's time (training) or speed (serving)
    cause: str | None = None  # diagnosis: the rule id of the most likely cause
    limit: str | None = None  # infeasible: deadline | budget | both
    deadline_days: float | None = None
    budget_usd: float | None = None
    tokens_within: float | None = None  # infeasible: the training tokens the limit affords
    params_b: float | None = None  # largest: the size; plan: the model's
    at_least: bool | None = None  # largest, longest, batch: the search reached its ceiling (and more fits)
    figures: dict[str, float] | None = None  # largest: billions of parameters per method (infer_int4 too)
    bounded: list[str] | None = None  # largest: the methods whose figure is the search's ceiling
    hours: float | None = None  # price: the hours priced


class Plan(BaseModel):
    """What the estimator decided for one request. Figures are None when the reply asks a question back.
    How the question was read (its language, notes, what to ask back) is the bot's: bot/answer.py
    `Reading`, which an `Answer` carries beside the plan."""

    request: Request
    estimate: Estimate | None = None
    io: IOEstimate | None = None
    network: NetworkEstimate | None = None
    tier: Tier | None = None
    alternatives: list[Alternative] = Field(default_factory=list)
    diagnoses: list[Diagnosis] = Field(default_factory=list)  # rules engine output, most relevant first
    facts: Facts | None = None  # what the diagnoses' answers quote; None: no rule was looked at
    comparison: list[ComparisonRow] = Field(default_factory=list)  # one summary per compared option
    largest: Largest | None = None  # the largest model per method on given GPUs
    price: Price | None = None  # what given GPUs cost for a time
    footprint: list[FootprintRow] = Field(default_factory=list)  # the least memory per method on one GPU
    verdict: Verdict | None = None  # the answer to the question asked: the first line on every surface
