"""Jobs with identical candidates solved as one class (see :mod:`fastsched.sim.policies._assign`).

Two jobs whose candidate lists are equal, entry by entry (GPU type, GPUs, cost and forced flag),
are interchangeable in the round's integer program: any optimum stays an optimum when they swap
choices. A program with many such jobs (a sweep of one model, or Sia's scaling study, whose
workload is one trace merged K times) is then solved over the classes instead: one
integer ``y[k]`` per candidate of a class's first job, ``0 <= y[k] <= size`` (``= size`` when
forced), ``sum_k y[k] <= size`` per class and the same capacity rows. This is the same program
with its symmetry removed: a branch-and-bound on the original explores every permutation of
the identical jobs, and at 6,400 GPUs (2,000 jobs in 50-150 classes) HiGHS took 0.2 to over
1.5 s a round where the class program takes a few hundredths of a second
(``benchmarks/results/scale.md``).

The class optimum ``y`` is then handed out to the members (:func:`spread_counts`). Which of
two identical jobs gets which candidate is a tie-break, and so is the choice among the
program's optima. Sia's costs are rounded to two decimals, which often erases the restart
factor, so many optima move different numbers of jobs. With the last round's choice (a warm
start), :func:`solve_keeping` breaks both ties towards keeping jobs where they are: among the
optima, one that keeps the most jobs on their last candidate, and those jobs keep it. Without
one, the members take the counts in job order and candidate order.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

__all__ = [
    "JobClasses",
    "job_classes",
    "class_problem",
    "spread_counts",
    "kept_counts",
    "solve_keeping",
    "worth_classes",
]

#: Branch-and-bound nodes :func:`solve_keeping` may spend on its tie-break before giving up on it.
KEEP_NODES = 200
#: The class program is used when it has at most this share of the program's candidates. With
#: little symmetry the Lagrangian reduction's core (:mod:`~fastsched.sim.policies._assign_reduce`)
#: is smaller than the whole class program, and the classes would only cost their grouping.
CLASS_SHARE = 0.5


class JobClasses(NamedTuple):
    """Jobs grouped by identical candidate lists.

    Attributes
    ----------
    of_job : numpy.ndarray of int64
        Class of each job (classes numbered by their first job).
    first : numpy.ndarray of int64
        First (lowest-numbered) job of each class.
    size : numpy.ndarray of int64
        Jobs in each class.
    start : numpy.ndarray of int64
        ``order[start[j]:start[j + 1]]`` are job ``j``'s candidates, in the program's order.
    order : numpy.ndarray of int64
        Candidates sorted by job (stable).

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.array([0, 1, 2]), np.zeros(3, np.int64), np.array([1, 1, 2]),
    ...                   np.array([-1.0, -1.0, -1.0]), np.zeros(3, bool), np.array([2]), 3)
    >>> c = job_classes(p)
    >>> c.of_job.tolist(), c.first.tolist(), c.size.tolist()
    ([0, 0, 1], [0, 2], [2, 1])
    """

    of_job: np.ndarray
    first: np.ndarray
    size: np.ndarray
    start: np.ndarray
    order: np.ndarray


def job_classes(problem) -> JobClasses:
    """Group ``problem``'s jobs by identical candidate lists (see the module docstring).

    Costs are compared by their bits: two costs that print alike but differ in the last bit
    are different classes (a class must be exactly interchangeable).

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([1, 1, 1, 1]),
    ...                   np.array([-1.0, -2.0, -1.0, -2.0]), np.zeros(4, bool), np.array([1, 1]), 2)
    >>> job_classes(p).size.tolist()
    [2]
    """
    order = np.argsort(problem.job, kind="stable")
    start = np.searchsorted(problem.job[order], np.arange(problem.num_jobs + 1)).astype(np.int64)
    cost = np.ascontiguousarray(problem.cost, dtype=np.float64)
    rows = np.stack(
        [
            np.asarray(problem.gtype, dtype=np.int64),
            np.asarray(problem.gpus, dtype=np.int64),
            cost.view(np.int64),
            np.asarray(problem.forced, dtype=np.int64),
        ],
        axis=1,
    )[order]
    ids: dict = {}
    of_job = np.empty(problem.num_jobs, dtype=np.int64)
    first, size = [], []
    for j in range(problem.num_jobs):
        key = rows[start[j] : start[j + 1]].tobytes()
        c = ids.get(key)
        if c is None:
            c = ids[key] = len(first)
            first.append(j)
            size.append(0)
        size[c] += 1
        of_job[j] = c
    return JobClasses(of_job, np.array(first, dtype=np.int64), np.array(size, dtype=np.int64), start, order)


def worth_classes(problem, classes) -> bool:
    """Whether the class program has at most :data:`CLASS_SHARE` of the program's candidates.

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.array([0, 1]), np.zeros(2, np.int64), np.ones(2, np.int64),
    ...                   np.array([-1.0, -1.0]), np.zeros(2, bool), np.array([1]), 2)
    >>> worth_classes(p, job_classes(p))
    True
    """
    width = np.diff(classes.start)[classes.first].sum()
    return bool(width <= CLASS_SHARE * problem.cost.shape[0])


def class_problem(problem, classes):
    """Return the class program: ``(sub, size)``.

    ``sub`` is an :class:`~fastsched.sim.policies._assign.AssignProblem` over the classes'
    first jobs' candidates (its ``job`` is the class) and ``size`` each class's job count (the
    bound of its row and of each of its integers).

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.array([0, 1, 2]), np.zeros(3, np.int64), np.array([1, 1, 2]),
    ...                   np.array([-1.0, -1.0, -1.0]), np.zeros(3, bool), np.array([2]), 3)
    >>> sub, size = class_problem(p, job_classes(p))
    >>> sub.job.tolist(), sub.gpus.tolist(), size.tolist()
    ([0, 1], [1, 2], [2, 1])
    """
    offset, owner = _class_offsets(classes)
    # The first jobs' candidates, in class order: position i of class c is its first job's i-th.
    index = classes.order[classes.start[classes.first[owner]] + np.arange(owner.shape[0]) - offset[owner]]
    sub = problem._replace(
        job=owner,
        gtype=problem.gtype[index],
        gpus=problem.gpus[index],
        cost=problem.cost[index],
        forced=problem.forced[index],
        num_jobs=int(classes.first.shape[0]),
    )
    return sub, classes.size


def spread_counts(problem, classes, counts, keep=None) -> np.ndarray:
    """Hand each class's chosen counts to its jobs: a boolean choice of ``problem``'s candidates.

    ``counts[i]`` is how many of the class's jobs take the class program's candidate ``i`` (in
    :func:`class_problem`'s order). A job whose ``keep`` candidate (a boolean mask over
    ``problem``, at most one per job: its last round's) still has a count left takes it, in
    job order; the other jobs, in job order, take what is left in candidate order; jobs past
    the class's total get none.

    Examples
    --------
    Three identical jobs, candidates (1 GPU, 2 GPUs), one of each chosen:

    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.repeat([0, 1, 2], 2), np.zeros(6, np.int64), np.tile([1, 2], 3),
    ...                   np.tile([-0.5, -0.8], 3), np.zeros(6, bool), np.array([3]), 3)
    >>> c = job_classes(p)
    >>> spread_counts(p, c, np.array([1, 1])).tolist()
    [True, False, False, True, False, False]
    >>> keep = np.array([False, False, False, True, True, False])  # jobs 1 and 2 held 2 and 1 GPUs
    >>> spread_counts(p, c, np.array([1, 1]), keep).tolist()
    [False, False, False, True, True, False]
    """
    start, order, of_job = classes.start, classes.order, classes.of_job
    offset, owner = _class_offsets(classes)
    counts = np.asarray(counts, dtype=np.int64)
    position = _kept_position(problem, classes, keep)  # each job's place in its list, -1: none
    # Jobs keeping their candidate: the first counts[i] of its holders, in job order.
    holders = np.flatnonzero(position >= 0)
    wanted = offset[of_job[holders]] + position[holders]
    kept = np.zeros(problem.num_jobs, dtype=bool)
    kept[holders[_rank_within(wanted) < counts[wanted]]] = True
    left = counts - np.bincount(offset[of_job[kept]] + position[kept], minlength=counts.shape[0])
    # The others, in job order, take what is left of their class, in candidate order.
    waiting = np.flatnonzero(~kept)
    given = np.repeat(np.arange(counts.shape[0], dtype=np.int64), left)
    total = np.bincount(owner, weights=left, minlength=offset.shape[0] - 1).astype(np.int64)
    given_start = np.concatenate([[0], np.cumsum(total)])
    rank = _rank_within(of_job[waiting])
    takes = rank < total[of_job[waiting]]
    waiting, rank = waiting[takes], rank[takes]
    position[waiting] = given[given_start[of_job[waiting]] + rank] - offset[of_job[waiting]]
    served = np.concatenate([np.flatnonzero(kept), waiting])
    chosen = np.zeros(problem.cost.shape[0], dtype=bool)
    chosen[order[start[served] + position[served]]] = True
    return chosen


def _rank_within(group) -> np.ndarray:
    """Each entry's rank among the entries of its group, in their order (``group`` of ints)."""
    by_group = np.argsort(group, kind="stable")
    sorted_group = group[by_group]
    first = np.searchsorted(sorted_group, sorted_group, side="left")
    rank = np.empty(group.shape[0], dtype=np.int64)
    rank[by_group] = np.arange(group.shape[0]) - first
    return rank


def _class_offsets(classes):
    """``(offset, owner)``: each class's first candidate in the class program (and its end), each candidate's class."""
    width = classes.start[classes.first + 1] - classes.start[classes.first]
    offset = np.concatenate([[0], np.cumsum(width)]).astype(np.int64)
    return offset, np.repeat(np.arange(classes.first.shape[0], dtype=np.int64), width)


def _kept_position(problem, classes, keep) -> np.ndarray:
    """Each job's ``keep`` candidate as a position in its list (-1: none)."""
    position = np.full(problem.num_jobs, -1, dtype=np.int64)
    if keep is None:
        return position
    at = np.flatnonzero(np.asarray(keep, dtype=bool)[classes.order])  # in job order
    job = problem.job[classes.order[at]]
    position[job[::-1]] = (at - classes.start[job])[::-1]  # the first one of a job wins
    return position


def kept_counts(problem, classes, keep) -> np.ndarray:
    """How many of each class's jobs have each class-program candidate as their ``keep`` candidate.

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.repeat([0, 1, 2], 2), np.zeros(6, np.int64), np.tile([1, 2], 3),
    ...                   np.tile([-0.5, -0.8], 3), np.zeros(6, bool), np.array([3]), 3)
    >>> kept_counts(p, job_classes(p), np.array([False, True, False, True, True, False])).tolist()
    [1, 2]
    """
    offset, _ = _class_offsets(classes)
    position = _kept_position(problem, classes, keep)
    held = position >= 0
    return np.bincount(offset[classes.of_job[held]] + position[held], minlength=int(offset[-1])).astype(np.int64)


def solve_keeping(sub, size, held, unit, time_limit, incumbent=False):
    """HiGHS on the class program, ties broken towards keeping jobs on their ``held`` candidates.

    Costs rounded to a grid (Sia's two decimals) erase small restart factors, so a round often
    has many optima that move different numbers of jobs. One solve: integers ``z[i] <=
    min(y[i], held[i])`` count the jobs kept, and the objective is ``cost . y - eps * sum z``
    with ``eps = unit / (4 (sum held + 1))``: all of them together are worth less than a
    quarter of a grid step, so the optimum of ``cost . y`` is unchanged and among its optima
    one keeping the most jobs is taken (HiGHS's absolute gap set below ``eps``).

    Returns ``(counts, True, cost . counts)`` as :func:`~fastsched.sim.policies._assign._milp_limited`
    does for a proved optimum, or ``None`` when HiGHS does not prove one within
    :data:`KEEP_NODES` branch-and-bound nodes (a count, so the outcome does not depend on the
    machine's speed) or the time left: the caller then solves the plain class program. Most
    rounds are proved at the root; at ×100 one round in 1,500 took 42 s without the cap.
    With ``incumbent``, a solve stopped by the node cap (not by the clock, so the outcome
    still does not depend on the machine) returns ``(counts, False, cost . counts)`` for the
    best choice it found, for a caller that checks its value against a known optimum.
    """
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.sparse import csr_array, hstack, identity, vstack

    from fastsched.sim.policies._assign_reduce import constraint_bounds, constraint_matrix, variable_bounds
    from fastsched.sim.policies._highs import quiet_milp

    k = sub.cost.shape[0]
    eps = unit / (4.0 * (float(held.sum()) + 1.0))
    rows = constraint_bounds(sub, size)
    matrix = vstack(
        [
            hstack([constraint_matrix(sub), csr_array((rows.shape[0], k))]),
            hstack([-identity(k, format="csr"), identity(k, format="csr")]),  # z <= y
        ],
        format="csr",
    )
    y_lo, y_hi = variable_bounds(sub, size)
    with warnings.catch_warnings():  # scipy passes HiGHS's own mip_abs_gap on, with a warning that it does
        warnings.filterwarnings("ignore", "Unrecognized options", RuntimeWarning)
        res = quiet_milp(
            np.concatenate([sub.cost, np.full(k, -eps)]),
            integrality=np.ones(2 * k),
            bounds=Bounds(np.concatenate([y_lo, np.zeros(k)]), np.concatenate([y_hi, held])),
            constraints=[LinearConstraint(matrix, -np.inf, np.concatenate([rows, np.zeros(k)]))],
            options={
                "mip_rel_gap": 0.0,
                "mip_abs_gap": eps / 2,
                "mip_max_nodes": KEEP_NODES,
                "presolve": True,
                **({} if time_limit is None else {"time_limit": time_limit}),
            },
        )
    if res.x is None or res.status == 1 or (res.status != 0 and not incumbent):
        return None  # not proved within the node cap or the time left (status 1: the clock)
    counts = np.rint(res.x[:k]).astype(np.int64)
    return counts, res.status == 0, float(sub.cost @ counts)
