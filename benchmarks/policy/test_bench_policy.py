"""pytest-benchmark suite of the scheduling policy (run: ``pytest benchmarks/policy``).

Not part of the default test run. Side-by-side ratios against AdaptDL come from
``benchmarks/compare_policy.py``; the 2048-GPU series from ``benchmarks/policy/scale_series.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.policy.scale import scale_instance
from fastsched.policy import PolluxPolicy
from fastsched.policy import _ga as G


def warm_policy(jobs, nodes, template, rounds=1, **kw):
    policy = PolluxPolicy(seed=0, **kw)
    base = {}
    for _ in range(rounds):
        base, _ = policy.optimize(jobs, nodes, base, template)
    return policy, base


@pytest.mark.parametrize("num_jobs, num_nodes", [(16, 4), (64, 16), (256, 64), (1000, 512)])
def test_warm_round(benchmark, num_jobs, num_nodes):
    jobs, nodes, template = scale_instance(num_jobs, num_nodes)
    policy, base = warm_policy(jobs, nodes, template)
    benchmark.pedantic(policy.optimize, (jobs, nodes, base, template), rounds=5, iterations=1)


@pytest.mark.parametrize("num_jobs, num_nodes", [(64, 16), (1000, 512)])
def test_cold_round(benchmark, num_jobs, num_nodes):
    jobs, nodes, template = scale_instance(num_jobs, num_nodes)
    warm_policy(jobs, nodes, template)  # load kernels and fill speedup tables

    def cold():
        PolluxPolicy(seed=1).optimize(jobs, nodes, {}, template)

    benchmark.pedantic(cold, rounds=5, iterations=1)


def test_nondominated_rank_1e4(benchmark):
    rng = np.random.default_rng(0)
    f1 = rng.normal(size=10_000)
    f2 = rng.integers(0, 100, size=10_000).astype(float)
    G.nondominated_rank(f1, f2)
    benchmark(G.nondominated_rank, f1, f2)
