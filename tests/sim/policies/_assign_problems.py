"""Random Sia round programs for the assignment tests: one builder from per-candidate lists."""

from __future__ import annotations

import numpy as np

from fastsched.sim.policies._assign import AssignProblem


def assign_problem(job, gtype, gpus, cost, forced, capacity, num_jobs) -> AssignProblem:
    """An :class:`AssignProblem` from per-candidate lists (candidates in job order)."""
    return AssignProblem(
        np.array(job, dtype=np.int64),
        np.array(gtype, dtype=np.int64),
        np.array(gpus, dtype=np.int64),
        np.array(cost, dtype=np.float64),
        np.array(forced, dtype=bool),
        capacity,
        num_jobs,
    )
