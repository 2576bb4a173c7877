"""Goodput model of Pollux/AdaptDL: throughput x statistical efficiency, fitted and optimised.

Public: :class:`PerfParams`, :class:`GradParams`, :class:`GoodputFunction`,
:func:`fit_perf_params`, :class:`SpeedupFunction`.
"""

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it) loads nothing else.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "_obj_fn": "fastsched.goodput._compat",
        "_predict_accum_time": "fastsched.goodput._compat",
        "_predict_log_optim_time": "fastsched.goodput._compat",
        "_predict_network_time": "fastsched.goodput._compat",
        "_rmse": "fastsched.goodput._compat",
        "BatchParams": "fastsched.goodput.batch",
        "ModelBatch": "fastsched.goodput.batch",
        "fit_perf_params": "fastsched.goodput.fit",
        "GoodputFunction": "fastsched.goodput.model",
        "GradParams": "fastsched.goodput.model",
        "GridBounds": "fastsched.goodput.model",
        "KernelParams": "fastsched.goodput.model",
        "PerfParams": "fastsched.goodput.model",
        "SpeedupFunction": "fastsched.goodput.speedup",
        "SpeedupGrid": "fastsched.goodput.speedup",
        "speedup_tables": "fastsched.goodput.speedup",
    },
)

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
    "speedup_tables",
]
