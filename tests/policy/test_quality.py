"""Quality: the genetic search against the exact MILP and the first-fit baseline."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.goodput import GoodputFunction, GradParams, PerfParams, SpeedupFunction
from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy, exact_optimize
from fastsched.policy.problem import allocation_objective, build_problem
from tests.policy import naive
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


def _check_quality(jobs, nodes, base, template, seed=11):
    """Ratio of the policy's returned allocation to the MILP optimum, both rescored by the
    plain reference; the allocation is feasible and never below first fit."""
    opt_alloc, _, status = exact_optimize(jobs, nodes, base, template, time_limit=60)
    assert status == "optimal"
    opt = naive.allocation_value(jobs, nodes, template, base, opt_alloc)
    policy = PolluxPolicy(seed=seed)
    allocations, _ = policy.optimize(jobs, nodes, base, template)
    assert naive.check_allocations(jobs, nodes, base, allocations) == []
    got = naive.allocation_value(jobs, nodes, template, base, allocations)
    ff = naive.allocation_value(jobs, nodes, template, base, first_fit(jobs, nodes))
    assert got <= opt * (1 + 1e-9) + 1e-12
    assert got >= ff - 1e-9, (got, ff)
    return got / opt if opt > 0 else 1.0


@pytest.mark.parametrize("base_fraction", [0.0, 0.6])
def test_ga_close_to_milp(base_fraction):
    rng = np.random.default_rng(7 if base_fraction else 3)
    ratios = []
    for num_jobs, num_nodes, gpus in CASES:
        jobs, nodes, base, template = random_instance(rng, num_jobs, num_nodes, gpus, base_fraction)
        ratios.append(_check_quality(jobs, nodes, base, template))
    assert np.mean(ratios) >= 0.99, ratios
    assert min(ratios) >= 0.97, ratios


@pytest.mark.parametrize("seed", [2, 3, 5])
def test_spare_gpus_reach_optimum(seed):
    """More GPUs than the jobs can use: the optimum spreads jobs over many GPUs. On these
    seeds the genetic search alone (``polish=False``) stays at 96-98 % of the optimum."""
    rng = np.random.default_rng(100 + seed)
    jobs, nodes, base, template = random_instance(rng, 4, 8, 4)
    assert _check_quality(jobs, nodes, base, template) >= 0.99


def test_milp_objective_matches_scorer():
    rng = np.random.default_rng(5)
    jobs, nodes, base, template = random_instance(rng, 5, 2, 4, 0.5)
    allocations, opt, _ = exact_optimize(jobs, nodes, base, template)
    prob = build_problem(jobs, nodes, base, template)
    assert abs(allocation_objective(prob, allocations) - opt) <= 1e-6 * max(opt, 1)
