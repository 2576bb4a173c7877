"""Goodput model of Pollux/AdaptDL: throughput x statistical efficiency, fitted and optimised.

Public: :class:`PerfParams`, :class:`GradParams`, :class:`GoodputFunction`,
:func:`fit_perf_params`, :class:`SpeedupFunction`.
"""

from fastsched.goodput._compat import (  # noqa: F401  (AdaptDL-private helpers, kept for compatibility)
    _obj_fn,
    _predict_accum_time,
    _predict_log_optim_time,
    _predict_network_time,
    _rmse,
)
from fastsched.goodput.batch import BatchParams, ModelBatch
from fastsched.goodput.fit import fit_perf_params
from fastsched.goodput.model import GoodputFunction, GradParams, GridBounds, KernelParams, PerfParams
from fastsched.goodput.speedup import SpeedupFunction, SpeedupGrid

__all__ = [
    "PerfParams",
    "GradParams",
    "GoodputFunction",
    "fit_perf_params",
    "SpeedupFunction",
    "KernelParams",
    "GridBounds",
    "SpeedupGrid",
    "ModelBatch",
    "BatchParams",
]
