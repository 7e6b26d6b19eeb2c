"""The parts of a `Plan` beside the estimate (estimator/schema.py): the provider's tier, the
troubleshooting diagnoses, a comparison's rows, the answers about hardware (the largest model, a
price), the least memory per method, and the figures a user's own logs state.

Each model keeps the keys, their order and which of them are left out when empty exactly as the JSON
answer prints them (docs/json.md): a field marked `_absent_when_none` is left out of the dump when it
is None, every other field is printed, null included. This module imports nothing of gpuplan's, so
that schema.py can build `Plan` from it; the few choices it names (ckpt, offload) are plain strings here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# a figure as it was computed or read: an int stays an int in the JSON answer ("2", not "2.0")
Number = int | float


def _absent_when_none(description: str = ""):  # noqa: ANN202 (a pydantic FieldInfo)
    """A field left out of the dump (and of the JSON answer) when it is None."""
    return Field(default=None, exclude_if=lambda value: value is None, description=description or None)


# --- the provider's tier (estimator/tiers.py) --------------------------------------------------------


class TierLink(BaseModel):
    """Another tier named beside the matched one: the starter tier with concrete configurations."""

    id: str
    title: str
    url: str


class TierNeeded(BaseModel):
    """The fewest GPUs of the starting configuration's type that hold the job."""

    gpu: str
    gpu_name: str
    gpus: int
    tp: int
    zero: int
    ckpt: str
    fits: bool


class TierWithOffload(BaseModel):
    """The starting configuration's GPUs with optimizer offload, when the estimate suggests it."""

    gpus: int
    per_gpu_gib: Number
    host_ram_gib: Number


class TierStart(BaseModel):
    """The tier's starting configuration estimated for this job: does it hold it?"""

    tier: str | None = _absent_when_none("the tier it starts; absent when the configuration could not be estimated")
    gpu: str
    gpu_name: str
    gpus: int
    fits: bool
    per_gpu_gib: float | None  # None: the configuration could not be estimated
    needed: TierNeeded | None = _absent_when_none("when it does not hold the job: the fewest GPUs that do")
    with_offload: TierWithOffload | None = _absent_when_none("when it does not: the same GPUs with offload")


class Tier(BaseModel):
    """The provider's matching tier (training), or the guide's serving section (`kind` deployment)."""

    id: str
    title: str
    url: str
    summary: str
    kind: str  # plan | starter | deployment
    exact: bool  # the tier lists the method, the size and the plan's own configuration
    starter: TierLink | None = _absent_when_none("the starter tier, when it is not the matched one")
    start: TierStart | None = _absent_when_none("training: the starting configuration; absent for serving")


# --- the troubleshooting diagnoses (estimator/diagnose.py) ----------------------------------------------


class Probe(BaseModel):
    """A rule's probe: the request estimated again with a few settings changed ("ZeRO-3", "QLoRA")."""

    method: str
    gpu: str
    gpu_name: str
    gpus: int
    nodes: int
    zero: int
    ckpt: str
    offload: str
    precision: str
    per_gpu_gib: float
    capacity_gib: float
    usable_gib: float
    fits: bool
    host_ram_gib: float
    days: float
    cost_usd: float
    concurrency: int | None  # serving: sequences at once; None for training


class Diagnosis(BaseModel):
    """A troubleshooting rule that applies, as the rules engine found it (bot/render.py words it)."""

    id: str
    topic: str
    fired_by: str  # question | numbers | both
    score: float  # the order of the diagnoses: the question's own rules first, then by severity
    severity: int
    probes: dict[str, Probe] = Field(default_factory=dict)


# --- a comparison (bot/pipeline.py) -----------------------------------------------------------------


class ComparisonRow(BaseModel):
    """One compared option's plan, summarised; of those that fit, the fastest and the cheapest marked."""

    kind: str  # gpu | method | model
    option: str | Number  # as the question named it: a GPU id, a method, a model id or a size in billions
    gpu: str
    gpu_name: str
    gpus: int
    method: str
    model_name: str
    per_gpu_gib: float
    capacity_gib: float
    fits: bool
    days: float
    cost_usd: float
    tokens_per_s_per_gpu: float
    tokens_per_s_per_sequence: float | None  # serving only
    usd_per_million_tokens: float | None  # serving only
    fastest: bool = False
    cheapest: bool = False


# --- questions about hardware (estimator/capacity.py) -------------------------------------------------


class LargestRow(BaseModel):
    """The largest generic model one method fits on the GPUs asked about, and its plan's figures."""

    method: str
    precision: str
    sequences: int
    seq_len: int
    params_b: float
    at_least: bool  # the search's upper bound fits: the largest is larger still
    per_gpu_gib: float
    capacity_gib: float
    usable_gib: float
    days: float
    zero: int
    tp: int
    pp: int


class LargestInTime(LargestRow):
    """The largest compute-optimal pretraining that ends by the deadline."""

    deadline_days: float


class Largest(BaseModel):
    """ "The largest model 32 L40S can pretrain": a row per method (None: not even the smallest fits)."""

    gpu: str
    gpus: int
    methods: dict[str, LargestRow | None]  # pretrain, full, lora, qlora, infer, infer_int4
    pretrain_in_time: LargestInTime | None
    deadline_given: bool


class Bilingual(BaseModel):
    en: str
    zh: str


class PriceTier(BaseModel):
    """The provider's tier that offers the configuration priced, titled in both languages."""

    id: str
    url: str
    title: Bilingual


class Price(BaseModel):
    """ "What 8 H100 cost for two weeks": GPUs x hours x the regional GPU-hour price."""

    gpu: str
    gpu_name: str
    gpus: int
    hours: float
    region: str | None
    usd_per_gpu_hour: Number
    cost_usd: Number
    hours_given: bool  # False: a day is priced
    tier: PriceTier | None
    price_source: str


# --- the least memory per method (estimator/footprint.py) --------------------------------------------


class FootprintRow(BaseModel):
    """The least memory one GPU needs for a method (training: one sequence, every layer recomputed)."""

    model_config = ConfigDict(frozen=True)

    method: str
    precision: str
    per_gpu_gib: float
    seq_len: int
    smallest_gib: float | None  # the least memory of a catalog card that holds it; None: no single card
    cards: tuple[str, ...]  # the cheapest catalog cards of that memory


# --- what the user's own logs state (read by bot/language, quoted by the rules) ----------------------


class OomSeen(BaseModel):
    """A CUDA out-of-memory message's figures."""

    capacity_gib: Number | None = None
    requested_gib: Number | None = None
    free_gib: Number | None = None
    in_use_gib: Number | None = None


class Observed(BaseModel):
    """Figures a pasted log or the question states about the user's own run (OOM, NCCL timeout)."""

    oom: OomSeen | None = None
    nccl_timeout_s: Number | None = None
    checkpoint_seen_s: Number | None = None  # how long the user says a checkpoint save takes
    dataloader_workers: Number | None = None


# --- what the troubleshooting rules test and their answers quote (estimator/diagnose.py) ---------------


class Facts(BaseModel):
    """The plan's figures the rules of knowledge/faq.yaml test (`fact:`) and their answers quote
    (`f.<name>`), flat. A question without a plan has only `has_plan`, `method` and what its logs
    state; a fact the plan does not have is None, which no condition satisfies."""

    # a fact a plan stored by another version has and this one does not is left out (tests/test_rules.py
    # checks that every fact the engine computes is declared here)
    model_config = ConfigDict(extra="ignore")

    has_plan: bool
    method: str  # "none" when neither the question nor a plan names one
    # the plan
    model_name: str | None = None
    params_b: float | None = None
    gpus: int | None = None
    nodes: int | None = None
    gpu: str | None = None
    gpu_name: str | None = None
    gpu_family: str | None = None
    gpus_per_node: int | None = None
    capacity_gib: float | None = None
    per_gpu_gib: float | None = None
    fits: bool | None = None
    limit_gib: float | None = None  # what the fit was judged against: the share of the card a plan may fill
    over_capacity_gib: Number | None = None
    weights_gib: float | None = None
    kv_cache_gib: float | None = None
    model_state_gb: Number | None = None  # trained weights, gradients and optimizer state
    adapter: bool | None = None
    frozen_weights_gb: Number | None = None  # an adapter run's frozen base
    host_ram_gib: float | None = None
    offload: str | None = None
    zero: int | None = None
    ckpt: str | None = None
    precision: str | None = None
    kv_cache: str | None = None  # the KV cache's element type
    seq_len: int | None = None
    tp: int | None = None
    pp: int | None = None
    mfu: float | None = None
    days: float | None = None
    cost_usd: float | None = None
    region: str | None = None
    multi_node: bool | None = None
    chinchilla_tokens: Number | None = None  # 20 tokens per parameter
    bubble_fraction: Number | None = None  # the pipeline's idle share of a step
    cost_per_mtok: float | None = None  # serving: USD per million generated tokens
    replicas: int | None = None
    # the network between GPUs
    per_step_gb: Number | None = None
    fabric: str | None = None
    fabric_options: list[dict[str, str | Number]] | None = None  # each fabric's step time and waiting share
    comm_fraction: Number | None = None
    fabric_owned: bool | None = None  # the plan runs on the fabric recommended
    # data and checkpoints
    read_mb_s_per_node: Number | None = None
    cpu_bound: bool | None = None
    decode_cores_per_node: Number | None = None
    workers: int | None = None  # data-loader workers per GPU
    data: str | None = None
    storage: str | None = None
    read_share_of_storage: Number | None = None
    checkpoint_gb: float | None = None
    checkpoint_write_s: float | None = None
    # serving
    concurrency: int | None = None
    replica_gpus: int | None = None
    tokens_per_s_per_sequence: float | None = None
    mig: dict[str, str | Number] | None = None  # the MIG slice that holds a replica
    mig_fits: bool | None = None
    # what the user's own logs state (Observed)
    oom_seen: bool | None = None
    nccl_timeout_s: Number | None = None
    checkpoint_seen_s: Number | None = None
    workers_seen: Number | None = None
    oom_capacity_gib: Number | None = None
    oom_requested_gib: Number | None = None
    oom_free_gib: Number | None = None
    oom_in_use_gib: Number | None = None
    oom_short_gib: Number | None = None
    checkpoint_seen_gb_s: Number | None = None  # the write rate the user's own save reached
