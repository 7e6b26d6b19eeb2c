"""The knowledge base: YAML facts with sources, validated once per process.

`catalog()` returns the loaded, validated data; lookups by the names people write go through
`normalize_name`, which folds case, spacing, punctuation and vendor prefixes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import pickle
import re
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pydantic
import yaml

from gpuplan.knowledge.schema import (
    GPU,
    Defaults,
    DeploymentLink,
    Fabric,
    FaqFile,
    FaqRule,
    Framework,
    FrameworkFile,
    Instance,
    InstanceFile,
    InventoryFile,
    KernelFile,
    Lexicon,
    ModelSpec,
    ModelVariant,
    NetworkFile,
    Region,
    RegionFile,
    Shape,
    StorageFile,
    StorageOption,
    Tier,
    TierFile,
)

__all__ = [
    "read_yaml",
    "Catalog",
    "catalog",
    "normalize_name",
    "GPU",
    "ModelSpec",
    "Shape",
    "Tier",
    "Defaults",
    "KernelFile",
    "Fabric",
    "Region",
    "StorageOption",
    "StorageFile",
]

_VENDOR_WORDS = re.compile(r"nvidia|英伟达|geforce|tesla|meta-llama/|meta-|/|instruct|chat|[-_\s](?:hf|base|it)\b")
_NOT_ALNUM = re.compile(r"[^0-9a-z\u4e00-\u9fff]+")


@functools.lru_cache(maxsize=8192)
def normalize_name(text: str) -> str:
    """Fold a GPU or model name to a lookup key: 'NVIDIA A100-80GB' -> 'a10080g' (memoised: the
    catalog's names are folded again at every family look-up)."""
    key = text.strip().lower()
    key = key.split("/")[-1] if "/" in key else key
    key = _VENDOR_WORDS.sub(" ", key)
    key = re.sub(r"(\d)\s*gb\b", r"\1g", key)
    return _NOT_ALNUM.sub("", key)


def words_key(name: str) -> str:
    """A name's words in sorted order, lower case: one key for the same words in any order
    ("deepseek-r1-qwen-distill-32b" and "DeepSeek-R1-Distill-Qwen-32B")."""
    return " ".join(sorted(w for w in re.split(r"[\s\-_/]+", name.lower()) if w))


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(text: str) -> Any:
    """Safe YAML, through libyaml when PyYAML has it: the knowledge base loads about ten times
    faster, which is most of a process's first answer."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader


class SettingError(ValueError):
    """A deployer's setting (an environment variable) that gpuplan cannot use; the message names it."""


@dataclass(frozen=True)
class Catalog:  # frozen: cached_property writes to __dict__ directly
    gpus: dict[str, GPU]
    models: dict[str, ModelSpec]
    tiers: list[Tier]
    tier_base_url: str
    defaults: Defaults
    fabrics: dict[str, Fabric]
    collective_efficiency: float
    link_latency_us: dict[str, float]
    regions: dict[str, Region]
    areas: dict[str, dict[str, str]]
    inventory: dict[str, dict[str, int]]
    storage: StorageFile
    region_prices: dict[str, dict[str, float]]
    lexicon: Lexicon
    rules: list[FaqRule]
    gpu_index: dict[str, str]
    model_index: dict[str, str]
    instances: list[Instance]
    kernels: KernelFile
    deployment: DeploymentLink | None = None  # the guide's training-to-deployment section
    frameworks: dict[str, Framework] = dataclasses.field(default_factory=dict)  # frameworks.yaml by id

    def find_gpu(self, text: str) -> GPU | None:
        gpu_id = self.gpu_index.get(normalize_name(text))
        return self.gpus[gpu_id] if gpu_id else None

    def find_model(self, text: str) -> ModelSpec | None:
        model_id = self.model_index.get(normalize_name(text))
        return self.models[model_id] if model_id else None

    def find_framework(self, text: str) -> Framework | None:
        """A framework by its id or by a name it is written with ("torchtune", "LLaMA-Factory")."""
        key = text.strip().lower()
        for framework in self.frameworks.values():
            if key == framework.id or any(re.fullmatch(p, key) for p in framework.names.en + framework.names.zh):
                return framework
        return None

    def with_model(self, spec: ModelSpec) -> Catalog:
        """A copy that also holds a model read at run time (a Hugging Face config.json). The
        process-wide catalog is never changed: one user's look-up is not in another's answer."""
        index = dict(self.model_index)
        for name in [spec.id, spec.name, *spec.aliases]:
            index.setdefault(normalize_name(name), spec.id)
        return dataclasses.replace(self, models={**self.models, spec.id: spec}, model_index=index)

    def with_gpu(self, gpu: GPU, like: str, same_stock: bool = False) -> Catalog:
        """A copy that also holds a GPU made up for one question (a card named by its memory
        only, modelled on `like`), stocked where `like` is (elsewhere as the region's largest pool;
        `same_stock`: exactly as `like`, none where it has none: `like` itself with other memory).
        A GPU the catalog has already (the user's denser server) replaces it and keeps its stock."""
        if gpu.id in self.gpus:
            return dataclasses.replace(self, gpus={**self.gpus, gpu.id: gpu})
        inventory = {
            region: {
                **stock,
                gpu.id: stock.get(like, 0) if same_stock else stock.get(like) or max(stock.values(), default=0),
            }
            for region, stock in self.inventory.items()
        }
        index = {**self.gpu_index, normalize_name(gpu.id): gpu.id}
        return dataclasses.replace(self, gpus={**self.gpus, gpu.id: gpu}, gpu_index=index, inventory=inventory)

    def with_stock(self, gpu_id: str, count: int, region: str | None) -> Catalog:
        """A copy holding `count` of a type in `region` (every region when None): a type the provider
        does not stock, planned as the user's own hardware or another provider's. Made once per
        type, count and region (the same copy each time: what is derived from it is kept with it)."""
        copies = self.__dict__.setdefault("_stock_copies", {})
        key = (gpu_id, count, region)
        if key not in copies:
            copies[key] = self._with_stock(gpu_id, count, region)
        return copies[key]

    def _with_stock(self, gpu_id: str, count: int, region: str | None) -> Catalog:
        regions = [region] if region else list(self.inventory)
        inventory = {r: ({**stock, gpu_id: count} if r in regions else stock) for r, stock in self.inventory.items()}
        return dataclasses.replace(self, inventory=inventory)

    def tier_url(self, tier: Tier | DeploymentLink) -> str:
        return self.tier_base_url + tier.path

    def price(self, gpu_id: str, region: str | None) -> float:
        """USD per GPU-hour: the deployer's regional price, else the default x the region factor."""
        if region and gpu_id in self.region_prices.get(region, {}):
            return self.region_prices[region][gpu_id]
        factor = self.regions[region].price_factor if region in self.regions else 1.0
        return self.gpus[gpu_id].price_usd_per_hour * factor

    def stock(self, gpu_id: str, region: str | None) -> tuple[int, str | None]:
        """GPUs of a type available in a region; with no region, the region holding the most."""
        if region:
            return self.inventory.get(region, {}).get(gpu_id, 0), region
        return self._largest_stock.get(gpu_id, (0, None))

    @functools.cached_property
    def model_keys(self) -> list[tuple[str, ModelSpec]]:
        """(folded id, spec) of every model: what a family look-up compares prefixes with."""
        return [(normalize_name(spec.id), spec) for spec in self.models.values()]

    @functools.cached_property
    def model_by_words(self) -> dict[str, str]:
        """Every model's id and aliases by their words in any order (words_key) -> the model id."""
        index: dict[str, str] = {}
        for spec in self.models.values():
            for name in (spec.id, *spec.aliases):
                index.setdefault(words_key(name), spec.id)
        return index

    @functools.cached_property
    def _largest_stock(self) -> dict[str, tuple[int, str | None]]:
        table: dict[str, tuple[int, str | None]] = {}
        for region, stock in self.inventory.items():
            for gpu_id, count in stock.items():
                if count > table.get(gpu_id, (0, None))[0]:
                    table[gpu_id] = (count, region)
        return table


def _check_references(
    gpus: dict[str, GPU],
    regions: dict[str, Region],
    fabrics: dict[str, Fabric],
    inventory: dict[str, dict[str, int]],
    region_prices: dict[str, dict[str, float]],
    instances: list[Instance],
    tiers: list[Tier],
) -> None:
    """Every region, GPU and fabric one file names is one another file defines."""
    for region, stock in inventory.items():
        if region not in regions or set(stock) - set(gpus):
            raise ValueError(f"inventory region {region} names an unknown region or GPU")
    for region in region_prices:
        if region not in regions:
            raise SettingError(f"GPUPLAN_PRICES names an unknown region {region!r}")
    for gpu in gpus.values():
        if gpu.node_fabric not in fabrics:
            raise ValueError(f"GPU {gpu.id} names an unknown fabric {gpu.node_fabric}")
    for instance in instances:
        if instance.gpu not in gpus:
            raise ValueError(f"instance {instance.pattern} names an unknown GPU {instance.gpu}")
    for tier in tiers:
        unknown = set(tier.gpu_ids) - set(gpus)
        if unknown:
            raise ValueError(f"tier {tier.id} names unknown GPUs {sorted(unknown)}")


def _check_kernels(gpus: dict[str, GPU], kernels: KernelFile) -> None:
    """Every GPU's generation has kernel figures, and every card kernels.yaml names is a GPU."""
    for gpu in gpus.values():
        if gpu.family not in kernels.generations:
            raise ValueError(f"GPU {gpu.id}: kernels.yaml has no generation {gpu.family}")
    unknown = set(kernels.sms_by_gpu) - set(gpus) - {"note"}
    if unknown:
        raise ValueError(f"kernels.yaml sms_by_gpu names unknown GPUs {sorted(unknown)}")


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


def _price_overrides(gpus: dict[str, GPU]) -> tuple[dict[str, GPU], dict[str, dict[str, float]]]:
    """GPUPLAN_PRICES names a YAML file of `gpu-id: USD per GPU-hour` (every region) and/or
    `region: {gpu-id: USD}` (one region) that replaces the defaults."""
    path = os.environ.get("GPUPLAN_PRICES")
    if not path:
        return gpus, {}
    try:
        with open(path, encoding="utf-8") as fh:
            table = read_yaml(fh.read()) or {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingError(f"GPUPLAN_PRICES file {path} cannot be read ({exc})") from exc
    except yaml.YAMLError as exc:
        raise SettingError(f"GPUPLAN_PRICES file {path} is not YAML ({exc})") from exc
    if not isinstance(table, dict):
        raise SettingError(f"GPUPLAN_PRICES file {path} must map GPU ids to prices")

    index = _index(gpus, "GPU")

    def resolved(name: object) -> str:
        """A GPU id, alias or former id (`h100-sxm` before ids carried the memory) -> the id."""
        gpu_id = index.get(normalize_name(str(name)))
        if gpu_id is None:
            raise SettingError(f"GPUPLAN_PRICES file {path}: unknown GPU id {name!r}")
        return gpu_id

    def checked(gpu_id: str, price: object) -> float:
        if not isinstance(price, int | float) or isinstance(price, bool) or price <= 0:
            raise SettingError(f"GPUPLAN_PRICES file {path}: price of {gpu_id} must be a positive number")
        return float(price)

    updated = dict(gpus)
    regional: dict[str, dict[str, float]] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            regional[str(key)] = {resolved(g): checked(resolved(g), p) for g, p in value.items()}
            continue
        gpu_id = resolved(key)
        price = checked(gpu_id, value)
        updated[gpu_id] = gpus[gpu_id].model_copy(
            update={"price_usd_per_hour": price, "price_source": f"deployer price list ({path})"}
        )
    return updated, regional


def _models(table: dict) -> dict[str, ModelSpec]:
    """Models, then each variant expanded onto its base's shape (ids unique across both)."""
    models = {m["id"]: ModelSpec(**m) for m in table["models"]}
    if len(models) != len(table["models"]):
        raise ValueError("models.yaml repeats a model id")
    for entry in table.get("variants") or []:
        variant = ModelVariant(**entry)
        if variant.id in models:
            raise ValueError(f"model variant {variant.id} repeats an existing id")
        if variant.base not in models:
            raise ValueError(f"model variant {variant.id} names an unknown base {variant.base!r}")
        models[variant.id] = variant.expand(models[variant.base])
    return models


# the knowledge files the catalog validates (questions.yaml and artifacts.yaml are the parser's)
KNOWLEDGE_FILES = (
    "gpus",
    "models",
    "tiers",
    "defaults",
    "kernels",
    "networks",
    "regions",
    "inventory",
    "storage",
    "instances",
    "lexicon",
    "faq",
    "frameworks",
)
CACHE_KEPT = 8  # cache files kept of each kind: a few checkouts or versions side by side


def _validate(texts: dict[str, str]) -> dict[str, Any]:
    """Every knowledge file parsed and validated: GPUs and models as {id: entry}, the others as their
    file's model (before deployer overrides, which come from the environment, and change no name),
    and the indexes of the GPUs' and models' names."""
    data = {name: read_yaml(text) for name, text in texts.items()}
    gpus = {g["id"]: GPU(**g) for g in data["gpus"]["gpus"]}
    models = _models(data["models"])
    return {
        "gpus": gpus,
        "models": models,
        "tiers": TierFile(**data["tiers"]),
        "defaults": Defaults(**data["defaults"]),
        "kernels": KernelFile(**data["kernels"]),
        "networks": NetworkFile(**data["networks"]),
        "regions": RegionFile(**data["regions"]),
        "inventory": InventoryFile(**data["inventory"]),
        "storage": StorageFile(**data["storage"]),
        "instances": InstanceFile(**data["instances"]),
        "lexicon": Lexicon(**data["lexicon"]),
        "faq": FaqFile(**data["faq"]),
        "frameworks": FrameworkFile(**data["frameworks"]),
        "gpu_index": _index(gpus, "GPU"),
        "model_index": _index(models, "model"),
    }


def cache_dir() -> Path | None:
    """Where what one process derives from the knowledge is kept for the next (GPUPLAN_KNOWLEDGE_CACHE,
    default ~/.cache/gpuplan/knowledge; `off` keeps nothing)."""
    setting = os.environ.get("GPUPLAN_KNOWLEDGE_CACHE", "~/.cache/gpuplan/knowledge").strip()
    return None if setting.lower() in ("", "0", "off", "false", "no") else Path(setting).expanduser()


def cache_path(kind: str, parts: list[bytes], suffix: str) -> Path | None:
    """A cache file of `kind` named by a hash of everything its content depends on (`parts`) and the
    Python version that wrote it; None when caching is off."""
    folder = cache_dir()
    if folder is None:
        return None
    digest = hashlib.sha256(sys.version.encode())
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return folder / f"{kind}-{digest.hexdigest()[:32]}{suffix}"


def write_cache(path: Path, data: bytes) -> None:
    """Write a cache file atomically (readers see a whole file or none) in a directory only the user
    can write (a cache is trusted when read); keep the CACHE_KEPT newest files of its kind."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:  # a read-only home: every process validates and compiles for itself
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return
    kind = path.name.split("-")[0]
    with contextlib.suppress(OSError):  # another process pruning at the same time
        kept = sorted(path.parent.glob(f"{kind}-*{path.suffix}"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[CACHE_KEPT:]:
            old.unlink(missing_ok=True)


def _catalog_cache_path(texts: dict[str, str]) -> Path | None:
    """The validated files' cache, named by the YAML texts, the code that validates them and the
    pydantic version that pickled them."""
    here = Path(__file__).resolve().parent
    try:
        code = [(here / name).read_bytes() for name in ("__init__.py", "schema.py")]
    except OSError:  # installed without sources: nothing to key the cache by
        return None
    parts = [pydantic.VERSION.encode(), *code, *(text.encode() for text in texts.values())]
    return cache_path("catalog", parts, ".pickle")


def validated_files() -> dict[str, Any]:
    """The knowledge files validated, from the disk cache when one holds these very files (parsing and
    validating them is about 0.1 s of a terminal answer; loading the cache some 5 ms)."""
    folder = resources.files("gpuplan.knowledge")
    texts = {name: folder.joinpath(f"{name}.yaml").read_text(encoding="utf-8") for name in KNOWLEDGE_FILES}
    path = _catalog_cache_path(texts)
    if path is not None and path.is_file():
        with contextlib.suppress(Exception):  # unreadable, partly written or from other code: validate again
            stored = pickle.loads(path.read_bytes())
            if isinstance(stored, dict) and tuple(stored) == (*KNOWLEDGE_FILES, "gpu_index", "model_index"):
                return stored
    files = _validate(texts)
    if path is not None:
        write_cache(path, pickle.dumps(files, protocol=pickle.HIGHEST_PROTOCOL))
    return files


@functools.cache
def catalog() -> Catalog:
    """The knowledge, validated once per process (deployer overrides from the environment)."""
    files = validated_files()
    gpus, region_prices = _price_overrides(files["gpus"])
    tier_file, network, region_file = files["tiers"], files["networks"], files["regions"]
    fabrics = {f.id: f for f in network.fabrics}
    gpu_index = files["gpu_index"]
    inventory = {  # GPU names as the deployer wrote them (an alias or a former id works too)
        region: {gpu_index.get(normalize_name(g), g): n for g, n in stock.items()}
        for region, stock in files["inventory"].regions.items()
    }
    regions = {r.id: r for r in region_file.regions}
    instances = files["instances"].instances
    _check_references(gpus, regions, fabrics, inventory, region_prices, instances, tier_file.tiers)
    _check_kernels(gpus, files["kernels"])
    return Catalog(
        gpus=gpus,
        models=files["models"],
        tiers=tier_file.tiers,
        deployment=tier_file.deployment,
        tier_base_url=os.environ.get("GPUPLAN_TIER_BASE_URL") or tier_file.base_url,
        defaults=files["defaults"],
        fabrics=fabrics,
        collective_efficiency=float(network.collective_efficiency.value),
        link_latency_us={k: float(v) for k, v in network.link_latency_us.items() if k != "note"},
        regions=regions,
        areas={k: v.model_dump() for k, v in region_file.areas.items()},
        inventory=inventory,
        storage=files["storage"],
        region_prices=region_prices,
        lexicon=files["lexicon"],
        rules=files["faq"].rules,
        gpu_index=gpu_index,
        model_index=files["model_index"],
        instances=instances,
        kernels=files["kernels"],
        frameworks={f.id: f for f in files["frameworks"].frameworks},
    )
