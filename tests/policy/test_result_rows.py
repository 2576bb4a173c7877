"""A population row read back as allocations: every replica on its real node, in entry order."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.policy._ga.types import new_pop
from fastsched.policy._result import row_to_allocations


def _reference(pop, row, prob):
    """Each job's entries in order, ``count`` copies of the node's key, placeholders dropped."""
    out = {}
    for j, key in enumerate(prob.job_keys):
        alloc = []
        for q in range(int(pop.off[row, j]), int(pop.off[row, j + 1])):
            n = int(pop.node[row, q])
            if n < prob.num_real:
                alloc += [prob.node_keys[n]] * int(pop.cnt[row, q])
        out[key] = alloc
    return out


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 12), st.integers(1, 6), st.integers(0, 3))
def test_row_to_allocations_lists_every_replica_in_entry_order(seed, njobs, num_real, placeholders):
    rng = np.random.default_rng(seed)
    entries = rng.integers(0, 4, njobs)  # entries per job (a job may have none)
    width = max(int(entries.sum()), 1)
    pop = new_pop(2, njobs, width)
    row = int(rng.integers(0, 2))
    pop.off[row, 1:] = np.cumsum(entries)
    pop.node[row, : entries.sum()] = rng.integers(0, num_real + placeholders, entries.sum())
    pop.cnt[row, : entries.sum()] = rng.integers(1, 5, entries.sum())
    keys = [f"n{i}" if rng.random() < 0.5 else i for i in range(num_real)]  # none for placeholders
    prob = SimpleNamespace(job_keys=[f"j{j}" for j in range(njobs)], node_keys=keys, num_real=num_real)
    got = row_to_allocations(pop, row, prob)
    assert got == _reference(pop, row, prob)
    assert list(got) == prob.job_keys
    assert len({id(v) for v in got.values()}) == njobs  # each job its own list
