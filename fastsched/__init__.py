"""fastsched: numba-compiled core for goodput-optimised cluster scheduling and cost models.

The public names of AdaptDL's ``adaptdl.goodput`` and ``adaptdl_sched.policy`` are
re-exported here, so switching from AdaptDL means changing only the import::

    from fastsched import GoodputFunction, PerfParams, GradParams, fit_perf_params
    from fastsched import SpeedupFunction, JobInfo, NodeInfo, PolluxPolicy

The cost model (:mod:`fastsched.costmodel`), the simulator (:mod:`fastsched.sim`) and sweeps
(:mod:`fastsched.sweep`) are imported on first use of their names, so a scheduler that
only needs the policy does not pay for them at start-up.
"""

from __future__ import annotations

import importlib

from fastsched._version import __version__
from fastsched.goodput import (
    GoodputFunction,
    GradParams,
    PerfParams,
    SpeedupFunction,
    fit_perf_params,
)
from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy

# name -> module that defines it, imported lazily (PEP 562).
_LAZY = {
    "Case": "fastsched.costmodel",
    "Cost": "fastsched.costmodel",
    "CostModel": "fastsched.costmodel",
    "Program": "fastsched.costmodel",
    "estimate_cost": "fastsched.costmodel",
    "load_case": "fastsched.costmodel",
    "simulate": "fastsched.sim",
    "SimulationResult": "fastsched.sim",
    "run_sweep": "fastsched.sweep",
}

__all__ = [
    "__version__",
    "GoodputFunction",
    "GradParams",
    "PerfParams",
    "SpeedupFunction",
    "fit_perf_params",
    "JobInfo",
    "NodeInfo",
    "PolluxPolicy",
    *_LAZY,
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fastsched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
