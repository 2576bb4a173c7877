"""Gavel's time-sharing arithmetic, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.sim.engine.hetero_job import HeteroJob, load_hetero_applications
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.policies.gavel import GavelPolicy, gavel_priorities, max_sum_throughput


def test_lp_prefers_the_larger_sum():
    # 2-GPU job: 1.0 on slow, 4.0 on fast; two 1-GPU jobs: 1.0 / 1.5. Fast has 2 GPUs, slow 2.
    # Best: big job on fast (4), small ones on slow (1 + 1) = 6 > small on fast (1.5 + 1.5) + big on slow (1) = 4.
    t = np.array([[1.0, 4.0], [1.0, 1.5], [1.0, 1.5]])
    x = max_sum_throughput(t, np.array([2, 1, 1]), np.array([2, 2]))
    np.testing.assert_allclose(x, [[0, 1], [1, 0], [1, 0]], atol=1e-6)


def test_lp_time_shares_equal_jobs_evenly():
    x = max_sum_throughput(np.ones((3, 1)), np.ones(3), np.array([2]))
    np.testing.assert_allclose(x, [[2 / 3]] * 3, atol=1e-5)  # rounded to 5 decimals, as Gavel does


def test_lp_never_uses_a_type_a_job_cannot_run_on():
    x = max_sum_throughput(np.array([[0.0, 1.0]]), np.array([1]), np.array([4, 4]))
    np.testing.assert_allclose(x, [[0.0, 1.0]], atol=1e-9)


def test_priorities_by_hand():
    # X = 0.5 on type 0, the job had 60 of 120 s there: priority 0.5 / 0.5 = 1.
    p = gavel_priorities(np.array([[0.5, 0.25]]), np.array([[60.0, 0.0]]), np.array([120.0, 30.0]))
    assert p[0, 0] == pytest.approx(1.0)
    assert p[0, 1] == pytest.approx(0.25e9)  # no time yet on type 1: X * 1e9


def test_round_robin_of_three_equal_jobs_on_two_gpus(two_type_traces):
    app = load_hetero_applications(two_type_traces, ["slow"])["toy"]
    pol = GavelPolicy()
    spec = parse_cluster("1xslow:2")
    pol.bind_cluster(spec, 360)
    jobs = [HeteroJob(f"j{i}", app, 0, **pol.job_kwargs(_W(1, 8), app)) for i in range(3)]
    counts = dict.fromkeys("j0 j1 j2".split(), 0)
    alloc: dict = {}
    for r in range(30):
        alloc = pol.optimize(360 * r, jobs, spec.nodes(), alloc)
        assert sum(len(v) for v in alloc.values()) == 2
        for k in alloc:
            counts[k] += 1
    # Each job is entitled to 2/3 of the rounds: 20 of 30.
    assert all(abs(c - 20) <= 1 for c in counts.values()), counts
    # The policy keeps its own caches: nothing stashed on the jobs.
    assert not any(k.startswith("_gavel") for job in jobs for k in vars(job))


class _W:
    def __init__(self, n, b):
        self.num_replicas, self.batch_size, self.category = n, b, None
