"""Sia round programs for the assignment tests: one builder from per-candidate lists, and the checks they share."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.sim.policies import _assign
from fastsched.sim.policies._assign import AssignProblem, solve_assignment, solve_assignment_report


def assign_problem(job, gtype, gpus, cost, forced, capacity, num_jobs) -> AssignProblem:
    """An :class:`AssignProblem` from per-candidate lists (candidates in job order)."""
    return AssignProblem(
        np.array(job, dtype=np.int64),
        np.array(gtype, dtype=np.int64),
        np.array(gpus, dtype=np.int64),
        np.array(cost, dtype=np.float64),
        np.array(forced, dtype=bool),
        capacity,
        num_jobs,
    )


def check_feasible(p, x):
    """``x`` picks at most one candidate per job, every forced one, within each type's GPUs."""
    assert all(np.sum(x & (p.job == j)) <= 1 for j in range(p.num_jobs))
    for t in range(p.capacity.size):
        assert p.gpus[x & (p.gtype == t)].sum() <= p.capacity[t]
    assert np.all(x[p.forced])


def check_optimal(p, method):
    """``method`` finds a feasible optimum, as the dynamic program and HiGHS on the whole program do.

    Where the dynamic program finds the round infeasible, ``method`` raises too.
    """
    try:
        ref = solve_assignment(p, "dp")
    except RuntimeError:
        with pytest.raises(RuntimeError):
            solve_assignment(p, method)
        return
    x = solve_assignment(p, method)
    check_feasible(p, x)
    assert p.cost[x].sum() == pytest.approx(p.cost[ref].sum(), abs=1e-9)
    assert p.cost[x].sum() == pytest.approx(p.cost[solve_assignment(p, "milp")].sum(), abs=1e-9)


def check_limited_gap(p, method, monkeypatch, exact="milp"):
    """Under a time limit that binds (HiGHS stopped after one node), ``method`` returns a feasible
    allocation no better than the optimum (found by ``exact``), and its reported gap bounds it."""
    opt = float(p.cost[solve_assignment(p, exact)].sum())
    real = _assign._milp_limited
    monkeypatch.setattr(_assign, "_milp_limited", lambda prob, t, size=None: real(prob, 1e-3, size))
    r = solve_assignment_report(p, method, time_limit=10.0)
    check_feasible(p, r.chosen)
    value = float(p.cost[r.chosen].sum())
    assert value >= opt - 1e-9
    if r.limited:
        assert r.gap >= 0
        assert value - r.gap * abs(value) <= opt + 1e-6  # the reported bound is below the optimum
    else:
        assert value == pytest.approx(opt, abs=1e-9)
    return r
