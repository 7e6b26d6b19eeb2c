"""The catalog model a family and a size name (catalog_names.family_model): the one whose id carries
the size, the newest version first, only the version written when one is."""

from __future__ import annotations

import pytest

from gpuplan.bot.language.catalog_names import family_model
from gpuplan.bot.language.size_words import _family_ids
from gpuplan.knowledge import catalog

FAMILY_MODELS = [
    ("qwen", 14, "", "qwen3-14b"),  # the newest of the family's 14B models
    ("qwen", 13, "", "qwen3-14b"),  # within 15%
    ("qwen", 72, "2", "qwen2-72b"),  # the version written
    ("qwen", 0.5, "2.5", "qwen2.5-0.5b"),  # millions: "500m" is no word of its id, "0.5b" is
    ("llama", 405, "", "llama-3.1-405b"),  # an id that carries the size first
    ("llama", 400, "", "llama-4-maverick"),  # none carries "400b": the nearest size
    ("llama", 70, "3.1", "llama-3.1-70b"),
    ("llama", 8, "4", None),  # Llama 4 has no 8B
    ("internvl", 26, "", "internvl2.5-26b"),  # the vision encoder counted in its size
    ("internvl", 26, "1.5", "internvl-chat-v1-5"),  # a version in the id after other words
    ("mistral", 7, "", "mistral-7b"),
]


@pytest.mark.parametrize("family, size, version, want", FAMILY_MODELS)
def test_family_model(family, size, version, want):
    assert family_model(_family_ids()[family], size, version, catalog()) == want
