"""Shockwave's market over a planning window, as a mixed-integer program for HiGHS.

The program (Zheng et al., NSDI'23, §4: a dynamic Eisenberg-Gale market, the Nash social welfare
over the window, with finish-time fairness and a makespan term) for ``J`` rigid jobs and ``W``
future rounds of ``D`` seconds each on a pool of ``G`` GPUs:

* ``x[j, r]`` in {0, 1}: job ``j`` runs (on its ``n_j`` GPUs) in round ``r``;
  ``sum_j n_j x[j, r] <= G`` in every round;
* ``q[j]`` in ``[0, rem_j]``: progress planned in the window, as a fraction of the job's whole
  work (``rem_j`` is what is left), at most what the rounds it runs allow:
  ``q[j] S_j <= D sum_r x[j, r]`` (``S_j``: seconds the whole job takes on its GPUs);
* ``u[j] <= log(done_j + q[j])``, the log of the job's progress at the window's end, through its
  piecewise-linear approximation by secants at fixed progress points (``log_points``; 0 stands
  for ``log_floor``). The log is concave and maximised, so its hypograph (``u`` below every
  secant) is exact for the approximation and needs no binary variable;
* ``M >= R_j - q[j] S_j``: the longest remaining time after the window (``R_j = rem_j S_j``);
* optionally, finish-time fairness: ``c_j (rem_j - q[j]) <= slack_j`` (the caller's estimate
  of each job's finish time against its bound, see :class:`~fastsched.sim.policies.shockwave.
  ShockwavePolicy`).

Objective: maximise ``sum_j w_j u[j] / (J W) - k M`` (``w``: priorities, 1 unless the fairness
bounds had to be relaxed). HiGHS (:func:`scipy.optimize.milp`, its console output suppressed: :mod:`._highs`) solves it to a relative gap
``mip_rel_gap`` or until it has explored ``node_limit`` branch-and-bound nodes (a limit in work,
so the result does not depend on the machine's speed), and the best solution found by then
is taken; ``time_limit`` seconds is only a safety net.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fastsched.sim.policies._highs import quiet_milp

__all__ = ["MarketJobs", "log_secants", "solve_market", "rank_rounds"]


class MarketJobs(NamedTuple):
    """The jobs of one market, as arrays of length ``J``.

    Attributes
    ----------
    gpus : numpy.ndarray of int64
        GPUs each job runs on (``n_j``).
    seconds : numpy.ndarray of float64
        Seconds the whole job takes on its GPUs (``S_j > 0``).
    done : numpy.ndarray of float64
        Fraction of the job's work done (``[0, 1)``).
    weight : numpy.ndarray of float64
        Priority of the job's log utility (``w_j > 0``).

    Examples
    --------
    >>> import numpy as np
    >>> m = MarketJobs(np.array([1, 2]), np.array([600.0, 1200.0]), np.zeros(2), np.ones(2))
    >>> m.gpus.tolist(), m.seconds.tolist()
    ([1, 2], [600.0, 1200.0])
    """

    gpus: np.ndarray
    seconds: np.ndarray
    done: np.ndarray
    weight: np.ndarray


def log_secants(points, floor):
    """Slopes and intercepts of the secants of ``log`` between consecutive progress points.

    ``points`` are increasing in ``[0, 1]``; a point 0 stands for ``floor`` (``log 0`` is not
    finite).

    Returns
    -------
    tuple
        ``(slope, intercept)``: the secant ``i`` is ``slope[i] * p + intercept[i]``.

    Examples
    --------
    >>> s, a = log_secants([0.5, 1.0], 1e-6)
    >>> round(float(s[0]), 4), round(float(a[0]), 4)
    (1.3863, -1.3863)
    """
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 1 or p.size < 2 or np.any(np.diff(p) <= 0) or p[0] < 0 or p[-1] > 1:
        raise ValueError(f"log_points must be at least 2 increasing values in [0, 1], got {points!r}")
    if not 0 < floor < 1:
        raise ValueError(f"log_floor must be in (0, 1), got {floor!r}")
    at = np.log(np.where(p > 0, p, floor))
    x = np.where(p > 0, p, floor)
    slope = np.diff(at) / np.diff(x)
    return slope, at[:-1] - slope * x[:-1]


def solve_market(
    jobs: MarketJobs,
    capacity,
    round_seconds,
    window,
    *,
    k=1e-3,
    ftf=None,
    log_points=(0.0, 0.2, 0.4, 0.6, 0.8, 1.0),
    log_floor=1e-6,
    mip_rel_gap=1e-3,
    node_limit=50,
    time_limit=30.0,
    stats=None,
):
    """Solve the window's market (see the module docstring); ``None`` if HiGHS found no solution.

    Parameters
    ----------
    jobs : MarketJobs
    capacity : int
        GPUs of the pool (``G``).
    round_seconds : float
        Round length ``D``.
    window : int
        Rounds planned (``W``).
    k : float
        Weight of the makespan term (per second).
    ftf : tuple of numpy.ndarray, optional
        ``(c, slack)``: the constraints ``c_j (rem_j - q[j]) <= slack_j``.
    log_points, log_floor
        The log's approximation (:func:`log_secants`).
    mip_rel_gap, node_limit, time_limit
        HiGHS's stopping rules.
    stats : dict, optional
        Counters to update: ``"solves"``, ``"limit"`` (stopped by the node or time limit, with
        or without a solution), ``"no_solution"``.

    Returns
    -------
    numpy.ndarray of bool, shape (J, W), or None
        ``x``: which job runs in which round.

    Examples
    --------
    Two 1-GPU jobs of one round's work each, one GPU, a window of two rounds: each gets one
    round (the log favours spreading progress over finishing one job).

    >>> import numpy as np
    >>> m = MarketJobs(np.array([1, 1]), np.array([60.0, 60.0]), np.zeros(2), np.ones(2))
    >>> solve_market(m, 1, 60.0, 2).sum(axis=1).tolist()
    [1, 1]
    """
    from scipy.optimize import Bounds, LinearConstraint  # where used (see _highs.quiet_milp)
    from scipy.sparse import coo_array

    num = jobs.gpus.shape[0]
    if ftf is not None and not _ftf_may_fit(jobs, capacity, round_seconds, window, *ftf):
        if stats is not None:
            stats["screened"] = stats.get("screened", 0) + 1
        return None
    nx = num * window
    slope, intercept = log_secants(log_points, log_floor)
    ns = slope.shape[0]
    rem = 1.0 - jobs.done
    j_idx = np.arange(num)
    iq, iu, im = nx, nx + num, nx + 2 * num
    nvar = im + 1
    rows, cols, vals, upper = [], [], [], []
    row = 0

    def add(r, c, v):
        rows.append(np.asarray(r).ravel())
        cols.append(np.asarray(c).ravel())
        vals.append(np.broadcast_to(np.asarray(v, dtype=np.float64), np.shape(r)).ravel())

    # Capacity of each round.
    xr = np.arange(nx)
    add(row + xr % window, xr, np.repeat(jobs.gpus.astype(np.float64), window))
    upper.append(np.full(window, float(capacity)))
    row += window
    # Progress within the rounds run: q S / D - sum_r x <= 0.
    add(row + j_idx, iq + j_idx, jobs.seconds / round_seconds)
    add(row + xr // window, xr, -1.0)
    upper.append(np.zeros(num))
    row += num
    # u below every secant of log(done + q).
    sj = np.repeat(j_idx, ns)
    si = np.tile(np.arange(ns), num)
    rr = row + np.arange(num * ns)
    add(rr, iu + sj, 1.0)
    add(rr, iq + sj, -slope[si])
    upper.append(intercept[si] + slope[si] * jobs.done[sj])
    row += num * ns
    # M above every remaining time after the window: -M - S q <= -R.
    add(row + j_idx, np.full(num, im), -1.0)
    add(row + j_idx, iq + j_idx, -jobs.seconds)
    upper.append(-rem * jobs.seconds)
    row += num
    if ftf is not None:
        coef, slack = ftf
        # c (rem - q) <= slack  <=>  -c q <= slack - c rem.
        add(row + j_idx, iq + j_idx, -np.asarray(coef, dtype=np.float64))
        upper.append(np.asarray(slack, dtype=np.float64) - coef * rem)
        row += num
    a = coo_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(row, nvar)).tocsr()
    c = np.zeros(nvar)
    c[iu : iu + num] = -jobs.weight / (num * window)
    c[im] = k
    lb = np.zeros(nvar)
    ub = np.ones(nvar)
    ub[iq : iq + num] = rem
    # u's floor: the lowest secant value over [0, 1] (at progress 0, a hair below log(floor)).
    lb[iu : iu + num] = min(float(intercept[0]), math.log(log_floor)) - 1.0
    ub[iu : iu + num] = 0.0
    ub[im] = np.inf
    integrality = np.zeros(nvar)
    integrality[:nx] = 1
    res = quiet_milp(
        c,
        integrality=integrality,
        bounds=Bounds(lb, ub),
        constraints=LinearConstraint(a, -np.inf, np.concatenate(upper)),
        options={
            "disp": False,
            "mip_rel_gap": float(mip_rel_gap),
            "node_limit": int(node_limit),
            "time_limit": float(time_limit),
        },
    )
    if stats is not None:
        stats["solves"] = stats.get("solves", 0) + 1
        stats["limit"] = stats.get("limit", 0) + int(res.status == 1)
        stats["no_solution"] = stats.get("no_solution", 0) + int(res.x is None)
    if res.x is None:
        return None
    return res.x[:nx].reshape(num, window) > 0.5


def _ftf_may_fit(jobs, capacity, round_seconds, window, coef, slack):
    """Tell whether the fairness bounds leave room: ``False`` only where the program is infeasible.

    A bound ``c_j (rem_j - q_j) <= slack_j`` needs ``q_j >= rem_j - slack_j / c_j``, i.e. at
    least ``ceil(q_j S_j / D)`` rounds of the job's GPUs: more than ``W`` rounds for one job, or
    more GPU-rounds in all than the window has, cannot be met. HiGHS would prove the same,
    at a cost; the margin keeps borderline cases for HiGHS.

    Examples
    --------
    >>> import numpy as np
    >>> m = MarketJobs(np.array([1, 1]), np.array([600.0, 600.0]), np.zeros(2), np.ones(2))
    >>> _ftf_may_fit(m, 1, 60.0, 2, np.ones(2), np.zeros(2))  # 20 rounds of work, 2 rounds
    False
    >>> _ftf_may_fit(m, 1, 60.0, 2, np.ones(2), np.full(2, 1e9))
    True
    """
    coef = np.asarray(coef, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q_min = np.where(coef > 0, (1.0 - jobs.done) - np.asarray(slack, dtype=np.float64) / coef, -np.inf)
    rounds = np.ceil(np.maximum(q_min, 0.0) * jobs.seconds / round_seconds - 1e-6)
    return bool(rounds.max(initial=0.0) <= window and jobs.gpus @ rounds <= capacity * window)


def rank_rounds(plan, gpus, capacity, order):
    """Move each job's planned rounds to the earliest ones with room, jobs taken in ``order``.

    The market fixes how many rounds each job gets in the window, not which: jobs of higher
    priority (earlier in ``order``) take the earliest rounds. A job that finds fewer rounds
    with room than planned keeps the ones it found.

    Examples
    --------
    >>> import numpy as np
    >>> plan = np.array([[False, True], [True, False]])
    >>> rank_rounds(plan, np.array([1, 1]), 1, [0, 1]).tolist()
    [[True, False], [False, True]]
    """
    num, window = plan.shape
    left = np.full(window, int(capacity))
    out = np.zeros_like(plan, dtype=bool)
    counts = plan.sum(axis=1)
    for j in order:
        need = int(counts[j])
        for r in range(window):
            if need == 0:
                break
            if left[r] >= gpus[j]:
                out[j, r] = True
                left[r] -= gpus[j]
                need -= 1
    return out
