"""Pollux gives a job whose application needs several GPUs none or at least that many."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.sim import simulate
from fastsched.sim.policies.pollux import PolluxSimPolicy
from fastsched.sim.truth.builtin import builtin_applications, builtin_workload
from fastsched.sim.truth.oracle import OracleApplication


def _cifar10_gpu_counts(min_replicas, trusted=True):
    apps = builtin_applications()
    apps["cifar10"].min_replicas = min_replicas
    jobs = builtin_workload()[:8]
    policy = PolluxSimPolicy(seed=3)
    policy._trusted = trusted
    r = simulate(jobs, applications=apps, policy=policy, max_time=3 * 3600)
    cols = [i for i, j in enumerate(jobs) if j.application == "cifar10"]
    return np.unique(r.allocations[:, cols])


def test_builtin_cifar10_takes_one_gpu_when_it_may():
    assert 1 in _cifar10_gpu_counts(1)  # else the next test could not fail


@pytest.mark.parametrize("trusted", [True, False])
def test_a_job_needing_three_gpus_never_gets_fewer(trusted):
    counts = _cifar10_gpu_counts(3, trusted)
    assert counts.max() >= 3
    assert not np.any((counts > 0) & (counts < 3))


def test_oracle_min_replicas_is_the_fewest_gpus_whose_memory_holds_the_model():
    from fastsched.catalog.oracle import step_time

    app = OracleApplication("gpt-6.7b", "a100-80gb")
    m, batch = app.min_replicas, app.init_batch_size
    assert m > 1
    # The oracle prices one GPU (time-sliced), but no plan of one GPU holds the model ...
    assert app.throughput((1,), batch)[0] > 0
    with pytest.raises(ValueError):
        step_time(app.model, app.gpu, (m // 2,), batch / (m // 2))
    # ... while min_replicas GPUs do.
    assert step_time(app.model, app.gpu, (m,), batch / m, overlap=app.overlap).step > 0
    assert OracleApplication("gpt-125m", "a100-80gb").min_replicas == 1  # data parallel


@pytest.mark.parametrize("policy", ["sia", "pollux"])
def test_typed_cluster_policies_never_place_a_decoder_below_its_memory_minimum(policy):
    from fastsched.sim.inputs.workload import WorkloadJob
    from fastsched.sim.truth.oracle import oracle_applications

    jobs = [
        WorkloadJob("big", 0, "gpt-6.7b", 2, 1024, "adaptive"),
        WorkloadJob("small", 0, "gpt-125m", 1, 256, "adaptive"),
        WorkloadJob("big-fixed", 600, "gpt-6.7b", 4, 1024, "scale-gpus"),
    ]
    apps = oracle_applications(["gpt-6.7b", "gpt-125m"], ["h100", "a100-80gb"], overlap=1.0)
    need = apps["gpt-6.7b"].min_replicas  # the most any of its GPU types needs
    assert need > 1
    r = simulate(jobs, applications=apps, cluster="1xh100,1xa100-80gb", policy=policy, max_time=6 * 3600)
    big = np.unique(r.allocations[:, [0, 2]])
    assert big.max() >= need
    assert not np.any((big > 0) & (big < need))
    assert np.unique(r.allocations[:, 1]).min() <= 1  # a small model may still take one GPU


@pytest.mark.parametrize("policy", ["tiresias", "gavel"])
def test_a_rigid_request_below_the_memory_minimum_is_refused(policy):
    from fastsched.sim.inputs.workload import WorkloadJob
    from fastsched.sim.truth.oracle import oracle_applications

    apps = oracle_applications(["gpt-6.7b"], ["h100"], overlap=1.0)
    ok = [WorkloadJob("ok", 0, "gpt-6.7b", apps["gpt-6.7b"].min_replicas, 1024, "adaptive")]
    simulate(ok, applications=apps, cluster="1xh100", policy=policy, max_time=600)
    small = [WorkloadJob("small", 0, "gpt-6.7b", 1, 1024, "adaptive")]
    with pytest.raises(ValueError, match=r"job 'small' requests 1 GPU\(s\), fewer than.*gpt-6.7b needs"):
        simulate(small, applications=apps, cluster="1xh100", policy=policy, max_time=600)
