"""Pydantic models that validate the YAML files of the knowledge base at load time."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


def check_patterns(patterns: list[str], where: str) -> None:
    """Every pattern is a valid regular expression, or the knowledge does not load."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{where} {pattern!r}: {exc}") from exc


class _Strict(BaseModel):
    # defer_build: each model's validator is built when first used; a process that reads the validated
    # files from the cache (knowledge.validated_files) uses few of them (pydantic's docs, "defer_build")
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Fact(_Strict):
    """A number with a note saying where it comes from."""

    value: float | int | str
    note: str


class MigProfile(_Strict):
    name: str
    memory_gib: float = Field(gt=0)
    count: int = Field(ge=1)


class GPU(_Strict):
    id: str
    name: str
    family: str
    aliases: list[str]
    memory_gib: float = Field(gt=0)
    bf16_tflops: float | None = Field(default=None, gt=0)
    fp16_tflops: float = Field(gt=0)
    fp8_tflops: float | None = Field(default=None, gt=0)
    tf32_tflops: float | None = Field(default=None, gt=0)
    int8_tops: float | None = Field(default=None, gt=0)
    hbm_gb_s: float = Field(gt=0)
    link: Literal["nvlink", "pcie", "infinity-fabric"]
    link_gb_s: float = Field(gt=0)
    gpus_per_node: int = Field(ge=1)
    # GPUs on one NVLink fabric when it spans more than a server (GB200/GB300 NVL72: 72 GPUs in 18
    # trays of 4); None: the server's own GPUs
    nvlink_domain: int | None = Field(default=None, ge=1)
    node_fabric: str
    mig_profiles: list[MigProfile]
    price_usd_per_hour: float = Field(gt=0)
    price_source: str
    source: str

    @property
    def nvlink_gpus(self) -> int:
        """How many GPUs talk over NVLink (or the server's own links) without the fabric between nodes."""
        return self.nvlink_domain or self.gpus_per_node

    @property
    def supports_bf16(self) -> bool:
        return self.bf16_tflops is not None

    @property
    def peak_16bit_tflops(self) -> float:
        """Dense tensor throughput of the 16-bit type the GPU trains in (bf16, else fp16)."""
        return self.bf16_tflops or self.fp16_tflops


class MLA(_Strict):
    """DeepSeek multi-head latent attention dimensions (config.json names)."""

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


class Shape(_Strict):
    """A decoder-only transformer's architecture, in config.json's terms: the one shape type from the
    catalog (ModelSpec) through the estimator (architecture.Arch) and the estimate (schema.NamedShape)
    to the config files. head_dim is filled in when unstated: hidden / heads, or under MLA the query
    and key width (qk_nope_head_dim + qk_rope_head_dim, DeepSeek-V2 arXiv:2405.04434 Sec. 2.1)."""

    layers: int = Field(ge=1)
    hidden: int = Field(ge=1)
    heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    ffn_hidden: int = Field(ge=1)
    vocab: int = Field(ge=1)
    tied: bool = False  # the output layer is the embedding table (tie_word_embeddings)
    gated: bool = True
    norm: Literal["rms", "layer"] = "rms"
    norms_per_layer: int = 2
    qkv_bias: bool = False
    linear_bias: bool = False
    qk_norm: bool = False
    learned_positions: int = 0
    embedding_norm: bool = False
    experts: int = 1
    experts_per_token: int = 1
    moe_ffn_hidden: int = Field(default=0, ge=0)  # 0: no experts
    shared_experts: int = 0
    dense_layers: int = 0  # leading layers with a dense MLP (mixture-of-experts models only)
    # node-limited routing (DeepSeek's config.json n_group / topk_group): the routed experts form
    # expert_groups groups and a token's experts come from groups_per_token of them (1 / 1: no limit)
    expert_groups: int = Field(default=1, ge=1)
    groups_per_token: int = Field(default=1, ge=1)
    # a dense MLP run in parallel with the experts in every MoE layer (Snowflake Arctic's
    # residual MLP), counted by estimator/architecture.py; 0: none
    residual_ffn_hidden: int = Field(default=0, ge=0)
    mla: MLA | None = None

    @model_validator(mode="before")
    @classmethod
    def _head_dim_filled(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "hidden" not in data or "heads" not in data:
            return data  # the field errors say what is missing
        mla = data.get("mla")
        if mla:
            mla = mla if isinstance(mla, MLA) else MLA(**mla)
            return {**data, "head_dim": mla.qk_nope_head_dim + mla.qk_rope_head_dim}
        if not data.get("head_dim"):
            return {**data, "head_dim": data["hidden"] // data["heads"]}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Shape:
        problem = self._inconsistency()
        if problem:
            # the catalog's id names the model in the message; a shape without one, its size (named
            # only here: a shape without an id asks pydantic for it, an AttributeError raised and caught)
            who = getattr(self, "id", None) or f"{self.layers} layers of {self.hidden}"
            raise ValueError(f"{who}: {problem}")
        return self

    def _inconsistency(self) -> str | None:
        if self.experts > 1 and not self.moe_ffn_hidden:
            return "a mixture-of-experts model needs moe_ffn_hidden"
        if self.experts_per_token > self.experts:
            return "experts_per_token exceeds experts"
        if self.kv_heads > self.heads or self.heads % self.kv_heads:
            return "heads must be a multiple of kv_heads"
        if self.experts % self.expert_groups or self.groups_per_token > self.expert_groups:
            return "expert_groups must divide experts and hold groups_per_token"
        if self.experts == 1 and (self.residual_ffn_hidden or self.dense_layers):
            return "residual_ffn_hidden and dense_layers belong to mixture-of-experts models"
        return None

    def shape_fields(self) -> dict[str, Any]:
        """This model's Shape fields alone (a ModelSpec's or an Arch's without their own)."""
        return {name: getattr(self, name) for name in Shape.model_fields}


class ModelSpec(Shape):
    """A catalog model: its Shape and what the catalog says of the release."""

    id: str
    name: str
    aliases: list[str]
    # int4: released in 4 bits (MXFP4 experts, AWQ/GPTQ), served as gpuplan's int4
    weights_dtype: Literal["bf16", "fp16", "fp8", "int4"] = "bf16"
    max_context: int = Field(ge=1)
    params_b: float = Field(gt=0)
    vision_params_b: float = Field(default=0.0, ge=0)  # a vision-language model's encoder and projector
    source: str


class ModelVariant(_Strict):
    """Another name for a catalog architecture: a fine-tune, distillation or re-release with its
    base's exact shape (DeepSeek-R1 is DeepSeek-V3's). `catalog()` expands it into a ModelSpec."""

    id: str
    name: str
    base: str
    aliases: list[str]
    source: str
    max_context: int | None = Field(default=None, ge=1)
    weights_dtype: Literal["bf16", "fp16", "fp8", "int4"] | None = None
    vision_params_b: float | None = Field(default=None, ge=0)

    def expand(self, base: ModelSpec) -> ModelSpec:
        """The base's shape under this variant's id, name, aliases and source."""
        fields = base.model_dump()
        fields.update(id=self.id, name=self.name, aliases=list(self.aliases), source=self.source)
        if self.max_context is not None:
            fields["max_context"] = self.max_context
        if self.weights_dtype is not None:
            fields["weights_dtype"] = self.weights_dtype
        if self.vision_params_b is not None:
            fields["vision_params_b"] = self.vision_params_b
        return ModelSpec(**fields)


class Bilingual(_Strict):
    en: str
    zh: str


class Tier(_Strict):
    id: str
    kind: Literal["starter", "plan"]
    path: str
    title: Bilingual
    summary: Bilingual
    params_b: tuple[float, float]
    methods: list[str]
    gpu_ids: list[str]
    gpus: tuple[int, int]
    nodes: tuple[int, int] | None = None  # servers, where the guide says how many
    memory_gib_per_gpu: tuple[float, float]
    storage: str | None = None
    network: str | None = None
    regions: list[str] = []


class DeploymentLink(_Strict):
    """The guide's section on serving a trained model, linked from every serving plan."""

    id: str
    path: str
    title: Bilingual
    summary: Bilingual


class TierFile(_Strict):
    base_url: str
    source: str
    deployment: DeploymentLink
    tiers: list[Tier]


class PerMethod(_Strict):
    note: str
    pretrain: int
    continue_: int = Field(alias="continue")
    full: int
    lora: int
    qlora: int
    dpo: int
    ppo: int
    infer: int | None = None


class Defaults(_Strict):
    method: Fact
    precision: dict[str, Fact]
    optimizer: dict[str, Fact]
    seq_len: PerMethod
    micro_batch: dict[str, int | str]
    global_batch_tokens: dict[str, int | str]
    pretrain_batch_law: dict[str, Fact]
    train_tokens: dict[str, int | str]
    lora: dict[str, Fact]
    method_efficiency: dict[str, Fact | str]
    moe: dict[str, Fact]
    reliability: dict[str, Fact]
    inference: dict[str, Fact]
    overhead: dict[str, Fact]
    offload: dict[str, Fact]
    limits: dict[str, int | Fact]
    host: dict[str, Fact]

    def number(self, section: str, key: str | None = None) -> float:
        """The value of a Fact (or plain number) as a float: `number("reliability", "restart_minutes")`."""
        item = getattr(self, section)
        if key is not None:
            item = item[key]
        return float(item.value if isinstance(item, Fact) else item)


class Fabric(_Strict):
    id: str
    name: str
    gb_s: float = Field(gt=0)
    latency_us: float = Field(gt=0)
    pod_gpus: int | None = Field(default=None, ge=1)  # full bisection inside; None: non-blocking
    oversubscription: float = Field(default=1.0, ge=1)  # of the links above a pod
    offered: bool = True  # compared as a choice for a cluster; False: planned only when the user has it
    rdma: bool = True  # InfiniBand or RoCE; False: TCP sockets (DeepEP's inter-node kernels need RDMA)
    source: str


class KernelGeneration(_Strict):
    """One GPU generation's kernel figures (knowledge/kernels.yaml)."""

    sms: Fact
    tile: Fact  # "rows x columns" of the large-GEMM thread-block tile
    gemm_16bit: Fact
    gemm_tf32: Fact
    gemm_fp8: Fact | None = None
    attention: Fact  # a key of KernelFile.attention
    sdpa_attention: Fact | None = None  # the kernel PyTorch's SDPA runs where it is not `attention`
    step_share: Fact  # share of a training step's time the modelled kernels take
    fp8_recipe: Fact | None = None  # a key of KernelFile.fp8_recipes

    @property
    def tile_shape(self) -> tuple[int, int]:
        rows, columns = str(self.tile.value).split("x")
        return int(rows), int(columns)


class AttentionKernel(_Strict):
    forward: Fact
    backward: Fact
    half_length: Fact


class KernelFile(_Strict):
    source: str
    generations: dict[str, KernelGeneration]
    sms_by_gpu: dict[str, int | str]
    attention: dict[str, AttentionKernel]
    attention_head_dim_half: Fact
    fp8_recipes: dict[str, Fact]
    hbm_efficiency: Fact
    launch_us: Fact

    @model_validator(mode="after")
    def _names_resolve(self) -> KernelFile:
        for name, gen in self.generations.items():
            for kernel in (gen.attention, gen.sdpa_attention or gen.attention):
                if str(kernel.value) not in self.attention:
                    raise ValueError(f"kernels.yaml: {name} names an unknown attention kernel {kernel.value}")
            if gen.fp8_recipe is not None and str(gen.fp8_recipe.value) not in self.fp8_recipes:
                raise ValueError(f"kernels.yaml: {name} names an unknown FP8 recipe {gen.fp8_recipe.value}")
            gen.tile_shape  # noqa: B018 - "RxC" parses, or the file does not load
        return self


class NetworkFile(_Strict):
    collective_efficiency: Fact
    link_latency_us: dict[str, float | str]
    fabrics: list[Fabric]


class Region(_Strict):
    id: str
    name: Bilingual
    serves: list[str]
    price_factor: float = Field(gt=0)


class RegionFile(_Strict):
    source: str
    regions: list[Region]
    areas: dict[str, Bilingual]


class InventoryFile(_Strict):
    source: str
    regions: dict[str, dict[str, int]]


class StorageOption(_Strict):
    id: str
    name: Bilingual
    read_gb_s: float = Field(gt=0)
    write_gb_s: float = Field(gt=0)
    capacity_tb: float = Field(gt=0)
    note: str


class Checkpoints(_Strict):
    retained: dict[str, int | str]
    interval_hours: Fact


class StorageFile(_Strict):
    source: str
    options: list[StorageOption]
    data: dict[str, Fact | dict[str, Fact]]
    checkpoints: Checkpoints
    host: dict[str, Fact]

    def number(self, key: str, sub: str | None = None) -> float:
        item = self.data[key]
        if sub is not None:
            item = item[sub]  # type: ignore[index]
        return float(item.value)  # type: ignore[union-attr]


class BilingualList(_Strict):
    en: list[str]
    zh: list[str]


class Habit(_Strict):
    """One memory habit of a training framework, with the code or documentation it is read from."""

    value: bool | str
    source: str


class Framework(_Strict):
    """A training framework named in questions and the memory habits gpuplan follows for it
    (knowledge/frameworks.yaml); a habit left out is the layout's default."""

    id: str
    name: str
    names: BilingualList  # regular expressions matched against the lower-cased question
    fsdp_ends: Habit | None = None  # "root": embeddings and head in FSDP's root unit; "apart": units of their own
    loss: Habit | None = None  # "chunked" | "unchunked" | "inplace"
    keeps_logits: Habit | None = None  # the loop holds the model's fp32 logits through the backward pass
    megatron_core: Habit | None = None  # Megatron-Core on every layout: fp32 gradients and its loss
    attention: Habit | None = None  # "pytorch_sdpa": attention through PyTorch's SDPA (kernels.yaml sdpa_attention)
    # true: under pipeline parallelism FSDP keeps the stage's parameters gathered and its gradients
    # unsharded, in fp32, until the step's last micro-batch
    pp_unsharded: Habit | None = None
    recipe_speed: Fact | None = None  # its published performance recipes' step rate over a generic stack's

    @model_validator(mode="after")
    def _values_known(self) -> Framework:
        allowed = {
            "fsdp_ends": ("root", "apart"),
            "loss": ("chunked", "unchunked", "inplace"),
            "attention": ("pytorch_sdpa",),
        }
        for field, values in allowed.items():
            habit = getattr(self, field)
            if habit is not None and habit.value not in values:
                raise ValueError(f"frameworks.yaml: {self.id} {field} {habit.value!r} is not one of {values}")
        for pattern in self.names.en + self.names.zh:
            re.compile(pattern)
        return self


class FrameworkFile(_Strict):
    source: str
    frameworks: list[Framework]


class Multipliers(_Strict):
    """Number words and what they multiply by, per language (lower case)."""

    en: dict[str, float]
    zh: dict[str, float]


class Lexicon(_Strict):
    """The parser's vocabulary: regular expressions by meaning (validated to compile)."""

    source: str
    finetune: list[str]
    training: list[str]  # any training at all: a serving guess yields to these
    trained_artifacts: list[str]  # what training made, named as a thing: served beside a serving word
    explicit_full: list[str]
    users_context: list[str]
    pure_bf16: list[str]
    served_split: dict[str, BilingualList]  # serving: the words of a prompt's and an output's length
    help: list[str]
    compare: list[str]
    unsupported_hardware: list[str]
    gpu_like_names: list[str]  # GPU names the catalog lacks, read where no catalog GPU was
    model_families: dict[str, str]  # a family word -> catalog id prefixes, '|'-separated
    stopwords_en: list[str]
    frameworks: list[str]
    asks_count: BilingualList
    asks_machines: BilingualList
    one_machine: BilingualList
    sample_nouns: BilingualList  # what a count of training samples counts ("50k samples", "5万条数据")
    token_total: BilingualList  # words that make a token count the whole data's ("in total", "总共")
    triggers: dict[str, BilingualList]  # extractor -> the words without which it has nothing to read
    multipliers: Multipliers

    @model_validator(mode="after")
    def _patterns_compile(self) -> Lexicon:
        groups: list[list[str]] = [
            self.finetune,
            self.training,
            self.explicit_full,
            self.users_context,
            self.pure_bf16,
            self.help,
            self.compare,
            self.unsupported_hardware,
            self.gpu_like_names,
        ]
        groups.append(self.frameworks)
        for bilingual in [
            *self.served_split.values(),
            self.asks_count,
            self.asks_machines,
            self.one_machine,
            self.sample_nouns,
            self.token_total,
            *self.triggers.values(),
        ]:
            groups.append(bilingual.en + bilingual.zh)
        for patterns in groups:
            check_patterns(patterns, "lexicon pattern")
        return self


class Condition(_Strict):
    """One test on a fact of the question or plan: {fact: comm_fraction, gt: 0.3}."""

    fact: str
    eq: Any = None
    ne: Any = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    in_: list[Any] | None = Field(default=None, alias="in")
    not_in: list[Any] | None = None


class Instance(_Strict):
    """A cloud instance type: the GPU type and count it carries (`count`: the number in the name)."""

    pattern: str
    gpu: str
    gpus: int | Literal["count"]


class InstanceFile(_Strict):
    source: str
    instances: list[Instance]


class FaqRule(_Strict):
    id: str
    topic: str
    severity: int = Field(ge=0, le=5)
    # symptom: something goes wrong (an answer leads with it when the question raises it); advice: a
    # choice to make (led with only when the question is a troubleshooting one)
    kind: Literal["symptom", "advice"] = "symptom"
    title: Bilingual
    # the answer in one sentence, the first line of a reply that leads with this rule: the most likely
    # cause and the first thing to try (a symptom), or the recommendation (a choice); jinja with `f`,
    # `p`, the verdict `v`, its remedies in words `fixes`, the job `job` and the GPU `card`
    headline: Bilingual
    triggers: BilingualList
    # words that mean something else: with one of them and no trigger phrase, the classifier's
    # guess of this topic is dropped ("gradient checkpointing" is not checkpoint saving)
    unless: BilingualList | None = None
    # a symptom a served model shows as well (it does not load, a deployment question): a question
    # with it and no word of training is read as serving the model
    serving_symptom: bool = False
    when: list[list[Condition]] = []
    applies: list[Condition] = []
    probes: dict[str, dict[str, Any]] = {}
    answer: Bilingual
    checks: BilingualList

    @model_validator(mode="after")
    def _triggers_compile(self) -> FaqRule:
        check_patterns([*self.triggers.en, *self.triggers.zh], f"rule {self.id}: trigger")
        if self.unless:
            check_patterns([*self.unless.en, *self.unless.zh], f"rule {self.id}: unless")
        return self


class FaqFile(_Strict):
    source: str
    rules: list[FaqRule]
