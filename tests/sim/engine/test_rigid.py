"""Rigid jobs: the event-driven kernel against the plain reference on random small logs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.engine.rigid import RIGID_POLICIES, run_rigid
from tests.sim.engine.naive_rigid import g_server_fcfs, naive_rigid


@st.composite
def small_logs(draw, one_gpu=False):
    nodes = draw(st.integers(1, 3))
    G = draw(st.integers(1, 4))
    n = draw(st.integers(1, 18))
    submit = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    work = draw(st.lists(st.integers(0, 80), min_size=n, max_size=n))
    if one_gpu:
        need = [1] * n
    else:
        need = draw(st.lists(st.integers(1, nodes * G), min_size=n, max_size=n))
    return nodes, G, [float(s) for s in submit], [float(w) for w in work], need


@pytest.mark.parametrize("policy", ["fifo", "sjf", "backfill", "srtf", "tiresias", "gandiva", "themis"])
@settings(max_examples=150, deadline=None)
@given(
    log=small_logs(),
    restart=st.sampled_from([0.0, 7.0, 30.0]),
    thr=st.sampled_from([(40.0,), (25.0, 90.0)]),
    depth=st.sampled_from([0, 2, 500]),
    quantum=st.sampled_from([5.0, 13.0, 600.0]),
)
def test_every_jct_equals_the_reference(policy, log, restart, thr, depth, quantum):
    nodes, G, submit, work, need = log
    # quantum: Gandiva's slice, or Themis' lease
    slices = {"lease": quantum} if policy == "themis" else {"quantum": quantum}
    r = run_rigid(
        submit, work, need, nodes=nodes, gpus_per_node=G, policy=policy, restart_s=restart, thresholds=thr,
        depth=depth, **slices,
    )  # fmt: skip
    first, finish, restarts = naive_rigid(submit, work, need, nodes, G, policy, restart, thr, depth, quantum)
    assert r.finish.tolist() == finish
    assert r.first_start.tolist() == first
    assert r.restarts.tolist() == restarts


@settings(max_examples=300, deadline=None)
@given(
    log=small_logs(),
    restart=st.sampled_from([0.0, 0.5, 2.0]),  # under thresholds[0] / gpus (12 GPUs at most), as required
    thr=st.sampled_from([(30.0,), (40.0,), (30.0, 90.0)]),
    starve=st.sampled_from([0.25, 1.0, 2.0, 3.5]),
)
def test_tiresias_with_starvation_promotion_equals_the_reference(log, restart, thr, starve):
    nodes, G, submit, work, need = log
    r = run_rigid(
        submit, work, need, nodes=nodes, gpus_per_node=G, policy="tiresias", restart_s=restart, thresholds=thr,
        starve_limit=starve,
    )  # fmt: skip
    first, finish, restarts = naive_rigid(submit, work, need, nodes, G, "tiresias", restart, thr, starve=starve)
    assert r.finish.tolist() == finish
    assert r.first_start.tolist() == first
    assert r.restarts.tolist() == restarts


def test_a_starved_job_is_promoted_ahead_of_later_arrivals():
    # One GPU, one threshold of 10 GPU-s. A (work 30) runs 0-10, is demoted, and short jobs of
    # 9 s arriving every 9 s from t = 10 keep queue 0 busy. Without promotion A waits for the
    # stream to end (55). With K = 2 it is promoted at 10 + 2 x 10 = 30 to queue 0's tail,
    # behind the running B3 but ahead of B4 (arriving at 37): it runs 37-47 (10 GPU-s after
    # its promotion, demoted again), then waits behind B4 and B5 and ends at 75.
    submit, work = [0, 10, 19, 28, 37, 46], [30, 9, 9, 9, 9, 9]
    kw = dict(nodes=1, gpus_per_node=1, policy="tiresias", thresholds=(10.0,), restart_s=0.0)
    off = run_rigid(submit, work, [1] * 6, **kw)
    on = run_rigid(submit, work, [1] * 6, starve_limit=2.0, **kw)
    assert off.finish.tolist() == [75.0, 19.0, 28.0, 37.0, 46.0, 55.0]
    assert on.finish.tolist() == [75.0, 19.0, 28.0, 37.0, 56.0, 65.0]
    assert (off.restarts[0], on.restarts[0]) == (1, 2)


def test_a_job_running_in_the_first_queue_can_be_preempted_there():
    # Queue 0 holds A (6 GPUs), B (4), C (4), J (2) on one 8-GPU node: A and J run, B and C are
    # skipped (they do not fit beside A). A's end frees room for B and C, ahead of J: J stops.
    r = run_rigid([0, 0, 0, 0], [10, 100, 100, 100], [6, 4, 4, 2], nodes=1, gpus_per_node=8, policy="tiresias",
                  restart_s=0.0)  # fmt: skip
    assert r.first_start.tolist() == [0.0, 10.0, 10.0, 0.0]
    assert r.restarts.tolist() == [0, 0, 0, 1] and r.finish.tolist() == [10.0, 110.0, 110.0, 200.0]


@settings(max_examples=200, deadline=None)
@given(log=small_logs(one_gpu=True))
def test_fifo_on_one_gpu_jobs_is_the_g_server_queue(log):
    nodes, G, submit, work, need = log
    r = run_rigid(submit, work, need, nodes=nodes, gpus_per_node=G, policy="fifo")
    assert r.finish.tolist() == g_server_fcfs(submit, work, nodes * G)


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="gpus: job 1 needs 9 GPUs"):
        run_rigid([0, 1], [5, 5], [1, 9], nodes=2, gpus_per_node=4)
    with pytest.raises(ValueError, match="duration"):
        run_rigid([0], [-1], [1], nodes=1, gpus_per_node=1)
    with pytest.raises(ValueError, match="policy"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, policy="pollux")
    with pytest.raises(ValueError, match="speed"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, speed=0)
    with pytest.raises(ValueError, match="starve_limit"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, policy="tiresias", starve_limit=0)
    with pytest.raises(ValueError, match="starve_limit"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, policy="fifo", starve_limit=2)
    with pytest.raises(ValueError, match="starve_limit: job 1 .4 GPUs. would be demoted"):
        run_rigid(
            [0, 0], [9, 9], [1, 4], nodes=1, gpus_per_node=4, policy="tiresias", thresholds=(100,), starve_limit=1
        )
    with pytest.raises(ValueError, match="lease"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, policy="themis", lease=float("inf"))
    with pytest.raises(ValueError, match="lease"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, policy="gandiva", lease=60)
    with pytest.raises(TypeError, match="quantum"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, policy="gandiva", quantum=True)
    with pytest.raises(TypeError, match="restart_s"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, restart_s="30")
    with pytest.raises(ValueError, match="speed must be one ratio or one per job .3."):
        run_rigid([0, 0, 1], [5, 5, 5], [1, 1, 1], nodes=1, gpus_per_node=1, speed=[1.0, 2.0])
    with pytest.raises(TypeError, match="thresholds"):
        run_rigid([0], [1], [1], nodes=1, gpus_per_node=1, policy="tiresias", thresholds=3600.0)
    with pytest.raises(ValueError, match="speed: job 0's duration over its speed ratio overflows"):
        run_rigid([0, 0], [1e10, 5], [1, 1], nodes=1, gpus_per_node=1, speed=[1e-300, 1.0])
    with pytest.raises(ValueError, match="names"):
        run_rigid([0, 0], [5, 5], [1, 1], nodes=1, gpus_per_node=1, names=["a"])
    with pytest.raises(ValueError, match="nodes x gpus_per_node must be at most"):  # not a MemoryError
        run_rigid([0], [1], [1], nodes=10**9, gpus_per_node=8)


def _same(a, b):
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


def test_numpy_scalars_are_numbers():
    kw = dict(nodes=1, gpus_per_node=2, restart_s=np.float32(0.0))
    plain = run_rigid([0, 0, 5], [50, 20, 10], [2, 1, 1], policy="themis", lease=10, **kw)
    assert _same(run_rigid([0, 0, 5], [50, 20, 10], [2, 1, 1], policy="themis", lease=np.int64(10), **kw), plain)
    assert plain.restarts.sum() > 0  # the lease binds
    las = dict(policy="tiresias", thresholds=(20.0,), **kw)
    plain = run_rigid([0, 0, 5], [50, 20, 10], [2, 1, 1], starve_limit=1.5, **las)
    assert _same(run_rigid([0, 0, 5], [50, 20, 10], [2, 1, 1], starve_limit=np.float32(1.5), **las), plain)


def test_a_big_job_takes_whole_nodes():
    # 1 GPU busy on node 0 leaves 3 of 4 nodes whole: a 10-GPU job (3 nodes of 4) fits, a 13-GPU one waits.
    r = run_rigid([0, 1, 1], [100, 10, 10], [1, 10, 13], nodes=4, gpus_per_node=4, policy="backfill")
    assert r.first_start.tolist() == [0.0, 1.0, 100.0]
    assert r.used_gpus[r.times == 1.0].tolist() == [1 + 12]  # whole nodes held
    assert r.used_gpus[r.times == 100.0].tolist() == [16]


def test_speed_divides_the_recorded_duration():
    r = run_rigid([0, 0], [100, 60], [1, 1], nodes=1, gpus_per_node=2, speed=[2.0, 3.0])
    assert r.finish.tolist() == [50.0, 20.0]


def test_tiresias_thresholds_are_the_round_based_policys():
    from fastsched.sim.engine.rigid import TIRESIAS_THRESHOLDS
    from fastsched.sim.policies.baselines import TiresiasPolicy

    assert TIRESIAS_THRESHOLDS == (TiresiasPolicy().queue_threshold,)


def test_every_policy_name_runs():
    for policy in RIGID_POLICIES:
        r = run_rigid([0, 0, 3], [10, 20, 5], [2, 1, 2], nodes=1, gpus_per_node=2, policy=policy)
        assert np.all(r.finish >= r.first_start)
