"""What the rules of a card's memory (knowledge/rules/<lang>/card_memory.yaml: "A100 (40G)", "40G的A100",
"A10(4* 24GB)") and of the servers' RAM (host_ram.yaml: "512GB RAM", "内存 256G") refer to by name: the
converters that read the memory in GiB and the count written times it. The reading engine (engine.py)
takes them into its CONVERTERS."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


def _card_memory(match: re.Match, rule: Any) -> tuple[Any, None]:
    """The memory of the `memory` group in GiB ("40g": 40.0) and, for a rule that also reads `gpus`,
    the count written times it ("4* 24GB": 4), None when it counts no card ("0*80g")."""
    memory = float(match["memory"])
    if not rule.more_fields:
        return memory, None
    count = int(match["gpus"])
    return (memory, count if count >= 1 else None), None


def _memory_gib(match: re.Match, rule: Any) -> tuple[float, None]:
    """A GPU's memory in GiB from the `value` group ("24g": 24.0)."""
    return float(match["value"]), None


def _memory_said_own(match: re.Match, rule: Any) -> tuple[tuple[float, bool], None]:
    """(the memory in GiB, whether words make it the card's own: "memory of", 每卡, "只有", "only")."""
    return (float(match["value"]), bool(match["own_word"] or match["said"])), None


def _ram_gib(match: re.Match, rule: Any) -> tuple[float, None]:
    """The servers' RAM in GiB from its `value` and `unit` ("256G": 256, "1T": 1,024)."""
    return float(match["value"]) * (1024 if match["unit"].startswith("t") else 1), None


# what the GPU memory step (gpu_memory.py) states of what it read before, for the rules' `when`
FACTS: dict[str, str] = {
    "several_cards": "more than one card is counted already ('4张4090，加起来也就96G显存': all of them)",
}

CONVERTERS: dict[str, Callable[[re.Match, Any], tuple[Any, None]]] = {
    "card_memory": _card_memory,
    "memory_gib": _memory_gib,
    "memory_said_own": _memory_said_own,
    "ram_gib": _ram_gib,
}
