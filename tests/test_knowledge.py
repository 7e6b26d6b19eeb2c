"""The knowledge base loads, validates, carries sources, and resolves the names people write."""

import pytest

from estimator.architecture import from_spec
from knowledge import normalize_name

REQUIRED_GPUS = [
    "a100-40gb",
    "a100-80gb",
    "a100-pcie-40gb",
    "a100-pcie-80gb",
    "a800",
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h800",
    "h20",
    "h200",
    "b200",
    "l40s",
    "l20",
    "rtx-a6000",
    "rtx-4090",
    "a10",
    "v100-32gb",
    "mi300x",
]
REQUIRED_MODELS = [
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3-8b",
    "llama-3-70b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "mistral-7b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "deepseek-v3",
    "yi-34b",
    "baichuan2-13b",
    "glm-4-9b",
    "falcon-40b",
    "falcon-180b",
    "gemma-2-9b",
    "gemma-2-27b",
    "gpt-3-175b",
    "bloom-176b",
    "opt-175b",
]


def test_catalog_sizes(cat):
    assert len(cat.gpus) >= 18
    assert len(cat.models) >= 25
    assert set(REQUIRED_GPUS) <= set(cat.gpus)
    assert set(REQUIRED_MODELS) <= set(cat.models)


def test_every_entry_has_a_source(cat):
    for entry in [*cat.gpus.values(), *cat.models.values(), *cat.fabrics.values()]:
        assert entry.source.strip(), entry.id
    for gpu in cat.gpus.values():
        assert gpu.price_source.strip(), gpu.id


@pytest.mark.parametrize(
    "written, gpu_id",
    [
        ("4090", "rtx-4090"),
        ("h100 80g", "h100-sxm"),
        ("A100-80G", "a100-80gb"),
        ("英伟达H100", "h100-sxm"),
        ("NVIDIA A100 80GB", "a100-80gb"),
        ("a10g", "a10"),
        ("H800", "h800"),
        ("h20", "h20"),
        ("A6000", "rtx-a6000"),
        ("mi300x", "mi300x"),
        ("H100 PCIe", "h100-pcie"),
        ("a100 40gb", "a100-40gb"),
        ("B200", "b200"),
    ],
)
def test_gpu_aliases(cat, written, gpu_id):
    assert cat.find_gpu(written).id == gpu_id


@pytest.mark.parametrize(
    "written, model_id",
    [
        ("llama3 70b", "llama-3-70b"),
        ("Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("qwen2.5-72b", "qwen2.5-72b"),
        ("通义千问72B", "qwen2.5-72b"),
        ("Mixtral 8x7B", "mixtral-8x7b"),
        ("meta-llama/Meta-Llama-3-8B", "llama-3-8b"),
        ("deepseek-r1", "deepseek-v3"),
        ("Llama-2-7b-chat-hf", "llama-2-7b"),
        ("glm-4-9b-chat", "glm-4-9b"),
    ],
)
def test_model_aliases(cat, written, model_id):
    assert cat.find_model(written).id == model_id


def test_unknown_names_resolve_to_nothing(cat):
    assert cat.find_gpu("昇腾910B") is None
    assert cat.find_model("gpt-5") is None


def test_normalize_name_folds_spelling():
    assert normalize_name("NVIDIA A100-80GB") == normalize_name("a100 80g") == "a10080g"


@pytest.mark.parametrize("model_id", REQUIRED_MODELS)
def test_architecture_reproduces_published_parameter_count(cat, model_id):
    spec = cat.models[model_id]
    assert from_spec(spec).params / 1e9 == pytest.approx(spec.params_b, rel=0.002)


@pytest.mark.parametrize(
    "model_id, active_b",
    [
        ("mixtral-8x7b", 12.9),  # Mistral AI: "12.9B active parameters"
        ("mixtral-8x22b", 39.1),  # Mistral AI: "39B active"
        ("deepseek-v3", 37.5),  # arXiv:2412.19437: "37B activated"
        ("qwen3-30b-a3b", 3.3),  # Qwen3 model card: 3.3B activated
    ],
)
def test_moe_active_parameters(cat, model_id, active_b):
    assert from_spec(cat.models[model_id]).active_params / 1e9 == pytest.approx(active_b, rel=0.03)


def test_tiers_bilingual_with_urls(cat):
    kinds = [t.kind for t in cat.tiers]
    assert kinds.count("starter") == 4 and kinds.count("plan") == 3
    ids = [t.id for t in cat.tiers]
    assert len(set(ids)) == len(ids)
    for tier in cat.tiers:
        assert tier.title.en and tier.title.zh and tier.summary.en and tier.summary.zh
        assert tier.path


def test_defaults_have_notes(cat):
    d = cat.defaults
    for fact in [*d.hfu_by_family.values(), *d.overhead.values(), *d.offload.values(), *d.host.values()]:
        assert fact.note.strip()
    assert 0 < d.number("goodput") <= 1


def test_deployer_overrides_prices_and_tier_url(tmp_path, monkeypatch):
    from knowledge import catalog

    prices = tmp_path / "prices.yaml"
    prices.write_text("h100-sxm: 1.99\n")
    monkeypatch.setenv("GPUPLAN_PRICES", str(prices))
    monkeypatch.setenv("GPUPLAN_TIER_BASE_URL", "https://gpus.example.com/tiers/")
    catalog.cache_clear()
    try:
        cat = catalog()
        assert cat.gpus["h100-sxm"].price_usd_per_hour == 1.99
        assert "deployer" in cat.gpus["h100-sxm"].price_source
        assert cat.tier_url(cat.tiers[0]).startswith("https://gpus.example.com/tiers/#")
        prices.write_text("h999: 1\n")
        catalog.cache_clear()
        with pytest.raises(ValueError, match="unknown GPU id"):
            catalog()
    finally:
        monkeypatch.delenv("GPUPLAN_PRICES")
        monkeypatch.delenv("GPUPLAN_TIER_BASE_URL")
        catalog.cache_clear()
