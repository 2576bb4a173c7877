"""``fit_perf_params``: fit the throughput model to measured step times.

Same objective, bounds, parameter-fixing rules and post-fit prior as AdaptDL's
``adaptdl.goodput.fit_perf_params``; the objective and its exact gradient come from one numba
kernel (:mod:`fastsched.goodput._fit_kernels`) and scipy's L-BFGS-B does the search.
"""

from __future__ import annotations

import numpy as np

from fastsched import _validate as V
from fastsched._blas import single_threaded_blas
from fastsched.goodput._fit_kernels import objective_and_grad
from fastsched.goodput.model import PerfParams

__all__ = ["fit_perf_params"]


def _observations(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time):
    arrays = {
        "num_nodes": V.as_float_array("num_nodes", num_nodes, low=1.0),
        "num_replicas": V.as_float_array("num_replicas", num_replicas, low=1.0),
        "atomic_bsz": V.as_float_array("atomic_bsz", atomic_bsz, low=0.0, low_open=True),
        "accum_step_time": V.as_float_array("accum_step_time", accum_step_time, low=0.0, low_open=True),
        "optim_step_time": V.as_float_array("optim_step_time", optim_step_time, low=0.0, low_open=True),
    }
    for name, arr in arrays.items():
        if arr.ndim != 1:
            if arr.ndim == 0:
                arrays[name] = arr.reshape(1)
            else:
                raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    sizes = {name: arr.shape[0] for name, arr in arrays.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"observation arrays must have equal lengths, got {sizes}")
    return [np.ascontiguousarray(a) for a in arrays.values()]


def fit_perf_params(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time):
    """Fit :class:`PerfParams` to observed accumulation- and optimizer-step times.

    Parameters
    ----------
    num_nodes, num_replicas : array_like
        Placement of each observation (>= 1).
    atomic_bsz : array_like
        Per-replica micro-batch size of each observation (> 0).
    accum_step_time : array_like
        Seconds of one gradient-accumulation step (> 0).
    optim_step_time : array_like
        Seconds of one optimizer step, including synchronisation (> 0).

    Returns
    -------
    PerfParams
        Minimiser of AdaptDL's objective (RMS log error of both step-time predictions plus a
        pull of gamma towards 1 and a penalty on retrogression). Parameters that the data
        cannot identify are pinned as AdaptDL does: ``alpha_c`` to half the mean accum time
        for a single batch size; ``alpha_n, beta_n`` without multi-node data;
        ``alpha_r, beta_r`` without single-node multi-replica data; ``beta_n, beta_r``
        without observations of more than 2 replicas. Without multi-node data the prior
        ``alpha_n >= 1.1 alpha_r``, ``beta_n >= 1.1 beta_r`` is applied after the fit.

    Raises
    ------
    ValueError
        Empty, mismatched, non-finite or non-positive observations.
    """
    import scipy.optimize  # deferred: keeps `import fastsched` light for CLI start-up

    nodes, replicas, atomic, t_accum, t_optim = _observations(
        num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time
    )
    log_accum = np.log(t_accum)
    log_optim = np.log(t_optim)
    params = np.array([1e-1, 1e-2] * 3 + [1.0 + 1e-3])
    lower = np.array([1e-8, 1e-8] * 3 + [1.0])
    upper = np.array([np.inf, np.inf] * 3 + [10.0])

    def fix(i, value):
        params[i] = lower[i] = upper[i] = value

    if np.unique(atomic).shape[0] == 1:
        fix(0, np.mean(t_accum) / 2)
    multi_node = nodes > 1
    if not np.any(multi_node):
        fix(2, lower[2])
        fix(3, lower[3])
    if not np.any(~multi_node & (replicas > 1)):
        fix(4, lower[4])
        fix(5, lower[5])
    if not np.any(replicas > 2):
        fix(3, lower[3])
        fix(5, lower[5])

    grad = np.empty(7)

    def fun(x):
        f = objective_and_grad(x, nodes, replicas, atomic, log_accum, log_optim, grad)
        return f, grad.copy()

    bounds = scipy.optimize.Bounds(lower, upper, keep_feasible=True)
    # Tighter than scipy's defaults (AdaptDL's): the exact gradient is cheap. On flat valleys
    # L-BFGS-B can stop on a failed line search; restarting from its own answer (which
    # resets the curvature memory) continues the descent. Stop once a restart gains nothing.
    options = {"ftol": 1e-14, "gtol": 1e-10, "maxiter": 2000}
    x = params
    best = np.inf
    for _ in range(4):
        with single_threaded_blas():
            result = scipy.optimize.minimize(fun, x, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
        if not result.fun < best * (1.0 - 1e-12):
            if result.fun < best:
                x = result.x
            break
        best, x = result.fun, result.x
    x = np.array(x, dtype=np.float64)
    if not np.any(multi_node):
        x[2] = max(x[2], x[4] * 1.1)
        x[3] = max(x[3], x[5] * 1.1)
    return PerfParams(*(float(v) for v in x))


def fit_objective(perf_params, num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time):
    """Value of the fitting objective at ``perf_params`` on the given observations."""
    nodes, replicas, atomic, t_accum, t_optim = _observations(
        num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time
    )
    p = np.asarray(tuple(perf_params), dtype=np.float64)
    return float(objective_and_grad(p, nodes, replicas, atomic, np.log(t_accum), np.log(t_optim), np.empty(7)))
