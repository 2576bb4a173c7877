"""The integer program of Sia's round: at most one configuration per job under per-type GPU capacity.

Minimise ``sum cost[k] * x[k]`` over binary ``x`` (one entry per candidate ``(job, column)``),
with at most one candidate per job, ``sum gpus[k] * x[k] <= capacity[type[k]]`` per GPU type,
and some candidates forced to 1. Candidates with a non-negative cost are never chosen in an
optimum unless forced, so callers pass only negative-cost ones plus the forced ones.

Solved exactly by a dynamic program over GPUs used per type when that table is small
(:func:`~fastsched.sim.policies._assign_kernels.assign_dp`), otherwise by a Lagrangian
reduction to a small core (:func:`~fastsched.sim.policies._assign_reduce.solve_reduced`) solved
with HiGHS through :func:`scipy.optimize.milp`, or with HiGHS on the whole program. Each returns
an optimum (ties may be broken differently).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fastsched.sim.policies._assign_kernels import assign_dp
from fastsched.sim.policies._assign_reduce import constraint_bounds, constraint_matrix, solve_reduced

__all__ = ["AssignProblem", "solve_assignment"]

#: Largest ``states x candidates`` solved by the dynamic program (beyond: HiGHS).
DP_WORK_LIMIT = 60_000_000
#: Largest ``states x (jobs + 1)`` table the dynamic program keeps (64 MiB of float64).
DP_TABLE_LIMIT = 8_000_000


class AssignProblem(NamedTuple):
    """Candidates of one round, as flat arrays of length K.

    Attributes
    ----------
    job : numpy.ndarray of int64
        Job index of each candidate (``0 .. J-1``).
    gtype : numpy.ndarray of int64
        GPU-type index of each candidate (``0 .. T-1``).
    gpus : numpy.ndarray of int64
        GPUs the candidate uses.
    cost : numpy.ndarray of float64
        Objective coefficient (to minimise).
    forced : numpy.ndarray of bool
        Candidates that must be chosen.
    capacity : numpy.ndarray of int64
        GPUs per type (length T).
    num_jobs : int

    Examples
    --------
    >>> import numpy as np
    >>> p = AssignProblem(np.array([0]), np.array([0]), np.array([1]), np.array([-1.0]), np.array([False]),
    ...                   np.array([1]), 1)
    >>> solve_assignment(p).tolist()
    [True]
    """

    job: np.ndarray
    gtype: np.ndarray
    gpus: np.ndarray
    cost: np.ndarray
    forced: np.ndarray
    capacity: np.ndarray
    num_jobs: int


def solve_assignment(problem: AssignProblem, method="auto") -> np.ndarray:
    """Optimal choice of candidates (boolean mask of length K).

    Parameters
    ----------
    problem : AssignProblem
        Candidates sorted by job for ``method="dp"``.
    method : {"auto", "dp", "reduced", "milp"}
        The dynamic program, the Lagrangian reduction with HiGHS on its core, HiGHS on the
        whole program, or the DP when its table is small enough and else the reduction.

    Returns
    -------
    numpy.ndarray of bool
        ``True`` for chosen candidates.

    Raises
    ------
    RuntimeError
        If the forced candidates alone exceed the capacity (no feasible solution).

    Examples
    --------
    Two jobs, one type of 4 GPUs: job 0 may take 4 GPUs (cost -3) or 2 (cost -2), job 1 may
    take 2 (cost -1.5). Taking 2 + 2 (cost -3.5) beats 4 alone (cost -3).

    >>> import numpy as np
    >>> p = AssignProblem(job=np.array([0, 0, 1]), gtype=np.array([0, 0, 0]), gpus=np.array([4, 2, 2]),
    ...                   cost=np.array([-3.0, -2.0, -1.5]), forced=np.zeros(3, bool),
    ...                   capacity=np.array([4]), num_jobs=2)
    >>> solve_assignment(p).tolist()
    [False, True, True]
    """
    k = problem.cost.shape[0]
    if k == 0:
        return np.zeros(0, dtype=bool)
    if method not in ("auto", "dp", "reduced", "milp"):
        raise ValueError(f"method must be 'auto', 'dp', 'reduced' or 'milp', got {method!r}")
    cap = problem.capacity.astype(np.int64)
    num_states = int(np.prod(cap + 1))
    small = num_states * k <= DP_WORK_LIMIT and num_states * (problem.num_jobs + 1) <= DP_TABLE_LIMIT
    if method == "dp" or (method == "auto" and small):
        return _solve_dp(problem, cap, num_states)
    if method != "milp":
        chosen = solve_reduced(problem, _solve_milp)
        if chosen is not None:
            return chosen
    return _solve_milp(problem)


def _solve_dp(problem, cap, num_states):
    job = problem.job.astype(np.int64)
    if job.size > 1 and np.any(np.diff(job) < 0):
        raise ValueError("candidates must be sorted by job for the dynamic program")
    start = np.searchsorted(job, np.arange(problem.num_jobs + 1)).astype(np.int64)
    strides = np.ones(cap.shape[0], dtype=np.int64)
    for t in range(1, cap.shape[0]):
        strides[t] = strides[t - 1] * (cap[t - 1] + 1)
    chosen = np.zeros(job.shape[0], dtype=np.bool_)
    cost = problem.cost.astype(np.float64)
    inf = np.inf
    layers = np.empty((problem.num_jobs + 1, num_states), dtype=np.float64)
    total = assign_dp(
        start,
        problem.gtype.astype(np.int64),
        problem.gpus.astype(np.int64),
        cost,
        problem.forced.astype(np.bool_),
        cap,
        strides,
        layers,
        inf,
        chosen,
    )
    if total >= inf:
        raise RuntimeError("the round's integer program has no solution (forced allocations exceed the capacity)")
    return chosen


def _solve_milp(problem):
    # scipy is loaded only when a round is too large for the dynamic program.
    from scipy.optimize import Bounds, LinearConstraint

    from fastsched.sim.policies._highs import quiet_milp as milp  # HiGHS prints a line of its own in some solves

    k = problem.cost.shape[0]
    lb = problem.forced.astype(np.float64)
    res = milp(
        problem.cost,
        integrality=np.ones(k),
        bounds=Bounds(lb, np.ones(k)),
        constraints=[LinearConstraint(constraint_matrix(problem), -np.inf, constraint_bounds(problem))],
        options={"mip_rel_gap": 0.0, "presolve": True},
    )
    if res.x is None:
        raise RuntimeError(f"the round's integer program has no solution ({res.message})")
    return res.x > 0.5
