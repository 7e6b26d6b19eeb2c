"""Transformer shapes and the parameter counts derived from them.

`Arch` holds one decoder-only architecture: the knowledge base's Shape under a name (a NamedShape,
the type the estimate keeps) with the counts derived from it; `from_spec` builds it from a catalog
entry and `generic` from a bare parameter count. Everything else in the estimator reads shapes from here.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, replace
from functools import cached_property

from gpuplan.estimator.schema import NamedShape
from gpuplan.knowledge import ModelSpec, catalog

GENERIC_ASPECT = 128  # hidden / layers of GPT-3's models (Brown et al. 2020, Table 2.1)
GENERIC_HEAD_DIM = 128  # head_dim of Llama 3.1 8B, 70B and 405B (config.json: hidden_size / num_attention_heads)
GENERIC_SMALL_HEAD_DIM = 64  # below 2,048 wide: head_dim of Llama 3.2 1B, Qwen2.5-0.5B and SmolLM2 (config.json)
# num_key_value_heads of Llama 3.2 1B/3B, Llama 3.1 8B/70B/405B and Qwen3 0.6B-32B (config.json)
GENERIC_KV_HEADS = 8


@dataclass(frozen=True)
class VocabBand:
    """The vocabulary a generic model below `below_b` billion parameters has, and whether its
    output layer shares the embedding table (tie_word_embeddings)."""

    below_b: float
    vocab: int
    tied: bool


# each band from published config.json; an edge lies between the largest model of one kind and the
# smallest of the next (estimate: no release sits on it)
GENERIC_VOCAB_BANDS = (
    # SmolLM2-135M and -360M: vocab_size 49,152, tied; a 128k table would be most of such a model
    VocabBand(0.4, 49_152, True),
    # Llama 3.2 1B and 3B: vocab_size 128,256, tied (Qwen2.5-0.5B to 3B and Qwen3-0.6B to 4B tie theirs too)
    VocabBand(5.0, 128_256, True),
    # Llama 3.1 8B, 70B and 405B: vocab_size 128,256, untied (as Qwen2.5-7B to 72B)
    VocabBand(math.inf, 128_256, False),
)


@dataclass(frozen=True)
class Projection:
    """One kind of weight matrix in a layer: its shape and how many of it an average layer holds."""

    inp: int
    out: int
    copies: float
    routed: bool = False  # a routed expert's matrix (MoE)


@dataclass(frozen=True)
class Arch:
    """A model's NamedShape (the type the estimate keeps) as the estimator counts it: with the
    catalog's context and release precision, and the counts derived from the shape, each computed
    once (cached properties). The shape's fields read as Arch's own: `arch.layers`, `arch.name`."""

    shape: NamedShape
    max_context: int | None = None
    weights_dtype: str = "bf16"
    generic: bool = False

    def __post_init__(self) -> None:
        # the shape's fields copied into this instance's attributes: Python reads those at full speed,
        # where each attribute of a pydantic model passes through its __getattr__ hook (some 40 ns more)
        self.__dict__.update(self.shape.shape_fields(), name=self.shape.name, vision_params=self.shape.vision_params)

    def changed(self, **changes) -> Arch:
        """This architecture with the shape fields `changes`, its counts derived afresh."""
        return replace(self, shape=NamedShape(**(self.shape.model_dump() | changes)))

    # --- the shape as the formulas read it --------------------------------------------
    @cached_property
    def norm_params_per_layer(self) -> int:
        """Weights of a layer's norms: a weight per channel (RMSNorm), or a weight and a bias (LayerNorm)."""
        return self.norms_per_layer * (1 if self.norm == "rms" else 2) * self.hidden

    # DeepSeek MLA's widths (config.json names; 0 = standard attention)
    @cached_property
    def q_lora_rank(self) -> int:
        return self.mla.q_lora_rank if self.mla else 0

    @cached_property
    def kv_lora_rank(self) -> int:
        return self.mla.kv_lora_rank if self.mla else 0

    @cached_property
    def qk_rope_head_dim(self) -> int:
        return self.mla.qk_rope_head_dim if self.mla else 0

    @cached_property
    def v_head_dim(self) -> int:
        return self.mla.v_head_dim if self.mla else 0

    # --- attention widths -------------------------------------------------------------
    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @cached_property
    def q_dim(self) -> int:
        """Width of the query projection output (all heads)."""
        return self.heads * self.head_dim

    @cached_property
    def k_dim(self) -> int:
        """Width of keys as attention consumes them (per layer, all kv heads)."""
        return (self.heads if self.is_mla else self.kv_heads) * self.head_dim

    @cached_property
    def v_dim(self) -> int:
        return self.heads * self.v_head_dim if self.is_mla else self.kv_heads * self.head_dim

    @cached_property
    def o_dim(self) -> int:
        """Width of the attention output that the output projection reads."""
        return self.heads * (self.v_head_dim if self.is_mla else self.head_dim)

    @cached_property
    def kv_cache_elems_per_token_layer(self) -> int:
        """Cached elements per token per layer: K and V, or MLA's latent plus rope key."""
        if self.is_mla:  # DeepSeek-V2 (arXiv:2405.04434) Sec. 2.1: cache c_KV and k_rope only
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    # --- parameters ---------------------------------------------------------------------
    @cached_property
    def attn_params(self) -> int:
        h = self.hidden
        if self.is_mla:  # DeepSeek-V3 modeling: q_a, q_b, kv_a (with rope key), kv_b, o, plus two norms
            nope = self.head_dim - self.qk_rope_head_dim
            # q_lora_rank 0 (V2-Lite, Moonlight): one q_proj of hidden x q_dim, no query norm
            query = (
                h * self.q_lora_rank + self.q_lora_rank * self.q_dim + self.q_lora_rank
                if self.q_lora_rank
                else h * self.q_dim
            )
            return (
                query
                + h * (self.kv_lora_rank + self.qk_rope_head_dim)
                + self.kv_lora_rank * self.heads * (nope + self.v_head_dim)
                + self.o_dim * h
                + self.kv_lora_rank
            )
        weights = h * (self.q_dim + 2 * self.kv_heads * self.head_dim) + self.o_dim * h
        bias = 0
        if self.qkv_bias or self.linear_bias:
            bias += self.q_dim + 2 * self.kv_heads * self.head_dim
        if self.linear_bias:
            bias += h
        qk_norm = 2 * self.head_dim if self.qk_norm else 0
        return weights + bias + qk_norm

    def _mlp(self, width: int) -> int:
        matrices = 3 if self.gated else 2
        bias = (width * (matrices - 1) + self.hidden) if self.linear_bias else 0
        return matrices * self.hidden * width + bias

    @cached_property
    def dense_mlp_params(self) -> int:
        return self._mlp(self.ffn_hidden)

    @cached_property
    def expert_params(self) -> int:
        return self._mlp(self.moe_ffn_hidden) if self.is_moe else 0

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @cached_property
    def routed_expert_params(self) -> int:
        """Routed experts of every MoE layer: what expert parallelism splits (shared experts are not)."""
        return self.moe_layers * self.experts * self.expert_params

    @cached_property
    def routed_expert_share(self) -> float:
        """Share of all parameters in routed experts."""
        return self.routed_expert_params / self.params if self.is_moe else 0.0

    @cached_property
    def routed_flops_share(self) -> float:
        """Share of a token's matmul FLOPs in its routed experts (where load imbalance costs time)."""
        active = self.moe_layers * self.experts_per_token * self.expert_params
        return active / self.matmul_params_per_token if self.is_moe else 0.0

    @cached_property
    def shared_flops_share(self) -> float:
        """Share of a token's matmul FLOPs in shared experts: compute the expert-parallel all-to-all
        can run beside (Megatron-Core's moe_shared_expert_overlap; DeepSeek-V2's training)."""
        shared = self.moe_layers * self.shared_experts * self.expert_params
        return shared / self.matmul_params_per_token if self.is_moe else 0.0

    @cached_property
    def residual_mlp_params(self) -> int:
        return self._mlp(self.residual_ffn_hidden) if self.residual_ffn_hidden else 0

    @cached_property
    def moe_mlp_params(self) -> int:
        """All experts of one MoE layer, shared experts, the router and a residual dense MLP."""
        experts = (self.experts + self.shared_experts) * self.expert_params
        return experts + self.hidden * self.experts + self.residual_mlp_params

    @cached_property
    def moe_mlp_active_params(self) -> int:
        active = (self.experts_per_token + self.shared_experts) * self.expert_params
        return active + self.hidden * self.experts + self.residual_mlp_params

    @cached_property
    def embed_params(self) -> int:
        extra = 2 * self.hidden if self.embedding_norm else 0
        return self.vocab * self.hidden + self.learned_positions * self.hidden + extra

    @cached_property
    def head_params(self) -> int:
        return 0 if self.tied else self.vocab * self.hidden

    @cached_property
    def final_norm_params(self) -> int:
        return self.norm_params_per_layer // 2 if self.norm_params_per_layer else 0

    @cached_property
    def dense_layer_params(self) -> int:
        return self.attn_params + self.dense_mlp_params + self.norm_params_per_layer

    @cached_property
    def moe_layer_params(self) -> int:
        return self.attn_params + self.moe_mlp_params + self.norm_params_per_layer

    @cached_property
    def layer_stack_params(self) -> int:
        dense = self.layers - self.moe_layers
        return dense * self.dense_layer_params + self.moe_layers * self.moe_layer_params

    @cached_property
    def params(self) -> int:
        """Total parameters, as the model's safetensors index counts them."""
        return self.layer_stack_params + self.embed_params + self.head_params + self.final_norm_params

    @cached_property
    def active_params(self) -> int:
        """Parameters a token passes through (MoE: routed top-k plus shared experts)."""
        if not self.is_moe:
            return self.params
        moe_active = self.attn_params + self.moe_mlp_active_params + self.norm_params_per_layer
        dense = self.layers - self.moe_layers
        stack = dense * self.dense_layer_params + self.moe_layers * moe_active
        return stack + self.embed_params + self.head_params + self.final_norm_params

    @cached_property
    def matmul_params_per_token(self) -> int:
        """Weights each token multiplies through (PaLM's N): active layers plus the output head.

        The embedding is a lookup, not a matmul; a tied head still costs a full V x h matmul.
        """
        norms = self.layers * self.norm_params_per_layer + self.final_norm_params
        non_matmul = self.embed_params + self.head_params + norms
        return self.active_params - non_matmul + self.vocab * self.hidden

    @cached_property
    def largest_unit_params(self) -> int:
        """Largest block ZeRO-3/FSDP gathers at once: a layer, the embedding or the head."""
        biggest_layer = self.moe_layer_params if self.is_moe else self.dense_layer_params
        return max(biggest_layer, self.embed_params, self.head_params)

    @cached_property
    def linear_weights_per_layer(self) -> list[Projection]:
        """Each projection of an average layer with how many of it the layer holds (experts and
        dense layers averaged over the layers), for LoRA, Adafactor and QLoRA's dequantised copy."""
        h = self.hidden
        if self.is_mla:
            nope = self.head_dim - self.qk_rope_head_dim
            query = [(h, self.q_lora_rank), (self.q_lora_rank, self.q_dim)] if self.q_lora_rank else [(h, self.q_dim)]
            attn = [
                *query,
                (h, self.kv_lora_rank + self.qk_rope_head_dim),
                (self.kv_lora_rank, self.heads * (nope + self.v_head_dim)),
                (self.o_dim, h),
            ]
        else:
            kv = self.kv_heads * self.head_dim
            attn = [(h, self.q_dim), (h, kv), (h, kv), (self.o_dim, h)]
        out = [Projection(i, o, 1.0) for i, o in attn]
        out += [Projection(i, o, 1.0 - self.moe_layers / self.layers) for i, o in self._mlp_shapes(self.ffn_hidden)]
        if self.is_moe:
            share = self.moe_layers / self.layers
            expert = self._mlp_shapes(self.moe_ffn_hidden)
            out += [Projection(i, o, self.experts * share, routed=True) for i, o in expert]
            out += [Projection(i, o, self.shared_experts * share) for i, o in expert]
            out += [Projection(i, o, share) for i, o in self._mlp_shapes(self.residual_ffn_hidden)]
        return [p for p in out if p.copies > 0 and p.inp * p.out > 0]

    @cached_property
    def column_parallel_share(self) -> float:
        """Share of a token's layer matmuls in Megatron's column-parallel layers (queries, keys and
        values, the MLPs' gate and up projections, and MLA's other projections): all but the
        row-parallel attention output and MLP down projections, by active weights."""
        share = self.moe_layers / self.layers
        row = self.o_dim * self.hidden + (1 - share) * self.ffn_hidden * self.hidden
        row += share * (self.experts_per_token + self.shared_experts) * self.moe_ffn_hidden * self.hidden
        row += share * self.residual_ffn_hidden * self.hidden
        total = sum(
            p.inp * p.out * p.copies * (self.experts_per_token / self.experts if p.routed else 1.0)
            for p in self.linear_weights_per_layer
        )
        return 1.0 - row / total

    def _mlp_shapes(self, width: int) -> list[tuple[int, int]]:
        """(in, out) of an MLP's matrices: gate and up (or one up) projection, then down."""
        h = self.hidden
        return [(h, width)] * (2 if self.gated else 1) + [(width, h)]

    @cached_property
    def largest_matrix_params(self) -> int:
        """The biggest weight a QLoRA step dequantises at once: one projection, or a layer's routed
        experts where they are one fused weight (Hugging Face's Llama 4 and Mixtral experts)."""
        return max(round(p.inp * p.out * (p.copies if p.routed else 1)) for p in self.linear_weights_per_layer)

    @functools.lru_cache(maxsize=64)  # noqa: B019 - Arch is immutable and few exist per process
    def lora_params(self, rank: int, targets: str = "all-linear") -> int:
        """LoRA adds r x (in + out) per adapted matrix (Hu et al. 2021, arXiv:2106.09685). A MoE
        model's routed experts stay frozen: PEFT adapts Linear modules by name and fused expert
        weights are not Linear modules, and axolotl's Llama 4 recipe freezes them (ROUTED_EXPERTS_FROZEN)."""
        mats = [p for p in self.linear_weights_per_layer if not p.routed]
        if targets == "attention":
            mats = mats[: (4 + (self.q_lora_rank > 0) if self.is_mla else 4)]
        return round(self.layers * sum(p.copies * rank * (p.inp + p.out) for p in mats))

    @cached_property
    def factored_state_elems(self) -> int:
        """Adafactor's second-moment rows + columns per matrix (Shazeer & Stern 2018)."""
        per_layer = sum(p.copies * (p.inp + p.out) for p in self.linear_weights_per_layer)
        return round(self.layers * per_layer) + 2 * (self.vocab + self.hidden)


@functools.lru_cache(maxsize=256)
def for_model(model_id: str) -> Arch:
    """The Arch of a catalog model, built once per process."""
    return from_spec(catalog().models[model_id])


def for_spec(spec: ModelSpec) -> Arch:
    """The Arch of a model: a catalog model's built once per process, a run-time one's each time."""
    return for_model(spec.id) if catalog().models.get(spec.id) is spec else from_spec(spec)


def from_spec(spec: ModelSpec) -> Arch:
    vision_params = int(spec.vision_params_b * 1e9)
    shape = NamedShape(**spec.shape_fields(), name=spec.name, vision_params=vision_params)
    return Arch(shape, max_context=spec.max_context, weights_dtype=spec.weights_dtype)


def _round_to(x: float, step: int) -> int:
    return max(step, int(round(x / step)) * step)


def vocab_band(params_b: float) -> VocabBand:
    return next(band for band in GENERIC_VOCAB_BANDS if params_b < band.below_b)


# The fields of a shape that the catalog's models of one stated size may share: "70B" is 80 layers of
# 8,192 with 64 heads sharing 8 KV heads in Llama 2, Llama 3, Llama 3.3 and Code Llama alike
SHARED_FIELDS = ("layers", "hidden", "heads", "kv_heads", "head_dim")

# the size a dense model's name states: "Llama 2 13B", "Phi-3 mini 3.8B" (not "17B-16E", "30B-A3B")
_NAMED_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)B(?![\w-])")


@functools.lru_cache(maxsize=4096)
def stated_size(name: str) -> float | None:
    """The size a model's name states, in billions ("Llama 2 13B" -> 13.0), None when it states none
    (memoised by name: the catalog's names are read again for every bare size asked)."""
    size = _NAMED_SIZE.search(name)
    return float(size.group(1)) if size else None


def models_named_at(params_b: float, specs) -> list[ModelSpec]:
    """The dense catalog models whose names state `params_b` billion parameters ("13B")."""
    return [spec for spec in specs if spec.experts <= 1 and stated_size(spec.name) == params_b]


def shared_shape(params_b: float, specs) -> tuple[tuple[int, ...] | None, list[str]]:
    """A bare size stands for the models people run at that size: the SHARED_FIELDS every dense
    catalog model named at it has alike (13B: 40 layers of 5,120, 40 heads each with its own keys
    and values), with those models' names; (None, []) when they differ (7B: Llama 2 against Mistral)."""
    named = models_named_at(params_b, specs)
    shapes = {tuple(getattr(spec, f) or spec.hidden // spec.heads for f in SHARED_FIELDS) for spec in named}
    return (shapes.pop(), [spec.name for spec in named]) if len(shapes) == 1 else (None, [])


@functools.lru_cache(maxsize=256)
def generic(params_b: float, shape: tuple[int, ...] | None = None) -> Arch:
    """A dense decoder with about `params_b` billion parameters, shaped as current open models
    (Llama 3, Qwen2.5): grouped-query attention with 8 KV heads and the vocabulary of its size band;
    with `shape` (shared_shape) its layers, widths and heads, the MLP making up the count."""
    band = vocab_band(params_b)
    arch = _generic_dense(params_b, band.vocab, band.tied)
    return _with_shape(arch, params_b, shape) if shape else arch


def _with_shape(arch: Arch, params_b: float, shape: tuple[int, ...]) -> Arch:
    """`arch` with the SHARED_FIELDS of `shape` and the SwiGLU width (rounded to 256) that makes up
    `params_b`; `arch` itself when the embeddings leave no room for that shape's MLPs."""
    shaped = arch.changed(**dict(zip(SHARED_FIELDS, shape, strict=True)))
    no_mlp_params = shaped.params - shaped.layers * shaped.dense_mlp_params
    room = (params_b * 1e9 - no_mlp_params) / (shaped.layers * 3 * shaped.hidden)
    return shaped.changed(ffn_hidden=_round_to(room, 256)) if room >= 256 else arch


def _ideal_hidden(target: float, embedding_rows: int) -> float:
    """The width h at which layers of 12 h^2 parameters (GPT-3's count, Kaplan et al. 2020 Table 1),
    h / 128 of them, plus the embedding tables make up `target`: Newton's method from above."""
    slope = 12 / GENERIC_ASPECT
    hidden = (target / slope) ** (1 / 3)
    for _ in range(20):
        excess = slope * hidden**3 + embedding_rows * hidden - target
        hidden -= excess / (3 * slope * hidden**2 + embedding_rows)
    return hidden


def _generic_dense(params_b: float, vocab: int, tied: bool) -> Arch:
    """Shape ratios: hidden/layers = 128 (GPT-3, Table 2.1) with the embeddings counted, hidden
    rounded to whole groups of 8 heads, SwiGLU width 8/3 x hidden rounded to 256 (LLaMA), heads of
    128 (64 below 2,048 wide), 8 KV heads; layers make up the parameter count."""
    target = params_b * 1e9
    ideal = _ideal_hidden(target, vocab if tied else 2 * vocab)
    # whole groups of 8 heads: tensor parallelism splits them 8 ways and 8 KV heads share them evenly
    head_dim = GENERIC_HEAD_DIM if ideal >= 2048 else GENERIC_SMALL_HEAD_DIM
    hidden = _round_to(ideal, 8 * head_dim)
    heads = hidden // head_dim
    shape = NamedShape(
        name=f"{params_b:g}B" if params_b >= 1 else f"{params_b * 1000:g}M",  # "125M", not "0.125B"
        layers=1,
        hidden=hidden,
        heads=heads,
        kv_heads=min(GENERIC_KV_HEADS, heads),
        head_dim=head_dim,
        ffn_hidden=_round_to(8 * hidden / 3, 256),
        vocab=vocab,
        tied=tied,
    )
    one_layer = Arch(shape, generic=True)
    per_layer = one_layer.dense_layer_params
    outside_layers = one_layer.params - per_layer  # embedding, output layer and final norm
    return one_layer.changed(layers=max(1, round((target - outside_layers) / per_layer)))


# fine-grained experts as DeepSeek-V3 and Kimi K2 route them (config.json: 8 routed of 256 or 384
# plus 1 shared expert per token), the shape a generic MoE of a given total and active size takes
GENERIC_MOE_TOP_K = 8
GENERIC_MOE_SHARED = 1


def generic_moe(params_b: float, active_b: float) -> Arch:
    """A Mixture-of-Experts decoder of about `params_b` billion parameters, `active_b` of them
    active per token: the generic dense shape of the active size (attention, layers, widths), its
    MLP split into experts of width ffn / (top-k + shared) routed top-8 with one shared expert,
    and as many experts as make up the total (a multiple of 8). A total too close to the active
    size for more experts than are routed is the dense model of that total."""
    # untied however few parameters are active: Qwen3-30B-A3B, OLMoE-1B-7B, DeepSeek-V3 (config.json)
    dense = _generic_dense(active_b, vocab_band(active_b).vocab, tied=False)
    expert_ffn = max(GENERIC_HEAD_DIM, _round_to(dense.ffn_hidden / (GENERIC_MOE_TOP_K + GENERIC_MOE_SHARED), 128))
    per_expert = dense.layers * 3 * dense.hidden * expert_ffn  # SwiGLU: gate, up and down
    extra = (params_b - active_b) * 1e9 / per_expert
    experts = int(_round_to(GENERIC_MOE_TOP_K + extra, 8))
    if experts <= GENERIC_MOE_TOP_K:
        return generic(params_b)
    return dense.changed(
        name=(f"{params_b / 1000:g}T" if params_b >= 1000 else f"{params_b:g}B") + f"-A{active_b:g}B (MoE)",
        experts=experts,
        experts_per_token=GENERIC_MOE_TOP_K,
        moe_ffn_hidden=expert_ffn,
        shared_experts=GENERIC_MOE_SHARED,
    )


def describe_generic(arch: Arch) -> dict[str, int | float | bool]:
    shape: dict[str, int | float | bool] = {
        "layers": arch.layers,
        "hidden": arch.hidden,
        "heads": arch.heads,
        "kv_heads": arch.kv_heads,
        "ffn": arch.ffn_hidden,
        "tied": arch.tied,
    }
    if arch.is_moe:
        shape |= {"experts": arch.experts, "top_k": arch.experts_per_token, "expert_ffn": arch.moe_ffn_hidden}
        shape |= {"shared": arch.shared_experts, "active_b": arch.active_params / 1e9}
    return shape


def billions(n: int) -> float:
    return n / 1e9


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


__all__ = ["Arch", "from_spec", "generic", "describe_generic", "billions", "ceil_div", "math"]
