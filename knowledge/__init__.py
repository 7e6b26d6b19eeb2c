"""The knowledge base: YAML facts with sources, validated once per process.

`catalog()` returns the loaded, validated data; lookups by the names people write go through
`normalize_name`, which folds case, spacing, punctuation and vendor prefixes.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from importlib import resources

import yaml

from knowledge.schema import GPU, Defaults, Fabric, ModelSpec, NetworkFile, Tier, TierFile

__all__ = ["Catalog", "catalog", "normalize_name", "GPU", "ModelSpec", "Tier", "Defaults", "Fabric"]

_VENDOR_WORDS = re.compile(r"nvidia|英伟达|geforce|tesla|meta-llama/|meta-|/|instruct|-chat|chat|-hf|-base|-it\b")
_NOT_ALNUM = re.compile(r"[^0-9a-z\u4e00-\u9fff]+")


def normalize_name(text: str) -> str:
    """Fold a GPU or model name to a lookup key: 'NVIDIA A100-80GB' -> 'a10080g'."""
    key = text.strip().lower()
    key = key.split("/")[-1] if "/" in key else key
    key = _VENDOR_WORDS.sub(" ", key)
    key = re.sub(r"(\d)\s*gb\b", r"\1g", key)
    return _NOT_ALNUM.sub("", key)


def _load(name: str) -> dict:
    text = resources.files("knowledge").joinpath(name).read_text(encoding="utf-8")
    return yaml.safe_load(text)


@dataclass(frozen=True)
class Catalog:
    gpus: dict[str, GPU]
    models: dict[str, ModelSpec]
    tiers: list[Tier]
    tier_base_url: str
    defaults: Defaults
    fabrics: dict[str, Fabric]
    default_fabric: str
    collective_efficiency: float
    gpu_index: dict[str, str]
    model_index: dict[str, str]

    def find_gpu(self, text: str) -> GPU | None:
        gpu_id = self.gpu_index.get(normalize_name(text))
        return self.gpus[gpu_id] if gpu_id else None

    def find_model(self, text: str) -> ModelSpec | None:
        model_id = self.model_index.get(normalize_name(text))
        return self.models[model_id] if model_id else None

    def tier_url(self, tier: Tier) -> str:
        return self.tier_base_url + tier.path


def _index(entries: dict, kind: str) -> dict[str, str]:
    index: dict[str, str] = {}
    for entry in entries.values():
        for name in [entry.id, entry.name, *entry.aliases]:
            key = normalize_name(name)
            if not key:
                continue
            if index.get(key, entry.id) != entry.id:
                raise ValueError(f"{kind} alias {name!r} names both {index[key]} and {entry.id}")
            index[key] = entry.id
    return index


def _price_overrides(gpus: dict[str, GPU]) -> dict[str, GPU]:
    """GPUPLAN_PRICES names a YAML file of `gpu-id: USD per GPU-hour` that replaces the defaults."""
    path = os.environ.get("GPUPLAN_PRICES")
    if not path:
        return gpus
    with open(path, encoding="utf-8") as fh:
        table = yaml.safe_load(fh) or {}
    if not isinstance(table, dict):
        raise ValueError(f"GPUPLAN_PRICES file {path} must map GPU ids to prices")
    updated = dict(gpus)
    for gpu_id, price in table.items():
        if gpu_id not in gpus:
            raise ValueError(f"GPUPLAN_PRICES file {path}: unknown GPU id {gpu_id!r}")
        if not isinstance(price, int | float) or price <= 0:
            raise ValueError(f"GPUPLAN_PRICES file {path}: price of {gpu_id} must be a positive number")
        updated[gpu_id] = gpus[gpu_id].model_copy(
            update={"price_usd_per_hour": float(price), "price_source": f"deployer price list ({path})"}
        )
    return updated


@functools.cache
def catalog() -> Catalog:
    """Load and validate every YAML file once per process (deployer overrides from the environment)."""
    gpus = _price_overrides({g["id"]: GPU(**g) for g in _load("gpus.yaml")["gpus"]})
    models = {m["id"]: ModelSpec(**m) for m in _load("models.yaml")["models"]}
    tier_file = TierFile(**_load("tiers.yaml"))
    defaults = Defaults(**_load("defaults.yaml"))
    network = NetworkFile(**_load("networks.yaml"))
    fabrics = {f.id: f for f in network.fabrics}
    if network.default_inter_node not in fabrics:
        raise ValueError(f"default fabric {network.default_inter_node} is not listed")
    for tier in tier_file.tiers:
        unknown = set(tier.gpu_ids) - set(gpus)
        if unknown:
            raise ValueError(f"tier {tier.id} names unknown GPUs {sorted(unknown)}")
    return Catalog(
        gpus=gpus,
        models=models,
        tiers=tier_file.tiers,
        tier_base_url=os.environ.get("GPUPLAN_TIER_BASE_URL") or tier_file.base_url,
        defaults=defaults,
        fabrics=fabrics,
        default_fabric=network.default_inter_node,
        collective_efficiency=float(network.collective_efficiency.value),
        gpu_index=_index(gpus, "GPU"),
        model_index=_index(models, "model"),
    )
