"""Whether a job fits a GPU: the one rule every fit in the estimator is judged by (the layout
search, the plan's memory report, the fallbacks that suggest a fix, the probes and tier checks).

A plan may fill the card's usable memory, not all of it: for training a share kept in
knowledge/defaults.yaml (overhead.usable_fraction, headroom for what the breakdown does not
count), for serving the share the engine takes (vLLM's gpu_memory_utilization,
inference.engine_memory_fraction). Capacities and needs may be GiB or bytes, numbers or arrays,
as long as both are in the same unit.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from gpuplan.knowledge import Defaults

Amount = TypeVar("Amount", float, np.ndarray)


def usable_share(defaults: Defaults, serving: bool = False) -> float:
    """The share of a card's memory a plan may fill."""
    if serving:
        return defaults.number("inference", "engine_memory_fraction")
    return defaults.number("overhead", "usable_fraction")


def usable(capacity: Amount, defaults: Defaults, serving: bool = False) -> Amount:
    """The memory a plan may fill of a card holding `capacity`."""
    return capacity * usable_share(defaults, serving)


def fits(need: Amount, capacity: Amount, defaults: Defaults, serving: bool = False) -> Amount:
    """Whether `need` per GPU is within the usable memory of a card holding `capacity`."""
    return need <= usable(capacity, defaults, serving)


def tight(need: float, usable_memory: float, defaults: Defaults) -> bool:
    """It fits, with less than (1 - overhead.tight_fraction) of the usable memory to spare."""
    return need <= usable_memory and need > defaults.number("overhead", "tight_fraction") * usable_memory
