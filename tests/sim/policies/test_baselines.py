"""Issue 24.1: the new baselines, against hand-computed allocations on small instances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastsched.sim import WorkloadJob, simulate
from fastsched.sim.engine.hetero_job import fixed_batch_throughput, load_hetero_applications, make_hetero_jobs
from fastsched.sim.engine.job import Job
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.policies import POLICY_NAMES, make_policy
from fastsched.sim.policies._oracle import remaining_steps, total_steps
from fastsched.sim.policies.gavel_objectives import max_min_allocation, min_total_duration_allocation
from fastsched.sim.policies.themis import finish_time_fairness_allocation
from fastsched.sim.truth.builtin import builtin_applications
from tests.sim.two_types import write_two_type_traces

NEW = ("fifo", "srtf", "las", "themis", "min-total-duration", "max-sum-throughput", "gandiva", "allox", "shockwave")


def test_las_on_two_types_gives_each_job_its_best_type():
    # Job 0 runs 2x faster on type 1, job 1 equally on both; one GPU of each. Normalised by the
    # even spread (1.5 and 1), job 1 can reach at most 1: the min is 1 at best, reached with
    # job 1 on type 0, which leaves type 1 wholly to job 0 (2 / 1.5 > 1).
    x = max_min_allocation(np.array([[1.0, 2.0], [1.0, 1.0]]), np.ones(2), np.ones(2))
    assert x.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_min_total_duration_on_two_types():
    # Job 0 has 3 steps and runs 3 steps/s on type 1; job 1 has 1 step at 1 step/s anywhere:
    # both end at 1 s with job 0 on type 1 and job 1 on type 0; nothing ends sooner.
    x = min_total_duration_allocation(np.array([[1.0, 3.0], [1.0, 1.0]]), np.ones(2), np.ones(2), np.array([3.0, 1.0]))
    assert x.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_themis_equalises_finish_time_fairness():
    # One GPU, two equal jobs of 1 step; job 1 has waited 1 s; isolated finish 2 s each.
    # rho_0 = (1 / x0) / 2 = rho_1 = (1 + 1 / x1) / 2 with x0 + x1 = 1: x0 = (3 - sqrt 5) / 2.
    x, rho = finish_time_fairness_allocation(
        np.ones((2, 1)), np.ones(2), np.array([1.0]), np.ones(2), np.array([0.0, 1.0]), np.full(2, 2.0), rtol=1e-6
    )
    x0 = (3 - math.sqrt(5)) / 2
    assert x[:, 0] == pytest.approx([x0, 1 - x0], abs=2e-5)
    assert rho == pytest.approx(1 / (2 * x0), rel=1e-5)


def test_oracle_counts_the_steps_the_simulator_makes():
    app = builtin_applications()["cifar10"]
    tput = fixed_batch_throughput(app, (1,), 128)
    job = Job("a", app, 0, target_num_replicas=1, target_batch_size=128)
    before = remaining_steps(job)
    assert before == pytest.approx(total_steps(job))
    job.reallocate([1])
    job.step(40)  # 30 s restart pause, 10 s of training within the first epoch
    assert job.epoch == 0
    assert before - remaining_steps(job) == pytest.approx(10 * tput, rel=1e-9)
    job.step(3600)
    # The simulator rounds each epoch crossing to a whole second: at most 0.5 s of steps each.
    made = (3600 + 10) * tput
    assert abs(before - remaining_steps(job) - made) <= job.epoch * 0.5 * tput


@pytest.fixture
def toy(tmp_path):
    write_two_type_traces(tmp_path)
    return load_hetero_applications(tmp_path, ["slow", "fast"])


def _jobs(pol, apps, rows, cluster="1xslow:2,1xfast:2"):
    pol.bind_cluster(parse_cluster(cluster), 60)
    return make_hetero_jobs(rows, apps, pol, pol.cluster)


def test_fifo_takes_the_fastest_type_with_room(toy):
    pol = make_policy("fifo")
    rows = [WorkloadJob("a", 0, "toy", 2, 8), WorkloadJob("b", 10, "toy", 2, 8), WorkloadJob("c", 20, "toy", 1, 8)]
    jobs = _jobs(pol, toy, rows)
    # Nodes: 0 is slow, 1 is fast. a (first) gets the fast node, b the slow one, c waits.
    assert pol.optimize(60, jobs, pol.cluster.nodes(), {}) == {"a": [1, 1], "b": [0, 0]}


def test_srtf_runs_the_shortest_on_the_fastest_type_and_preempts(toy):
    pol = make_policy("srtf")
    rows = [WorkloadJob("long", 0, "toy", 2, 8), WorkloadJob("short", 10, "toy", 2, 8)]
    long, short = _jobs(pol, toy, rows, cluster="1xslow:2,1xfast:2")
    short.progress, short.epoch = short.hetero_application.progress(2), 2  # one epoch left
    out = pol.optimize(60, [long, short], pol.cluster.nodes(), {"long": [1, 1]})
    assert out == {"short": [1, 1], "long": [0, 0]}  # the shorter job takes the fast node


@pytest.mark.parametrize("name", NEW)
def test_registered_with_a_docstring_naming_the_paper(name):
    assert name in POLICY_NAMES
    doc = type(make_policy(name)).__doc__
    assert any(venue in doc for venue in ("OSDI", "NSDI", "EuroSys", "SOSP"))
    assert "§" in doc  # the section followed


@pytest.mark.parametrize("name", NEW)
def test_each_policy_completes_a_small_workload_on_two_types(tmp_path, name):
    write_two_type_traces(tmp_path)
    rows = [WorkloadJob(f"j{i}", 30 * i, "toy", 1 + i % 2, 8) for i in range(5)]
    result = simulate(rows, traces=tmp_path, policy=name, cluster="1xslow:2,1xfast:2")
    assert result.completed == len(rows)
    held = result.allocations.max(axis=0)
    assert held.tolist() == [r.num_replicas for r in rows]  # rigid: exactly the requested GPUs
