"""The relaxation seed (``fastsched.policy._ga.relax``) against plain references on random inputs."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy, exact_optimize
from fastsched.policy import _ga as G
from fastsched.policy._ga.local import ALL_TRANSFERS, LOCAL_TRANSFERS, NO_TRANSFERS
from fastsched.policy.problem import build_problem
from tests.policy import naive
from tests.policy.conftest import make_speedup_fn
from tests.policy.strategies import instances, sublinear

TAB = make_speedup_fn()
FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
# Fairness modes of the first objective: (p, power_shift) of the policy.
MODES = st.sampled_from([(None, False), (-1.0, False), (-1.0, True), (0.0, False), (0.5, False)])


def _relax(prob, policy, passes=0, transfers=NO_TRANSFERS):
    A = policy._arrays(prob)
    kind = np.empty(prob.num_jobs, dtype=np.int64)
    reps = np.empty(prob.num_jobs, dtype=np.int64)
    pop = G.new_pop(1, prob.num_jobs, prob.num_jobs + prob.num_nodes + prob.base_width + 1)
    bound = G.relax_row(A, prob.num_real, policy._scratch(prob), passes, transfers, kind, reps, pop, 0)
    return A, kind, reps, pop, bound


@FAST
@given(instances(tabulated_fn=TAB), MODES, st.floats(0.0, 0.5))
def test_relaxation_is_its_linear_program_and_choice_fits(inst, mode, penalty):
    """The kernel's bound is the optimum of the relaxation's LP (scipy, options written from the
    definition); its integer choice is an option of each job and fits every resource's free total."""
    jobs, nodes, base, template = inst
    policy = PolluxPolicy(seed=0, p=mode[0], power_shift=mode[1], restart_penalty=penalty)
    prob = build_problem(jobs, nodes, base, template)
    A, kind, reps, pop, bound = _relax(prob, policy)
    lp = naive.relaxation_lp(prob, prob.num_real, A.penalty, int(A.mode), float(A.p))
    assert abs(bound - lp) <= 1e-7 * max(1.0, abs(lp))
    options, _, _ = naive.relaxation_options(prob, prob.num_real, A.penalty, int(A.mode), float(A.p))
    used = np.zeros(prob.job_res.shape[1], dtype=np.int64)
    for j in range(prob.num_jobs):
        if prob.pinned[j]:
            continue
        assert (int(kind[j]), int(reps[j])) in {(k, r) for k, r, _ in options[j]}
        used += reps[j] * prob.job_res[j]
    dbase = naive.base_dense(prob)
    free = prob.node_res[: prob.num_real].sum(axis=0) - (dbase[prob.pinned].sum(axis=1) @ prob.job_res[prob.pinned])
    assert np.all(used <= free)


@FAST
@given(instances(tabulated_fn=TAB), MODES, st.sampled_from([NO_TRANSFERS, ALL_TRANSFERS, LOCAL_TRANSFERS]))
def test_packed_seed_is_feasible_and_scored(inst, mode, transfers):
    """The packed (and polished) seed lies within the real nodes, is feasible, and its score is the
    plain objective of its allocation; polishing never makes it worse."""
    jobs, nodes, base, template = inst
    policy = PolluxPolicy(seed=0, p=mode[0], power_shift=mode[1])
    prob = build_problem(jobs, nodes, base, template)
    A, _, _, packed, _ = _relax(prob, policy)
    _, _, _, pop, _ = _relax(prob, policy, passes=20, transfers=transfers)
    dbase = naive.base_dense(prob)
    for row in (packed, pop):
        state = naive.to_dense(row.off, row.node, row.cnt, 0, prob.num_nodes)
        np.testing.assert_array_equal(naive.repair(state, prob), state)
        assert not state[~prob.pinned, prob.num_real :].any()
        o, s = naive.objectives(state, prob.table, prob.scale, dbase, A.penalty, int(A.mode), float(A.p))
        assert abs(row.obj[0] - o) <= 1e-9 * max(1.0, abs(o))
        assert s == row.size[0]
    assert pop.obj[0] >= packed.obj[0] - 1e-9 * max(1.0, abs(packed.obj[0]))


@st.composite
def gpu_instances(draw):
    """One resource type (GPUs), nodes of 1-8 GPUs, some jobs already placed on one node."""
    nodes = {f"n{i}": NodeInfo({"gpu": draw(st.integers(1, 8))}, False) for i in range(draw(st.integers(1, 4)))}
    jobs, base, free = {}, {}, {k: n.resources["gpu"] for k, n in nodes.items()}
    for i in range(draw(st.integers(1, 6))):
        fn = TAB if draw(st.booleans()) else sublinear(draw(st.floats(0.3, 1.0)), draw(st.floats(0.5, 1.0)))
        mx = draw(st.integers(1, 8))
        jobs[f"j{i}"] = JobInfo({"gpu": 1}, fn, i, draw(st.integers(0, min(mx, 2))), mx)
        node = draw(st.sampled_from(sorted(nodes)))
        count = draw(st.integers(0, min(mx, free[node])))
        if count >= max(jobs[f"j{i}"].min_replicas, 1):
            base[f"j{i}"] = [node] * count
            free[node] -= count
    return jobs, nodes, base


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(gpu_instances(), st.floats(0.0, 0.5))
def test_bound_holds_against_the_milp_optimum(inst, penalty):
    """With one resource type the relaxation bounds the round: the MILP optimum on the real nodes
    (AdaptDL's sum) never exceeds it."""
    jobs, nodes, base = inst
    policy = PolluxPolicy(seed=0, restart_penalty=penalty)
    prob = build_problem(jobs, nodes, base, None)
    _, _, _, pop, bound = _relax(prob, policy, passes=20, transfers=ALL_TRANSFERS)
    _, optimum, status = exact_optimize(jobs, nodes, base, None, restart_penalty=penalty, time_limit=30)
    assert status == "optimal"
    assert optimum <= bound + 1e-7 * max(1.0, bound)
    assert pop.obj[0] <= optimum + 1e-7 * max(1.0, optimum)


@functools.cache
def _relax_searching_everything():
    """``relax_row`` whose transfer passes search every node for every job (no stamps) and whose
    local search scans every node for the jump (no room tally)."""
    import numba

    from fastsched._numba_private import copy_function
    from fastsched.policy._ga import local, relax
    from fastsched.policy._ga.livenodes import live_nodes

    @numba.njit
    def scanned(A, S, limit):
        live = live_nodes(A, S, limit)
        live.uniform[0] = False
        return live

    everywhere = numba.njit(lambda st, S, j, seen, occ_off, occ_job: np.int64(-1))
    settle = numba.njit(copy_function(local._settle.py_func, "settle_relax_plain", {"live_nodes": scanned}))
    polish = numba.njit(
        copy_function(
            relax._polish_to_target.py_func,
            "polish_to_target_plain",
            {"unchanged_since": everywhere, "_settle": settle},
        )
    )
    return numba.njit(copy_function(relax.relax_row.py_func, "relax_row_plain", {"_polish_to_target": polish}))


@FAST
@given(
    st.one_of(
        gpu_instances(),
        instances(max_jobs=12, max_nodes=8, tabulated_fn=TAB, gpu_only=True, max_rep=16),
    ),
    MODES,
    st.sampled_from([NO_TRANSFERS, ALL_TRANSFERS, LOCAL_TRANSFERS]),
)
def test_relax_seed_searching_changes_only_builds_the_same_row(inst, mode, transfers):
    """The seed's transfer passes search only what changed since a job's last fruitless search,
    and build the row a search of every node builds."""
    jobs, nodes, base = inst[:3]
    prob = build_problem(jobs, nodes, base, inst[3] if len(inst) > 3 else None)
    policy = PolluxPolicy(seed=0, p=mode[0], power_shift=mode[1])
    A, kind, reps, got, bound = _relax(prob, policy, passes=20, transfers=transfers)
    want = G.new_pop(1, prob.num_jobs, got.node.shape[1])
    kind2 = np.empty(prob.num_jobs, dtype=np.int64)
    reps2 = np.empty(prob.num_jobs, dtype=np.int64)
    bound2 = _relax_searching_everything()(
        A, prob.num_real, policy._scratch(prob), 20, transfers, kind2, reps2, want, 0
    )
    assert bound == bound2
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def _busy_problem(seed):
    """A larger GPU-only round shaped like a busy cluster's mid-size ones (fewer jobs than GPUs,
    about one or two a node, most already placed): the packing leaves jobs below the relaxation's
    choice, and the transfer passes run several times."""
    rng = np.random.default_rng(seed)
    names = [f"n{i:02d}" for i in range(int(rng.integers(10, 21)))]
    nodes = {k: NodeInfo({"gpu": int(rng.choice([4, 8]))}, False) for k in names}
    free = {k: n.resources["gpu"] for k, n in nodes.items()}
    jobs, base = {}, {}
    for i in range(int(rng.integers(len(names), 2 * len(names) + 1))):
        fn = sublinear(float(rng.uniform(0.6, 1.0)), float(rng.uniform(0.7, 1.0)))
        mx = int(rng.integers(1, 33))
        key = f"j{i:02d}"
        jobs[key] = JobInfo({"gpu": 1}, fn, i, 0, mx)
        room = [k for k in names if free[k] > 0]
        if room and rng.random() < 0.8:
            node = room[int(rng.integers(len(room)))]
            count = int(rng.integers(1, min(mx, free[node]) + 1))
            base[key] = [node] * count
            free[node] -= count
    return build_problem(jobs, nodes, base, None)


@pytest.mark.parametrize("seed", range(12))
def test_relax_seed_on_busy_rounds_builds_the_rows_of_a_full_search(seed):
    """As above on rounds large enough for several transfer passes (random small ones rarely get there)."""
    prob = _busy_problem(seed)
    for p in (None, -1.0):
        policy = PolluxPolicy(seed=0, p=p, restart_penalty=0.1)
        for transfers in (LOCAL_TRANSFERS, ALL_TRANSFERS):
            A, kind, reps, got, bound = _relax(prob, policy, passes=20, transfers=transfers)
            want = G.new_pop(1, prob.num_jobs, got.node.shape[1])
            kind2 = np.empty(prob.num_jobs, dtype=np.int64)
            reps2 = np.empty(prob.num_jobs, dtype=np.int64)
            run = _relax_searching_everything()
            bound2 = run(A, prob.num_real, policy._scratch(prob), 20, transfers, kind2, reps2, want, 0)
            assert bound == bound2
            for a, b in zip(got, want, strict=True):
                np.testing.assert_array_equal(a, b)
