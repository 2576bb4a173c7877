"""The Sia integer program: the dynamic program and HiGHS against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.policies._assign import AssignProblem, solve_assignment

from ._assign_problems import assign_problem


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


def reference_dp(p: AssignProblem):
    """The dynamic program's choice, written plainly: candidate by candidate over the whole table.

    The tie rule: the lowest flattened state of least total; going back, a job takes none of
    its candidates where that gives the value, else its first candidate that does. ``None``
    where the forced candidates do not fit.
    """
    cap = p.capacity.astype(np.int64)
    strides = np.cumprod(np.r_[1, cap[:-1] + 1]).astype(np.int64)
    states = np.arange(int(np.prod(cap + 1)))
    coord = [(states // strides[t]) % (cap[t] + 1) for t in range(cap.size)]
    layers = [np.where(states == 0, 0.0, np.inf)]
    cands = [np.flatnonzero(p.job == j) for j in range(p.num_jobs)]
    cands = [ks[p.forced[ks]] if p.forced[ks].any() else ks for ks in cands]
    for ks in cands:
        dp = layers[-1]
        new = np.full_like(dp, np.inf) if p.forced[ks].any() else dp.copy()
        for k in ks:
            t, g = p.gtype[k], p.gpus[k]
            fits = coord[t] >= g
            value = np.full_like(dp, np.inf)
            value[fits] = dp[states[fits] - g * strides[t]] + p.cost[k]
            new = np.where(value < new, value, new)
        layers.append(new)
    if not np.isfinite(layers[-1].min()):
        return None
    chosen = np.zeros(p.cost.size, dtype=bool)
    s = int(np.argmin(layers[-1]))
    for j in range(p.num_jobs - 1, -1, -1):
        val, prev = layers[j + 1][s], layers[j]
        if not p.forced[cands[j]].any() and prev[s] == val:
            continue
        for k in cands[j]:
            t, g = p.gtype[k], p.gpus[k]
            if coord[t][s] >= g and prev[s - g * strides[t]] + p.cost[k] == val:
                chosen[k] = True
                s -= g * strides[t]
                break
    return chosen


@st.composite
def tied_problems(draw):
    # Three types whose table rows are long enough for the blocked fill, costs on a coarse
    # grid (many equal totals: the tie rule decides).
    capacity = np.array([draw(st.integers(7, 9)), draw(st.integers(7, 9)), draw(st.integers(1, 4))])
    num_jobs = draw(st.integers(1, 8))
    job, gtype, gpus, cost, forced = [], [], [], [], []
    for j in range(num_jobs):
        for _ in range(draw(st.integers(0, 4))):
            job.append(j)
            gtype.append(draw(st.integers(0, 2)))
            gpus.append(draw(st.sampled_from([0, 1, 2, 3, 4, 8])))
            cost.append(-0.25 * draw(st.integers(0, 6)))
            forced.append(draw(st.integers(0, 9)) == 0)
    for j in range(num_jobs):  # at most one forced candidate per job
        ks = [k for k in range(len(job)) if job[k] == j and forced[k]]
        for k in ks[1:]:
            forced[k] = False
    return assign_problem(job, gtype, gpus, cost, forced, capacity, num_jobs)


@settings(max_examples=60, deadline=None)
@given(tied_problems())
def test_dp_choice_matches_the_plain_reference(p):
    want = reference_dp(p)
    if want is None:
        with pytest.raises(RuntimeError):
            solve_assignment(p, "dp")
        return
    assert solve_assignment(p, "dp").tolist() == want.tolist()
