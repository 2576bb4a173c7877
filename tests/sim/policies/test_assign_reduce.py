"""The Lagrangian reduction of Sia's integer program against the DP, HiGHS and brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.policies._assign import AssignProblem, _solve_milp, solve_assignment
from fastsched.sim.policies._assign_reduce import lagrangian, objective_unit, solve_reduced

from ._assign_problems import assign_problem, check_feasible, check_optimal


@st.composite
def crowded(draw, grid=True, max_jobs=12):
    """More demand than GPUs, so the capacity rows bind (costs on the 0.01 grid or not)."""
    num_types = draw(st.integers(1, 3))
    capacity = np.array(draw(st.lists(st.integers(1, 8), min_size=num_types, max_size=num_types)))
    num_jobs = draw(st.integers(2, max_jobs))
    job, gtype, gpus, cost, forced = [], [], [], [], []
    for j in range(num_jobs):
        for _ in range(draw(st.integers(0, 4))):
            job.append(j)
            gtype.append(draw(st.integers(0, num_types - 1)))
            gpus.append(draw(st.sampled_from([1, 2, 3, 4, 8])))
            if grid:
                # Sia's values: round(v, 2) - 1.1 with v in (0, 1.1); many ties.
                cost.append(round(draw(st.integers(0, 109)) / 100 - 1.1, 2))
            else:
                cost.append(-draw(st.floats(0.01, 2.0)))
            forced.append(False)
    if job and draw(st.booleans()):
        forced[draw(st.integers(0, len(job) - 1))] = True
    return assign_problem(job, gtype, gpus, cost, forced, capacity, num_jobs)


@settings(max_examples=80, deadline=None)
@given(crowded(grid=True))
def test_reduced_is_optimal_on_grid_costs(p):
    check_optimal(p, "reduced")


@settings(max_examples=40, deadline=None)
@given(crowded(grid=False))
def test_reduced_is_optimal_on_any_costs(p):
    check_optimal(p, "reduced")


@settings(max_examples=15, deadline=None)
@given(crowded(grid=True, max_jobs=60), st.integers(0, 2**31))
def test_reduced_is_optimal_on_larger_programs(p, seed):
    check_optimal(p, "reduced")


def _sia_like(seed, num_jobs=120, capacity=(24, 24, 16)):
    """Jobs with a row of configurations per type whose value improves with GPUs, 3x oversubscribed."""
    rng = np.random.default_rng(seed)
    job, gtype, gpus, cost = [], [], [], []
    for j in range(num_jobs):
        speed = rng.uniform(0.5, 2.0, size=3)
        for t in range(3):
            for g in (1, 2, 4, 8):
                v = (speed[t] * g**0.7 / speed.min()) ** -0.5
                c = round(v, 2) - 1.1
                if c < 0:
                    job.append(j)
                    gtype.append(t)
                    gpus.append(g)
                    cost.append(c)
    return AssignProblem(
        np.array(job),
        np.array(gtype),
        np.array(gpus),
        np.array(cost),
        np.zeros(len(job), bool),
        np.array(capacity),
        num_jobs,
    )


def test_core_is_a_fraction_of_the_program_and_optimal():
    p = _sia_like(2, num_jobs=40)  # a program whose first incumbent is not optimal
    cores = []

    def solve_core(core):
        cores.append(core.cost.size)
        return _solve_milp(core)

    x = solve_reduced(p, solve_core)
    check_feasible(p, x)
    assert p.cost[x].sum() == pytest.approx(p.cost[solve_assignment(p, "dp")].sum(), abs=1e-9)
    assert cores and max(cores) < p.cost.size / 2


def test_every_best_candidate_fits_needs_no_solver():
    p = _sia_like(1, num_jobs=5)

    def solve_core(core):  # pragma: no cover - must not be called
        raise AssertionError("no core expected")

    x = solve_reduced(p, solve_core)
    best = [p.cost[p.job == j].min() for j in range(5)]
    assert p.cost[x].sum() == pytest.approx(sum(best))


def test_lagrangian_bounds_every_choice():
    p = _sia_like(2, num_jobs=40)
    x = solve_assignment(p, "dp")
    rng = np.random.default_rng(0)
    for _ in range(20):
        lam = rng.uniform(0, 0.3, size=3)
        lb, d, r = lagrangian(p, lam)
        assert np.all(d >= -1e-12)
        assert lb <= p.cost[x].sum() + 1e-9


def test_forced_beyond_capacity_raises():
    p = AssignProblem(
        np.array([0, 1, 2]),
        np.zeros(3, np.int64),
        np.array([2, 2, 1]),
        np.array([-1.0, -1.0, -0.5]),
        np.array([True, True, False]),
        np.array([3]),
        3,
    )
    with pytest.raises(RuntimeError, match="no solution"):
        solve_assignment(p, "reduced")


def test_objective_unit():
    assert objective_unit(np.array([-1.1 + 0.47, -0.01])) == 0.01
    assert objective_unit(np.array([-0.123])) == 0.0


def test_auto_uses_the_reduction_above_the_dp_limits(monkeypatch):
    from fastsched.sim.policies import _assign

    p = _sia_like(2, num_jobs=40)
    ref = solve_assignment(p, "dp")
    calls = []

    def spy(problem, solve_core, clock=None, tie_break=None):
        calls.append(problem.cost.size)
        return solve_reduced(problem, solve_core, clock, tie_break)

    monkeypatch.setattr(_assign, "DP_WORK_LIMIT", 0)
    monkeypatch.setattr(_assign, "solve_reduced", spy)
    x = solve_assignment(p)
    assert calls == [p.cost.size]
    assert p.cost[x].sum() == pytest.approx(p.cost[ref].sum(), abs=1e-9)
