"""Shapes and parameter counts, with the arithmetic written out."""

import pytest

from gpuplan.estimator.architecture import from_spec, generic, generic_moe, models_named_at, shared_shape


def test_llama2_7b_parameters_by_hand(cat):
    a = from_spec(cat.models["llama-2-7b"])
    attn = 4 * 4096 * 4096  # q, k, v, o: 67,108,864
    mlp = 3 * 4096 * 11008  # gate, up, down: 135,266,304
    norms = 2 * 4096
    embed = head = 32000 * 4096
    assert a.params == 32 * (attn + mlp + norms) + embed + head + 4096 == 6_738_415_616


def test_gqa_kv_cache_per_token(cat):
    a = from_spec(cat.models["llama-3-70b"])
    # 2 (K, V) x 8 kv heads x 128 dims per layer; x 80 layers x 2 bytes = 327,680 bytes/token
    assert a.kv_cache_elems_per_token_layer == 2 * 8 * 128
    assert a.layers * a.kv_cache_elems_per_token_layer * 2 == 327_680


def test_mla_caches_the_latent_only(cat):
    a = from_spec(cat.models["deepseek-v3"])
    assert a.kv_cache_elems_per_token_layer == 512 + 64


def test_matmul_params_exclude_embedding_lookup_but_count_head(cat):
    a = from_spec(cat.models["llama-2-7b"])
    # N for FLOPs: layers (minus norms) + the output head; the embedding is a lookup
    assert a.matmul_params_per_token == a.params - 32000 * 4096 - 32 * 2 * 4096 - 4096


def test_lora_parameter_count_by_hand(cat):
    a = from_spec(cat.models["llama-3.1-8b"])
    r = 8
    per_layer = r * ((4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 3 * (4096 + 14336))
    assert a.lora_params(r) == 32 * per_layer == 20_971_520


def test_lora_on_a_moe_model_leaves_the_routed_experts_frozen(cat):
    """Qwen3-30B-A3B: every layer is MoE with no shared expert, so LoRA adapts the four attention
    projections only (q 2048->4096, k and v 2048->512, o 4096->2048)."""
    a = from_spec(cat.models["qwen3-30b-a3b"])
    r = 16
    assert a.lora_params(r) == 48 * r * ((2048 + 4096) + 2 * (2048 + 512) + (4096 + 2048))


def test_adafactor_factors_each_expert_matrix(cat):
    """Adafactor keeps rows + columns per matrix: 128 routed experts of 2048x768 gate, up and down
    projections each count their own rows and columns."""
    a = from_spec(cat.models["qwen3-30b-a3b"])
    attention = (2048 + 4096) + 2 * (2048 + 512) + (4096 + 2048)
    experts = 128 * 3 * (2048 + 768)
    assert a.factored_state_elems == 48 * (attention + experts) + 2 * (a.vocab + a.hidden)


@pytest.mark.parametrize("size, layers, hidden", [(6.7, 32, 4096), (13, 40, 5120), (175, 96, 12288)])
def test_generic_widths_follow_the_gpt3_ladder(size, layers, hidden):
    """GPT-3's widths; grouped-query attention's smaller layers leave room for at least its depth."""
    a = generic(size)
    assert a.hidden == hidden and a.layers >= layers
    assert a.params / 1e9 == pytest.approx(size, rel=0.03)


@pytest.mark.parametrize("size", [0.05, 0.1, 0.2, 0.39, 0.4, 0.5, 1.5, 3, 4.9, 5, 7, 13, 34, 70, 180, 405, 1000, 10000])
def test_generic_sizes_land_near_the_request(size):
    a = generic(size)
    assert a.params / 1e9 == pytest.approx(size, rel=0.05)
    assert a.heads * a.head_dim == a.hidden
    assert a.heads % 8 == 0  # tensor parallel can split 8 ways
    assert a.kv_heads <= a.heads and a.heads % a.kv_heads == 0  # whole groups of queries per KV head


@pytest.mark.parametrize(
    "size, vocab, tied",
    [
        (0.1, 49_152, True),  # SmolLM2-135M
        (0.5, 128_256, True),  # Qwen2.5-0.5B and Llama 3.2 1B tie their embeddings
        (1, 128_256, True),
        (3, 128_256, True),  # Llama 3.2 3B
        (7, 128_256, False),  # Llama 3.1 8B
        (70, 128_256, False),
        (405, 128_256, False),
    ],
)
def test_a_bare_size_is_shaped_as_current_models(size, vocab, tied):
    """8 KV heads (Llama 3.2 1B to Llama 3.1 405B), and the vocabulary and tying of the size's band;
    the old generic shape had full multi-head attention and LLaMA 1's 32,000 untied tokens."""
    a = generic(size)
    assert a.kv_heads == 8 and a.heads > 8
    assert (a.vocab, a.tied) == (vocab, tied)


@pytest.mark.parametrize("size, model", [(8, "llama-3.1-8b"), (70, "llama-3.1-70b"), (405, "llama-3.1-405b")])
def test_a_bare_size_caches_as_much_per_token_as_llama_3(cat, size, model):
    """KV cache per token within 25% of the Llama 3.1 model of that size (before: 4.8x, 7.7x, 15.9x)."""
    bare, named = generic(size), from_spec(cat.models[model])
    per_token = [a.layers * a.kv_cache_elems_per_token_layer for a in (bare, named)]
    assert per_token[0] == pytest.approx(per_token[1], rel=0.25)


@pytest.mark.parametrize(
    "size, shape",
    [
        (13, (40, 5120, 40, 40, 128)),  # Llama 2 13B, Code Llama 13B, Baichuan2 13B, OPT-13B: full attention
        (70, (80, 8192, 64, 8, 128)),  # Llama 2 70B, Llama 3 70B, Llama 3.3 70B, Code Llama 70B
        (175, (96, 12288, 96, 96, 128)),  # GPT-3 175B and OPT-175B
        (7, None),  # Llama 2 7B (full attention) against Mistral 7B and Qwen2.5 7B (grouped)
        (34, None),  # Yi 34B (60 layers) against Code Llama 34B (48)
        (2.5, None),  # no catalog model is named 2.5B
    ],
)
def test_a_bare_size_takes_the_shape_its_named_models_share(cat, size, shape):
    assert shared_shape(size, cat.models.values())[0] == shape


def test_only_dense_models_named_at_a_size_count(cat):
    """ "Llama 4 Scout 17B-16E" and "Qwen3 30B-A3B" state active or expert sizes, not a dense 17B or 30B."""
    assert models_named_at(17, cat.models.values()) == []
    assert [spec.id for spec in models_named_at(13, cat.models.values())][:2] == ["llama-2-13b", "baichuan2-13b"]


def test_a_shared_shape_keeps_the_size_and_the_paper_kv_cache(cat):
    """vLLM's paper (Kwon et al. 2023, Section 3): a 13B model of 40 layers x 5,120 holds 800 KB of
    fp16 KV cache per token: 2 (K, V) x 5,120 x 40 layers x 2 bytes = 819,200 bytes."""
    a = generic(13, shared_shape(13, cat.models.values())[0])
    assert a.layers * a.kv_cache_elems_per_token_layer * 2 == 819_200
    assert a.params / 1e9 == pytest.approx(13, rel=0.02)  # the MLP width makes up the count
    assert generic(70, shared_shape(70, cat.models.values())[0]).params / 1e9 == pytest.approx(70, rel=0.02)


@pytest.mark.parametrize("total_b, active_b", [(1000, 32), (671, 37), (235, 22), (30, 3)])
def test_generic_moe_meets_its_total_and_active_sizes(total_b, active_b):
    """A generic MoE of a total and an active size: 8 routed and 1 shared expert per token, as many
    experts (a multiple of 8) as make up the total; both sizes within 5% (Kimi K2 is 1.03T-A32B,
    DeepSeek-V3 671B-A37B, Qwen3 235B-A22B and 30B-A3B in their config.json)."""
    arch = generic_moe(total_b, active_b)
    assert arch.is_moe and arch.experts % 8 == 0 and arch.experts_per_token == 8 and arch.shared_experts == 1
    assert arch.params / 1e9 == pytest.approx(total_b, rel=0.05)
    assert arch.active_params / 1e9 == pytest.approx(active_b, rel=0.05)


def test_generic_moe_keeps_its_output_layer_untied():
    """Qwen3-30B-A3B's and OLMoE-1B-7B's config.json untie it, though a dense 3B would tie it."""
    assert not generic_moe(30, 3).tied and generic(3).tied


def test_generic_moe_too_dense_for_experts_is_the_dense_model():
    """8B with 7B active leaves no room for more experts than are routed: the dense 8B."""
    arch = generic_moe(8, 7)
    assert not arch.is_moe and arch.params / 1e9 == pytest.approx(8, rel=0.05)
