"""Sia, Gavel, Pollux (unaware), Tiresias and Optimus on a tiny two-type cluster."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.sim import simulate
from fastsched.sim.engine.hetero_job import HeteroJob, load_hetero_applications
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.inputs.workload import WorkloadJob
from fastsched.sim.policies import SiaPolicy, make_policy
from tests.sim.two_types import toy_workload

CLUSTER = "2xslow:2,1xfast:2"


@pytest.fixture
def app(two_type_traces):
    return load_hetero_applications(two_type_traces, ["slow", "fast"])["toy"]


def _sia(spec="1xslow:2,1xfast:2"):
    pol = SiaPolicy()
    pol.bind_cluster(parse_cluster(spec), 60)
    return pol


def test_sia_offers_single_gpus_until_a_job_has_run(app):
    pol = _sia()
    job = HeteroJob("j", app, 0)
    cols, vals = pol._adaptive_rows([job])[0]
    assert [pol.configs[c][2] for c in cols] == [1, 1] and vals == [1.0, 1.0]
    job.set_gpu_type("slow")
    job.reallocate([1])
    job.step(400)
    cols, vals = pol._adaptive_rows([job])[0]
    assert min(vals) == pytest.approx(1.0)  # normalised by the row's minimum
    gpus = {pol.configs[c][2] for c in cols}
    assert gpus == {1, 2}  # at most twice the largest observed count
    # The bootstrap: fast = 2x slow at one GPU (the throughput ratio), before any run on fast.
    by = {(pol.configs[c][0], pol.configs[c][2]): v for c, v in zip(cols, vals, strict=True)}
    assert by[("fast", 1)] == pytest.approx(2 * by[("slow", 1)])


def test_sia_matrix_matches_estimate_goodput(app):
    from tests.sim.policies.belief_reference import estimate_goodput

    pol = _sia()
    job = HeteroJob("j", app, 0)
    job.set_gpu_type("slow")
    job.reallocate([2])
    job.step(400)
    cols, vals = pol._adaptive_rows([job])[0]
    want = []
    for c in cols:
        t, n, g = pol.configs[c]
        want.append(float(estimate_goodput(job, t, np.array([n]), np.array([g]), pol.gpn)[0]))
    np.testing.assert_allclose(vals, np.array(want) / min(want), rtol=1e-12)


def test_sia_restart_factor_by_hand(app):
    pol = _sia()
    job = HeteroJob("bert-0", app, 0)  # 'toy' has no measured penalty: 30 s
    assert pol.restart_factor(20, job) == 1.0  # younger than the penalty
    job.num_restarts = 2
    assert pol.restart_factor(600, job) == pytest.approx((600 - 2 * 30) / (600 + 30))


def test_sia_keeps_jobs_mid_restart(app):
    pol = _sia()
    jobs = [HeteroJob(f"j{i}", app, 0) for i in range(3)]
    jobs[0].set_gpu_type("slow")
    jobs[0].reallocate([1])  # rescale_time > 0: restarting
    alloc = pol.optimize(60, jobs, pol.cluster.nodes(), {"j0": [0]})
    assert alloc["j0"] == [0]


def test_sia_fills_the_cluster_and_never_mixes_types(app):
    pol = _sia()
    jobs = [HeteroJob(f"j{i}", app, 0) for i in range(6)]
    alloc = pol.optimize(60, jobs, pol.cluster.nodes(), {})
    assert sum(len(v) for v in alloc.values()) == 4  # 4 GPUs, 6 single-GPU candidates
    types = pol.cluster.node_types
    assert all(len({types[n] for n in v}) == 1 for v in alloc.values())


@pytest.mark.parametrize("policy", ["sia", "gavel", "pollux", "tiresias", "optimus"])
def test_every_policy_completes_on_two_types(two_type_traces, policy):
    r = simulate(toy_workload(), traces=two_type_traces, cluster=CLUSTER, policy=policy, interval=60)
    assert r.completed == len(r.jobs)
    assert r.config["cluster"] == CLUSTER
    m = r.summary()
    assert set(m["gpu_hours_by_type"]) <= {"slow", "fast"}
    assert sum(m["gpu_hours_by_type"].values()) == pytest.approx(m["gpu_hours_per_job"])


def test_sia_uses_the_fast_type(two_type_traces):
    r = simulate(toy_workload(n=2, spacing=0), traces=two_type_traces, cluster=CLUSTER, policy="sia")
    assert r.summary()["gpu_hours_by_type"].get("fast", 0) > 0


def test_rigid_jobs_keep_count_and_batch(two_type_traces):
    wl = [WorkloadJob(f"r{i}", 0, "toy", 2, 8, category="rigid") for i in range(2)]
    r = simulate(wl, traces=two_type_traces, cluster=CLUSTER, policy="sia")
    held = r.allocations[r.allocations > 0]
    assert r.completed == 2 and set(held.tolist()) == {2}


def test_gavel_keeps_requested_gpus(two_type_traces):
    r = simulate(toy_workload(replicas=2), traces=two_type_traces, cluster=CLUSTER, policy="gavel")
    held = r.allocations[r.allocations > 0]
    assert set(held.tolist()) == {2} and r.config["interval"] == 360


def test_policy_registry_names():
    for name in ("sia", "gavel"):
        assert make_policy(name).name == name
    assert make_policy("sia", p=-1.0).p == -1.0


def test_pollux_unaware_trims_mixed_allocations():
    from fastsched.sim.policies._placement import keep_majority_type

    types = ("a", "a", "b")
    assert keep_majority_type({"x": [0, 1, 1, 2]}, types) == {"x": [0, 1, 1]}
    assert keep_majority_type({"x": [0, 2]}, types) == {"x": [0]}  # tie: the first node's type
    assert keep_majority_type({"x": [2, 2]}, types) == {"x": [2, 2]}


def test_placement_keeps_unchanged_jobs_and_takes_whole_nodes():
    from fastsched.sim.policies._placement import place_type

    out = place_type({"a": 2, "b": 1, "c": 1}, [0, 1], 2, current={"b": [0], "c": [1]})
    # a whole-node job forces one of the fragmenting single-GPU jobs to move
    assert out["a"] in ([0, 0], [1, 1])
    used = np.bincount(sum(out.values(), []), minlength=2)
    assert used.tolist() == [2, 2]


def test_sia_cached_rows_follow_new_observations(app):
    # The policy caches each job's fits between rounds: after the job observes something new
    # (a run on the other type, with more GPUs) its row must equal a fresh policy's.
    pol = _sia()
    job = HeteroJob("j", app, 0)
    job.set_gpu_type("slow")
    job.reallocate([1])
    job.step(400)
    before = pol._adaptive_rows([job])[0]
    job.set_gpu_type("fast")
    job.reallocate([2])
    job.step(400)
    after = pol._adaptive_rows([job])[0]
    assert after == _sia()._adaptive_rows([job])[0]
    assert after != before


def test_fixed_batch_job_accumulates_against_the_placement_memory_limit(app):
    # Per-GPU memory limit 4 at this placement (below the type's largest batch, 8): a fixed
    # batch of 32 on 2 GPUs runs as 4 passes of 4 per GPU, keeping its batch size.
    app.max_local_bsz_at = lambda gpu_type, placement: 4
    job = HeteroJob("j", app, 0, target_num_replicas=2, target_batch_size=32)
    job.set_gpu_type("slow")
    job.reallocate([2])
    assert (job.atomic_bsz, job.accum_steps) == (4, 3)
    assert job.batch_size == 32
