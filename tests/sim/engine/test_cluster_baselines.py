"""The cluster loop and the two deterministic baselines on tiny inputs."""

from __future__ import annotations

import pytest

from fastsched.sim import simulate
from fastsched.sim.engine.cluster import placement_of
from fastsched.sim.inputs.workload import WorkloadJob
from fastsched.sim.policies.baselines import OptimusPolicy, TiresiasPolicy

from .test_job import ConstApp


def test_placement_of():
    assert placement_of([3, 3, 3, 0, 0]) == [3, 2]
    assert placement_of([1, 2, 1]) == [1, 1, 1]
    assert placement_of([]) == []


def _wl(*rows):
    return [WorkloadJob(*r) for r in rows]


def test_tiresias_fifo_preemption_and_packing():
    apps = {"const": ConstApp()}
    # batch 16 on 4 GPUs: 4 per GPU, the bottom of ConstApp's per-GPU range (checked before the run)
    wl = _wl(("a", 0, "const", 4, 16), ("b", 0, "const", 4, 16), ("c", 0, "const", 2, 8))
    r = simulate(wl, applications=apps, policy="tiresias", nodes=2, gpus=4)
    assert r.completed == 3
    # a and b fill the cluster; c waits for the first completion.
    sub = {j.name: j for j in r.jobs}
    assert sub["c"].completion_time > sub["a"].completion_time
    assert r.allocations.shape == (r.times.size, 3)
    assert r.allocations[0].tolist() == [4, 4, 0]


def test_tiresias_demotion_threshold():
    pol = TiresiasPolicy(queue_threshold=120)
    apps = {"const": ConstApp()}
    wl = _wl(("a", 0, "const", 1, 8), ("b", 0, "const", 1, 8))
    r = simulate(wl, applications=apps, policy=pol, nodes=1, gpus=1)
    assert r.completed == 2
    sub = {j.name: j for j in r.jobs}
    # a is demoted after 120 GPU-seconds, so b (still in queue 0) preempts it; b is demoted
    # in turn and a resumes: both restart.
    assert sub["a"].num_restarts >= 1 and sub["b"].num_restarts >= 1
    assert 0 not in pol._queue_of.values()  # nobody left in the first queue


def test_optimus_gives_every_job_a_gpu_first():
    apps = {"const": ConstApp()}
    wl = _wl(*[(f"j{i}", 0, "const", 1, 32) for i in range(3)])
    r = simulate(wl, applications=apps, policy=OptimusPolicy(), nodes=1, gpus=4)
    assert r.completed == 3
    assert sorted(r.allocations[0].tolist()) in ([1, 1, 2], [1, 1, 1])


def test_jct_and_summary_keys():
    apps = {"const": ConstApp()}
    wl = _wl(("a", 0, "const", 1, 4), ("b", 100, "const", 1, 4))
    r = simulate(wl, applications=apps, policy="tiresias", nodes=1, gpus=1)
    # a: allocated at t=60, 30 s delay, 3 epochs x 20 s -> done at 150. Its GPU is released
    # at the next scheduling point (180); b then pays its delay and finishes at 270.
    assert [j.jct for j in r.jobs] == [150.0, 170.0]
    s = r.summary()
    for key in ("avg_jct", "p99_jct", "makespan", "jobs", "wall_s", "gpu_utilization", "restarts"):
        assert key in s
    assert s["avg_jct"] == pytest.approx(160.0)
    assert s["makespan"] == 270.0


def test_bad_arguments():
    apps = {"const": ConstApp()}
    wl = _wl(("a", 0, "const", 8, 4))
    with pytest.raises(ValueError, match="nodes"):
        simulate(wl, applications=apps, policy="tiresias", nodes=0)
    with pytest.raises(ValueError, match="policy"):
        simulate(wl, applications=apps, policy="nosuch")  # (fifo is a policy since issue 24)
    with pytest.raises(ValueError, match="preset"):
        simulate(wl, applications=apps, preset="osdi99")
    with pytest.raises(ValueError, match="more GPUs"):
        simulate(wl, applications=apps, policy="tiresias", nodes=1, gpus=4)
    with pytest.raises(ValueError, match="unknown application"):
        simulate(_wl(("a", 0, "nope", 1, 4)), applications=apps, policy="tiresias")


class _EveryRound(TiresiasPolicy):
    """Tiresias called in every round (no ``next_decision_time``): the reference for skipping."""

    next_decision_time = None


class _LongApp(ConstApp):
    max_epochs = 30  # 10-minute jobs: long enough to queue, demote and preempt


def _tiresias_typed_run(policy, seed):
    import numpy as np

    from fastsched.sim.engine.hetero_job import HeteroApplication

    rng = np.random.default_rng(seed)
    app = _LongApp()
    apps = {"const": HeteroApplication({"a": app, "b": app})}
    times, reps = np.sort(rng.integers(0, 600, 12)), rng.choice([1, 2, 3, 4], 12)
    wl = [
        WorkloadJob(f"j{i}", int(t), "const", int(r), 4 * int(r))
        for i, (t, r) in enumerate(zip(times, reps, strict=True))
    ]
    return simulate(wl, applications=apps, cluster="1xa:2,1xb:4", policy=policy)


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_tiresias_skipped_rounds_change_nothing(seed):
    # Rounds without arrival, completion or due demotion skip the policy; the run must be the
    # one that calls it every round, on a typed cluster where Tiresias's answer to its own
    # answer can differ (running jobs are re-admitted before new ones).
    fast = _tiresias_typed_run(TiresiasPolicy(queue_threshold=200), seed)
    ref = _tiresias_typed_run(_EveryRound(queue_threshold=200), seed)
    assert fast.jobs == ref.jobs
    assert (fast.allocations == ref.allocations).all() and (fast.times == ref.times).all()
    assert fast.completed == len(fast.jobs)
