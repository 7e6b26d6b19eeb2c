"""A Hugging Face config.json read as a ModelSpec: the field names of each model family, the
defaults its configuration class assumes when a field is absent, and its MoE and MLA shapes.

Pure: no network, no cache (hub.py fetches the file and calls `spec_from_config`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from gpuplan.estimator.architecture import from_spec
from gpuplan.knowledge import ModelSpec
from gpuplan.knowledge.schema import MLA

DEFAULT_CONTEXT = 4096  # a config stating no context length: our assumption (not sourced), said in the answer

# --- families -------------------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    """What a family builds that its config does not spell out."""

    gated: bool = True
    norm: str = "rms"
    norms_per_layer: int = 2
    qkv_bias: bool = False
    linear_bias: bool = False
    qk_norm: bool = False
    tied: bool = False  # when the config omits tie_word_embeddings (untied is the larger count)
    positions: str | None = None  # the field sizing a learned position table
    position_offset: int = 0
    embedding_norm: bool = False


_LLAMA = _Style()
_GPT = _Style(gated=False, norm="layer", linear_bias=True, tied=True, positions="n_positions")
# transformers models/<type>/modeling_<type>.py: the layers, biases and norms each family builds
_STYLES = {
    "qwen2": replace(_LLAMA, qkv_bias=True),
    "qwen2_moe": replace(_LLAMA, qkv_bias=True),
    "qwen2_vl_text": replace(_LLAMA, qkv_bias=True),
    "qwen2_5_vl_text": replace(_LLAMA, qkv_bias=True),
    "qwen3": replace(_LLAMA, qk_norm=True),
    "qwen3_moe": replace(_LLAMA, qk_norm=True),
    "qwen3_vl_text": replace(_LLAMA, qk_norm=True),
    "qwen3_vl_moe_text": replace(_LLAMA, qk_norm=True),
    "olmo2": replace(_LLAMA, qk_norm=True),
    "olmoe": replace(_LLAMA, qk_norm=True),
    "gemma": replace(_LLAMA, tied=True),
    "gemma2": replace(_LLAMA, tied=True, norms_per_layer=4),
    "gemma3_text": replace(_LLAMA, tied=True, norms_per_layer=4, qk_norm=True),
    "gpt_oss": replace(_LLAMA, linear_bias=True),
    "arctic": _LLAMA,  # plus the residual MLP, read in _moe
    "gpt2": _GPT,
    "gpt_bigcode": _GPT,
    "opt": replace(_GPT, positions="max_position_embeddings", position_offset=2),
    "bloom": replace(_GPT, positions=None, embedding_norm=True),
    "gpt_neox": replace(_GPT, positions=None, tied=False),
    "phi": replace(_GPT, positions=None, tied=False, norms_per_layer=1),
    "falcon": replace(_GPT, positions=None, linear_bias=False),
}
# the text model's type when a multimodal config's text_config does not name it
_TEXT_TYPES = {
    "gemma3": "gemma3_text",
    "llama4": "llama4_text",
    "qwen2_vl": "qwen2_vl_text",
    "qwen2_5_vl": "qwen2_5_vl_text",
    "qwen3_vl": "qwen3_vl_text",
    "qwen3_vl_moe": "qwen3_vl_moe_text",
    "mistral3": "mistral",
    "llava": "llama",
    "RefinedWeb": "falcon",
    "RefinedWebModel": "falcon",
}
_L = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096, "tie_word_embeddings": False}
_QWEN = {**_L, "vocab_size": 151936, "intermediate_size": 22016, "max_position_embeddings": 32768}
_MISTRAL = {
    **_L,
    "vocab_size": 32000,
    "intermediate_size": 14336,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
}
_GEMMA2 = {
    "vocab_size": 256000,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 8192,
    "tie_word_embeddings": True,
}
_MLA_DIMS = {
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
}
_QWEN2_VL = {
    **_QWEN,
    "vocab_size": 152064,
    "hidden_size": 8192,
    "intermediate_size": 29568,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
}
_GPT2 = {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12}
# transformers models/<type>/configuration_<type>.py __init__ defaults (v4.56), for the fields configs omit
_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {**_L, "vocab_size": 32000, "intermediate_size": 11008, "max_position_embeddings": 2048},
    "mistral": _MISTRAL,
    "mixtral": {**_MISTRAL, "num_local_experts": 8, "num_experts_per_tok": 2},
    "qwen2": {**_QWEN, "qkv_bias": True},
    "qwen3": {**_QWEN, "head_dim": 128},
    "qwen2_moe": {
        **_QWEN,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "decoder_sparse_step": 1,
        "qkv_bias": True,
    },
    "qwen3_moe": {
        **_QWEN,
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "num_hidden_layers": 24,
        "num_key_value_heads": 4,
        "moe_intermediate_size": 768,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "decoder_sparse_step": 1,
    },
    "qwen2_vl_text": _QWEN2_VL,
    "qwen2_5_vl_text": _QWEN2_VL,
    "gemma": {
        **_GEMMA2,
        "hidden_size": 3072,
        "intermediate_size": 24576,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
    },
    "gemma2": _GEMMA2,
    "gemma3_text": {**_GEMMA2, "vocab_size": 262208, "max_position_embeddings": 131072},
    "phi3": {
        **_L,
        "vocab_size": 32064,
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "max_position_embeddings": 4096,
    },
    "deepseek_v2": {
        **_L,
        **_MLA_DIMS,
        "vocab_size": 32000,
        "intermediate_size": 11008,
        "max_position_embeddings": 2048,
        "first_k_dense_replace": 0,
        "n_routed_experts": 64,
        "n_shared_experts": 2,
        "moe_intermediate_size": 1407,
    },
    "deepseek_v3": {
        **_MLA_DIMS,
        "vocab_size": 129280,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "n_shared_experts": 1,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": 3,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
    },
    "gpt_oss": {
        "num_hidden_layers": 36,
        "num_local_experts": 128,
        "vocab_size": 201088,
        "hidden_size": 2880,
        "intermediate_size": 2880,
        "head_dim": 64,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
        "num_experts_per_tok": 4,
        "tie_word_embeddings": False,
    },
    "llama4_text": {
        "vocab_size": 202048,
        "hidden_size": 5120,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "num_experts_per_tok": 1,
        "num_local_experts": 16,
        "interleave_moe_layer_step": 1,
    },
    "olmo2": {**_L, "vocab_size": 50304, "intermediate_size": 11008, "max_position_embeddings": 2048},
    "gpt2": _GPT2,
    "gpt_bigcode": {**_GPT2, "multi_query": True},
    "gpt_neox": {
        "vocab_size": 50432,
        "hidden_size": 6144,
        "num_hidden_layers": 44,
        "num_attention_heads": 64,
        "intermediate_size": 24576,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
    },
    "opt": {
        "vocab_size": 50272,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "ffn_dim": 3072,
        "max_position_embeddings": 2048,
        "num_attention_heads": 12,
        "enable_bias": True,
    },
    "bloom": {"vocab_size": 250880},
    "falcon": {"vocab_size": 65024, "max_position_embeddings": 2048, "multi_query": True, "parallel_attn": True},
}
# encoder models share llama's field names but are not what gpuplan sizes
_ENCODERS = {"bert", "roberta", "xlm-roberta", "deberta", "deberta-v2", "distilbert", "electra", "albert", "modernbert"}


def spec_from_config(repo_id: str, config: dict, looked_up: dt.date | None = None) -> ModelSpec:
    """The ModelSpec of a decoder-only model's config.json; ValueError says what is missing or wrong."""
    if not isinstance(config, dict):
        raise ValueError(f"{repo_id}: config.json is not a JSON object")
    try:
        return _spec(repo_id, config, looked_up or dt.date.today())
    except ValueError as exc:
        raise ValueError(str(exc) if str(exc).startswith(repo_id) else f"{repo_id}: {exc}") from None
    except (TypeError, AttributeError, ArithmeticError) as exc:  # a field of another JSON type than expected
        raise ValueError(f"{repo_id}: config.json has a field of an unexpected type ({exc})") from None


def _spec(repo_id: str, config: dict[str, Any], looked_up: dt.date) -> ModelSpec:
    model_type, cfg, notes = _text_config(config)
    style = _STYLES.get(model_type, _LLAMA)
    if model_type in _ENCODERS or config.get("is_encoder_decoder"):
        raise ValueError(f"{repo_id}: model_type {model_type!r} is not a decoder-only language model")
    fields = _shape(model_type, cfg, style)
    fields |= _moe(model_type, cfg, fields)
    fields |= _mla(cfg, fields)
    fields["weights_dtype"], dtype_note = _weights_dtype(config, cfg)
    fields["max_context"], context_note = _context(cfg)
    if model_type not in _DEFAULTS and model_type not in _STYLES:
        notes.append(f"model_type {model_type or 'missing'}, read as a Llama-style decoder")
    if fields.get("mla") and not fields["mla"].q_lora_rank:
        notes.append("q_lora_rank null: queries are projected directly, written as q_lora_rank 0")
    notes += [n for n in (dtype_note, context_note) if n]
    source = "; ".join([f"huggingface.co/{repo_id} config.json (looked up {looked_up.isoformat()})", *notes])
    name = repo_id.split("/")[-1]
    fields |= {"id": repo_id.lower(), "name": name, "aliases": [repo_id, name], "source": source}
    return _with_params(repo_id, fields)


def _with_params(repo_id: str, fields: dict[str, Any]) -> ModelSpec:
    """Validate twice: with a provisional size, then with the size the architecture adds up to."""
    try:
        provisional = ModelSpec(**fields, params_b=1.0)
        total = from_spec(provisional).params / 1e9
        return ModelSpec(**fields, params_b=float(f"{total:.6g}"))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{repo_id}: config.json gives an invalid model ({problems})") from None


def _text_config(config: dict) -> tuple[str, dict[str, Any], list[str]]:
    """The language model's type and fields (nested under text_config in multimodal configs), with defaults."""
    top_type = str(config.get("model_type") or "")
    nested = config.get("text_config")
    cfg = {k: v for k, v in config.items() if k not in ("text_config", "vision_config", "audio_config")}
    notes = []
    if isinstance(nested, dict):
        cfg |= nested
        notes.append("text model only (the vision encoder is not counted)")
    elif "vision_config" in config:
        notes.append("text model only (the vision encoder is not counted)")
    model_type = str(nested.get("model_type") or "") if isinstance(nested, dict) else ""
    model_type = model_type or _TEXT_TYPES.get(top_type, top_type)
    model_type = _TEXT_TYPES.get(model_type, model_type)
    defaults = _DEFAULTS.get(model_type, {})
    return model_type, {**defaults, **cfg}, notes  # an explicit null stays null (DeepSeek-V2-Lite's q_lora_rank)


def _first(cfg: dict[str, Any], *names: str) -> Any:
    return next((cfg[n] for n in names if cfg.get(n) is not None), None)


def _need(cfg: dict[str, Any], *names: str) -> int:
    """The first of `names` the config sets, a whole number from 1; ValueError when none is set."""
    return _count(cfg, *names)


def _count(cfg: dict[str, Any], *names: str, default: int | None = None, least: int = 1) -> int:
    value = _first(cfg, *names)
    if value is None:
        if default is None:
            raise ValueError(f"config.json has no {' / '.join(names)}")
        return default
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not least <= value < 2**31:
        raise ValueError(f"config.json's {names[0]} is not a whole number from {least} below 2**31: {value!r}")
    return int(value)


def _shape(model_type: str, cfg: dict[str, Any], style: _Style) -> dict[str, Any]:
    # field names: LlamaConfig, GPT2Config (n_*), BloomConfig (n_embed), OPTConfig (ffn_dim), ChatGLMConfig
    hidden = _need(cfg, "hidden_size", "n_embd", "n_embed", "d_model")
    heads = _need(cfg, "num_attention_heads", "n_head")
    fields: dict[str, Any] = {
        "layers": _need(cfg, "num_hidden_layers", "n_layer", "num_layers"),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": _kv_heads(model_type, cfg, heads),
        "ffn_hidden": _ffn(model_type, cfg, hidden),
        "vocab": _need(cfg, "vocab_size", "padded_vocab_size"),
        "tied": bool(cfg.get("tie_word_embeddings", style.tied)),
        "gated": style.gated,
        "norm": style.norm,
        "norms_per_layer": _norms(model_type, cfg, style),
        "qkv_bias": style.qkv_bias or bool(_first(cfg, "attention_bias", "qkv_bias", "add_qkv_bias")),
        "linear_bias": style.linear_bias or bool(cfg.get("mlp_bias") or _first(cfg, "bias", "enable_bias")),
        "qk_norm": style.qk_norm,
        "embedding_norm": style.embedding_norm,
    }
    if cfg.get("head_dim"):
        fields["head_dim"] = _need(cfg, "head_dim")
    if style.positions:
        fields["learned_positions"] = _need(cfg, style.positions) + style.position_offset
    return fields


def _kv_heads(model_type: str, cfg: dict[str, Any], heads: int) -> int:
    # FalconConfig: num_kv_heads with new_decoder_architecture, else multi_query = one; GPTBigCodeConfig multi_query
    if model_type == "gpt_bigcode" or (model_type == "falcon" and not cfg.get("new_decoder_architecture")):
        return 1 if cfg.get("multi_query") else heads
    if cfg.get("multi_query_attention"):  # ChatGLMConfig
        return _need(cfg, "multi_query_group_num")
    names = ("num_key_value_heads", "num_kv_heads", "n_head_kv")
    return _need(cfg, *names) if _first(cfg, *names) is not None else heads


def _ffn(model_type: str, cfg: dict[str, Any], hidden: int) -> int:
    # Llama4TextConfig: intermediate_size_mlp is the dense layers' width; GPT2/Falcon/Bloom: 4 x hidden unless set
    if model_type == "llama4_text":
        return _need(cfg, "intermediate_size_mlp")
    names = ("intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size")
    if _first(cfg, *names) is None and model_type in ("gpt2", "gpt_bigcode", "bloom", "falcon"):
        return 4 * hidden
    return _need(cfg, *names)


def _norms(model_type: str, cfg: dict[str, Any], style: _Style) -> int:
    # modeling_falcon.FalconDecoderLayer: ln_attn + ln_mlp (new architecture), one shared input_layernorm (parallel)
    if model_type == "falcon":
        if cfg.get("new_decoder_architecture"):
            return _count(cfg, "num_ln_in_parallel_attn", default=2)
        return 1 if cfg.get("parallel_attn", True) else 2
    return style.norms_per_layer


def _moe(model_type: str, cfg: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    # MixtralConfig/GptOssConfig num_local_experts, Qwen2MoeConfig num_experts, DeepseekV3Config n_routed_experts
    experts = _count(cfg, "num_local_experts", "num_experts", "n_routed_experts", default=1, least=0)
    if experts <= 1:
        return {}
    width = _count(cfg, "moe_intermediate_size", "intermediate_size", default=fields["ffn_hidden"])
    layers = fields["layers"]
    # ArcticConfig parallel_attn_mlp_res: a dense MLP hidden_size wide beside the experts
    residual = fields["hidden"] if model_type == "arctic" and cfg.get("parallel_attn_mlp_res") else None
    moe = {
        "experts": experts,
        "experts_per_token": _count(cfg, "num_experts_per_tok", "moe_topk", default=1),
        "moe_ffn_hidden": width,
        "shared_experts": _shared_experts(model_type, cfg, width),
        "dense_layers": layers - _moe_layers(model_type, cfg, layers),
    } | _routing_groups(cfg, experts)
    return moe | ({"residual_ffn_hidden": residual} if residual else {})


def _routing_groups(cfg: dict[str, Any], experts: int) -> dict[str, int]:
    # DeepseekV2Config/DeepseekV3Config n_group, topk_group: node-limited routing; kept only when consistent
    groups, per_token = _count(cfg, "n_group", default=1), _count(cfg, "topk_group", default=1)
    if groups <= 1 or experts % groups or per_token > groups:
        return {}
    return {"expert_groups": groups, "groups_per_token": per_token}


def _shared_experts(model_type: str, cfg: dict[str, Any], width: int) -> int:
    # DeepseekV3Config n_shared_experts; Qwen2MoeConfig shared_expert_intermediate_size (one wide expert);
    # Llama4TextMoe always has one shared expert of intermediate_size
    if cfg.get("n_shared_experts") is not None:
        return _count(cfg, "n_shared_experts", least=0)
    wide = _count(cfg, "shared_expert_intermediate_size", default=0, least=0)
    if wide:
        return max(1, round(wide / width))
    return 1 if model_type == "llama4_text" else 0


def _moe_layers(model_type: str, cfg: dict[str, Any], layers: int) -> int:
    # DeepseekV3 first_k_dense_replace; Qwen2Moe mlp_only_layers + decoder_sparse_step (Arctic's
    # moe_layer_frequency); Llama4 moe_layers or interleave_moe_layer_step
    if cfg.get("first_k_dense_replace") is not None:
        return layers - min(layers, _count(cfg, "first_k_dense_replace", least=0))
    if model_type == "llama4_text":
        step = _count(cfg, "interleave_moe_layer_step", default=1)
        return min(layers, len(cfg.get("moe_layers") or range(step - 1, layers, step)))
    step = _count(cfg, "decoder_sparse_step", "moe_layer_frequency", default=1)
    dense = {i for i in cfg.get("mlp_only_layers") or [] if isinstance(i, int) and 0 <= i < layers}
    return layers // step - sum(1 for i in dense if (i + 1) % step == 0)


def _mla(cfg: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    # DeepseekV2Config/DeepseekV3Config: q_lora_rank (null: queries projected directly, the catalog's 0),
    # kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim
    if not cfg.get("kv_lora_rank"):
        return {}
    mla = MLA(
        q_lora_rank=_count(cfg, "q_lora_rank", default=0, least=0),
        kv_lora_rank=_need(cfg, "kv_lora_rank"),
        qk_nope_head_dim=_need(cfg, "qk_nope_head_dim"),
        qk_rope_head_dim=_need(cfg, "qk_rope_head_dim"),
        v_head_dim=_need(cfg, "v_head_dim"),
    )
    return {"mla": mla, "kv_heads": fields["heads"], "head_dim": None}


def _weights_dtype(config: dict[str, Any], cfg: dict[str, Any]) -> tuple[str, str | None]:
    # PretrainedConfig torch_dtype (transformers 5: dtype); quantization_config from the quantizer that saved it
    quant = config.get("quantization_config") or cfg.get("quantization_config")
    if isinstance(quant, dict) and _is_fp8(quant):
        return "fp8", None
    if isinstance(quant, dict) and _is_4bit(quant):
        return "int4", f"released in 4 bits ({quant.get('quant_method', 'unknown method')}), served as int4"
    raw = str(_first(config, "torch_dtype", "dtype") or _first(cfg, "torch_dtype", "dtype") or "").lower()
    dtype = {"float16": "fp16", "half": "fp16"}.get(raw.removeprefix("torch."), "bf16")
    if isinstance(quant, dict):
        return dtype, f"released quantized ({quant.get('quant_method', 'unknown method')}), sized as {dtype}"
    if raw and raw.removeprefix("torch.") not in ("bfloat16", "float16", "half"):
        return dtype, f"released in {raw}, sized as {dtype}"
    return dtype, None


def _is_4bit(quant: dict[str, Any]) -> bool:
    # MXFP4 (gpt-oss), AWQ/GPTQ with 4 bits, bitsandbytes load_in_4bit, compressed-tensors W4A16
    method = str(quant.get("quant_method", "")).lower()
    if method == "mxfp4" or quant.get("load_in_4bit") is True:
        return True
    if method in ("awq", "gptq", "autoround") and (quant.get("bits") or quant.get("w_bit")) == 4:
        return True
    weights = _group_weights(quant)
    return bool(weights) and all(w.get("num_bits") == 4 for w in weights)


def _group_weights(quant: dict[str, Any]) -> list[dict[str, Any]]:
    """compressed-tensors: the weight scheme of each config group."""
    groups = quant.get("config_groups") or {}
    return [g.get("weights") or {} for g in groups.values() if isinstance(g, dict)]


def _is_fp8(quant: dict[str, Any]) -> bool:
    # FP8 config (quant_method fp8/fbgemm_fp8) or compressed-tensors weights {num_bits: 8, type: float}
    if "fp8" in str(quant.get("quant_method", "")).lower() or "e4m3" in str(quant.get("fmt", "")).lower():
        return True
    weights = _group_weights(quant)
    return bool(weights) and all(w.get("num_bits") == 8 and w.get("type") == "float" for w in weights)


def _context(cfg: dict[str, Any]) -> tuple[int, str | None]:
    # LlamaConfig max_position_embeddings, GPT2Config n_positions, ChatGLM/Bloom seq_length
    for key in ("max_position_embeddings", "n_positions", "seq_length", "max_sequence_length", "n_ctx"):
        if isinstance(cfg.get(key), int) and cfg[key] >= 1:
            return cfg[key], None
    return DEFAULT_CONTEXT, f"context length not stated, {DEFAULT_CONTEXT:,} assumed"
