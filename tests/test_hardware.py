"""estimator/hardware.py resolve_memory: the GPU a request's card and memory name together."""

from __future__ import annotations

import pytest

from gpuplan.estimator.hardware import resolve_memory
from gpuplan.knowledge import catalog

# (what the user wrote, gpu, gpu_memory_gib, any_stocked) -> (gpu planned, memory kept, note code, made card)
CASES = [
    (
        "RTX 3090 96GB (the host's RAM)",
        "rtx-3090-24gb",
        96,
        False,
        ("rtx-3090-24gb", None, "gpu_memory_not_the_cards", None),
    ),
    ("A100 40GB", "a100-80gb", 40, False, ("a100-40gb", 40, None, None)),
    ("A100 80GB", "a100-80gb", 80, False, ("a100-80gb", 80, None, None)),
    ("H100 80GB (79.6 GiB listed)", "h100-80gb", 80, False, ("h100-80gb", 80, None, None)),
    ("4090 48G (modded)", "rtx-4090-24gb", 48, False, ("rtx-4090-48gb", 48, "gpu_memory_as_written", 48.0)),
    ("8 * H20 (140GB)", "h20-96gb", 140, False, ("h20-140gb", 140, "gpu_memory_as_written", 140.0)),
    ("a follow-up on rtx-4090-48gb", "rtx-4090-48gb", 48, False, ("rtx-4090-48gb", 48, "gpu_memory_as_written", 48.0)),
    ("an 80GB card, some stocked", None, 80, False, (None, 80, None, None)),
    ("an 80GB card, hardware question", None, 80, True, ("a100-80gb", 80, "gpu_memory_class", None)),
    ("a 64GB card, none stocked", None, 64, False, ("gpu-64gb", 64, "gpu_by_memory", 64.0)),
    ("单卡48G, none stocked", None, 48, False, ("gpu-48gb", 48, "gpu_by_memory", 48.0)),
    ("a memory over 1 TiB", None, 2000, False, (None, 2000, None, None)),
    ("no memory", "h100-80gb", None, False, ("h100-80gb", None, None, None)),
]


@pytest.mark.parametrize(("written", "gpu", "gib", "any_stocked", "expected"), CASES, ids=[c[0] for c in CASES])
def test_resolve_memory(written, gpu, gib, any_stocked, expected):
    cat = catalog()
    found = resolve_memory(cat, gpu, gib, any_stocked=any_stocked)
    planned, kept, code, made_gib = expected
    assert (found.gpu, found.gpu_memory_gib) == (planned, kept)
    assert (found.note.code if found.note else None) == code
    if made_gib is None:  # a catalog card as it is: the catalog itself
        assert found.catalog is cat
    else:  # a card made for the question, in the question's copy of the catalog only
        assert found.catalog.gpus[planned].memory_gib == made_gib and planned not in cat.gpus


def test_a_memory_only_card_is_modelled_on_the_cheapest_close_type():
    found = resolve_memory(catalog(), None, 64)
    assert found.note.params == {"gib": 64, "like": catalog().gpus["mi210-64gb"].name}
