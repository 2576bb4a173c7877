"""Exact reduction of the round's integer program to a small core (see :mod:`fastsched.sim.policies._assign`).

For capacity multipliers ``lam >= 0`` (one per GPU type) the Lagrangian bound

    LB = sum_j r_j - lam . capacity,   r_j = min(0, min_k (cost_k + lam_t(k) * gpus_k))

(``r_j`` is the value of job ``j``'s forced candidate when it has one) is below the value of
every feasible choice, and a choice using candidate ``k`` is worth at least ``LB + d_k`` with
the reduced cost ``d_k = cost_k + lam_t(k) * gpus_k - r_j >= 0`` (infinite for the other
candidates of a job with a forced one). Given a feasible incumbent of
value ``U``, a candidate with ``LB + d_k > U - unit`` is in no choice better than the incumbent,
where ``unit`` is the objective's grid (0.01 when every cost is a multiple of 0.01, as Sia's
rounded values are; otherwise 0). What is left, the core, is usually a few hundred candidates,
solved exactly by HiGHS; the incumbent is kept unless the core holds a strictly better choice.

The multipliers are the duals of the linear relaxation (HiGHS's simplex), the best ``lam``
there is. The incumbent is the relaxation's integral part, completed greedily: free jobs take,
cheapest candidate first (ties by candidate order), the candidates that still fit.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "solve_reduced",
    "constraint_matrix",
    "constraint_bounds",
    "variable_bounds",
    "feasible",
    "greedy_fill",
    "restricted",
]

#: Slack for rounding in sums of costs: a cost on the grid is within 1e-11 of it, so a sum of
#: up to 10^4 of them within 1e-7; ``_TOL`` keeps a margin above that.
_TOL = 1e-6


def objective_unit(cost) -> float:
    """0.01 when every cost is a multiple of 0.01 (up to rounding), else 0.

    Examples
    --------
    >>> objective_unit(np.array([-0.47, -1.1 + 0.93]))
    0.01
    >>> objective_unit(np.array([-0.471]))
    0.0
    """
    scaled = np.asarray(cost, dtype=np.float64) * 100.0
    return 0.01 if np.all(np.abs(scaled - np.round(scaled)) <= 1e-9) else 0.0


def greedy_fill(problem, chosen):
    """Complete ``chosen`` (feasible) greedily: cheapest candidate first among free jobs, if it fits."""
    used = np.bincount(problem.gtype[chosen], weights=problem.gpus[chosen], minlength=problem.capacity.shape[0])
    left = problem.capacity.astype(np.int64) - used.astype(np.int64)
    busy = np.zeros(problem.num_jobs, dtype=bool)
    busy[problem.job[chosen]] = True
    for k in np.argsort(problem.cost, kind="stable"):
        j, t, g = problem.job[k], problem.gtype[k], problem.gpus[k]
        if not busy[j] and problem.cost[k] < 0 and g <= left[t]:
            chosen[k] = True
            busy[j] = True
            left[t] -= g
    return chosen


def restricted(problem, sub):
    """Return the program over candidates ``sub`` (indices) only: the same jobs and capacities.

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.array([0, 0, 1]), np.array([0, 0, 0]), np.array([4, 2, 2]),
    ...                   np.array([-3.0, -2.0, -1.5]), np.zeros(3, bool), np.array([4]), 2)
    >>> restricted(p, np.array([1, 2])).gpus.tolist()
    [2, 2]
    """
    return problem._replace(
        job=problem.job[sub],
        gtype=problem.gtype[sub],
        gpus=problem.gpus[sub],
        cost=problem.cost[sub],
        forced=problem.forced[sub],
    )


def feasible(problem, chosen):
    """Tell whether ``chosen`` keeps every capacity, one candidate per job, and every forced one."""
    used = np.bincount(problem.gtype[chosen], weights=problem.gpus[chosen], minlength=problem.capacity.shape[0])
    per_job = np.bincount(problem.job[chosen], minlength=problem.num_jobs)
    return bool(np.all(used <= problem.capacity) and np.all(per_job <= 1) and np.all(chosen[problem.forced]))


def lagrangian(problem, lam):
    """``(LB, reduced costs, r)`` of the relaxation of the capacity rows at multipliers ``lam >= 0``.

    ``r`` holds each job's ``r_j`` (so ``-r_j`` is the reduced cost of leaving it without GPUs).
    A job's candidates other than its forced one are in no feasible choice: their reduced cost
    is infinite.

    Examples
    --------
    One type of 2 GPUs, a job that may take 2 GPUs (cost -3) or 1 (cost -2): at ``lam = 1``
    both candidates are worth -1, so the bound is -1 - 2 = -3 (the optimum).

    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.array([0, 0]), np.array([0, 0]), np.array([2, 1]), np.array([-3.0, -2.0]),
    ...                   np.zeros(2, bool), np.array([2]), 1)
    >>> lb, d, _ = lagrangian(p, np.array([1.0]))
    >>> float(lb), d.tolist()
    (-3.0, [0.0, 0.0])
    """
    v = problem.cost + lam[problem.gtype] * problem.gpus
    r = np.zeros(problem.num_jobs)
    np.minimum.at(r, problem.job, v)
    r[problem.job[problem.forced]] = v[problem.forced]
    d = v - r[problem.job]
    has_forced = np.zeros(problem.num_jobs, dtype=bool)
    has_forced[problem.job[problem.forced]] = True
    d[has_forced[problem.job] & ~problem.forced] = np.inf
    return float(r.sum() - lam @ problem.capacity), d, r


def constraint_matrix(problem):
    """Return the program's rows as one sparse matrix: one per job (at most one candidate), then one per GPU type."""
    from scipy.sparse import csr_array

    k = problem.cost.shape[0]
    cols = np.arange(k)
    rows = np.concatenate([problem.job, problem.num_jobs + problem.gtype])
    vals = np.concatenate([np.ones(k), problem.gpus.astype(np.float64)])
    num_rows = problem.num_jobs + problem.capacity.shape[0]
    return csr_array((vals, (rows, np.concatenate([cols, cols]))), shape=(num_rows, k))


def constraint_bounds(problem, size=None):
    """Return the upper bounds of :func:`constraint_matrix`'s rows (1 per job, each type's capacity).

    With ``size`` (a class program, :mod:`~fastsched.sim.policies._assign_classes`), job ``j``'s
    row is bounded by ``size[j]`` instead of 1.
    """
    jobs = np.ones(problem.num_jobs) if size is None else np.asarray(size, dtype=np.float64)
    return np.concatenate([jobs, problem.capacity.astype(np.float64)])


def variable_bounds(problem, size=None):
    """Return ``(lower, upper)`` of each candidate's variable: 0/1, forced ones fixed at 1.

    With ``size`` (a class program), a candidate of class ``j`` counts up to ``size[j]`` jobs
    (a forced one exactly ``size[j]``).
    """
    upper = np.ones(problem.cost.shape[0]) if size is None else np.asarray(size, dtype=np.float64)[problem.job]
    return np.where(problem.forced, upper, 0.0), upper


def solve_reduced(problem, solve_core, clock=None, tie_break=None):
    """Optimal choice (boolean mask) by the Lagrangian reduction, with ``solve_core(subproblem)`` for the core.

    With a ``clock`` (the time limit of :func:`~fastsched.sim.policies._assign.solve_assignment_report`),
    ``solve_core`` may return its incumbent or ``None`` when
    the limit stops it (the reduction's incumbent is then kept), and the clock's ``limited`` and
    ``bound`` say whether the returned choice is proved optimal and the best lower bound known.

    ``tie_break(chosen, core)``, when given, is handed a proved optimum and the candidates that
    can be in any optimum (``LB + d_k`` at most the optimum's value), and returns the optimum
    to keep (another of the same value, say).

    Returns ``None`` when the reduction does not apply (more than one forced candidate in a
    job, or a relaxation HiGHS could not solve to optimality); the caller then solves the
    whole program. Raises ``RuntimeError`` when the forced candidates do not fit.

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem, _solve_milp
    >>> p = AssignProblem(job=np.array([0, 0, 1]), gtype=np.array([0, 0, 0]), gpus=np.array([4, 2, 2]),
    ...                   cost=np.array([-3.0, -2.0, -1.5]), forced=np.zeros(3, bool),
    ...                   capacity=np.array([4]), num_jobs=2)
    >>> solve_reduced(p, _solve_milp).tolist()
    [False, True, True]
    """
    from scipy.optimize import linprog

    from fastsched.sim.policies._highs import quiet_stdout

    k = problem.cost.shape[0]
    if np.any(np.bincount(problem.job[problem.forced], minlength=problem.num_jobs) > 1):
        return None

    def proved(chosen, lb, d):
        if tie_break is None or (clock is not None and clock.limited):
            return chosen
        return tie_break(chosen, (lb + d <= float(problem.cost[chosen].sum()) + _TOL) | problem.forced)

    # Every job's best candidate fits: that is an optimum (the bound at lam = 0 is reached).
    lb0, d0, _ = lagrangian(problem, np.zeros(problem.capacity.shape[0]))
    best = (d0 == 0) & (problem.forced | (problem.cost < 0))
    first = np.zeros(k, dtype=bool)
    _, idx = np.unique(problem.job[best], return_index=True)
    first[np.flatnonzero(best)[idx]] = True
    if feasible(problem, first):
        return proved(first, lb0, d0)
    with quiet_stdout():
        lp = linprog(
            problem.cost,
            A_ub=constraint_matrix(problem),
            b_ub=constraint_bounds(problem),
            bounds=np.c_[problem.forced.astype(np.float64), np.ones(k)],
        )  # no time limit here: the relaxation is cheap and gives the bound every limited round reports
    if lp.status == 2:
        raise RuntimeError("the round's integer program has no solution (forced allocations exceed the capacity)")
    if lp.status != 0:
        return None
    lam = np.maximum(-lp.ineqlin.marginals[problem.num_jobs :], 0.0)
    lb, d, _ = lagrangian(problem, lam)
    incumbent = lp.x > 1 - 1e-6
    if not feasible(problem, incumbent):
        return None
    incumbent = greedy_fill(problem, incumbent)
    unit = objective_unit(problem.cost)
    if clock is not None:
        clock.note_bound(lb)
    # First a smaller core (the candidates of least reduced cost, plus the incumbent's), whose
    # optimum is a better incumbent; then the core that incumbent leaves, unless it is inside
    # the first one (whose optimum is then the whole program's).
    upper = float(problem.cost[incumbent].sum())
    small = (d <= 0.25 * (upper - unit - lb) + _TOL) & ~problem.forced & ~incumbent
    solved = np.zeros(k, dtype=bool)
    if np.any(small):
        solved = small | incumbent | problem.forced
        incumbent = _core_choice(problem, solved, incumbent, upper, unit, solve_core, clock)
        upper = float(problem.cost[incumbent].sum())
    alive = (lb + d <= upper - unit + _TOL) | problem.forced
    if not np.any(alive & ~solved):
        # The first core held the whole core: if the limit stopped it, its bound is the program's.
        if clock is not None and clock.limited:
            clock.note_bound(min(upper - unit, clock.last_core_bound))
        return proved(incumbent, lb, d)
    if clock is not None:
        clock.limited = False  # only the last core's outcome decides whether the answer is proved
    incumbent = _core_choice(problem, alive, incumbent, upper, unit, solve_core, clock)
    if clock is not None and clock.limited:
        clock.note_bound(min(upper - unit, clock.last_core_bound))
    return proved(incumbent, lb, d)


def _core_choice(problem, alive, incumbent, upper, unit, solve_core, clock=None):
    """Return the core's optimum when strictly better than the incumbent, else the incumbent.

    With a time limit ``solve_core`` may return ``None`` (no choice found in time): the
    incumbent stays. A choice better than the incumbent by a grid step lies inside the last core,
    so ``min(upper - unit, that core's lower bound)`` then bounds the program (see :func:`solve_reduced`).
    """
    sub = np.flatnonzero(alive)
    core = restricted(problem, sub)
    x = solve_core(core)
    if x is None:  # the time limit stopped the core's solve before HiGHS found a choice
        return incumbent
    if float(core.cost[x].sum()) < upper - max(unit / 2, _TOL):
        out = np.zeros(problem.cost.shape[0], dtype=bool)
        out[sub[x]] = True
        return out
    return incumbent
