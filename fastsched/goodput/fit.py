"""``fit_perf_params``: fit the throughput model to measured step times.

Same objective, bounds, parameter-fixing rules and post-fit prior as AdaptDL's
``adaptdl.goodput.fit_perf_params``. The objective, its exact gradient and the whole bounded
quasi-Newton search (restarts included) run in one compiled call
(:func:`fastsched.goodput._fit_kernels.fit_search`): no Python per iteration, no BLAS, every
sum in a fixed order, so a fit gives the same bits on any machine and thread count.
"""

from __future__ import annotations

import numpy as np

from fastsched import _validate as V
from fastsched.goodput._fit_kernels import fit_search, log_array, objective_and_grad
from fastsched.goodput.model import PerfParams

__all__ = ["fit_perf_params", "fit_objective"]

#: AdaptDL's starting point: [alpha, beta] x (compute, inter-node, intra-node) + [gamma].
_START = (1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.0 + 1e-3)
_LOWER = (1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1.0)
_UPPER = (np.inf, np.inf, np.inf, np.inf, np.inf, np.inf, 10.0)


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


def _mean(values) -> float:
    # Sequential sum: numpy's pairwise/SIMD reductions may round differently across CPUs.
    total = 0.0
    for v in values.tolist():
        total += v
    return total / len(values)


def _bounds(nodes, replicas, atomic, t_accum):
    """AdaptDL's starting point and bounds, with unidentifiable parameters pinned."""
    start = np.array(_START)
    lower = np.array(_LOWER)
    upper = np.array(_UPPER)

    def pin(i, value):
        start[i] = lower[i] = upper[i] = value

    if np.unique(atomic).shape[0] == 1:
        pin(0, _mean(t_accum) / 2)
    multi_node = nodes > 1
    if not multi_node.any():
        pin(2, _LOWER[2])
        pin(3, _LOWER[3])
    if not (~multi_node & (replicas > 1)).any():
        pin(4, _LOWER[4])
        pin(5, _LOWER[5])
    if not (replicas > 2).any():
        pin(3, _LOWER[3])
        pin(5, _LOWER[5])
    return start, lower, upper


def _starts(start, lower, upper, atomic, t_accum, t_optim):
    """AdaptDL's starting point, then one scaled to the data.

    AdaptDL's point assumes step times near 0.1 s; the objective compares logarithms, so
    on much faster or slower jobs its search may settle in another basin. The second start
    puts half the mean compute time in each compute term and half the mean synchronisation
    time in each network term. The search keeps the best of both.
    """
    accum = _mean(t_accum)
    sync = max(_mean(t_optim) - accum, 0.05 * accum)
    scaled = np.array([accum / 2, accum / 2 / _mean(atomic), sync / 2, sync / 8, sync / 2, sync / 8, 1.0 + 1e-3])
    pinned = lower == upper
    scaled[pinned] = start[pinned]
    scaled = np.minimum(np.maximum(scaled, lower), upper)
    return np.vstack([start, scaled])


def _initial_guess(initial, start, lower, upper):
    """Prepare a previous fit as a start: validated, pinned entries kept pinned, clipped to the bounds."""
    if isinstance(initial, (str, bytes)):
        raise TypeError("initial must be a PerfParams or a sequence of 7 numbers")
    try:
        guess = np.array(tuple(initial), dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("initial must be a PerfParams or a sequence of 7 numbers") from None
    if guess.shape != (7,):
        raise ValueError(f"initial must have 7 entries, got {guess.shape[0] if guess.ndim == 1 else guess.shape}")
    if not np.all(np.isfinite(guess)):
        raise ValueError("initial must be finite")
    pinned = lower == upper
    guess[pinned] = start[pinned]
    # An entry at its floor was pinned (or pushed there) for lack of data; now that it is
    # free, its floor value says nothing, and a search starting there can stall.
    floor = ~pinned & (guess <= lower)
    guess[floor] = start[floor]
    return np.minimum(np.maximum(guess, lower), upper)


def fit_perf_params(num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time, initial=None):
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
    initial : PerfParams or sequence of 7 float, optional
        An extra starting point searched first, typically the job's previous fit before its
        newest observation (a warm start). The standard starts are still searched and the
        best answer is kept: a warm start alone lands in a worse basin in about a quarter of
        random refits, so it may improve a fit but never makes it worse. Entries the data
        cannot identify stay pinned, entries at their floor restart from the standard
        point, the rest are clipped to the bounds.

    Returns
    -------
    PerfParams
        Minimiser of AdaptDL's objective (RMS log error of both step-time predictions plus a
        pull of gamma towards 1 and a penalty on retrogression) within AdaptDL's bounds
        (``alpha, beta >= 1e-8``, ``1 <= gamma <= 10``). Parameters that the data
        cannot identify are pinned as AdaptDL does: ``alpha_c`` to half the mean accum time
        for a single batch size; ``alpha_n, beta_n`` without multi-node data;
        ``alpha_r, beta_r`` without single-node multi-replica data; ``beta_n, beta_r``
        without observations of more than 2 replicas. Without multi-node data the prior
        ``alpha_n >= 1.1 alpha_r``, ``beta_n >= 1.1 beta_r`` is applied after the fit.
        The same inputs give the same bits on every machine.

    Raises
    ------
    ValueError
        Empty, mismatched, non-finite or non-positive observations; an ``initial`` without 7
        finite entries.
    TypeError
        An ``initial`` that is not a sequence of numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched import PerfParams, fit_perf_params
    >>> from fastsched.goodput.fit import fit_objective
    >>> nodes = np.array([1, 1, 1, 2, 2, 4])
    >>> replicas = np.array([1, 2, 4, 8, 8, 16])
    >>> atomic = np.array([32, 64, 128, 64, 128, 128])
    >>> accum = 0.02 + 0.001 * atomic
    >>> optim = accum + np.where(nodes > 1, 0.05 + 0.002 * replicas, 0.01 + 0.001 * replicas)
    >>> fit = fit_perf_params(nodes, replicas, atomic, accum, optim)
    >>> round(fit.alpha_c, 3), round(fit.beta_c, 4)
    (0.02, 0.001)
    >>> refit = fit_perf_params(nodes, replicas, atomic, accum, optim, initial=fit)
    >>> bool(fit_objective(refit, nodes, replicas, atomic, accum, optim)
    ...      <= fit_objective(fit, nodes, replicas, atomic, accum, optim))
    True
    """
    nodes, replicas, atomic, t_accum, t_optim = _observations(
        num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time
    )
    start, lower, upper = _bounds(nodes, replicas, atomic, t_accum)
    starts = _starts(start, lower, upper, atomic, t_accum, t_optim)
    if initial is not None:
        starts = np.vstack([_initial_guess(initial, start, lower, upper), starts])
    x = np.empty(7)
    _, _evals = fit_search(starts, lower, upper, nodes, replicas, atomic, log_array(t_accum), log_array(t_optim), x)
    if not (nodes > 1).any():
        x[2] = max(x[2], x[4] * 1.1)
        x[3] = max(x[3], x[5] * 1.1)
    return PerfParams(*(float(v) for v in x))


def fit_objective(perf_params, num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time):
    """Value of :func:`fit_perf_params`'s objective at ``perf_params`` on the given observations.

    Parameters
    ----------
    perf_params : PerfParams or sequence of 7 float
        Model parameters.
    num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time : array_like
        Observations, as for :func:`fit_perf_params`.

    Returns
    -------
    float

    Examples
    --------
    >>> from fastsched import PerfParams
    >>> from fastsched.goodput.fit import fit_objective
    >>> p = PerfParams(0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.0)
    >>> round(fit_objective(p, [1], [1], [8], [0.18], [0.18]), 6)  # only the (beta/alpha)**2 terms
    0.0002
    """
    nodes, replicas, atomic, t_accum, t_optim = _observations(
        num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time
    )
    p = np.asarray(tuple(perf_params), dtype=np.float64)
    return float(objective_and_grad(p, nodes, replicas, atomic, log_array(t_accum), log_array(t_optim), np.empty(7)))
