"""Quality: the genetic search against the exact MILP and the first-fit baseline."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.goodput import GoodputFunction, GradParams, PerfParams, SpeedupFunction
from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy, exact_optimize
from fastsched.policy.problem import allocation_objective, build_problem
from tests.policy.conftest import PERF


def random_instance(rng, num_jobs, num_nodes, gpus, base_fraction=0.0):
    nodes = {f"n{i}": NodeInfo({"gpu": gpus, "cpu": 4000 * gpus, "pods": 32}, False) for i in range(num_nodes)}
    template = NodeInfo({"gpu": gpus, "cpu": 4000 * gpus, "pods": 32}, True)
    jobs = {}
    for j in range(num_jobs):
        f = np.exp(rng.normal(0.0, 0.5, size=7))
        perf = PerfParams(*[p * x for p, x in zip(PERF[:6], f[:6], strict=False)], 1.0 + 0.14 * f[6])
        grad = GradParams(0.00136 * np.exp(rng.normal(0, 1)), 0.000502 * np.exp(rng.normal(0, 1)))
        init = int(rng.choice([32, 64, 128]))
        fn = SpeedupFunction(GoodputFunction(perf, grad, init), max_batch_size=16 * init, atomic_bsz_range=(16, 256))
        mx = int(rng.integers(1, 2 * gpus + 2))
        mn = int(rng.integers(0, 3)) if rng.random() < 0.3 else 0
        mn = min(mn, mx)
        res = {"gpu": 1, "cpu": int(rng.choice([1000, 2000, 4000])), "pods": 1}
        jobs[f"j{j}"] = JobInfo(res, fn, j, mn, mx)
    base = {}
    if base_fraction:
        keys = sorted(nodes)
        for j, key in enumerate(jobs):
            if rng.random() < base_fraction:
                base[key] = [keys[j % num_nodes]]
    return jobs, nodes, base, template


def first_fit(jobs, nodes):
    free = {k: dict(n.resources) for k, n in nodes.items()}
    out = {}
    for key, job in jobs.items():
        want = max(job.min_replicas, 1)
        for nk in sorted(free):
            if all(free[nk].get(r, 0) >= want * v for r, v in job.resources.items()):
                for r, v in job.resources.items():
                    free[nk][r] -= want * v
                out[key] = [nk] * want
                break
    return out


CASES = [(3, 2, 4), (4, 2, 4), (5, 3, 2), (6, 2, 4), (6, 4, 2), (8, 3, 4), (5, 1, 8), (8, 4, 4)]


@pytest.mark.parametrize("base_fraction", [0.0, 0.6])
def test_ga_close_to_milp(base_fraction):
    rng = np.random.default_rng(7 if base_fraction else 3)
    ratios = []
    for num_jobs, num_nodes, gpus in CASES:
        jobs, nodes, base, template = random_instance(rng, num_jobs, num_nodes, gpus, base_fraction)
        prob = build_problem(jobs, nodes, base, template)
        _, opt, status = exact_optimize(jobs, nodes, base, template, time_limit=60)
        assert status == "optimal"
        policy = PolluxPolicy(seed=11)
        allocations, _ = policy.optimize(jobs, nodes, base, template)
        ga = policy.last_stats["objective_real"]
        ff = allocation_objective(prob, first_fit(jobs, nodes))
        assert ga <= opt * (1 + 1e-9) + 1e-12
        assert ga >= ff - 1e-9, (num_jobs, num_nodes, gpus, ga, ff)
        ratios.append(ga / opt if opt > 0 else 1.0)
    assert np.mean(ratios) >= 0.98, ratios


def test_milp_objective_matches_scorer():
    rng = np.random.default_rng(5)
    jobs, nodes, base, template = random_instance(rng, 5, 2, 4, 0.5)
    allocations, opt, _ = exact_optimize(jobs, nodes, base, template)
    prob = build_problem(jobs, nodes, base, template)
    assert abs(allocation_objective(prob, allocations) - opt) <= 1e-6 * max(opt, 1)
