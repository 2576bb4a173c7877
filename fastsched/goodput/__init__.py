"""Goodput model of Pollux/AdaptDL: throughput x statistical efficiency, fitted and optimised.

Public: :class:`PerfParams`, :class:`GradParams`, :class:`GoodputFunction`,
:func:`fit_perf_params`, :class:`SpeedupFunction`, :class:`ModelBatch`, :class:`GoodputParams`
(a model and its grid search as the kernels take it).
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
        "ModelBatch": "fastsched.goodput.batch",
        "fit_perf_params": "fastsched.goodput.fit",
        "GoodputFunction": "fastsched.goodput.model",
        "GoodputParams": "fastsched.goodput._types",
        "GradParams": "fastsched.goodput.model",
        "PerfParams": "fastsched.goodput.model",
        "SpeedupFunction": "fastsched.goodput.speedup",
        "speedup_tables": "fastsched.goodput.speedup",
    },
)

__all__ = [
    "PerfParams",
    "GradParams",
    "GoodputFunction",
    "fit_perf_params",
    "SpeedupFunction",
    "GoodputParams",
    "ModelBatch",
    "speedup_tables",
]
