"""The previous round's population carried into this round (``adapt_previous``), against a plain reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.policy import JobInfo, NodeInfo, build_problem
from fastsched.policy._ga.population import adapt_previous
from fastsched.policy._ga.types import new_pop

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def rounds(draw):
    """A previous population over some jobs and nodes (in any order, some gone since), and this round's problem."""
    nodes = {f"n{i}": NodeInfo({"gpu": 4}, False) for i in range(draw(st.integers(1, 4)))}
    new_keys = [f"j{i}" for i in range(draw(st.integers(1, 6)))]
    old_keys = draw(st.permutations(new_keys + ["gone0", "gone1"]))[: draw(st.integers(0, len(new_keys) + 2))]
    jobs = {k: JobInfo({"gpu": 1}, lambda n, r: r, i, 0, 8) for i, k in enumerate(new_keys)}
    prob = build_problem(jobs, nodes, {}, None)
    old_nodes = draw(st.permutations([*prob.node_keys, "gone"]))
    nrows = draw(st.integers(1, 4))
    entries = []  # per row, per old job: (old node index, count) sorted by old index
    for _ in range(nrows):
        per_job = []
        for _ in old_keys:
            where = sorted(draw(st.sets(st.integers(0, len(old_nodes) - 1), max_size=len(old_nodes))))
            per_job.append([(n, draw(st.integers(1, 4))) for n in where])
        entries.append(per_job)
    width = max(1, max(sum(len(e) for e in row) for row in entries))
    pop = new_pop(nrows, len(old_keys), width)
    for r, row in enumerate(entries):
        pos = 0
        for j, es in enumerate(row):
            pop.off[r, j] = pos
            for n, c in es:
                pop.node[r, pos], pop.cnt[r, pos] = n, c
                pos += 1
        pop.off[r, len(old_keys)] = pos
    return prob, pop, old_keys, old_nodes, entries


@SETTINGS
@given(rounds())
def test_adapt_previous_carries_each_job_by_key(case):
    """Each job keeps its entries (by key, nodes by key, sorted by node); new jobs start empty; gone jobs vanish."""
    prob, pop, old_keys, old_nodes, entries = case
    out = adapt_previous((pop, old_keys, old_nodes), prob)
    for r, row in enumerate(entries):
        for j, key in enumerate(prob.job_keys):
            got = [(int(out.node[r, q]), int(out.cnt[r, q])) for q in range(out.off[r, j], out.off[r, j + 1])]
            old = row[old_keys.index(key)] if key in old_keys else []
            by_key = [(prob.node_keys.index(old_nodes[n]), c) for n, c in old if old_nodes[n] != "gone"]
            assert got == sorted(by_key)
