"""Hugging Face lookups: config.json -> ModelSpec, and fetching it from a local stand-in of the Hub.

No test touches the internet: HF_ENDPOINT points at tests/hf_standin.py, which records every request
(gpuplan.bot.hub passes it to huggingface_hub at each call, so the library's import-time
endpoint is never used).
"""

from __future__ import annotations

import time

import pytest
from hf_standin import CONFIGS, HubStandIn
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.bot import hub
from gpuplan.estimator.architecture import from_spec

LLAMA = "meta-llama/Meta-Llama-3-8B"
GATED = "gated-org/gated-model-1"
SLOW = "slow-org/slow-model-1"
MISSING = "nobody/no-such-model-1"


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUPLAN_HF_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("GPUPLAN_HF_TIMEOUT", "2")
    for name in ("HF_HUB_OFFLINE", "GPUPLAN_HF_LOOKUP"):
        monkeypatch.delenv(name, raising=False)
    hub.clear_memo()
    yield tmp_path
    hub.clear_memo()


@pytest.fixture
def standin(env, monkeypatch):
    configs = {**CONFIGS, SLOW: CONFIGS[LLAMA]}
    with HubStandIn(configs, gated={GATED}, slow={SLOW: 30.0}) as hub_standin:
        monkeypatch.setenv("HF_ENDPOINT", hub_standin.endpoint)
        yield hub_standin


# --- config.json -> ModelSpec ----------------------------------------------------------------------


def test_llama_config_reproduces_the_catalog(cat):
    spec = hub.spec_from_config(LLAMA, CONFIGS[LLAMA])
    known = cat.models["llama-3-8b"]
    assert spec.params_b == pytest.approx(known.params_b, rel=0.005)
    for field in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "tied", "max_context"):
        assert getattr(spec, field) == getattr(known, field), field
    assert spec.id == "meta-llama/meta-llama-3-8b"
    assert spec.name == "Meta-Llama-3-8B"
    assert spec.aliases == [LLAMA, "Meta-Llama-3-8B"]
    assert spec.source.startswith(f"huggingface.co/{LLAMA} config.json (looked up 20")
    assert spec.weights_dtype == "bf16"


@pytest.mark.parametrize(
    ("repo", "model_id"), [("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"), ("deepseek-ai/DeepSeek-V3", "deepseek-v3")]
)
def test_moe_configs_match_the_catalog(cat, repo, model_id):
    spec, known = hub.spec_from_config(repo, CONFIGS[repo]), cat.models[model_id]
    assert spec.params_b == pytest.approx(known.params_b, rel=0.01)
    assert from_spec(spec).active_params == pytest.approx(from_spec(known).active_params, rel=0.01)
    fields = ("experts", "experts_per_token", "moe_ffn_hidden", "shared_experts", "dense_layers", "mla", "qk_norm")
    for field in (*fields, "expert_groups", "groups_per_token"):  # DeepSeek-V3's n_group 8, topk_group 4
        assert getattr(spec, field) == getattr(known, field), field
    assert spec.weights_dtype == known.weights_dtype  # DeepSeek-V3: fp8 from quantization_config


def test_gemma3_reads_the_nested_text_config():
    spec = hub.spec_from_config("google/gemma-3-27b-it", CONFIGS["google/gemma-3-27b-it"])
    assert (spec.layers, spec.hidden, spec.heads, spec.kv_heads, spec.head_dim) == (62, 5376, 32, 16, 128)
    assert spec.vocab == 262208  # Gemma3TextConfig's default: the config leaves it out
    assert spec.tied and spec.qk_norm and spec.norms_per_layer == 4
    assert spec.max_context == 131072
    assert 26.5 < spec.params_b < 27.5  # the 27B language model; the 0.4B vision encoder is not counted
    assert "vision encoder is not counted" in spec.source


def test_gpt2_field_names():
    spec = hub.spec_from_config("openai-community/gpt2", CONFIGS["openai-community/gpt2"])
    assert (spec.layers, spec.hidden, spec.heads, spec.ffn_hidden) == (12, 768, 12, 3072)
    assert spec.params_b == pytest.approx(0.124439808, rel=1e-5)  # GPT-2 small, as its safetensors count it
    assert spec.learned_positions == spec.max_context == 1024
    assert not spec.gated and spec.norm == "layer" and spec.linear_bias and spec.tied


# config.json of catalog models from other families (shaping fields only): each must give the catalog
# entry's architecture, compared as what the estimator adds up (from_spec).
TWINS = {
    "mixtral-8x7b": ("mistralai/Mixtral-8x7B-v0.1", {
        "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768,
        "num_attention_heads": 32, "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
        "num_local_experts": 8, "tie_word_embeddings": False, "vocab_size": 32000,
    }),
    "qwen2.5-7b": ("Qwen/Qwen2.5-7B", {
        "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
        "num_hidden_layers": 28, "num_key_value_heads": 4, "tie_word_embeddings": False, "vocab_size": 152064,
    }),
    "qwen2-57b-a14b": ("Qwen/Qwen2-57B-A14B", {
        "model_type": "qwen2_moe", "hidden_size": 3584, "intermediate_size": 18944, "moe_intermediate_size": 2560,
        "shared_expert_intermediate_size": 20480, "num_experts": 64, "num_experts_per_tok": 8,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 151936,
        "max_position_embeddings": 131072,
    }),
    "gemma-2-9b": ("google/gemma-2-9b", {
        "model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 42,
        "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000,
    }),
    "phi-4": ("microsoft/phi-4", {
        "model_type": "phi3", "hidden_size": 5120, "intermediate_size": 17920, "max_position_embeddings": 16384,
        "num_attention_heads": 40, "num_hidden_layers": 40, "num_key_value_heads": 10, "vocab_size": 100352,
    }),
    "gpt-oss-20b": ("openai/gpt-oss-20b", {
        "model_type": "gpt_oss", "attention_bias": True, "head_dim": 64, "hidden_size": 2880,
        "intermediate_size": 2880, "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
        "num_key_value_heads": 8, "num_local_experts": 32, "vocab_size": 201088,
        "quantization_config": {"quant_method": "mxfp4"},
    }),
    "deepseek-v2-lite": ("deepseek-ai/DeepSeek-V2-Lite", {
        "model_type": "deepseek_v2", "first_k_dense_replace": 1, "hidden_size": 2048, "intermediate_size": 10944,
        "kv_lora_rank": 512, "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2,
        "num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 27, "q_lora_rank": None,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
    }),
    "llama-4-scout": ("meta-llama/Llama-4-Scout-17B-16E", {
        "model_type": "llama4", "tie_word_embeddings": False, "vision_config": {"model_type": "llama4_vision_model"},
        "text_config": {
            "model_type": "llama4_text", "head_dim": 128, "hidden_size": 5120, "interleave_moe_layer_step": 1,
            "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_attention_heads": 40,
            "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16,
            "vocab_size": 202048, "max_position_embeddings": 10485760,
        },
    }),
    "llama-4-maverick": ("meta-llama/Llama-4-Maverick-17B-128E", {
        "model_type": "llama4", "text_config": {
            "head_dim": 128, "hidden_size": 5120, "interleave_moe_layer_step": 2, "intermediate_size": 8192,
            "intermediate_size_mlp": 16384, "num_attention_heads": 40, "num_experts_per_tok": 1,
            "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 128, "vocab_size": 202048,
        },
    }),
    "arctic": ("Snowflake/snowflake-arctic-instruct", {
        "model_type": "arctic", "hidden_size": 7168, "intermediate_size": 4864, "num_local_experts": 128,
        "num_experts_per_tok": 2, "moe_layer_frequency": 1, "parallel_attn_mlp_res": True, "num_hidden_layers": 35,
        "num_attention_heads": 56, "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 4096,
    }),
    "falcon-7b": ("tiiuae/falcon-7b", {
        "model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
        "multi_query": True, "new_decoder_architecture": False, "parallel_attn": True, "bias": False,
        "vocab_size": 65024,
    }),
    "falcon-40b": ("tiiuae/falcon-40b", {
        "model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60, "num_attention_heads": 128,
        "num_kv_heads": 8, "new_decoder_architecture": True, "parallel_attn": True, "bias": False,
        "vocab_size": 65024,
    }),
    "bloom-176b": ("bigscience/bloom", {
        "model_type": "bloom", "n_layer": 70, "hidden_size": 14336, "n_head": 112, "vocab_size": 250880,
    }),
    "opt-6.7b": ("facebook/opt-6.7b", {
        "model_type": "opt", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "ffn_dim": 16384, "max_position_embeddings": 2048, "vocab_size": 50272, "torch_dtype": "float16",
    }),
}  # fmt: skip


@pytest.mark.parametrize("model_id", sorted(TWINS))
def test_other_families_match_the_catalog(cat, model_id):
    repo, config = TWINS[model_id]
    spec, known = hub.spec_from_config(repo, config), cat.models[model_id]
    assert spec.params_b == pytest.approx(from_spec(known).params / 1e9, rel=0.005)
    for field in ("layers", "hidden", "heads", "kv_heads", "vocab", "experts", "shared_experts", "mla", "gated"):
        assert getattr(spec, field) == getattr(known, field), field


def test_nulls_in_a_config_are_not_replaced_by_defaults():
    spec = hub.spec_from_config(*TWINS["deepseek-v2-lite"])  # q_lora_rank null: no query compression
    assert spec.mla.q_lora_rank == 0 and "q_lora_rank null" in spec.source


def test_arctic_residual_mlp_and_interleaved_llama4_layers(cat):
    arctic = hub.spec_from_config(*TWINS["arctic"])
    assert arctic.residual_ffn_hidden == cat.models["arctic"].residual_ffn_hidden == 7168
    maverick = hub.spec_from_config(*TWINS["llama-4-maverick"])
    assert (maverick.dense_layers, maverick.ffn_hidden, maverick.moe_ffn_hidden) == (24, 16384, 8192)


def test_olmo2_has_no_catalog_twin_but_its_published_size():
    config = {
        "model_type": "olmo2", "hidden_size": 5120, "intermediate_size": 13824, "max_position_embeddings": 4096,
        "num_attention_heads": 40, "num_hidden_layers": 40, "num_key_value_heads": 40, "vocab_size": 100352,
    }  # fmt: skip
    spec = hub.spec_from_config("allenai/OLMo-2-1124-13B", config)
    assert spec.params_b == pytest.approx(13.7, rel=0.01) and spec.qk_norm


def test_quantized_release_is_named_in_the_source():
    spec = hub.spec_from_config(*TWINS["gpt-oss-20b"])
    assert spec.weights_dtype == "int4" and "4 bits (mxfp4)" in spec.source
    assert hub.spec_from_config(*TWINS["opt-6.7b"]).weights_dtype == "fp16"


@pytest.mark.parametrize(
    "quant, dtype",
    [
        ({"quant_method": "awq", "bits": 4, "group_size": 128}, "int4"),
        ({"quant_method": "gptq", "bits": 4}, "int4"),
        ({"quant_method": "gptq", "bits": 8}, "bf16"),  # 8-bit GPTQ: sized as 16-bit, and said
        ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "int4"),
        ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4}}}}, "int4"),
        ({"quant_method": "fp8", "fmt": "e4m3"}, "fp8"),
    ],
)
def test_a_checkpoint_released_in_4_bits_is_served_as_int4(quant, dtype):
    name, config = TWINS["phi-4"]
    spec = hub.spec_from_config(name, {**config, "quantization_config": quant})
    assert spec.weights_dtype == dtype


def test_missing_context_defaults_and_says_so():
    config = {**TWINS["qwen2.5-7b"][1], "model_type": "somebrandnew"}
    spec = hub.spec_from_config("org/brand-new-1", config)
    assert spec.max_context == 4096
    assert "4,096 assumed" in spec.source and "read as a Llama-style decoder" in spec.source


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model_type": "brandnew", "num_hidden_layers": 2, "hidden_size": None}, "hidden_size"),
        ({"model_type": "brandnew", "hidden_size": 64, "num_attention_heads": 4}, "num_hidden_layers"),
        ({"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12}, "not a decoder-only"),
        ({"model_type": "t5", "is_encoder_decoder": True, "d_model": 512}, "not a decoder-only"),
        ({**CONFIGS[LLAMA], "num_key_value_heads": 5}, "heads must be a multiple of kv_heads"),
        ({**CONFIGS[LLAMA], "hidden_size": "big"}, "hidden_size is not a whole number"),
        (["not", "an", "object"], "not a JSON object"),
    ],
)
def test_configs_that_cannot_be_read_raise_value_error(config, message):
    with pytest.raises(ValueError, match=message):
        hub.spec_from_config("org/model-1", config)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
BASES = [CONFIGS[LLAMA], CONFIGS["deepseek-ai/DeepSeek-V3"], CONFIGS["google/gemma-3-27b-it"], TWINS["bloom-176b"][1]]


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(BASES), changes=st.dictionaries(st.sampled_from(sorted({k for b in BASES for k in b})), JSON)
)
def test_any_config_gives_a_spec_or_a_value_error(base, changes):
    try:
        spec = hub.spec_from_config("org/model-1", {**base, **changes})
    except ValueError as exc:
        assert str(exc).startswith("org/model-1: ")
    else:
        assert spec.params_b > 0


# --- recognising a repo id -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("microsoft/phi-4", "microsoft/phi-4"),
        ("Qwen/Qwen3-14B", "Qwen/Qwen3-14B"),
        ("allenai/OLMo-2-1124-13B", "allenai/OLMo-2-1124-13B"),
        ("01-ai/Yi-34B", "01-ai/Yi-34B"),
        ("openai-community/gpt2", "openai-community/gpt2"),
        ("`deepseek-ai/DeepSeek-V3`,", "deepseek-ai/DeepSeek-V3"),
        ("https://huggingface.co/meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("huggingface.co/google/gemma-3-27b-it/tree/main", "google/gemma-3-27b-it"),
        ("<https://huggingface.co/Qwen/Qwen3-8B|Qwen/Qwen3-8B>", "Qwen/Qwen3-8B"),  # a Slack link
    ],
)
def test_repo_ids_are_recognised(text, repo):
    assert hub.looks_like_repo_id(text)
    assert hub.repo_id_from(text) == repo


@pytest.mark.parametrize(
    "text",
    [
        "src/train.py", "configs/llama-7b.yaml", "/data/models", "./models/llama-7b", "~/llama-7b", "a/b/c",
        "models/llama-7b", "data/train-00001", "cuda/12.1", "python/3.11", "torch/nn", "N/A", "w/o", "1/5",
        "12/25/2024", "2024/01", "TCP/IP", "and/or", "input/output", "tokens/s", "GB/s", "A100/H100",
        "8xA100/8xH100", "fp16/bf16", "mixed/bf16", "7B/13B", "Llama-2-7b/13b", "ZeRO-2/3", "TP/PP", "v1/v2",
        "https://github.com/org/model-1", "https://huggingface.co/datasets/org/data-1",
        "https://huggingface.co/spaces/org/demo-1", "org--x/model-1", "org/model..1", "", "phi-4",
        "A/0μ0", "组织/模型-7b",  # letters Hugging Face does not allow (huggingface_hub raised on "A/0μ0")
    ],
)  # fmt: skip
def test_other_slashed_words_are_not_repo_ids(text):
    assert not hub.looks_like_repo_id(text)


# --- lookups against the stand-in ------------------------------------------------------------------


def test_lookup_downloads_config_json_once_then_serves_it_from_disk(standin):
    spec = hub.lookup(LLAMA)
    assert spec is not None and spec.params_b == pytest.approx(8.030, rel=0.005)
    assert [c["method"] for c in standin.recorder.calls] == ["GET"]  # config.json only, nothing else
    assert all(c["path"].endswith("/config.json") for c in standin.recorder.calls)
    assert hub.lookup(LLAMA) == spec  # the process memo
    hub.clear_memo()
    assert hub.lookup(LLAMA) == spec  # the disk cache
    assert standin.recorder.count() == 1
    standin.stop()
    hub.clear_memo()
    assert hub.lookup(LLAMA) == spec  # the network gone: still the disk cache


def test_lookup_takes_a_huggingface_address(standin):
    spec = hub.lookup("https://huggingface.co/openai-community/gpt2")
    assert spec is not None and spec.id == "openai-community/gpt2"


@pytest.mark.parametrize("repo", [MISSING, GATED])
def test_missing_and_gated_repos_give_none_and_are_not_retried_at_once(standin, repo, caplog):
    caplog.set_level("DEBUG", logger="gpuplan.bot.hub")
    assert hub.lookup(repo) is None
    assert standin.recorder.calls[-1]["status"] == (401 if repo == GATED else 404)
    assert [r.message for r in caplog.records if r.name == "gpuplan.bot.hub"] == [caplog.records[-1].message]
    seen = standin.recorder.count()
    assert hub.lookup(repo) is None
    assert standin.recorder.count() == seen  # remembered for NEGATIVE_TTL


def test_a_failure_is_retried_after_the_negative_ttl(standin, monkeypatch):
    monkeypatch.setattr(hub, "NEGATIVE_TTL", -1.0)
    assert hub.lookup(MISSING) is None
    seen = standin.recorder.count()
    assert hub.lookup(MISSING) is None
    assert standin.recorder.count() > seen


def test_slow_hub_gives_none_within_the_timeout(standin, monkeypatch):
    monkeypatch.setenv("GPUPLAN_HF_TIMEOUT", "1")
    started = time.monotonic()
    assert hub.lookup(SLOW) is None
    assert 0.9 < time.monotonic() - started < 2.5


def test_unreachable_hub_gives_none_within_the_timeout(env, monkeypatch):
    with HubStandIn() as gone:
        endpoint = gone.endpoint
    monkeypatch.setenv("HF_ENDPOINT", endpoint)  # nothing listens there any more
    monkeypatch.setenv("GPUPLAN_HF_TIMEOUT", "1")
    started = time.monotonic()
    assert hub.lookup(LLAMA) is None
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(("name", "value"), [("GPUPLAN_HF_LOOKUP", "0"), ("HF_HUB_OFFLINE", "1")])
def test_lookup_can_be_turned_off(standin, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    assert hub.lookup(LLAMA) is None
    assert standin.recorder.count() == 0
    monkeypatch.delenv(name)
    assert hub.lookup(LLAMA) is not None  # read at call time, and "off" was not remembered


def test_words_that_are_not_repo_ids_are_not_looked_up(standin):
    assert hub.lookup("src/train.py") is None
    assert hub.lookup("A100/H100") is None
    assert standin.recorder.count() == 0


def test_config_that_cannot_be_understood_gives_none(env, monkeypatch):
    bert = {"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12}
    with HubStandIn({"google-bert/bert-base-1": bert}) as standin:
        monkeypatch.setenv("HF_ENDPOINT", standin.endpoint)
        assert hub.lookup("google-bert/bert-base-1") is None
        assert standin.recorder.count() == 1


def test_a_lookup_inside_a_deadline_ends_by_it_and_is_not_remembered(standin):
    started = time.monotonic()
    with hub.within(0.6):
        assert hub.lookup(SLOW) is None
    assert time.monotonic() - started < 1.5
    with hub.within(0.05):  # too little time left: no request at all
        assert hub.lookup(LLAMA) is None
    assert standin.recorder.count(LLAMA) == 0
    assert hub.lookup(LLAMA) is not None  # outside the deadline: the failure was not remembered


# --- the pipeline: a looked-up model is planned, in this question's catalog only -------------------

WIDGET = "acme-lab/Widget-80B-Instruct"  # a size in the name that its config.json contradicts


@pytest.fixture
def widget_hub(env, monkeypatch):
    with HubStandIn({WIDGET: CONFIGS[LLAMA]}) as hub_standin:
        monkeypatch.setenv("HF_ENDPOINT", hub_standin.endpoint)
        yield hub_standin


def test_an_id_with_a_size_in_its_name_is_sized_from_its_config(widget_hub, cat):
    from gpuplan.bot.pipeline import answer

    plan = answer(f"lora on {WIDGET} with 8 H100")
    assert plan.request.model == WIDGET.lower() and plan.request.params_b is None
    assert plan.estimate.resolved.params_b == pytest.approx(8.03, rel=0.01)  # the config, not the "80B"
    codes = [n.code for n in plan.notes]
    assert "hub_found" in codes and "unknown_model_name" not in codes
    assert WIDGET.lower() not in cat.models  # the process-wide catalog is not changed


def test_an_id_quoted_in_backticks_is_looked_up(widget_hub):
    """ "using the `org/name` as the base model": a name people quote as code in a sentence."""
    from gpuplan.bot.pipeline import answer

    plan = answer(f"using the `{WIDGET}` as the base model, lora on 8 H100")
    assert plan.estimate.resolved.params_b == pytest.approx(8.03, rel=0.01)
    assert widget_hub.recorder.count(WIDGET) == 1


def test_a_follow_up_keeps_the_looked_up_model(widget_hub):
    from gpuplan.bot.language.conversation import follow_up
    from gpuplan.bot.pipeline import answer, answer_parsed

    first = answer(f"lora on {WIDGET} with 8 H100")
    again = answer_parsed(follow_up(first.request, "what about 4k context?"), "en")
    assert again.estimate.resolved.model == WIDGET.lower() and again.estimate.resolved.seq_len == 4096
    assert widget_hub.recorder.count() == 1


# a looked-up model's own layer kinds, as Megatron's arguments write them (GPT-2: LayerNorm, a plain
# MLP, learned positions, biases; DeepSeek-V3: MLA)
LOOKED_UP_SHAPES = [
    ("openai-community/gpt2", "full fine-tune {} on 8 H100", ["LayerNorm", "learned_absolute"], ["--swiglu"]),
    ("deepseek-ai/DeepSeek-V3", "pretrain {} on 1024 H100", ["--multi-latent-attention", "--kv-lora-rank 512"], []),
]
# names the catalog does not know, serving those configs
LOOKED_UP_AS = {"openai-community/gpt2": "acme-lab/Tinker-124M", "deepseek-ai/DeepSeek-V3": "acme-lab/Latent-671B"}


@pytest.mark.parametrize(("repo", "job", "written", "not_written"), LOOKED_UP_SHAPES)
def test_a_looked_up_models_config_files_write_its_own_shape(env, monkeypatch, repo, job, written, not_written):
    """The config files read the shape the plan was sized with (the estimate's), not a Llama-style one."""
    from gpuplan.bot.configs import export
    from gpuplan.bot.pipeline import answer

    looked_up = LOOKED_UP_AS[repo]
    with HubStandIn({looked_up: CONFIGS[repo]}) as hub_standin:
        monkeypatch.setenv("HF_ENDPOINT", hub_standin.endpoint)
        plan = answer(job.format(looked_up))
    assert plan.estimate.resolved.model == looked_up.lower()
    script = export(plan, "megatron")["pretrain_megatron.sh"]
    assert all(arg in script for arg in written) and not any(arg in script for arg in not_written)
    assert "config.json on the Hugging Face Hub" in script and "No published config" not in script


def test_without_a_lookup_the_size_in_the_name_is_planned_and_said(monkeypatch):
    from gpuplan.bot.pipeline import answer

    monkeypatch.setenv("GPUPLAN_HF_LOOKUP", "0")
    plan = answer(f"lora on {WIDGET} with 8 H100")
    assert plan.estimate.resolved.params_b == pytest.approx(80, rel=0.02)
    note = next(n for n in plan.notes if n.code == "hub_unknown")
    assert note.params == {"id": WIDGET, "size": 80.0}


def test_the_token_is_sent_and_nothing_but_config_json_is_asked_for(standin, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_gpuplan_test_token")
    assert hub.lookup(LLAMA) is not None
    (call,) = standin.recorder.calls
    assert call["authorization"] == "Bearer hf_gpuplan_test_token" and call["path"].endswith("/config.json")
