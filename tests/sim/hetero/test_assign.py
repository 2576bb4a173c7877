"""The Sia integer program: the dynamic program and HiGHS against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.policies._assign import AssignProblem, solve_assignment

from .._assign_problems import assign_problem


def brute_force(p: AssignProblem) -> float:
    """Best objective by enumerating every choice (none or one candidate) per job."""
    options = [[None] + [k for k in range(p.cost.size) if p.job[k] == j] for j in range(p.num_jobs)]
    best = np.inf
    for combo in itertools.product(*options):
        used = np.zeros_like(p.capacity)
        total = 0.0
        ok = True
        for j, k in enumerate(combo):
            forced = [q for q in range(p.cost.size) if p.job[q] == j and p.forced[q]]
            if forced and k != forced[0]:
                ok = False
                break
            if k is not None:
                used[p.gtype[k]] += p.gpus[k]
                total += p.cost[k]
        if ok and np.all(used <= p.capacity) and total < best:
            best = total
    return best


@st.composite
def problems(draw):
    num_types = draw(st.integers(1, 2))
    capacity = np.array(draw(st.lists(st.integers(1, 6), min_size=num_types, max_size=num_types)))
    num_jobs = draw(st.integers(1, 5))
    job, gtype, gpus, cost, forced = [], [], [], [], []
    for j in range(num_jobs):
        k = draw(st.integers(0, 3))
        for _ in range(k):
            job.append(j)
            gtype.append(draw(st.integers(0, num_types - 1)))
            gpus.append(draw(st.sampled_from([1, 2, 4])))
            cost.append(-draw(st.floats(0.01, 2.0)))
            forced.append(False)
    if job and draw(st.booleans()):
        forced[draw(st.integers(0, len(job) - 1))] = True
    return assign_problem(job, gtype, gpus, cost, forced, capacity, num_jobs)


def _value(p, x):
    return float(p.cost[x].sum())


def _feasible(p, x):
    assert all(np.sum(x & (p.job == j)) <= 1 for j in range(p.num_jobs))
    for t in range(p.capacity.size):
        assert p.gpus[x & (p.gtype == t)].sum() <= p.capacity[t]
    assert np.all(x[p.forced])


@settings(max_examples=60, deadline=None)
@given(problems())
def test_solvers_match_brute_force(p):
    best = brute_force(p)
    if not np.isfinite(best):  # the forced candidate does not fit
        with pytest.raises(RuntimeError):
            solve_assignment(p, "dp")
        return
    for method in ("dp", "milp"):
        x = solve_assignment(p, method)
        _feasible(p, x)
        assert _value(p, x) == pytest.approx(best, abs=1e-9)


def test_dp_requires_sorted_candidates():
    p = AssignProblem(
        np.array([1, 0]), np.zeros(2, np.int64), np.ones(2, np.int64), -np.ones(2), np.zeros(2, bool), np.array([2]), 2
    )
    with pytest.raises(ValueError, match="sorted by job"):
        solve_assignment(p, "dp")
    assert solve_assignment(p, "milp").tolist() == [True, True]
