"""How much of a training job's wall-clock trains: interruptions, restarts and checkpoints.

Interruptions arrive at a rate per GPU, so a job's mean time between them, M, shrinks as it grows.
Each one costs a restart and the work done since the last checkpoint (half an interval on average);
every checkpoint costs its write time delta. Young's interval tau = sqrt(2 delta M) minimises the sum
(Young 1974; Daly 2006 for the first-order loss used here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplan.knowledge import Defaults

MIN_GOODPUT = 0.05  # a job interrupted faster than it restarts makes next to no progress


@dataclass(frozen=True)
class Reliability:
    """Per candidate: the share of wall-clock that trains, the checkpoint interval that gets it,
    and the job's mean time between interruptions (seconds)."""

    goodput: np.ndarray
    interval_s: np.ndarray
    mtbi_s: np.ndarray


def mean_time_between_interruptions(gpus, defaults: Defaults) -> np.ndarray:
    """Seconds between interruptions of a job on `gpus` GPUs (they fail independently)."""
    per_gpu_day = defaults.number("reliability", "interruptions_per_gpu_day")
    return 86400.0 / (per_gpu_day * np.asarray(gpus, dtype=float))


def reliability(gpus, write_s, defaults: Defaults) -> Reliability:
    """Goodput with checkpoints every Young interval: tau / (tau + delta) of the time between saves
    trains, and each interruption loses the restart plus half an interval (Daly 2006, first order)."""
    mtbi = mean_time_between_interruptions(gpus, defaults)
    delta = np.maximum(np.asarray(write_s, dtype=float), 1e-3)
    restart = defaults.number("reliability", "restart_minutes") * 60.0
    interval = np.sqrt(2.0 * delta * mtbi)
    lost_to_interruptions = (restart + interval / 2.0) / mtbi
    goodput = (1.0 - lost_to_interruptions) * interval / (interval + delta)
    # np.clip's own bounds, without its dispatch (a few microseconds on the plan's single figure)
    return Reliability(np.minimum(np.maximum(goodput, MIN_GOODPUT), 1.0), interval, mtbi)


def checkpoint_write_s(checkpoint_bytes: float, nodes, write_gb_s_per_node: float) -> np.ndarray:
    """A sharded checkpoint: every node writes its share at once (as io.training_io reports it)."""
    return checkpoint_bytes / (np.maximum(np.asarray(nodes, dtype=float), 1.0) * write_gb_s_per_node * 1e9)
