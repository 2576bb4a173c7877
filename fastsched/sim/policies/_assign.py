"""The integer program of Sia's round: at most one configuration per job under per-type GPU capacity.

Minimise ``sum cost[k] * x[k]`` over binary ``x`` (one entry per candidate ``(job, column)``),
with at most one candidate per job, ``sum gpus[k] * x[k] <= capacity[type[k]]`` per GPU type,
and some candidates forced to 1. Candidates with a non-negative cost are never chosen in an
optimum unless forced, so callers pass only negative-cost ones plus the forced ones.

Solved exactly by a dynamic program over GPUs used per type when that table is small
(:func:`~fastsched.sim.policies._assign_kernels.assign_dp`); otherwise, when many jobs have
identical candidates, by HiGHS on the program over classes of identical jobs
(:mod:`~fastsched.sim.policies._assign_classes`); otherwise by a Lagrangian reduction to a
small core (:func:`~fastsched.sim.policies._assign_reduce.solve_reduced`) solved with HiGHS
through :func:`scipy.optimize.milp`; or with HiGHS on the whole program. Each returns an
optimum.

Sia's costs are whole cents, so a round often has many optima, which move different numbers
of jobs. Given a warm start (the last round's choice), every method returns an optimum that
keeps the most warm candidates: a scheduler restarts no job for nothing. The dynamic program
does so exactly; the HiGHS methods by one more solve among the optimum's candidates (for the
reduction, those its Lagrangian bound leaves), capped at
:data:`~fastsched.sim.policies._assign_classes.KEEP_NODES` branch-and-bound nodes, beyond
which they keep the optimum they found.

:func:`solve_assignment_report` takes a time limit for the HiGHS solves (the dynamic program is
bounded by :data:`DP_WORK_LIMIT` and needs none). A round that finishes within it returns an
optimum, the one it returns without a limit given the same warm start (except where a
tie-break solve runs out of time, and the optimum found before it is kept); one stopped by it
keeps the best choice found (HiGHS's
incumbent, the reduction's greedy incumbent, or a warm start such as the last round's choice,
whichever is cheapest) and reports its relative gap to the best bound known.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from fastsched.sim.policies._assign_classes import (
    class_problem,
    job_classes,
    kept_counts,
    solve_keeping,
    spread_counts,
    worth_classes,
)
from fastsched.sim.policies._assign_kernels import assign_dp
from fastsched.sim.policies._assign_reduce import (
    constraint_bounds,
    constraint_matrix,
    feasible,
    greedy_fill,
    objective_unit,
    restricted,
    solve_reduced,
    variable_bounds,
)

__all__ = ["AssignProblem", "SolveReport", "solve_assignment", "solve_assignment_report"]

#: The solvers :func:`solve_assignment` takes.
METHODS = ("auto", "dp", "reduced", "classes", "milp")
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


class SolveReport(NamedTuple):
    """A round's choice and whether a time limit cut its solve short.

    Attributes
    ----------
    chosen : numpy.ndarray of bool
        ``True`` for chosen candidates.
    limited : bool
        A HiGHS solve stopped at the time limit before proving its answer optimal.
    gap : float
        ``(value - bound) / max(|value|, 1e-9)`` for the returned choice's value and the best
        lower bound known (0 when ``limited`` is false: the choice is optimal).

    Examples
    --------
    >>> import numpy as np
    >>> p = AssignProblem(np.array([0]), np.array([0]), np.array([1]), np.array([-1.0]), np.array([False]),
    ...                   np.array([1]), 1)
    >>> r = solve_assignment_report(p, time_limit=1.0)
    >>> r.chosen.tolist(), r.limited, r.gap
    ([True], False, 0.0)
    """

    chosen: np.ndarray
    limited: bool
    gap: float


def solve_assignment(problem: AssignProblem, method="auto") -> np.ndarray:
    """Optimal choice of candidates (boolean mask of length K).

    Parameters
    ----------
    problem : AssignProblem
        Candidates sorted by job for ``method="dp"``.
    method : {"auto", "dp", "reduced", "classes", "milp"}
        The dynamic program, the Lagrangian reduction with HiGHS on its core, HiGHS on the
        program over classes of identical jobs, HiGHS on the whole program, or ``"auto"``: the
        DP when its table is small enough, else the classes when their program has at most half
        the candidates (:data:`~fastsched.sim.policies._assign_classes.CLASS_SHARE`), else the
        reduction.

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
    return solve_assignment_report(problem, method).chosen


def solve_assignment_report(problem: AssignProblem, method="auto", time_limit=None, warm=None) -> SolveReport:
    """:func:`solve_assignment` under a time limit for its HiGHS solves, with the limit's outcome.

    Parameters
    ----------
    problem : AssignProblem
    method : {"auto", "dp", "reduced", "classes", "milp"}
        As :func:`solve_assignment`.
    time_limit : float, optional
        Wall-clock seconds for all the HiGHS solves of the round together (``None``: no limit).
        A round that finishes within it returns the choice it returns without a limit, given
        the same ``warm`` (which breaks ties).
    warm : numpy.ndarray of bool or callable returning one, optional
        A choice to fall back on when the limit stops the solve (the last round's, say): kept
        when feasible and cheaper than the best choice found. HiGHS through scipy takes no
        starting solution, so it does not seed the search itself. Every method also breaks
        its ties by it, on a grid of costs (see :func:`_keeping_cost` and :func:`_kept_ties`).

    Returns
    -------
    SolveReport

    Examples
    --------
    >>> import numpy as np
    >>> p = AssignProblem(job=np.array([0, 0, 1]), gtype=np.array([0, 0, 0]), gpus=np.array([4, 2, 2]),
    ...                   cost=np.array([-3.0, -2.0, -1.5]), forced=np.zeros(3, bool),
    ...                   capacity=np.array([4]), num_jobs=2)
    >>> r = solve_assignment_report(p, "milp", time_limit=5.0)
    >>> r.chosen.tolist(), r.limited
    ([False, True, True], False)
    """
    k = problem.cost.shape[0]
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be positive seconds or None, got {time_limit!r}")
    if k == 0:
        return SolveReport(np.zeros(0, dtype=bool), False, 0.0)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    warm = _warm_choice(problem, warm)
    cap = problem.capacity.astype(np.int64)
    num_states = int(np.prod(cap + 1))
    small = num_states * k <= DP_WORK_LIMIT and num_states * (problem.num_jobs + 1) <= DP_TABLE_LIMIT
    if method == "dp" or (method == "auto" and small):
        return SolveReport(_solve_dp(problem, cap, num_states, _keeping_cost(problem, warm)), False, 0.0)
    clock = _Clock(time_limit)
    if method in ("auto", "classes"):
        classes = job_classes(problem)
        if method == "classes" or worth_classes(problem, classes):
            return _solve_classes(problem, classes, clock, warm)

    def keep(chosen, core):
        return _kept_ties(problem, chosen, warm, core, clock)

    if method != "milp":
        chosen = solve_reduced(problem, clock.solve, clock, keep)
        if chosen is not None:
            return clock.report(problem, chosen, warm)
    chosen = clock.solve(problem)
    if clock.limited:
        clock.note_bound(clock.last_core_bound)
    if chosen is None:  # the limit passed before HiGHS found any choice: the forced ones, filled greedily
        chosen = greedy_fill(problem, problem.forced.copy())
    elif not clock.limited:
        chosen = keep(chosen, np.ones(k, dtype=bool))
    return clock.report(problem, chosen, warm)


def _warm_choice(problem, warm):
    """Return the warm start as a boolean mask of the candidates (a callable is called), or ``None``.

    A mask of another shape than the candidates' is no warm start (every use ignores it).
    """
    if callable(warm):
        warm = warm()
    if warm is None:
        return None
    warm = np.asarray(warm, dtype=bool)
    return warm if warm.shape == problem.cost.shape else None


def _kept_ties(problem, chosen, warm, core, clock):
    """Among the optima, one keeping the most ``warm`` candidates; ``chosen`` if none keeps more.

    ``chosen`` is a proved optimum and ``core`` holds every candidate of any optimum. On a grid of
    costs, the class program's tie-break solve (:func:`~fastsched.sim.policies._assign_classes.solve_keeping`)
    runs on the core as a program of one job per class. When its node cap stops it, the best
    choice it found is taken if it is feasible, of the optimum's value, and keeps more; when the
    time left stops it, or it keeps no more, ``chosen`` stays (an optimum all the same).
    """
    if warm is None:
        return chosen
    unit = objective_unit(problem.cost)
    core = core | chosen
    kept = int((chosen & warm).sum())
    if unit == 0 or kept == int((warm & core).sum()):  # nothing to gain
        return chosen
    sub = np.flatnonzero(core)
    small = restricted(problem, sub)
    ones = np.ones(problem.num_jobs, dtype=np.int64)
    got = solve_keeping(small, ones, warm[sub].astype(np.int64), unit, clock.left(), incumbent=True)
    if got is None:
        return chosen
    x = got[0] > 0
    if int((x & warm[sub]).sum()) <= kept or small.cost[x].sum() > problem.cost[chosen].sum() + unit / 4:
        return chosen
    if not feasible(small, x):  # pragma: no cover - HiGHS returns feasible incumbents
        return chosen
    out = np.zeros_like(chosen)
    out[sub[x]] = True
    return out


def _solve_classes(problem, classes, clock, warm):
    """HiGHS on the class program of identical jobs (:mod:`~fastsched.sim.policies._assign_classes`), handed back to the jobs.

    With a warm start (the last round's choice) and costs on a grid, ties are broken towards
    keeping jobs on their warm candidate (:func:`~fastsched.sim.policies._assign_classes.solve_keeping`),
    and the jobs that had a chosen candidate keep it.
    """
    sub, size = class_problem(problem, classes)
    held = None if warm is None else kept_counts(problem, classes, warm)
    unit = objective_unit(sub.cost)
    if held is not None and held.any() and unit > 0:
        counts = clock.solve(
            sub, size, lambda s, z, t: solve_keeping(s, z, held, unit, t) or _milp_limited(s, clock.left(), z)
        )
    else:
        counts = clock.solve(sub, size)
    if clock.limited:
        clock.note_bound(clock.last_core_bound)
    if counts is None:  # the limit passed before HiGHS found any choice: the forced ones, filled greedily
        return clock.report(problem, greedy_fill(problem, problem.forced.copy()), warm)
    return clock.report(problem, spread_counts(problem, classes, counts, warm), warm)


class _Clock:
    """The round's deadline for HiGHS, and what the limit cut short (see :func:`solve_assignment_report`)."""

    def __init__(self, time_limit):
        self.deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        self.limited = False
        self.bound = -np.inf  # best lower bound on the whole program's optimum known when limited
        self.last_core_bound = -np.inf  # HiGHS's lower bound when the limit stopped its last solve

    def left(self):
        """Seconds left (``None``: no limit); at least 1 ms, so HiGHS returns at once rather than refuse."""
        return None if self.deadline is None else max(self.deadline - time.perf_counter(), 1e-3)

    def note_bound(self, bound):
        self.bound = max(self.bound, float(bound))

    def solve(self, problem, size=None, solver=None):
        """HiGHS on ``problem`` within the time left: its optimum, or its incumbent (``None`` if none).

        ``size``: the class program's job counts (see :func:`_milp_limited`); ``solver(problem,
        size, time_limit)``: another solve with :func:`_milp_limited`'s answer.
        """
        if solver is None:
            chosen, optimal, bound = _milp_limited(problem, self.left(), size)
        else:
            chosen, optimal, bound = solver(problem, size, self.left())
        if not optimal:
            self.limited = True
            self.last_core_bound = bound
        return chosen

    def report(self, problem, chosen, warm):
        if not self.limited:
            return SolveReport(chosen, False, 0.0)
        value = float(problem.cost[chosen].sum())
        if warm is not None and feasible(problem, warm):
            if float(problem.cost[warm].sum()) < value:
                chosen, value = warm.copy(), float(problem.cost[warm].sum())
        gap = max(value - self.bound, 0.0) / max(abs(value), 1e-9)
        return SolveReport(chosen, True, float(gap))


def _keeping_cost(problem, warm):
    """``problem.cost``, less a preference for ``warm``'s candidates that only breaks ties.

    On a grid of costs (Sia's cents), each warm candidate is made ``eps = unit / (4 (W + 1))``
    cheaper for ``W`` warm candidates: all of them together are worth less than a quarter of
    a grid step, so any optimum of these costs is an optimum of the plain ones, and among
    those it keeps the most warm candidates (the class program's rule,
    :func:`~fastsched.sim.policies._assign_classes.solve_keeping`). Off a grid, or without a
    warm start, the plain costs.
    """
    if warm is None or not warm.any():
        return problem.cost
    unit = objective_unit(problem.cost)
    if unit == 0:
        return problem.cost
    return problem.cost - (unit / (4.0 * (float(warm.sum()) + 1.0))) * warm


def _solve_dp(problem, cap, num_states, cost=None):
    """Solve ``problem`` by the dynamic program, with ``cost`` in place of its costs if given."""
    job = problem.job.astype(np.int64)
    if job.size > 1 and np.any(np.diff(job) < 0):
        raise ValueError("candidates must be sorted by job for the dynamic program")
    start = np.searchsorted(job, np.arange(problem.num_jobs + 1)).astype(np.int64)
    strides = np.ones(cap.shape[0], dtype=np.int64)
    for t in range(1, cap.shape[0]):
        strides[t] = strides[t - 1] * (cap[t - 1] + 1)
    chosen = np.zeros(job.shape[0], dtype=np.bool_)
    cost = (problem.cost if cost is None else cost).astype(np.float64)
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
    chosen, _, _ = _milp_limited(problem, None)
    return chosen


def _milp_limited(problem, time_limit, size=None):
    """``(choice or None, proved optimal, lower bound)`` of HiGHS on the whole ``problem``.

    With ``size`` (the class program of :mod:`~fastsched.sim.policies._assign_classes`), job
    ``j``'s row and each of its integers are bounded by ``size[j]`` (a forced one fixed there),
    and the choice is the integer count of each candidate.
    """
    # scipy is loaded only when a round is too large for the dynamic program.
    from scipy.optimize import Bounds, LinearConstraint

    from fastsched.sim.policies._highs import quiet_milp as milp  # HiGHS prints a line of its own in some solves

    k = problem.cost.shape[0]
    res = milp(
        problem.cost,
        integrality=np.ones(k),
        bounds=Bounds(*variable_bounds(problem, size)),
        constraints=[LinearConstraint(constraint_matrix(problem), -np.inf, constraint_bounds(problem, size))],
        options={"mip_rel_gap": 0.0, "presolve": True, **({} if time_limit is None else {"time_limit": time_limit})},
    )
    if res.status == 1:  # the time limit: HiGHS's incumbent, if it found one, and its dual bound
        bound = getattr(res, "mip_dual_bound", None)
        bound = -np.inf if bound is None or not np.isfinite(bound) else float(bound)
        return (None if res.x is None else _choice(res.x, size)), False, bound
    if res.x is None:
        raise RuntimeError(f"the round's integer program has no solution ({res.message})")
    chosen = _choice(res.x, size)
    return chosen, True, float(problem.cost[chosen].sum() if size is None else problem.cost @ chosen)


def _choice(x, size):
    """HiGHS's solution as a boolean choice, or as integer counts for a class program."""
    return x > 0.5 if size is None else np.rint(x).astype(np.int64)
