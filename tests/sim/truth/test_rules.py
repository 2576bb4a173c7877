"""The simulator's rules written once (fastsched.sim.truth._rules) against plain references."""

from __future__ import annotations

import math
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.truth._rules import fixed_batch_config, id_placement, placement_id


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
    app = types.SimpleNamespace(init_batch_size=init, max_batch_size=max_bsz, name="app")
    expected = naive_fixed_batch(init, max_bsz, reps, batch, cap)
    if expected[0] < 1:  # no per-GPU batch fits within the maximum: refused, never 0
        with pytest.raises(ValueError, match="num_replicas"):
            fixed_batch_config(app, reps, batch, cap)
    else:
        assert fixed_batch_config(app, reps, batch, cap) == expected


def test_a_job_is_never_run_with_no_samples_per_gpu():
    from fastsched.sim.engine.job import Job
    from fastsched.sim.truth.builtin import builtin_applications
    from fastsched.sim.truth.per_type import fixed_batch_throughput

    app = builtin_applications()["cifar10"]
    gpus = app.max_batch_size + 1  # one sample per GPU is already above the maximum
    job = Job("big", app, 0, target_num_replicas=gpus, target_batch_size=app.init_batch_size)
    with pytest.raises(ValueError, match="job big: num_replicas"):
        job.reallocate([gpus])
    assert fixed_batch_throughput(app, (gpus,), app.init_batch_size) == 0.0
    job.reallocate([2])  # a placement it can run
    assert job.atomic_bsz >= 1


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
    from fastsched.sim.truth.builtin import builtin_applications

    apps = builtin_applications()
    wl = [WorkloadJob("a", 0, "ncf", 1, 256), WorkloadJob("b", 0, "ncf", 2, 256)]
    simulate(wl, applications={"ncf": apps["ncf"]}, policy="pollux", nodes=1, gpus=4)
    assert "_fit_memo" not in vars(apps["ncf"])
