"""pytest-benchmark suite of the goodput core (run: ``pytest benchmarks/goodput``).

Not part of the default test run; side-by-side ratios against AdaptDL come from
``benchmarks/compare_adaptdl.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction, fit_perf_params
from fastsched.goodput import ModelBatch

PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = GradParams(0.00136, 0.000502)


@pytest.fixture(scope="module")
def fn():
    return GoodputFunction(PERF, GRAD, 128)


def configs(n, max_replicas=64, seed=0):
    rng = np.random.RandomState(seed)
    replicas = rng.randint(1, max_replicas + 1, n)
    return np.minimum(rng.randint(1, 9, n), replicas), replicas


def test_optimize_scalar_memo_hit(benchmark, fn):
    benchmark(fn.optimize, 1, 4, 1280, (64, 256), True)


def test_optimize_scalar_kernel_path(benchmark, fn):
    def call():
        fn._scalar_memo.clear()  # measure the grid-search kernel, not the memo
        return fn.optimize(1, 4, 1280, (64, 256), True)

    benchmark(call)


@pytest.mark.parametrize("size", [10**3, 10**5])
def test_optimize_vectorised(benchmark, fn, size):
    nodes, replicas = configs(size)
    benchmark(fn.optimize, nodes, replicas, 1280, (64, 256), True)


def test_optimize_vectorised_distinct_keys(benchmark, fn):
    # Every configuration a distinct key: the dedupe cannot help; pure grid-search cost.
    replicas = np.arange(1, 10**4 + 1)
    benchmark(fn.optimize, np.ones_like(replicas), replicas, 10**6, (64, 4096), True)


def test_evaluate_1e6(benchmark, fn):
    rng = np.random.RandomState(2)
    nodes, replicas = configs(10**6, seed=2)
    atomic = rng.randint(128, 512, nodes.shape[0])
    accum = rng.randint(0, 4, nodes.shape[0])
    benchmark(fn.evaluate, nodes, replicas, atomic, accum)


def test_evaluate_1e6_float_input(benchmark, fn):
    rng = np.random.RandomState(3)
    nodes, replicas = configs(10**6, seed=3)
    atomic = rng.uniform(128, 512, nodes.shape[0])  # non-integral: no tables
    accum = rng.randint(0, 4, nodes.shape[0])
    benchmark(fn.evaluate, nodes, replicas, atomic, accum)


def test_fit_20(benchmark):
    rng = np.random.RandomState(3)
    nodes = rng.randint(1, 5, 20)
    replicas = nodes * rng.randint(1, 5, 20)
    atomic = rng.randint(32, 512, 20)
    t_accum = (PERF.alpha_c + PERF.beta_c * atomic) * rng.uniform(0.95, 1.05, 20)
    t_optim = t_accum * (1 + 0.2 * replicas) * rng.uniform(0.95, 1.05, 20)
    benchmark(fit_perf_params, nodes, replicas, atomic, t_accum, t_optim)


def test_speedup_1000_warm(benchmark, fn):
    nodes, replicas = configs(1000, seed=4)
    sp = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    sp(nodes, replicas)
    benchmark(sp, nodes, replicas)


def _many_models(count, seed=0):
    rng = np.random.RandomState(seed)
    models = []
    for _ in range(count):
        values = np.array(PERF) * rng.uniform(0.5, 2.0, 7)
        values[6] = rng.uniform(1.0, 3.0)  # gamma stays in [1, 10]
        models.append(GoodputFunction(PerfParams(*values), GRAD, 128))
    return models


def test_many_job_tables_model_batch(benchmark):
    # 200 jobs' speedup tables up to 256 replicas in one parallel launch (ModelBatch) ...
    fns = [SpeedupFunction(g, 1280, (64, 256), True) for g in _many_models(200)]
    batch = ModelBatch.from_speedup_functions(fns)
    benchmark(batch.speedup_tables, 256, "cpu")


def test_many_job_tables_one_by_one(benchmark):
    # ... against 200 lazily filled SpeedupFunction tables (fresh functions each round).
    models = _many_models(200)

    def fill():
        for g in models:
            SpeedupFunction(g, 1280, (64, 256), True, backend="cpu").table(256)

    benchmark(fill)
