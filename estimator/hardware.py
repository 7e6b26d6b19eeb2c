"""A GPU named by its memory. Alone ("单卡48G", "a 24GB card", the capacity an OOM message states):
a GPU of exactly that memory, with the speed, links and price of the catalog type it most
resembles, so the plan answers for the card the user has rather than for one they did not name.
Beside a catalog card ("4090 48G", "A100 40GB", "RTX 3090, 96GB DDR5"): that card with that memory,
the catalog's own of it, or the card as listed when the memory cannot be its. `resolve_memory`
decides which, for the pipeline (bot/pipeline.py)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from gpuplan.estimator.schema import Note
from gpuplan.knowledge import GPU, Catalog

MAX_GPU_MEMORY_GIB = 1024  # a GPU named by its memory: 1 GiB to 1 TiB (today's largest carry 288 GB)


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


@dataclass(frozen=True)
class ByMemory:
    """What a GPU written with a memory is planned as: the GPU id (None: the estimator picks among the
    stocked types of that memory), the memory left on the request (None: it was not the card's), the
    catalog to plan with (a copy holding the card made for the question, if one was) and the note
    that says so (None when there is nothing to say)."""

    gpu: str | None
    gpu_memory_gib: float | None
    catalog: Catalog
    note: Note | None = None


def resolve_memory(
    cat: Catalog, gpu: str | None, gib: float | None, region: str | None = None, any_stocked: bool = False
) -> ByMemory:
    """The GPU a request's `gpu` and `gpu_memory_gib` name together. A catalog card (or the id a
    written memory made of one, `rtx-4090-48gb`) written with a memory is `_card_with_memory`'s. A
    memory alone ("a 64GB card") leaves the choice to the estimator among the stocked types of about
    that memory (`any_stocked`: the cheapest of them at once, for questions about the hardware
    itself), and when none is stocked makes a card of exactly that memory (memory_class_gpu). No
    memory, or one outside 1 GiB to MAX_GPU_MEMORY_GIB (the estimator refuses it), changes nothing."""
    if not gib or not 1 <= gib <= MAX_GPU_MEMORY_GIB:
        return ByMemory(gpu, gib, cat)
    named = cat.gpus.get(gpu or "") or _card_of_written_memory(gpu, gib, cat)
    if named:
        return _card_with_memory(named, gpu, gib, cat)
    stocked = stocked_with_memory(cat, gib, region)
    if stocked and any_stocked:
        cheapest = min(stocked, key=lambda g: (g.price_usd_per_hour, g.id))
        note = Note(code="gpu_memory_class", params={"gib": gib, "gpus": [cheapest.name]})
        return ByMemory(cheapest.id, gib, cat, note)
    if stocked:
        return ByMemory(None, gib, cat)
    made, like = memory_class_gpu(cat, gib, region)
    note = Note(code="gpu_by_memory", params={"gib": gib, "like": cat.gpus[like].name})
    return ByMemory(made.id, gib, cat.with_gpu(made, like), note)


def _card_with_memory(named: GPU, gpu: str | None, gib: float, cat: Catalog) -> ByMemory:
    """A catalog card written with a memory: its own class ("A100 80GB") as written; a memory no card
    of its type has or is modded to ("RTX 3090, 96GB DDR5": the host's RAM) dropped; another memory of
    its type ("H20 (140GB)", "4090 48G") a card of that memory under an id that says it, the catalog's
    own when it lists one ("a100-80gb" written with 40 GB: a100-40gb, as it is)."""
    if in_class(named, gib):
        return ByMemory(gpu, gib, cat)
    if not could_have(named, gib):
        return ByMemory(gpu, None, cat, Note(code="gpu_memory_not_the_cards", params={"gpu": named.name, "gib": gib}))
    card = with_memory(named, gib)
    if card.id in cat.gpus:
        return ByMemory(card.id, gib, cat)
    note = Note(code="gpu_memory_as_written", params={"gpu": named.name, "catalog_gib": named.memory_gib, "gib": gib})
    return ByMemory(card.id, gib, cat.with_gpu(card, named.id, same_stock=True), note)


def _card_of_written_memory(gpu: str | None, gib: float, cat: Catalog) -> GPU | None:
    """The catalog card a written-memory id was made from (a follow-up brings `rtx-4090-48gb` back)."""
    if not gpu:
        return None
    return next((g for g in cat.gpus.values() if written_memory_id(g, gib) == gpu), None)
