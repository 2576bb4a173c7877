"""Merging: numba kernel vs the plain-Python oracle, and series-parallel checks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel._merge import merge_fixed_point

from . import naive


def run_kernel(n, cost, phase, edges, serial_first):
    e = np.array(sorted(edges), np.int64).reshape(-1, 2)
    label, ncost, *_ = merge_fixed_point(
        np.asarray(cost, np.float64),
        np.asarray(phase, np.int64),
        np.ascontiguousarray(e[:, 0]),
        np.ascontiguousarray(e[:, 1]),
        serial_first,
    )
    groups = {}
    for v in range(n):
        groups.setdefault(int(label[v]), set()).add(v)
    return {frozenset(m): (float(ncost[r]), int(phase[r])) for r, m in groups.items()}


@st.composite
def dags(draw, max_n=14, phases=True):
    n = draw(st.integers(1, max_n))
    edges = set()
    for j in range(1, n):
        k = draw(st.integers(0, min(j, 3)))
        for i in draw(st.lists(st.integers(0, j - 1), min_size=k, max_size=k)):
            edges.add((i, j))
    # random labels so node order is not always topological
    perm = draw(st.permutations(range(n)))
    edges = {(perm[a], perm[b]) for a, b in edges}
    cost = draw(st.lists(st.integers(0, 64), min_size=n, max_size=n))
    cost = [c / 1024 for c in cost]
    if phases:
        phase = draw(st.lists(st.sampled_from([0, 0, 0, 1, 1, 2]), min_size=n, max_size=n))
    else:
        phase = [0] * n
    return n, cost, phase, edges


@settings(max_examples=150, deadline=None)
@given(dags(), st.booleans())
def test_kernel_matches_oracle(g, serial_first):
    n, cost, phase, edges = g
    assert run_kernel(n, cost, phase, edges, serial_first) == naive.merge(n, cost, phase, edges, serial_first)


@settings(max_examples=60, deadline=None)
@given(dags(max_n=10, phases=False), st.booleans())
def test_merging_conserves_or_lowers_phase_sums(g, serial_first):
    n, cost, phase, edges = g
    res = run_kernel(n, cost, phase, edges, serial_first)
    total = sum(c for c, _ in res.values())
    assert total <= sum(cost) + 1e-12
    if serial_first is True and all(len(m) == 1 for m in res):
        assert total == sum(cost)
    # every original node appears exactly once
    assert sorted(v for m in res for v in m) == list(range(n))


def test_chain_sums():
    n = 6
    res = run_kernel(n, [1.0] * n, [0] * n, {(i, i + 1) for i in range(n - 1)}, False)
    assert res == {frozenset(range(n)): (6.0, 0)}


@pytest.mark.parametrize("order", [False, True])
def test_diamond(order):
    # A -> {B, C} -> D
    res = run_kernel(4, [1.0, 2.0, 5.0, 1.0], [0] * 4, {(0, 1), (0, 2), (1, 3), (2, 3)}, order)
    ((members, (c, _)),) = res.items()
    assert members == frozenset(range(4))
    # parallel-first: the branches overlap; serial-first (the seed's order): they queue
    assert c == (7.0 if not order else 9.0)


def sp_graph(rng, depth):
    """Random two-terminal series-parallel graph; returns (n, edges, cost, sp_cost)."""
    nodes = []
    edges = set()

    def build(d):
        if d == 0 or rng.random() < 0.3:
            v = len(nodes)
            nodes.append(float(rng.integers(0, 32)) / 1024)
            return v, v, nodes[v]
        if rng.random() < 0.5:  # series
            s1, t1, c1 = build(d - 1)
            s2, t2, c2 = build(d - 1)
            edges.add((t1, s2))
            return s1, t2, c1 + c2
        fork = len(nodes)
        nodes.append(float(rng.integers(0, 32)) / 1024)
        parts = [build(d - 1) for _ in range(int(rng.integers(2, 4)))]
        join = len(nodes)
        nodes.append(float(rng.integers(0, 32)) / 1024)
        for s, t, _ in parts:
            edges.add((fork, s))
            edges.add((t, join))
        return fork, join, nodes[fork] + max(c for _, _, c in parts) + nodes[join]

    _, _, total = build(depth)
    return len(nodes), edges, nodes, total


@pytest.mark.parametrize("seed", range(20))
def test_nested_series_parallel_reduces_to_one_node(seed):
    rng = np.random.default_rng(seed)
    n, edges, cost, total = sp_graph(rng, 4)
    res = run_kernel(n, cost, [0] * n, edges, False)
    assert len(res) == 1
    ((members, (c, _)),) = res.items()
    assert c == total
    assert res == naive.merge(n, cost, [0] * n, edges, False)
    # the seed's order still reduces it to one node (costs summed where serialised)
    assert len(run_kernel(n, cost, [0] * n, edges, True)) == 1


def test_non_series_parallel_stops_at_oracle_fixed_point():
    # the "N" graph: a->c, a->d, b->d  (not series-parallel)
    edges = {(0, 2), (0, 3), (1, 3), (3, 4), (2, 4)}
    cost = [1.0, 2.0, 3.0, 4.0, 5.0]
    for order in (False, True):
        res = run_kernel(5, cost, [0] * 5, edges, order)
        assert res == naive.merge(5, cost, [0] * 5, edges, order)


def test_phases_never_mix():
    # fwd chain then bwd chain: two nodes; optimizer node stays alone
    edges = {(0, 1), (1, 2), (2, 3), (3, 4)}
    res = run_kernel(5, [1.0] * 5, [0, 0, 1, 1, 2], edges, True)
    assert sorted((sorted(m), p) for m, (_, p) in res.items()) == [
        ([0, 1], 0),
        ([2, 3], 1),
        ([4], 2),
    ]
