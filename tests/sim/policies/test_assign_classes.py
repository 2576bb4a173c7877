"""Sia's integer program over classes of identical jobs, against the DP and HiGHS on the whole program."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.sim.policies import _assign, _assign_classes
from fastsched.sim.policies._assign import solve_assignment, solve_assignment_report
from fastsched.sim.policies._assign_classes import class_problem, job_classes, kept_counts, spread_counts

from ._assign_problems import assign_problem, check_feasible, check_limited_gap, check_optimal


@st.composite
def repeated(draw, max_kinds=5, max_copies=6):
    """Crowded rounds in which each kind of job appears several times, in shuffled job order.

    Costs on Sia's 0.01 grid, so identical jobs and ties abound; sometimes a forced candidate
    (a job mid-restart), which makes its copies identical only if they are forced too.
    """
    num_types = draw(st.integers(1, 3))
    capacity = np.array(draw(st.lists(st.integers(1, 10), min_size=num_types, max_size=num_types)))
    kinds = []
    for _ in range(draw(st.integers(1, max_kinds))):
        rows = []
        for _ in range(draw(st.integers(0, 4))):
            rows.append(
                (
                    draw(st.integers(0, num_types - 1)),
                    draw(st.sampled_from([1, 2, 3, 4, 8])),
                    round(draw(st.integers(0, 109)) / 100 - 1.1, 2),
                )
            )
        kinds.append((rows, draw(st.integers(1, max_copies))))
    jobs = [rows for rows, copies in kinds for _ in range(copies)]
    order = draw(st.permutations(range(len(jobs))))
    job, gtype, gpus, cost, forced = [], [], [], [], []
    for j, k in enumerate(order):
        for t, g, c in jobs[k]:
            job.append(j)
            gtype.append(t)
            gpus.append(g)
            cost.append(c)
            forced.append(False)
    if job and draw(st.booleans()):
        forced[draw(st.integers(0, len(job) - 1))] = True
    return assign_problem(job, gtype, gpus, cost, forced, capacity, len(jobs))


@settings(max_examples=80, deadline=None)
@given(repeated())
def test_the_class_program_finds_an_optimum(p):
    check_optimal(p, "classes")


@settings(max_examples=60, deadline=None)
@given(repeated())
def test_classes_hold_exactly_the_jobs_with_equal_candidate_lists(p):
    c = job_classes(p)
    rows = [
        [(p.gtype[k], p.gpus[k], p.cost[k], p.forced[k]) for k in np.flatnonzero(p.job == j)] for j in range(p.num_jobs)
    ]
    for a in range(p.num_jobs):
        for b in range(p.num_jobs):
            assert (c.of_job[a] == c.of_job[b]) == (rows[a] == rows[b])
    assert c.size.sum() == p.num_jobs
    assert np.array_equal(c.first, [np.flatnonzero(c.of_job == k)[0] for k in range(c.first.size)])


def test_a_cost_one_bit_apart_is_another_class():
    cost = -0.3
    p = assign_problem([0, 1], [0, 0], [1, 1], [cost, np.nextafter(cost, 0.0)], [False, False], np.array([1]), 2)
    assert job_classes(p).size.tolist() == [1, 1]


def _draw_counts(data, sub, size):
    """Any counts the class rows allow (capacity aside: spreading ignores it)."""
    counts = np.zeros(sub.cost.shape[0], dtype=np.int64)
    for k in range(sub.num_jobs):
        left = int(size[k])
        for i in np.flatnonzero(sub.job == k):
            counts[i] = data.draw(st.integers(0, left))
            left -= counts[i]
    return counts


def _draw_keep(data, p):
    """A mask of at most one candidate per job (a last round's choice)."""
    keep = np.zeros(p.cost.shape[0], dtype=bool)
    for j in range(p.num_jobs):
        mine = np.flatnonzero(p.job == j)
        if mine.size and data.draw(st.booleans()):
            keep[data.draw(st.sampled_from(mine.tolist()))] = True
    return keep


@settings(max_examples=60, deadline=None)
@given(repeated(), st.data())
def test_spread_gives_each_class_its_counts_in_job_order(p, data):
    c = job_classes(p)
    sub, size = class_problem(p, c)
    counts = _draw_counts(data, sub, size)
    x = spread_counts(p, c, counts)
    assert all(np.sum(x & (p.job == j)) <= 1 for j in range(p.num_jobs))
    for k in range(sub.num_jobs):
        members = np.flatnonzero(c.of_job == k)
        # Each member's position in its candidate list (its class's), len(list) when it gets none.
        pos = []
        for j in members:
            mine = np.flatnonzero(p.job == j)
            hit = np.flatnonzero(x[mine])
            pos.append(hit[0] if hit.size else mine.size)
        # Candidate i of the class goes to exactly counts[i] of its jobs ...
        for i, n in enumerate(counts[sub.job == k]):
            assert pos.count(i) == n
        # ... and jobs earlier in job order take candidates earlier in the list.
        assert pos == sorted(pos)


@settings(max_examples=60, deadline=None)
@given(repeated(), st.data())
def test_spread_hands_each_kept_candidate_to_jobs_that_held_it(p, data):
    c = job_classes(p)
    sub, size = class_problem(p, c)
    keep = _draw_keep(data, p)
    # Holders of each class-program candidate, counted here from the masks.
    held = np.zeros(sub.cost.shape[0], dtype=np.int64)
    for j in np.flatnonzero(np.bincount(p.job[keep], minlength=p.num_jobs)):
        mine = np.flatnonzero(p.job == j)
        held[np.flatnonzero(sub.job == c.of_job[j])[np.flatnonzero(keep[mine])[0]]] += 1
    assert np.array_equal(kept_counts(p, c, keep), held)
    counts = _draw_counts(data, sub, size)
    x = spread_counts(p, c, counts, keep)
    assert all(np.sum(x & (p.job == j)) <= 1 for j in range(p.num_jobs))
    got = np.bincount(p.job[x], minlength=p.num_jobs) > 0
    for k in range(sub.num_jobs):  # each class: as many jobs served as its counts say
        assert got[c.of_job == k].sum() == counts[sub.job == k].sum()
    # As many jobs keep their candidate as the counts allow: min(count, holders) per candidate.
    assert int((x & keep).sum()) == int(np.minimum(counts, held).sum())


def _swept(seed, kinds=40, copies=25):
    """A large round of ``kinds`` jobs, each submitted ``copies`` times (a sweep), 3x oversubscribed."""
    rng = np.random.default_rng(seed)
    job, gtype, gpus, cost = [], [], [], []
    j = 0
    for _ in range(kinds):
        row = [
            (t, g, round(-rng.uniform(0.05, 1.1) * (1 + 0.1 * np.log2(g)), 2)) for t in range(3) for g in (1, 2, 4, 8)
        ]
        for _ in range(copies):
            for t, g, v in row:
                job.append(j)
                gtype.append(t)
                gpus.append(g)
                cost.append(v)
            j += 1
    return assign_problem(job, gtype, gpus, cost, [False] * len(job), np.array([400, 400, 300]), j)


def test_auto_takes_the_class_program_on_a_sweep_and_it_is_optimal(monkeypatch):
    p = _swept(0)
    used = []
    real = _assign._solve_classes
    monkeypatch.setattr(_assign, "_solve_classes", lambda *a: used.append(1) or real(*a))
    x = solve_assignment(p)
    assert used == [1]
    check_feasible(p, x)
    assert p.cost[x].sum() == pytest.approx(p.cost[solve_assignment(p, "milp")].sum(), abs=1e-9)


def test_a_limited_class_program_is_feasible_and_its_gap_bounds_the_optimum(monkeypatch):
    p = _swept(1)
    check_limited_gap(p, "classes", monkeypatch)
    monkeypatch.setattr(_assign, "_milp_limited", lambda prob, t, size=None: (None, False, -np.inf))
    r = solve_assignment_report(p, "classes", time_limit=1.0)
    assert r.limited
    check_feasible(p, r.chosen)


def test_without_a_warm_start_identical_jobs_take_the_counts_in_job_order():
    # Three identical jobs and GPUs for two: the first two in job order.
    p = assign_problem([0, 1, 2], [0, 0, 0], [1, 1, 1], [-0.5, -0.5, -0.5], [False] * 3, np.array([2]), 3)
    assert solve_assignment_report(p, "classes", time_limit=10.0).chosen.tolist() == [True, True, False]


def test_with_a_warm_start_the_jobs_that_held_gpus_keep_them():
    p = assign_problem([0, 1, 2], [0, 0, 0], [1, 1, 1], [-0.5, -0.5, -0.5], [False] * 3, np.array([2]), 3)
    warm = np.array([False, True, True])
    for w in (warm, lambda: warm.copy()):
        r = solve_assignment_report(p, "classes", time_limit=10.0, warm=w)
        assert r.chosen.tolist() == [False, True, True] and not r.limited


def _kept_by_whole_program(p, warm):
    """Most warm candidates an optimum keeps: HiGHS on the whole 0/1 program, lexicographically.

    An independent formulation (no classes): the optimum's value first, then, with the value
    held, the most warm candidates chosen.
    """
    from scipy.optimize import LinearConstraint, milp

    from fastsched.sim.policies._assign_reduce import constraint_bounds, constraint_matrix

    best = float(p.cost[solve_assignment(p, "milp")].sum())
    k = p.cost.shape[0]
    a = np.vstack([constraint_matrix(p).toarray(), p.cost])
    res = milp(
        -warm.astype(np.float64),
        integrality=np.ones(k),
        bounds=(p.forced.astype(np.float64), np.ones(k)),
        constraints=[LinearConstraint(a, -np.inf, np.concatenate([constraint_bounds(p), [best + 0.005]]))],
    )
    return int(round(-res.fun))


def _optimum_and_warm(p, data):
    """``(the DP's optimum, a drawn warm start)`` of a program, or ``None`` when it has no candidate or no solution."""
    if p.cost.size == 0:
        return None
    try:
        ref = solve_assignment(p, "dp")
    except RuntimeError:
        return None
    return ref, _draw_keep(data, p)


@pytest.mark.parametrize("method", ["classes", "dp", "reduced", "milp"])
@settings(max_examples=60, deadline=None)
@given(p=repeated(), data=st.data())
def test_with_a_warm_start_an_optimum_keeps_the_most_warm_candidates(method, p, data):
    # Every method breaks ties the same way: the DP by lexicographic costs, the HiGHS methods
    # by a tie-break solve among the optimum's candidates.
    drawn = _optimum_and_warm(p, data)
    if drawn is None:
        return
    ref, warm = drawn
    r = solve_assignment_report(p, method, warm=warm)
    check_feasible(p, r.chosen)
    assert not r.limited
    assert p.cost[r.chosen].sum() == pytest.approx(p.cost[ref].sum(), abs=1e-9)  # still an optimum
    assert int((r.chosen & warm).sum()) == _kept_by_whole_program(p, warm)


@pytest.mark.parametrize("method", ["classes", "dp", "reduced", "milp"])
def test_the_tie_break_never_outweighs_a_cent(method):
    # Two warm jobs worth -0.50 each against one cold job worth -1.01 on the same 2 GPUs: the
    # cold job is the only optimum. A preference worth half a cent per warm job or more would
    # take the two warm ones (-1.0 less the preference).
    p = assign_problem([0, 1, 2], [0, 0, 0], [1, 1, 2], [-0.50, -0.50, -1.01], [False] * 3, np.array([2]), 3)
    warm = np.array([True, True, False])
    assert solve_assignment_report(p, method, warm=warm).chosen.tolist() == [False, False, True]


@settings(max_examples=30, deadline=None)
@given(p=repeated(), data=st.data())
def test_off_the_grid_a_warm_start_leaves_the_dp_choice_alone(p, data):
    # Ties are broken by a quarter grid step only where costs lie on a grid: off it, the
    # preference could outweigh a real difference, so the plain program is solved.
    p = p._replace(cost=p.cost - 0.001 * (np.arange(p.cost.size) % 3))
    try:
        plain = solve_assignment(p, "dp")
    except RuntimeError:
        return
    warm = _draw_keep(data, p)
    assert solve_assignment_report(p, "dp", warm=warm).chosen.tolist() == plain.tolist()


def test_an_unknown_method_is_refused():
    p = _swept(0, kinds=1, copies=2)
    with pytest.raises(ValueError, match="classes"):
        solve_assignment(p, "simplex")


def test_a_tie_break_not_proved_in_its_node_cap_falls_back_on_the_plain_class_program(monkeypatch):
    p = _swept(2, kinds=10, copies=6)
    warm = solve_assignment(p, "milp")
    opt = float(p.cost[warm].sum())
    monkeypatch.setattr(_assign, "solve_keeping", lambda *a: None)
    r = solve_assignment_report(p, "classes", warm=warm)
    check_feasible(p, r.chosen)
    assert not r.limited and float(p.cost[r.chosen].sum()) == pytest.approx(opt, abs=1e-9)
    # With the real tie-break: the same value, and no fewer jobs kept.
    monkeypatch.undo()
    kept = solve_assignment_report(p, "classes", warm=warm).chosen
    assert float(p.cost[kept].sum()) == pytest.approx(opt, abs=1e-9)
    assert (kept & warm).sum() >= (r.chosen & warm).sum()


@pytest.mark.parametrize("method", ["reduced", "milp"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(p=repeated(max_kinds=6, max_copies=8), data=st.data())
def test_a_tie_break_stopped_by_its_node_cap_keeps_an_optimum_and_no_fewer_jobs(method, p, data, monkeypatch):
    # With the cap at one node the tie-break solve often stops early: its best choice is taken
    # only at the optimum's value and when it keeps more, so the answer is an optimum keeping at
    # least as many warm candidates as the optimum found before the tie-break.
    drawn = _optimum_and_warm(p, data)
    if drawn is None:
        return
    ref, warm = drawn
    with monkeypatch.context() as m:
        m.setattr(_assign, "solve_keeping", lambda *a, **k: None)
        before = solve_assignment_report(p, method, warm=warm).chosen
    with monkeypatch.context() as m:
        m.setattr(_assign_classes, "KEEP_NODES", 1)
        r = solve_assignment_report(p, method, warm=warm)
    check_feasible(p, r.chosen)
    assert not r.limited
    assert p.cost[r.chosen].sum() == pytest.approx(p.cost[ref].sum(), abs=1e-9)
    assert (r.chosen & warm).sum() >= (before & warm).sum()
