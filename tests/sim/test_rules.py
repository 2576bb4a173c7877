"""The simulator's rules written once (fastsched.sim._rules) against plain references."""

from __future__ import annotations

import math
import types

from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim._rules import fixed_batch_config, id_placement, placement_id


def naive_fixed_batch(init_bsz, max_bsz, num_replicas, batch_size, max_local_bsz):
    """AdaptDL's split of a fixed batch, in words: ceil of the per-GPU share, passes of at most
    the cap, one GPU above the initial batch accumulates at least once, total within the max."""
    local = math.ceil(batch_size / num_replicas - 1e-8)
    accum = math.ceil(local / max_local_bsz - 1e-8) - 1
    if num_replicas == 1 and batch_size > init_bsz:
        accum = max(1, accum)
    atomic = math.ceil(local / (accum + 1) - 1e-8)
    return min(atomic, int(max_bsz / (num_replicas * (accum + 1)))), accum


@settings(max_examples=200, deadline=None)
@given(
    init=st.integers(1, 512),
    max_bsz=st.integers(1, 1 << 16),
    reps=st.integers(1, 64),
    batch=st.integers(1, 1 << 16),
    cap=st.integers(1, 2048),
)
def test_fixed_batch_config_matches_reference(init, max_bsz, reps, batch, cap):
    app = types.SimpleNamespace(init_batch_size=init, max_batch_size=max_bsz)
    assert fixed_batch_config(app, reps, batch, cap) == naive_fixed_batch(init, max_bsz, reps, batch, cap)


@given(st.lists(st.integers(0, 9), min_size=1, max_size=8))
def test_placement_ids_round_trip(placement):
    pid = placement_id(placement)
    kept = tuple(p for p in placement if p)
    assert (pid is None) == (not kept)
    if kept:
        assert id_placement(pid) == kept
    assert placement_id([*placement, 10]) is None


def test_no_cache_stashed_on_applications_or_jobs():
    from fastsched.sim import WorkloadJob, simulate
    from fastsched.sim.builtin import builtin_applications

    apps = builtin_applications()
    wl = [WorkloadJob("a", 0, "ncf", 1, 256), WorkloadJob("b", 0, "ncf", 2, 256)]
    simulate(wl, applications={"ncf": apps["ncf"]}, policy="pollux", nodes=1, gpus=4)
    assert "_fit_memo" not in vars(apps["ncf"])
