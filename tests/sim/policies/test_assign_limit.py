"""Sia's round under a time limit: the same choice when it solves in time, a valid gap when it does not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from fastsched.sim.policies import _assign
from fastsched.sim.policies._assign import solve_assignment, solve_assignment_report

from ._assign_problems import check_feasible, check_limited_gap
from .test_assign_reduce import crowded


def _big(seed, num_jobs=600, types=3):
    """A Sia-like round well beyond the dynamic program: many jobs, many configurations, scarce GPUs."""
    rng = np.random.default_rng(seed)
    job, gtype, gpus, cost = [], [], [], []
    for j in range(num_jobs):
        for t in range(types):
            for g in (1, 2, 4, 8, 16):
                job.append(j)
                gtype.append(t)
                gpus.append(g)
                cost.append(round(-rng.uniform(0.05, 1.1) * (1 + 0.1 * np.log2(g)), 2))
    order = np.argsort(job, kind="stable")
    return _assign.AssignProblem(
        np.array(job)[order],
        np.array(gtype)[order],
        np.array(gpus)[order],
        np.array(cost)[order],
        np.zeros(len(job), bool),
        np.array([256] * types),
        num_jobs,
    )


@settings(max_examples=40, deadline=None)
@given(crowded())
def test_a_round_solved_in_time_is_the_unlimited_choice(p):
    for method in ("reduced", "milp"):
        try:
            ref = solve_assignment(p, method)
        except RuntimeError:
            with pytest.raises(RuntimeError):
                solve_assignment_report(p, method, time_limit=60.0)
            continue
        r = solve_assignment_report(p, method, time_limit=60.0)
        assert not r.limited and r.gap == 0.0
        assert np.array_equal(r.chosen, ref)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_limited_round_is_feasible_and_its_gap_bounds_the_optimum(seed, monkeypatch):
    # HiGHS stopped after one node: the limit's path, whatever this machine's speed.
    check_limited_gap(_big(seed), "reduced", monkeypatch, exact="reduced")


def test_a_limited_round_falls_back_on_a_better_warm_start(monkeypatch):
    p = _big(2, num_jobs=200)
    best = solve_assignment(p, "reduced")
    monkeypatch.setattr(
        _assign, "_milp_limited", lambda prob, t, size=None: (None, False, -np.inf)
    )  # no incumbent in time
    r = solve_assignment_report(p, "reduced", time_limit=1.0, warm=lambda: best.copy())
    assert r.limited
    assert float(p.cost[r.chosen].sum()) == pytest.approx(float(p.cost[best].sum()), abs=1e-9)
    bad = np.zeros_like(best)
    bad[0] = bad[1] = True  # two candidates of job 0: not a choice, never taken
    r2 = solve_assignment_report(p, "reduced", time_limit=1.0, warm=bad)
    check_feasible(p, r2.chosen)


def test_time_limit_must_be_positive():
    p = _big(0, num_jobs=2)
    with pytest.raises(ValueError, match="time_limit"):
        solve_assignment_report(p, time_limit=0)


def test_sia_policy_counts_limited_rounds(monkeypatch):
    from fastsched.sim.policies import sia as sia_mod
    from fastsched.sim.policies.sia import SiaPolicy

    with pytest.raises(ValueError, match="time_limit"):
        SiaPolicy(time_limit=-1.0)
    pol = SiaPolicy(time_limit=0.5)
    p = _big(3, num_jobs=50)
    seen = []

    def fake(problem, method, time_limit, warm):
        seen.append(time_limit)
        return _assign.SolveReport(solve_assignment(problem, "reduced"), True, 0.02)

    monkeypatch.setattr(sia_mod, "solve_assignment_report", fake)
    jobs = [type("J", (), {"name": f"j{i}"})() for i in range(p.num_jobs)]
    columns = [(0, 1, g) for g in range(64)]
    column = p.gpus.copy()
    pol._solve(p, jobs, columns, column)
    pol._solve(p, jobs, columns, column)  # a limited round is not reused: solved again
    assert seen == [0.5, 0.5]
    assert pol.solver_stats == {"rounds": 2, "limited": 2, "worst_gap": 0.02}
