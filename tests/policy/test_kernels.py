"""Kernels against the plain references in tests/policy/naive.py on random inputs."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched._jit import parallel_region
from fastsched.policy import PolluxPolicy
from fastsched.policy import _ga as G
from fastsched.policy._ga.population import base_row
from fastsched.policy.problem import build_problem
from tests.policy import naive
from tests.policy.conftest import make_speedup_fn
from tests.policy.strategies import instances

TAB = make_speedup_fn()
FAST = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))

#: Random problems, and GPU-only ones whose nodes fill up (full nodes to skip).
FILLING = st.one_of(instances(tabulated_fn=TAB), instances(max_jobs=12, tabulated_fn=TAB, gpu_only=True))

points = st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 5)), min_size=1, max_size=40)


@FAST
@given(points)
def test_nondominated_rank(pts):
    f1 = np.array([p[0] for p in pts], dtype=float)
    f2 = np.array([p[1] for p in pts], dtype=float)
    np.testing.assert_array_equal(G.nondominated_rank(f1, f2), naive.nondominated_rank(f1, f2))


_floats = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]), st.floats(-3, 3))


@functools.cache
def _sort_and_tournament():
    import numba

    from fastsched.policy._ga.seeding import _retally, _tournament
    from fastsched.policy._ga.select import _argsort

    @numba.njit
    def both(a, at, to):
        # The tree's winner after it is built, then after each update a[at[i]] = to[i].
        winners = np.empty(at.shape[0] + 1, dtype=np.int64)
        tree = _tournament(a)
        winners[0] = tree[1]
        for i in range(at.shape[0]):
            a[at[i]] = to[i]
            _retally(tree, a, at[i])
            winners[i + 1] = tree[1]
        return _argsort(a), winners

    return both


@FAST
@given(st.lists(_floats, min_size=1, max_size=80), st.lists(st.tuples(st.integers(0, 79), _floats), max_size=30))
def test_own_sort_and_argmax_match_numpy(values, updates):
    """The package's stable argsort, and the greedy fill's tournament tree against ``np.argmax`` after each update."""
    a = np.array(values, dtype=np.float64)
    at = np.array([i % a.size for i, _ in updates], dtype=np.int64)
    to = np.array([v for _, v in updates], dtype=np.float64)
    order, winners = _sort_and_tournament()(a.copy(), at, to)
    want = [np.argmax(a)]
    for i, v in zip(at, to, strict=True):
        a[i] = v
        want.append(np.argmax(a))
    np.testing.assert_array_equal(order, np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(winners, want)


@FAST
@given(points)
def test_crowding_distance(pts):
    f1 = np.array([p[0] for p in pts], dtype=float)
    f2 = np.array([p[1] for p in pts], dtype=float)
    rank = naive.nondominated_rank(f1, f2)
    got = G.crowding_distance(f1, f2, rank.astype(np.int64))
    want = naive.crowding_distance(f1, f2, rank)
    # Ties within a front may be ordered differently; compare where the order is unique.
    for r in np.unique(rank):
        idx = np.flatnonzero(rank == r)
        if len(set(f1[idx])) == len(idx) and len(set(f2[idx])) == len(idx):
            np.testing.assert_allclose(got[idx], want[idx])
    assert np.isinf(got).sum() >= min(len(pts), 2 * (rank.max() + 1)) - len(pts) + 1


def _population(inst, seed):
    jobs, nodes, base, template = inst
    policy = PolluxPolicy(seed=seed, pop_size=12, generations=3)
    prob = build_problem(jobs, nodes, base, template)
    pop, rank, util = policy._search(prob)
    return policy, prob, pop, rank, util


@FAST
@given(instances(tabulated_fn=TAB), st.integers(0, 1000))
def test_fitness_and_utilities(inst, seed):
    policy, prob, pop, rank_round, util_round = _population(inst, seed)
    base = naive.base_dense(prob)
    rows_n = pop.off.shape[0]
    obj = np.zeros(rows_n)
    size = np.zeros(rows_n, dtype=np.int64)
    A = policy._arrays(prob)
    with parallel_region():
        G.evaluate_population(
            pop.off,
            pop.node,
            pop.cnt,
            prob.table,
            prob.scale,
            prob.base_off,
            prob.base_node,
            prob.base_cnt,
            A.penalty,
            A.mode,
            A.p,
            obj,
            size,
        )
    rows = np.arange(rows_n, dtype=np.int64)
    util = G.cluster_utilities(pop.off, pop.node, pop.cnt, rows, prob.table, prob.job_res, prob.node_res)
    for i in range(rows_n):
        state = naive.to_dense(pop.off, pop.node, pop.cnt, i, prob.num_nodes)
        o, s = naive.objectives(state, prob.table, prob.scale, base, 0.1)
        assert abs(obj[i] - o) <= 1e-9 * max(1.0, abs(o))
        assert abs(pop.obj[i] - o) <= 1e-9 * max(1.0, abs(o))
        assert size[i] == s == pop.size[i]
        u = naive.cluster_utility(state, prob.table, prob.job_res, prob.node_res)
        assert abs(util[i] - u) <= 1e-9 * max(1.0, u)
        # Every row is feasible: repairing it again changes nothing.
        np.testing.assert_array_equal(naive.repair(state, prob), state)
    # The serial round's kernel ranks its final population and scores the front itself.
    assert rank_round is not None and util_round is not None
    np.testing.assert_array_equal(rank_round, naive.nondominated_rank(-pop.obj, pop.size.astype(np.float64)))
    front = np.flatnonzero(rank_round == 0)
    np.testing.assert_allclose(util_round, util[front], rtol=1e-12)


@FAST
@given(instances(tabulated_fn=TAB), st.integers(0, 2**32 - 1), st.data())
def test_repair(inst, seed, data):
    jobs, nodes, base, template = inst
    policy = PolluxPolicy(seed=1)
    prob = build_problem(jobs, nodes, base, template)
    J, N2 = prob.num_jobs, prob.num_nodes
    rng = np.random.default_rng(seed)
    rows = 6
    dense = rng.integers(0, 4, size=(rows, J, N2)) * (rng.random((rows, J, N2)) < 0.4)
    width = int((dense > 0).sum(axis=(1, 2)).max()) + 1
    off = np.zeros((rows, J + 1), dtype=np.int64)
    node = np.zeros((rows, width), dtype=np.int32)
    cnt = np.zeros((rows, width), dtype=np.int32)
    for i in range(rows):
        pos = 0
        for j in range(J):
            off[i, j] = pos
            for n in np.flatnonzero(dense[i, j]):
                node[i, pos] = n
                cnt[i, pos] = dense[i, j, n]
                pos += 1
        off[i, J] = pos
    out_w = J + N2 + prob.base_width + 1
    out = G.new_pop(rows, J, out_w)
    src = G.Pop(off, node, cnt, np.zeros(rows), np.zeros(rows), np.zeros(rows, np.int64), np.zeros(rows, np.uint64))
    scratch = policy._scratch(prob) + int(dense.astype(bool).sum(axis=2).max())
    with parallel_region():
        G.repair_parallel(
            np.uint64(1), src, np.arange(rows, dtype=np.int64), 0.0, policy._arrays(prob), scratch, out, 0
        )
    for i in range(rows):
        got = naive.to_dense(out.off, out.node, out.cnt, i, N2)
        np.testing.assert_array_equal(got, naive.repair(dense[i], prob))


@FAST
@given(instances(tabulated_fn=TAB), st.integers(0, 1000))
def test_offspring_feasible_and_deterministic(inst, seed):
    policy, prob, pop, _, _ = _population(inst, seed)
    A = policy._arrays(prob)
    scratch = policy._scratch(prob)
    rows_n = pop.off.shape[0]
    parents = np.random.default_rng(seed).integers(0, rows_n, size=(8, 2))
    outs = []
    # The parallel and the serial kernel (one source) give the same children.
    for kernel in (G.offspring_parallel, G.offspring_serial):
        out = G.new_pop(8, prob.num_jobs, pop.node.shape[1])
        work = G.new_work(G.CHUNKS, scratch, prob.num_nodes, prob.job_res.shape[1])
        with parallel_region():
            kernel(np.uint64(seed), pop, parents, 0.5, A, out, 0, work)
        outs.append(out)
    base = naive.base_dense(prob)
    for i in range(8):
        state = naive.to_dense(outs[0].off, outs[0].node, outs[0].cnt, i, prob.num_nodes)
        np.testing.assert_array_equal(naive.repair(state, prob), state)
        o, s = naive.objectives(state, prob.table, prob.scale, base, 0.1)
        assert abs(outs[0].obj[i] - o) <= 1e-9 * max(1.0, o) and outs[0].size[i] == s
    np.testing.assert_array_equal(outs[0].off, outs[1].off)
    np.testing.assert_array_equal(outs[0].hash, outs[1].hash)
    # Delta-updated hash and objective equal those of a fresh rebuild of the same rows.
    fresh = G.new_pop(8, prob.num_jobs, pop.node.shape[1])
    with parallel_region():
        G.repair_serial(np.uint64(0), outs[0], np.arange(8, dtype=np.int64), 0.0, A, scratch, fresh, 0)
    np.testing.assert_array_equal(fresh.hash, outs[0].hash)
    np.testing.assert_allclose(fresh.obj, outs[0].obj, rtol=1e-9, atol=1e-12)


@FAST
@given(instances(tabulated_fn=TAB), st.integers(0, 1000), st.sampled_from([0, 1, 2]))
def test_polish_feasible_scored_and_not_worse(inst, seed, transfers):
    """The local search returns a feasible row, scored exactly, no worse than its start,
    within its size limit; no single-job move of the plain reference improves it."""
    policy, prob, pop, _, _ = _population(inst, seed)
    A = policy._arrays(prob)
    scratch = policy._scratch(prob)
    base = naive.base_dense(prob)
    out = G.new_pop(pop.off.shape[0], prob.num_jobs, pop.node.shape[1])
    limit = prob.num_real
    for i in range(pop.off.shape[0]):
        if pop.size[i] > limit:
            continue
        G.polish_row(pop, i, A, limit, scratch, 50, transfers, 8 if transfers else 0, np.uint64(seed), out, i)
        state = naive.to_dense(out.off, out.node, out.cnt, i, prob.num_nodes)
        np.testing.assert_array_equal(naive.repair(state, prob), state)
        o, s = naive.objectives(state, prob.table, prob.scale, base, 0.1)
        assert abs(out.obj[i] - o) <= 1e-9 * max(1.0, o)
        assert s == out.size[i] <= limit
        assert o >= pop.obj[i] - 1e-9 * max(1.0, o)


def _first_fit_then_greedy(inst, limit, rows):
    """A population of ``rows`` rows: row 0 the first fit at ``limit``, row 1 its greedy fill.

    Returns ``(problem, arrays, scratch width, limit clipped to the nodes, population)``.
    """
    jobs, nodes, base, template = inst
    policy = PolluxPolicy(seed=0)
    prob = build_problem(jobs, nodes, base, template)
    A = policy._arrays(prob)
    scratch = policy._scratch(prob)
    limit = min(limit, prob.num_nodes)
    width = prob.num_jobs + prob.num_nodes + prob.base_width + 1
    pop = G.new_pop(rows, prob.num_jobs, width)
    G.first_fit_rows(A, np.array([limit], dtype=np.int64), pop, np.zeros(1, dtype=np.int64))
    G.greedy_fill(pop, 0, limit, A, scratch, pop, 1)
    return prob, A, scratch, limit, pop


@FAST
@given(instances(tabulated_fn=TAB), st.integers(1, 8))
def test_seed_fills_feasible(inst, limit):
    prob, A, scratch, limit, pop = _first_fit_then_greedy(inst, limit, 2)
    dbase = naive.base_dense(prob)
    for i in range(2):
        state = naive.to_dense(pop.off, pop.node, pop.cnt, i, prob.num_nodes)
        np.testing.assert_array_equal(naive.repair(state, prob), state)
        unpinned = ~prob.pinned
        assert not state[unpinned, limit:].any()
    o, _ = naive.objectives(
        naive.to_dense(pop.off, pop.node, pop.cnt, 1, prob.num_nodes), prob.table, prob.scale, dbase, 0.1
    )
    assert abs(pop.obj[1] - o) <= 1e-9 * max(1.0, o)


@FAST
@given(instances(tabulated_fn=TAB), st.lists(st.integers(1, 8), min_size=1, max_size=4, unique=True))
def test_first_fit_rows_one_pass_equals_each_limit(inst, limits):
    # One pass at the largest limit must give, for every limit, the first fit run at that limit alone.
    jobs, nodes, base, template = inst
    prob = build_problem(jobs, nodes, base, template)
    A = PolluxPolicy(seed=0)._arrays(prob)
    limits = sorted({min(L, prob.num_nodes) for L in limits}, reverse=True)
    width = prob.num_jobs + prob.num_nodes + prob.base_width + 1
    together = G.new_pop(len(limits), prob.num_jobs, width)
    G.first_fit_rows(A, np.array(limits, dtype=np.int64), together, np.arange(len(limits), dtype=np.int64))
    alone = G.new_pop(1, prob.num_jobs, width)
    for i, L in enumerate(limits):
        G.first_fit_rows(A, np.array([L], dtype=np.int64), alone, np.zeros(1, dtype=np.int64))
        np.testing.assert_array_equal(together.off[i], alone.off[0])
        n = alone.off[0, -1]
        np.testing.assert_array_equal(together.node[i, :n], alone.node[0, :n])
        np.testing.assert_array_equal(together.cnt[i, :n], alone.cnt[0, :n])


def test_tournament_prefers_rank_then_crowding():
    rank = np.array([0, 1, 0, 2], dtype=np.int64)
    crowd = np.array([1.0, 5.0, np.inf, 0.0])
    parents = G.tournament(rank, crowd, np.uint64(3), 2000)
    counts = np.bincount(parents.ravel(), minlength=4)
    assert counts[2] > counts[0] > counts[1] > counts[3]


def test_random_streams_uniform():
    st_ = np.zeros(2, dtype=np.uint64)
    keys = [G.stream_key(np.uint64(1), 2, g, c) for g in range(3) for c in range(3)]
    assert len(set(keys)) == 9
    parents = G.tournament(np.zeros(10, np.int64), np.zeros(10), np.uint64(7), 5000)
    counts = np.bincount(parents.ravel(), minlength=10)
    assert counts.min() > 700 and counts.max() < 1300
    del st_


def test_one_specialisation_whether_penalties_are_scalar_or_per_job():
    """A scalar restart penalty and per-job penalties reach the kernels as the same array type."""
    from fastsched.policy import JobInfo, NodeInfo

    fn = make_speedup_fn()
    nodes = {i: NodeInfo({"nvidia.com/gpu": 4}, preemptible=False) for i in range(2)}
    template = NodeInfo({"nvidia.com/gpu": 4}, preemptible=True)
    for penalty in (None, 0.2):
        jobs = {
            j: JobInfo(
                {"nvidia.com/gpu": 1}, fn, creation_timestamp=j, min_replicas=0, max_replicas=4, restart_penalty=penalty
            )
            for j in range(3)
        }
        PolluxPolicy(seed=0, generations=3).optimize(jobs, nodes, {}, template)
    # A small serial round runs in one kernel (search_serial), which holds the generation loop.
    assert len(G.search_serial.signatures) == 1, G.search_serial.signatures


def test_every_ga_kernel_compiles_once_per_round_and_helpers_refuse_python_calls():
    """A round adds at most one specialisation to any kernel or link-only helper of the GA package.

    Other tests may already have compiled public kernels (``evaluate_population``) for other
    argument types, so the round's own additions are counted, not the totals.
    """
    import gc
    import importlib

    from numba import types
    from numba.core.registry import CPUDispatcher

    from fastsched.policy import JobInfo, NodeInfo

    ga = importlib.import_module("fastsched.policy._ga")

    def ga_kernels():
        return [
            d
            for d in gc.get_objects()
            # type(), not isinstance(): gc also lists weak proxies to dead objects, and
            # isinstance() on those raises ReferenceError.
            if issubclass(type(d), CPUDispatcher) and d.py_func.__module__.startswith(ga.__name__ + ".")
        ]

    before = {id(d): set(d.signatures) for d in ga_kernels()}
    fn = make_speedup_fn()
    nodes = {i: NodeInfo({"nvidia.com/gpu": 4}, preemptible=False) for i in range(3)}
    jobs = {
        j: JobInfo({"nvidia.com/gpu": 1}, fn, creation_timestamp=j, min_replicas=0, max_replicas=8) for j in range(5)
    }
    PolluxPolicy(seed=0).optimize(jobs, nodes, {}, NodeInfo({"nvidia.com/gpu": 4}, preemptible=True))
    kernels = ga_kernels()
    assert len(kernels) > 20
    added = {d.py_func.__qualname__: set(d.signatures) - before.get(id(d), set()) for d in kernels}
    multi = {name: sigs for name, sigs in added.items() if len(sigs) > 1}
    assert not multi, multi
    # The threaded fitness path: prange compiles its body with uint64 and int64 indices; the
    # row helper must still see an int64 row index only.
    off, node, cnt = np.array([[0, 1, 2]]), np.array([[0, 1]], np.int32), np.array([[2, 1]], np.int32)
    empty = np.zeros(0, np.int32)
    args = (np.ones((2, 3, 3)), np.ones(2), np.zeros(3, np.int64), empty, empty, 0.1, 0, 1.0)
    ga.evaluate_population(off, node, cnt, *args, np.zeros(1), np.zeros(1, np.int64))
    from fastsched.policy._ga.fitness import row_objectives

    # (Empty when every caller came from numba's on-disk cache: helpers then compile nowhere.)
    assert {sig[3] for sig in row_objectives.signatures} <= {types.int64}
    # A link-only helper has no machine code of its own: a Python call is refused, not a crash
    # (with the plain-jit fallback, FASTSCHED_LINK_ONLY=0, helpers are ordinary kernels).
    from fastsched.policy._ga.linkonly import LINK_ONLY
    from fastsched.policy._ga.variation import node_capacity

    if not LINK_ONLY:
        return
    with pytest.raises(TypeError, match="only other kernels"):
        node_capacity(np.ones((1, 1), np.int64), np.ones((1, 1), np.int64), np.zeros((1, 1), np.int64), 0, 0, 1)


@pytest.mark.parametrize("penalty, expected", [(0.4, 16), (0.6, 8)])
def test_polish_jumps_over_several_free_nodes(penalty, expected):
    """A job on 2 of 8 four-GPU nodes with linear speedup and restart penalty 0.4: one node more
    (12 replicas, 7.2 after the penalty) loses against staying (8), two more (16 replicas, 9.6)
    win. The local search must make the two-node jump in one move; at penalty 0.6 no jump pays."""
    from fastsched.policy import JobInfo, NodeInfo

    def linear(nodes, replicas):
        return np.asarray(replicas, dtype=np.float64)

    jobs = {"a": JobInfo({"nvidia.com/gpu": 1}, linear, 0, 0, 16, restart_penalty=penalty)}
    nodes = {i: NodeInfo({"nvidia.com/gpu": 4}, preemptible=False) for i in range(8)}
    prob = build_problem(jobs, nodes, {"a": [0] * 4 + [1] * 4}, None)
    policy = PolluxPolicy(seed=0)
    A = policy._arrays(prob)
    scratch = policy._scratch(prob)
    width = prob.num_jobs + prob.num_nodes + prob.base_width + 1
    base = base_row(prob, width)
    out = G.new_pop(1, prob.num_jobs, width)
    G.polish_row(base, 0, A, prob.num_real, scratch, 50, False, 0, np.uint64(0), out, 0)
    state = naive.to_dense(out.off, out.node, out.cnt, 0, prob.num_nodes)
    assert state[0].sum() == expected
    assert (state[0][state[0] > 0] == 4).all()  # whole free nodes, packed
    o, _ = naive.objectives(state, prob.table, prob.scale, naive.base_dense(prob), penalty)
    assert abs(out.obj[0] - o) <= 1e-9 * max(1.0, o)


@functools.cache
def _fill_without_skipping():
    """``greedy_fill`` whose node scans visit every node (no job counted as needing resources).

    The definition the kernel's scans keep: the first node in node order that fits. The
    kernel skips nodes with no resource left; this copy of the same source does not.
    """
    import numba

    from fastsched._numba_private import copy_function
    from fastsched.policy._ga import seeding

    never = numba.njit(lambda A, j: False)
    candidate = numba.njit(copy_function(seeding._candidate.py_func, "candidate_plain", {"needs": never}))
    return numba.njit(copy_function(seeding.greedy_fill.py_func, "greedy_fill_plain", {"_candidate": candidate}))


@functools.cache
def _first_fit_without_skipping():
    """``first_fit_rows`` whose node scans visit every node (as :func:`_fill_without_skipping`)."""
    import numba

    from fastsched._numba_private import copy_function
    from fastsched.policy._ga import seeding

    never = numba.njit(lambda A, j: False)
    return numba.njit(copy_function(seeding.first_fit_rows.py_func, "first_fit_plain", {"needs": never}))


@FAST
@given(
    FILLING,
    st.integers(1, 8),
)
def test_first_fit_skipping_exhausted_nodes_places_as_a_full_scan(inst, limit):
    prob, A, scratch, limit, pop = _first_fit_then_greedy(inst, limit, 3)
    limits = np.array([limit, max(limit // 2, 1)], dtype=np.int64)
    G.first_fit_rows(A, limits, pop, np.array([0, 1], dtype=np.int64))
    _first_fit_without_skipping()(A, limits, pop, np.array([2, 1], dtype=np.int64))
    np.testing.assert_array_equal(
        naive.to_dense(pop.off, pop.node, pop.cnt, 0, prob.num_nodes),
        naive.to_dense(pop.off, pop.node, pop.cnt, 2, prob.num_nodes),
    )


@FAST
@given(
    FILLING,
    st.integers(1, 8),
)
def test_greedy_fill_skipping_exhausted_nodes_fills_as_a_full_scan(inst, limit):
    prob, A, scratch, limit, pop = _first_fit_then_greedy(inst, limit, 3)
    _fill_without_skipping()(pop, 0, limit, A, scratch, pop, 2)
    assert pop.obj[1] == pop.obj[2]
    np.testing.assert_array_equal(
        naive.to_dense(pop.off, pop.node, pop.cnt, 1, prob.num_nodes),
        naive.to_dense(pop.off, pop.node, pop.cnt, 2, prob.num_nodes),
    )


@functools.cache
def _polish_without_skipping():
    """``polish_row`` whose node scans visit every node (no job counted as needing resources).

    The same source as the kernel, whose scans skip the nodes with no resource left and whose
    jump reads the free nodes' rooms from a tally (both kept in a
    :class:`~fastsched.policy._ga.livenodes.Live` through every edit); this copy's scan every node.
    """
    import numba

    from fastsched._numba_private import copy_function
    from fastsched.policy._ga import local
    from fastsched.policy._ga.livenodes import live_nodes

    @numba.njit
    def scanned(A, S, limit):  # no tally of the free nodes' rooms: the jump scans every node
        live = live_nodes(A, S, limit)
        live.uniform[0] = False
        return live

    never = numba.njit(lambda A, j: False)
    move = numba.njit(copy_function(local._best_move.py_func, "best_move_plain", {"needs": never}))
    plain = {"_best_move": move, "live_nodes": scanned}
    settle = numba.njit(copy_function(local._settle.py_func, "settle_plain", plain))
    kick = numba.njit(copy_function(local._kick.py_func, "kick_plain", plain))
    return numba.njit(copy_function(local.polish_row.py_func, "polish_plain", {"_settle": settle, "_kick": kick}))


@FAST
@given(
    FILLING,
    st.integers(0, 1000),
    st.sampled_from([0, 1, 2]),
    st.integers(1, 8),
)
def test_polish_skipping_full_nodes_moves_as_a_full_scan(inst, seed, transfers, limit):
    """The local search's scans skip full nodes (and tally free rooms) and find the same moves, kicks and transfers included."""
    policy, prob, pop, _, _ = _population(inst, seed)
    A = policy._arrays(prob)
    scratch = policy._scratch(prob)
    limit = min(limit, prob.num_nodes)
    rows = pop.off.shape[0]
    got = G.new_pop(rows, prob.num_jobs, pop.node.shape[1])
    want = G.new_pop(rows, prob.num_jobs, pop.node.shape[1])
    kicks = 8 if transfers else 0
    for i in range(rows):
        m1 = G.polish_row(pop, i, A, limit, scratch, 50, transfers, kicks, np.uint64(seed), got, i)
        m2 = _polish_without_skipping()(pop, i, A, limit, scratch, 50, transfers, kicks, np.uint64(seed), want, i)
        assert m1 == m2
    np.testing.assert_array_equal(got.off, want.off)
    np.testing.assert_array_equal(got.hash, want.hash)
    np.testing.assert_array_equal(got.obj, want.obj)
    for i in range(rows):
        np.testing.assert_array_equal(
            naive.to_dense(got.off, got.node, got.cnt, i, prob.num_nodes),
            naive.to_dense(want.off, want.node, want.cnt, i, prob.num_nodes),
        )


@functools.cache
def _polish_without_memo():
    """``polish_row`` whose transfer search computes every term afresh (no :class:`~fastsched.policy._ga.transfers.Terms`)."""
    import numba

    from fastsched._numba_private import copy_function
    from fastsched.policy._ga import local, transfers
    from fastsched.policy._ga.fitness import fair_term

    term_after = transfers._term_after
    given = numba.njit(lambda T, S, A, b, take, kb1: term_after(S, A, b, kb1, S.reps[b] - take))
    current = numba.njit(lambda T, S, A, b: fair_term(S.val[b], A.mode, A.p))
    at = numba.njit(
        copy_function(
            transfers._transfer_at.py_func, "transfer_at_plain", {"_given_term": given, "_current_term": current}
        )
    )
    best = numba.njit(copy_function(transfers._best_transfer.py_func, "best_transfer_plain", {"_transfer_at": at}))
    tpass = numba.njit(copy_function(transfers._transfer_pass.py_func, "transfer_pass_plain", {"_best_transfer": best}))
    settle = numba.njit(copy_function(local._settle.py_func, "settle_memo_plain", {"_transfer_pass": tpass}))
    return numba.njit(copy_function(local.polish_row.py_func, "polish_memo_plain", {"_settle": settle}))


@FAST
@given(
    FILLING,
    st.integers(0, 1000),
    st.sampled_from([1, 2]),
)
def test_transfer_terms_memo_moves_as_computing_each_term(inst, seed, transfers):
    """The transfer search's memoised terms give the moves of computing every term afresh."""
    policy, prob, pop, _, _ = _population(inst, seed)
    A = policy._arrays(prob)
    scratch = policy._scratch(prob)
    rows = pop.off.shape[0]
    got = G.new_pop(rows, prob.num_jobs, pop.node.shape[1])
    want = G.new_pop(rows, prob.num_jobs, pop.node.shape[1])
    for i in range(rows):
        m1 = G.polish_row(pop, i, A, prob.num_nodes, scratch, 50, transfers, 8, np.uint64(seed), got, i)
        m2 = _polish_without_memo()(pop, i, A, prob.num_nodes, scratch, 50, transfers, 8, np.uint64(seed), want, i)
        assert m1 == m2
    np.testing.assert_array_equal(got.off, want.off)
    np.testing.assert_array_equal(got.hash, want.hash)
    np.testing.assert_array_equal(got.obj, want.obj)


@functools.cache
def _moves_kept_and_fresh():
    """Each job's best move (taken out of the row in turn) with the kept ``Live`` view, and with a fresh scanning one."""
    import numba

    from fastsched.policy._ga.livenodes import live_nodes, mark_job
    from fastsched.policy._ga.local import _best_move, best_single_counts
    from fastsched.policy._ga.rowstate import add_job, remove_job, unpack_row

    @numba.njit
    def both(src, row, A, limit, width):
        S = unpack_row(src, row, A, width)
        best1 = best_single_counts(A)
        hist = np.empty(A.table.shape[2] + 1, dtype=np.int64)
        njobs = A.job_res.shape[0]
        kept = np.zeros((njobs, 2 * width + 1), dtype=np.int64)
        fresh = np.zeros((njobs, 2 * width + 1), dtype=np.int64)
        tn = np.empty(width, dtype=np.int32)
        tc = np.empty(width, dtype=np.int32)
        live = live_nodes(A, S, limit)
        for j in range(njobs):
            if A.pinned[j]:
                continue
            remove_job(S, j, A)
            mark_job(live, A, S, j)
            for which in range(2):
                if which == 0:
                    _, k = _best_move(S, j, A, limit, best1, tn, tc, hist, live)
                    out = kept
                else:
                    scan = live_nodes(A, S, limit)
                    scan.uniform[0] = False
                    _, k = _best_move(S, j, A, limit, best1, tn, tc, hist, scan)
                    out = fresh
                out[j, 0] = k
                for q in range(max(k, 0)):
                    out[j, 1 + 2 * q] = tn[q]
                    out[j, 2 + 2 * q] = tc[q]
            add_job(S, j, A)
            mark_job(live, A, S, j)
        return kept, fresh

    return both


@FAST
@given(
    st.one_of(
        instances(tabulated_fn=TAB),
        # Few jobs, many free GPUs and large jobs: jumps onto several free nodes.
        instances(max_jobs=5, max_nodes=8, tabulated_fn=TAB, gpu_only=True, max_rep=16),
    ),
    st.integers(0, 1000),
    st.integers(1, 8),
)
def test_best_move_with_kept_view_is_the_full_scans(inst, seed, limit):
    """Every job's best move reads the kept view (live nodes, the free nodes' rooms) as a fresh full scan finds it."""
    policy, prob, pop, _, _ = _population(inst, seed)
    A = policy._arrays(prob)
    limit = min(limit, prob.num_nodes)
    for i in range(pop.off.shape[0]):
        kept, fresh = _moves_kept_and_fresh()(pop, i, A, limit, policy._scratch(prob))
        np.testing.assert_array_equal(kept, fresh)
