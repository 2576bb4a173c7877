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

The class optimum ``y`` is then handed out to the members (:func:`spread_counts`), in job
order and candidate order. Its value is the class program's, so the choice is an optimum of
the original program; which of two identical jobs gets which candidate is only a tie-break
(HiGHS on the whole program breaks it its own way). It depends on nothing but the program, so
a round's answer is the same with or without a warm start (see
:func:`~fastsched.sim.policies._assign.solve_assignment_report`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["JobClasses", "job_classes", "class_problem", "spread_counts", "worth_classes"]

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
    """Return the class program: ``(sub, size, index)``.

    ``sub`` is an :class:`~fastsched.sim.policies._assign.AssignProblem` over the classes'
    first jobs' candidates (its ``job`` is the class), ``size`` each class's job count (the
    bound of its row and of each of its integers) and ``index`` those candidates' positions
    in ``problem``.

    Examples
    --------
    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.array([0, 1, 2]), np.zeros(3, np.int64), np.array([1, 1, 2]),
    ...                   np.array([-1.0, -1.0, -1.0]), np.zeros(3, bool), np.array([2]), 3)
    >>> sub, size, index = class_problem(p, job_classes(p))
    >>> sub.job.tolist(), sub.gpus.tolist(), size.tolist(), index.tolist()
    ([0, 1], [1, 2], [2, 1], [0, 2])
    """
    first, start, order = classes.first, classes.start, classes.order
    width = start[first + 1] - start[first]
    index = order[np.concatenate([np.arange(start[j], start[j + 1]) for j in first])] if first.size else order[:0]
    sub = problem._replace(
        job=np.repeat(np.arange(first.size, dtype=np.int64), width),
        gtype=problem.gtype[index],
        gpus=problem.gpus[index],
        cost=problem.cost[index],
        forced=problem.forced[index],
        num_jobs=int(first.size),
    )
    return sub, classes.size, index


def spread_counts(problem, classes, counts) -> np.ndarray:
    """Hand each class's chosen counts to its jobs: a boolean choice of ``problem``'s candidates.

    ``counts[i]`` is how many of the class's jobs take the class program's candidate ``i`` (in
    :func:`class_problem`'s order). The class's jobs, in job order, take them in candidate order:
    the first ``counts[0]`` jobs candidate 0, and so on; jobs past the class's total get none.

    Examples
    --------
    Three identical jobs, candidates (1 GPU, 2 GPUs), one of each chosen:

    >>> from fastsched.sim.policies._assign import AssignProblem
    >>> p = AssignProblem(np.repeat([0, 1, 2], 2), np.zeros(6, np.int64), np.tile([1, 2], 3),
    ...                   np.tile([-0.5, -0.8], 3), np.zeros(6, bool), np.array([3]), 3)
    >>> spread_counts(p, job_classes(p), np.array([1, 1])).tolist()
    [True, False, False, True, False, False]
    """
    first, start, order, of_job = classes.first, classes.start, classes.order, classes.of_job
    counts = np.asarray(counts, dtype=np.int64)
    width = start[first + 1] - start[first]
    offset = np.concatenate([[0], np.cumsum(width)])  # each class's first candidate in the class program
    # The chosen candidates of each class, one entry per job that takes one, in candidate order.
    given = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    owner = np.repeat(np.arange(first.shape[0], dtype=np.int64), width)  # each candidate's class
    total = np.bincount(owner, weights=counts, minlength=first.shape[0]).astype(np.int64)
    given_start = np.concatenate([[0], np.cumsum(total)])
    # Each job's rank among its class's jobs, in job order.
    by_class = np.argsort(of_job, kind="stable")
    rank = np.empty(problem.num_jobs, dtype=np.int64)
    class_start = np.concatenate([[0], np.cumsum(classes.size)])
    rank[by_class] = np.arange(problem.num_jobs) - class_start[of_job[by_class]]
    jobs = np.flatnonzero(rank < total[of_job])
    position = given[given_start[of_job[jobs]] + rank[jobs]] - offset[of_job[jobs]]
    chosen = np.zeros(problem.cost.shape[0], dtype=bool)
    chosen[order[start[jobs] + position]] = True
    return chosen
