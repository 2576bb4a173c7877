"""Shockwave (issue 24.1): its market against hand-computed plans on small instances."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim import WorkloadJob
from fastsched.sim.policies import make_policy
from fastsched.sim.policies._highs import quiet_stdout
from fastsched.sim.policies._market import MarketJobs, log_secants, rank_rounds, solve_market
from fastsched.sim.policies.shockwave import ShockwavePolicy
from tests.sim.policies.test_baselines import _jobs, toy  # noqa: F401  (fixture)


def _market(gpus, seconds, done=None, weight=None):
    gpus = np.asarray(gpus)
    n = gpus.shape[0]
    return MarketJobs(
        gpus,
        np.asarray(seconds, dtype=np.float64),
        np.zeros(n) if done is None else np.asarray(done, dtype=np.float64),
        np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64),
    )


def test_secants_meet_log_at_the_points():
    points = [0.0, 0.2, 0.5, 1.0]
    slope, intercept = log_secants(points, 1e-6)
    x = np.array([1e-6, 0.2, 0.5, 1.0])
    assert slope * x[:-1] + intercept == pytest.approx(np.log(x[:-1]))
    assert slope * x[1:] + intercept == pytest.approx(np.log(x[1:]))


@pytest.mark.parametrize("bad", [[0.5], [0.5, 0.2], [-0.1, 1.0], [0.0, 1.5]])
def test_secants_reject_bad_points(bad):
    with pytest.raises(ValueError, match="log_points"):
        log_secants(bad, 1e-6)


def test_welfare_spreads_rounds_over_equal_jobs():
    # One GPU, two jobs of one round's work each, two rounds: one round each gives both
    # progress 1 (log 0); two rounds to one job leaves the other at log(1e-6).
    x = solve_market(_market([1, 1], [60.0, 60.0]), 1, 60.0, 2, k=0.0)
    assert x.sum(axis=1).tolist() == [1, 1]
    assert x.sum(axis=0).tolist() == [1, 1]


def test_capacity_splits_rounds_evenly():
    # 4 GPUs, three 2-GPU jobs of 3 rounds each, 3 rounds: 6 slots, two per job (the log is
    # concave: 2/3 each beats any uneven split); never more than 2 jobs in a round.
    x = solve_market(_market([2, 2, 2], [180.0] * 3), 4, 60.0, 3, k=0.0)
    assert x.sum(axis=1).tolist() == [2, 2, 2]
    assert (x.sum(axis=0) * 2 <= 4).all()


def test_makespan_weight_trades_welfare_for_the_longest_job():
    # One GPU, two rounds of 60 s; job 0 takes 600 s, job 1 60 s.
    # One round each: u0 = secant(0.1) = log(1e-6) + (log 0.2 - log 1e-6) / (0.2 - 1e-6) * (0.1 - 1e-6),
    # u1 = 0, longest remaining M = 540 s. Both rounds to job 0: u0 = log 0.2, u1 = log 1e-6, M = 480 s.
    m = _market([1, 1], [600.0, 60.0])
    s = (math.log(0.2) - math.log(1e-6)) / (0.2 - 1e-6)
    u_split = math.log(1e-6) + s * (0.1 - 1e-6)
    u_long = math.log(0.2) + math.log(1e-6)
    assert u_split / 4 > u_long / 4  # welfare alone splits
    assert solve_market(m, 1, 60.0, 2, k=0.0).sum(axis=1).tolist() == [1, 1]
    # With k = 1 per second, 60 s less makespan outweighs the welfare difference (~1.9).
    assert 60 > (u_split - u_long) / 4
    assert solve_market(m, 1, 60.0, 2, k=1.0).sum(axis=1).tolist() == [2, 0]


def test_finish_time_bound_forces_the_short_job_in():
    # As above with k = 1, but job 1 must end within the window: c (rem - q) <= 0 forces q1 = 1.
    m = _market([1, 1], [600.0, 60.0])
    ftf = (np.array([1.0, 1.0]), np.array([1e9, 0.0]))
    assert solve_market(m, 1, 60.0, 2, k=1.0, ftf=ftf).sum(axis=1).tolist() == [1, 1]


def test_unmeetable_bound_is_no_solution():
    m = _market([1, 1], [600.0, 600.0])
    ftf = (np.ones(2), np.zeros(2))  # both must finish 10 rounds of work in 2
    assert solve_market(m, 1, 60.0, 2, ftf=ftf) is None


def test_priority_weight_wins_the_contested_round():
    # One GPU, one round, equal jobs: the weighted one runs.
    x = solve_market(_market([1, 1], [600.0, 600.0], weight=[1.0, 50.0]), 1, 60.0, 1, k=0.0)
    assert x[:, 0].tolist() == [False, True]


def test_rank_rounds_gives_priority_jobs_the_earliest_rounds():
    plan = np.array([[False, False, True], [True, True, False], [False, True, True]])
    out = rank_rounds(plan, np.array([2, 1, 1]), 2, [0, 2, 1])
    assert out.sum(axis=1).tolist() == plan.sum(axis=1).tolist()
    assert out.tolist() == [[True, False, False], [False, True, True], [False, True, True]]


@settings(max_examples=15, deadline=None)
@given(
    gpus=st.lists(st.integers(1, 4), min_size=1, max_size=6),
    window=st.integers(1, 3),
    capacity=st.integers(4, 8),
    data=st.data(),
)
def test_plans_respect_capacity_and_progress(gpus, window, capacity, data):
    n = len(gpus)
    seconds = data.draw(st.lists(st.floats(30.0, 3000.0), min_size=n, max_size=n))
    done = data.draw(st.lists(st.floats(0.0, 0.9), min_size=n, max_size=n))
    m = _market(gpus, seconds, done)
    x = solve_market(m, capacity, 60.0, window)
    assert x is not None and x.shape == (n, window)
    assert (np.asarray(gpus) @ x <= capacity).all()
    ranked = rank_rounds(x, np.asarray(gpus), capacity, list(range(n)))
    assert (np.asarray(gpus) @ ranked <= capacity).all()
    assert (ranked.sum(axis=1) <= x.sum(axis=1)).all()


def test_quiet_stdout_hides_file_descriptor_output(capfd):
    import os

    with quiet_stdout():
        os.write(1, b"hidden\n")
    os.write(1, b"kept\n")
    assert capfd.readouterr().out == "kept\n"


def test_policy_runs_what_fits_and_fills_free_gpus(toy):  # noqa: F811
    # Two 2-GPU jobs on 2 slow + 2 fast GPUs: both fit, both run, each on one type.
    pol = make_policy("shockwave")
    rows = [WorkloadJob("a", 0, "toy", 2, 8), WorkloadJob("b", 0, "toy", 2, 8)]
    jobs = _jobs(pol, toy, rows)
    out = pol.optimize(0, jobs, pol.cluster.nodes(), {})
    assert sorted(out) == ["a", "b"]
    assert sorted(len(set(v)) for v in out.values()) == [1, 1]
    assert sorted(v[0] for v in out.values()) == [0, 1]


def test_policy_alternates_jobs_that_do_not_fit_together(toy):  # noqa: F811
    # Two 4-GPU jobs... only 2 GPUs per type here: a job of 2 GPUs each, three of them on 4 GPUs.
    pol = ShockwavePolicy(window=3, k=0.0)
    rows = [WorkloadJob(n, 0, "toy", 2, 8) for n in "abc"]
    jobs = _jobs(pol, toy, rows)
    seen = []
    alloc: dict = {}
    for r in range(3):
        alloc = pol.optimize(60 * r, jobs, pol.cluster.nodes(), alloc)
        assert len(alloc) == 2  # two types of 2 GPUs: two jobs per round, never three
        seen += list(alloc)
    assert sorted(set(seen)) == ["a", "b", "c"]  # the market shares the window: every job runs
    assert pol.solves == 1  # same jobs all window: one solve


@pytest.mark.parametrize(
    "kwargs, field",
    [({"window": 0}, "window"), ({"k": -1.0}, "k"), ({"fair_share": "x"}, "fair_share"), ({"lam": "a"}, "lam")],
)
def test_bad_options_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        ShockwavePolicy(**kwargs)


def test_same_run_same_result(tmp_path):
    # HiGHS stops on a node limit, not on time: the plans do not depend on the machine's load.
    from fastsched.sim import simulate
    from tests.sim.two_types import write_two_type_traces

    write_two_type_traces(tmp_path)
    rows = [WorkloadJob(f"j{i}", 20 * i, "toy", 1 + i % 2, 8) for i in range(6)]
    runs = [simulate(rows, traces=tmp_path, policy="shockwave", cluster="1xslow:2,1xfast:2") for _ in range(2)]
    assert runs[0].summary()["avg_jct"] == runs[1].summary()["avg_jct"]
    assert (runs[0].allocations == runs[1].allocations).all()


@settings(max_examples=25, deadline=None)
@given(gpus=st.lists(st.integers(1, 4), min_size=1, max_size=5), window=st.integers(1, 3), data=st.data())
def test_screen_only_skips_programs_highs_finds_infeasible(gpus, window, data):
    from fastsched.sim.policies._market import _ftf_may_fit

    n = len(gpus)
    m = _market(gpus, data.draw(st.lists(st.floats(30.0, 600.0), min_size=n, max_size=n)))
    coef = np.asarray(data.draw(st.lists(st.floats(30.0, 3000.0), min_size=n, max_size=n)))
    slack = np.asarray(data.draw(st.lists(st.floats(-100.0, 3000.0), min_size=n, max_size=n)))
    if not _ftf_may_fit(m, 4, 60.0, window, coef, slack):
        # With the screen switched off, HiGHS finds no point either.
        import fastsched.sim.policies._market as market

        real = market._ftf_may_fit
        market._ftf_may_fit = lambda *a: True
        try:
            assert solve_market(m, 4, 60.0, window, ftf=(coef, slack)) is None
        finally:
            market._ftf_may_fit = real
