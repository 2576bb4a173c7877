"""Random goodput inputs shared by the CPU and CUDA tests."""

from __future__ import annotations

import numpy as np


def random_perf(rng) -> np.ndarray:
    """A plausible random PerfParams vector (gamma in [1, 10])."""
    return np.array(
        [
            rng.uniform(1e-3, 0.2),
            rng.uniform(1e-5, 1e-2),
            rng.uniform(1e-3, 0.5),
            rng.uniform(1e-5, 5e-2),
            rng.uniform(1e-4, 0.1),
            rng.uniform(1e-6, 1e-2),
            rng.uniform(1.0, 10.0),
        ]
    )
