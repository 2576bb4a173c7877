"""fastsched: numba-compiled core for goodput-optimised cluster scheduling and cost models.

The public names of AdaptDL's ``adaptdl.goodput`` and ``adaptdl_sched.policy`` are
re-exported here, so switching from AdaptDL means changing only the import.
"""

from fastsched._version import __version__
from fastsched.costmodel import Case, Cost, CostModel, Program, estimate_cost, load_case
from fastsched.goodput import (
    GoodputFunction,
    GradParams,
    PerfParams,
    SpeedupFunction,
    fit_perf_params,
)

__all__ = [
    "__version__",
    "Case",
    "Cost",
    "CostModel",
    "Program",
    "estimate_cost",
    "load_case",
    "GoodputFunction",
    "GradParams",
    "PerfParams",
    "SpeedupFunction",
    "fit_perf_params",
]
