"""A GPU named only by its memory ("单卡48G", "a 24GB card", the capacity an OOM message states):
a GPU of exactly that memory, with the speed, links and price of the catalog type it most
resembles, so the plan answers for the card the user has rather than for one they did not name."""

from __future__ import annotations

import math
import re

from gpuplan.knowledge import GPU, Catalog


def in_class(gpu: GPU, gib: float) -> bool:
    """Marketed GB against reported GiB and ECC reserve: an 80 GB card reports about 79.6 GiB
    (nvidia-smi 81559 MiB), a 24 GB one 23.6 GiB. The band itself is our choice, not sourced:
    wide enough for those gaps ("a 48GB card": any of 41 to 53 GiB)."""
    return 0.85 * gib <= gpu.memory_gib <= 1.1 * gib


def could_have(gpu: GPU, gib: float) -> bool:
    """Whether a card of this type could carry `gib`: from half its memory to a little over double
    (cards modded to twice theirs, 2080 Ti 22 GB and 4090 48 GB; the H20's 141 GB is 1.5x its 96).
    The band is our choice, not sourced; outside it the memory is some other thing's."""
    return 0.5 * gpu.memory_gib <= gib <= 2.1 * gpu.memory_gib


def stocked_with_memory(cat: Catalog, gib: float, region: str | None = None) -> list[GPU]:
    """The GPU types in stock whose memory is about `gib`."""
    return [g for g in cat.gpus.values() if in_class(g, gib) and cat.stock(g.id, region)[0] > 0]


# families without tensor cores: a card of theirs is a model for an unnamed card only when no
# newer card has about that memory (few people asking today own a Tesla P40 or M40)
LEGACY_FAMILIES = frozenset({"kepler", "maxwell", "pascal"})


def _gb_text(gib: float) -> str:
    """A memory as card names write it: "48", "23.5"."""
    return f"{gib:.0f}" if abs(gib - round(gib)) < 0.05 else f"{gib:.1f}"


def written_memory_id(gpu: GPU, gib: float) -> str:
    """The id of a catalog card with another memory: `rtx-4090-24gb` written as 48 GB is `rtx-4090-48gb`."""
    size = _gb_text(gib).replace(".", "_")
    renamed = re.sub(r"-\d+(?:_\d+)?gb$", f"-{size}gb", gpu.id)
    return renamed if renamed != gpu.id else f"{gpu.id}-{size}gb"


def with_memory(gpu: GPU, gib: float) -> GPU:
    """A catalog card with the memory the user wrote beside it, which the catalog's type lacks
    ("H20 (140GB)", a "4090 48G" with its memory modded): its speed, links and price, that memory,
    under an id that says it (`written_memory_id`)."""
    size = _gb_text(gib)
    written = re.sub(r"\d+(?:\.\d+)?\s*GB\b", f"{size}GB", gpu.name)
    name = written if written != gpu.name else f"{gpu.name} {size}GB"
    return gpu.model_copy(
        update={
            "id": written_memory_id(gpu, gib),
            "name": name,
            "memory_gib": float(gib),
            "mig_profiles": [],
            "source": f"{gpu.source}; memory as the user wrote it ({size} GB), not the catalog's",
        }
    )


def is_memory_class(gpu: GPU) -> bool:
    """A GPU made up from its memory alone (memory_class_gpu): its other properties are a stand-in's."""
    return gpu.id.startswith(MEMORY_CLASS_PREFIX)


MEMORY_CLASS_PREFIX = "gpu-"


def memory_class_gpu(cat: Catalog, gib: float, region: str | None = None) -> tuple[GPU, str]:
    """(the made-up GPU, the id of the catalog type it is modelled on). The model is the cheapest
    stocked type within 15% of that memory, else the cheapest catalog type that close with tensor
    cores, else any that close, else the nearest (15%: our choice, not sourced; cards that close
    in memory are of one generation and class)."""
    close = [g for g in cat.gpus.values() if abs(math.log(g.memory_gib / gib)) <= math.log(1.15)]
    stocked = [g for g in close if cat.stock(g.id, region)[0] > 0]
    current = [g for g in close if g.family not in LEGACY_FAMILIES]
    pool = stocked or current or close or [min(cat.gpus.values(), key=lambda g: abs(math.log(g.memory_gib / gib)))]
    like = min(pool, key=lambda g: (g.price_usd_per_hour, g.id))
    size = _gb_text(gib)
    made = like.model_copy(
        update={
            "id": f"{MEMORY_CLASS_PREFIX}{size}gb",
            "name": f"{size} GB GPU (≈ {like.name})",  # read in either language: the assumption says what ≈ means
            "aliases": [],
            "memory_gib": float(gib),
            "mig_profiles": [],
            "source": f"a GPU given by its memory only; speed, links and price of {like.name}",
        }
    )
    return made, like.id
