"""Finish-time fairness's isolated run (fastsched.sim.results.isolated) against hand-computed values and a plain reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim import WorkloadJob, simulate
from fastsched.sim.engine.hetero_job import HeteroApplication, HeteroJob
from fastsched.sim.engine.job import Job
from fastsched.sim.results.isolated import batch_candidates, isolated_jcts, packed_placement, training_seconds
from fastsched.sim.results.metrics import compute_metrics, job_contention

from .naive_isolated import LinearApp, training_seconds_ref

# LinearApp defaults: 3 epochs of 1000 progress; batch 8 = init (gain 1, grad_var 0); a step of
# local batch m takes 0.01 * m s, so r GPUs run 8 / r per GPU: 1000 * 0.01 * 8 / r s per epoch.


def test_packed_placement():
    assert packed_placement(8, 4) == (4, 4)
    assert packed_placement(5, 4) == (4, 1)
    assert packed_placement(1, 8) == (1,)


def test_linear_speedup_fixed_batch_is_analytic():
    app = LinearApp()
    t = training_seconds(app, None, 4, 4, batch_size=8)
    # r = 1, 2, 4: 3 epochs * 1000 steps * 0.01 * 8 / r; r = 3 runs 3 per GPU (batch 9, gain 1): 0.03 s a step
    assert t.tolist() == pytest.approx([240.0, 120.0, 90.0, 60.0])


def test_fixed_gpu_count_only_that_count():
    t = training_seconds(LinearApp(), None, 4, 4, batch_size=8, num_replicas=2)
    assert np.isinf(t[0]) and t[1:].tolist() == pytest.approx([120.0, 120.0, 120.0])


def test_isolated_jct_integer_and_fractional_shares():
    app = LinearApp()
    job = Job("a", app, 30, target_batch_size=8, rescale_delay=30)
    # first round at 60: waits 30 s, pauses 30 s, trains
    got = isolated_jcts([job, job, job], [4.0, 2.5, 0.5], {None: 8}, {None: 4}, 60)
    assert got[0] == pytest.approx(30 + 30 + 60)
    assert got[1] == pytest.approx(30 + (30 + 120) + (90 - 120) * 0.5)  # between 2 and 3 GPUs
    assert got[2] == pytest.approx(30 + (30 + 240) / 0.5)  # half a GPU: the one-GPU run, twice as long


def test_job_above_its_share_is_stretched():
    job = Job("a", LinearApp(), 0, target_num_replicas=4, target_batch_size=8, rescale_delay=0)
    got = isolated_jcts([job, job], [2.0, 8.0], {None: 8}, {None: 4}, 60)
    assert got.tolist() == pytest.approx([60 + 60 * 2, 60 + 60])  # on 4 GPUs, time-shared at 2 / 4


def test_types_weighted_by_gpus_and_slowdown():
    slow, fast = LinearApp(a=0.02), LinearApp(a=0.01)
    job = HeteroJob("a", HeteroApplication({"slow": slow, "fast": fast}), 60, target_batch_size=8, slowdown=1.5)
    job.rescale_delay = 0
    got = isolated_jcts([job], [2.0], {"slow": 6, "fast": 2}, {"slow": 2, "fast": 2}, 60)
    expect = (6 * 1.5 * 240 + 2 * 1.5 * 120) / 8  # 2 GPUs: 240 s slow, 120 s fast
    assert got[0] == pytest.approx(expect)


def test_job_fitting_no_type_is_infinite_and_bad_shares_refused():
    job = Job("a", LinearApp(), 0, target_num_replicas=16, target_batch_size=16)
    assert np.isinf(isolated_jcts([job], [8.0], {None: 8}, {None: 4}, 60)[0])
    with pytest.raises(ValueError, match="shares"):
        isolated_jcts([job], [0.0], {None: 8}, {None: 4}, 60)
    with pytest.raises(ValueError, match="shares"):
        isolated_jcts([job], [1.0, 2.0], {None: 8}, {None: 4}, 60)


def _linear_run(jobs, nodes=1, gpus=4):
    return simulate(jobs, policy="tiresias", nodes=nodes, gpus=gpus, applications={"linear": LinearApp()})


def test_alone_on_the_cluster_matches_the_simulation():
    # One rigid job alone: the simulated run is the isolated run (up to whole-second epoch crossings).
    r = _linear_run([WorkloadJob("a", 30, "linear", 2, 8)])
    assert abs(r.jobs[0].jct - r.isolated_jct[0]) <= 3
    assert compute_metrics(r)["ftf_worst"] == pytest.approx(r.jobs[0].jct / r.isolated_jct[0])


def test_a_job_that_waited():
    # Two jobs of 4 GPUs on 4 GPUs: b waits for a; alone on a share 4 / N it is time-shared.
    r = _linear_run([WorkloadJob("a", 0, "linear", 4, 8), WorkloadJob("b", 0, "linear", 4, 8)])
    a, b = r.jobs
    assert b.completion_time >= a.completion_time
    n = job_contention(r.times, r.active_jobs, [0, 0], [a.completion_time, b.completion_time])
    # first round at 60 s, then (30 s start delay + 60 s on 4 GPUs) time-shared on a share of
    # 4 / N GPUs: stretched by 4 / (4 / N) = N
    iso = [60 + (30 + 60) * x for x in n]
    assert r.isolated_jct.tolist() == pytest.approx(iso, abs=1e-9)
    m = compute_metrics(r)
    assert m["ftf_worst"] == pytest.approx(max(a.jct / iso[0], b.jct / iso[1]))
    assert compute_metrics(r, ftf_method="gpu_seconds")["ftf_worst"] != m["ftf_worst"]
    with pytest.raises(ValueError, match="ftf_method"):
        compute_metrics(r, ftf_method="exact")


apps = st.builds(
    LinearApp,
    a=st.floats(0.001, 0.1),
    sync=st.floats(0.0, 0.5),
    epochs=st.integers(1, 4),
    work=st.lists(st.floats(1.0, 500.0), min_size=4, max_size=4),
    sqr=st.lists(st.floats(0.1, 10.0), min_size=4, max_size=4),
    var=st.lists(st.floats(0.0, 100.0), min_size=4, max_size=4),
    init=st.sampled_from([2, 4, 8]),
    max_bsz=st.sampled_from([16, 32, 64]),
    local=st.sampled_from([(1, 8), (2, 16), (1, 64)]),
)


@settings(deadline=None, max_examples=40)
@given(
    app=apps,
    gpn=st.integers(1, 4),
    max_gpus=st.integers(1, 9),
    fixed_bsz=st.sampled_from([None, 16]),
    fixed_r=st.sampled_from([None, 1, 3]),
)
def test_training_seconds_matches_reference(app, gpn, max_gpus, fixed_bsz, fixed_r):
    if fixed_r is not None and fixed_bsz is None:
        fixed_r = None
    got = training_seconds(app, None, gpn, max_gpus, batch_size=fixed_bsz, num_replicas=fixed_r)
    ref = training_seconds_ref(app, gpn, max_gpus, fixed_bsz, fixed_r)
    for g, w in zip(got.tolist(), ref, strict=True):
        assert (math.isinf(g) and math.isinf(w)) or g == pytest.approx(w, rel=1e-12)


@settings(deadline=None, max_examples=40)
@given(app=apps, r=st.integers(1, 8), cap=st.integers(1, 64))
def test_batch_candidates_cover_the_range_and_full_memory(app, r, cap):
    got = batch_candidates(app, r, cap)
    lo, hi = max(app.init_batch_size, r * app.min_local_bsz), app.max_batch_size
    if lo > hi:
        assert got == []
        return
    assert got == sorted(set(got)) and got[0] == lo and all(lo <= b <= hi for b in got)
    assert hi in got  # the grid's top
    assert all(b in got for b in range(r * cap, hi + 1, r * cap) if b >= lo)


def test_a_job_s_isolated_jct_does_not_depend_on_the_others():
    # Curves are evaluated up to the largest share asked of them: the prefix must not change.
    app = LinearApp(sync=0.2, var=[1.0, 5.0, 20.0])
    a, b = Job("a", app, 0), Job("b", app, 0)
    alone = isolated_jcts([a], [2.5], {None: 8}, {None: 4}, 60)
    both = isolated_jcts([a, b], [2.5, 7.0], {None: 8}, {None: 4}, 60)
    assert both[0] == alone[0] and both[1] < both[0]


def test_bad_sizes_refused():
    with pytest.raises(ValueError, match="gpus_per_node"):
        training_seconds(LinearApp(), None, 0, 4)
    with pytest.raises(ValueError, match="max_gpus"):
        training_seconds(LinearApp(), None, 4, 0)
    with pytest.raises(ValueError, match="interval"):
        isolated_jcts([Job("a", LinearApp(), 0)], [1.0], {None: 4}, {None: 4}, 0)
    with pytest.raises(ValueError, match="shares"):
        isolated_jcts([Job("a", LinearApp(), 0)], [np.inf], {None: 4}, {None: 4}, 60)
