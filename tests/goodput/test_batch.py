"""ModelBatch (many models per call) against naive per-model loops and the one-model faces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.goodput import GoodputFunction, ModelBatch, SpeedupFunction
from tests.goodput import naive

FEW = settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def random_models(rng, count):
    perf = np.column_stack(
        [
            rng.uniform(1e-3, 0.2, count),
            rng.uniform(1e-5, 1e-2, count),
            rng.uniform(1e-3, 0.5, count),
            rng.uniform(1e-5, 5e-2, count),
            rng.uniform(1e-4, 0.1, count),
            rng.uniform(1e-6, 1e-2, count),
            rng.uniform(1.0, 10.0, count),
        ]
    )
    grad = np.column_stack([rng.uniform(0, 2, count), rng.uniform(0, 20, count)])
    init = rng.integers(1, 257, count).astype(np.float64)
    max_bsz = init * rng.uniform(1.0, 40.0, count)
    hi = np.where(rng.random(count) < 0.5, 0.0, np.ceil(init * rng.uniform(1.0, 4.0, count)))
    rng_ = np.column_stack([np.zeros(count), hi])
    acc = rng.random(count) < 0.5
    return perf, grad, init, max_bsz, rng_, acc


@FEW
@given(st.integers(0, 2**32 - 1))
def test_optimize_matches_naive_per_model(seed):
    rng = np.random.default_rng(seed)
    perf, grad, init, max_bsz, brange, acc = random_models(rng, 4)
    batch = ModelBatch(perf, grad, init, max_bsz, brange, acc)
    n = 20
    model = rng.integers(0, 4, n)
    reps = rng.integers(1, 40, n)
    nodes = np.minimum(rng.integers(1, 4, n), reps)
    g, a, s = batch.optimize(model, nodes, reps, backend="cpu")
    for i in range(n):
        j = model[i]
        bsz_range = (None, brange[j, 1] or None)
        want = naive.optimize_one(perf[j], grad[j], init[j], int(nodes[i]), int(reps[i]), max_bsz[j], bsz_range, acc[j])
        assert abs(g[i] - want[0]) <= 1e-11 * max(want[0], 1e-300)


@FEW
@given(st.integers(0, 2**32 - 1))
def test_tables_and_matrix_equal_the_one_model_faces_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    perf, grad, init, max_bsz, brange, acc = random_models(rng, 3)
    batch = ModelBatch(perf, grad, init, max_bsz, brange, acc)
    tables = batch.speedup_tables(17, backend="cpu")
    nodes, reps = np.array([1, 1, 2, 3]), np.array([1, 5, 5, 9])
    mg, ma, ms = batch.optimize_matrix(nodes, reps, backend="cpu")
    for j in range(3):
        g = GoodputFunction(perf[j], grad[j], init[j])
        rng_j = (None, brange[j, 1] or None)
        sp = SpeedupFunction(
            g, max_batch_size=max_bsz[j], atomic_bsz_range=rng_j, accumulation=bool(acc[j]), backend="cpu"
        )
        np.testing.assert_array_equal(tables[j], sp.table(17))
        want = g.optimize(nodes, reps, max_bsz[j], rng_j, bool(acc[j]), backend="cpu")
        np.testing.assert_array_equal(mg[j], want[0])
        np.testing.assert_array_equal(ma[j], want[1])
        np.testing.assert_array_equal(ms[j], want[2])
    # The many-jobs table also rebuilds from SpeedupFunctions.
    fns = [SpeedupFunction(GoodputFunction(perf[j], grad[j], init[j]), max_bsz[j], backend="cpu") for j in range(3)]
    from_fns = ModelBatch.from_speedup_functions(fns).speedup_tables(6, backend="cpu")
    for j in range(3):
        np.testing.assert_array_equal(from_fns[j], fns[j].table(6))


def test_evaluate_matches_naive():
    rng = np.random.default_rng(3)
    perf, grad, init, *_ = random_models(rng, 3)
    batch = ModelBatch(perf, grad, init)
    model = np.array([0, 1, 2, 2, 1])
    nodes, reps = np.array([1, 1, 2, 2, 1]), np.array([1, 4, 4, 8, 2])
    atomic, accum = np.full(5, 300.0), np.array([0, 1, 2, 0, 3])
    got = batch.evaluate(model, nodes, reps, atomic, accum, backend="cpu")
    tput = batch.throughput(model, nodes, reps, atomic, accum, backend="cpu")
    for i in range(5):
        j = model[i]
        args = (nodes[i], reps[i], atomic[i], accum[i])
        assert abs(got[i] - naive.goodput(perf[j], grad[j], init[j], *args)) <= 1e-12 * got[i]
        assert abs(tput[i] - naive.throughput(perf[j], *args)) <= 1e-12 * tput[i]


def test_bad_input():
    perf = [[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]] * 2
    with pytest.raises(ValueError, match=r"perf_params\[1\].gamma"):
        ModelBatch([perf[0], perf[0][:6] + [11.0]], [[0, 1]] * 2, 32)
    with pytest.raises(ValueError, match="shape"):
        ModelBatch(perf, [[0, 1]] * 3, 32)
    with pytest.raises(ValueError, match=r"init_batch_size\[0\]"):
        ModelBatch(perf, [[0, 1]] * 2, [64, 8], max_batch_size=[32, 32])
    with pytest.raises(ValueError, match="must be finite"):
        ModelBatch(perf, [[np.nan, 1]] * 2, 32)
    with pytest.raises(TypeError, match="accumulation"):
        ModelBatch(perf, [[0, 1]] * 2, 32, accumulation=[1, 0])
    b = ModelBatch(perf, [[0, 1]] * 2, 32)
    with pytest.raises(ValueError, match="model must be <= 1"):
        b.optimize([0, 2], 1, 1, backend="cpu")
    with pytest.raises(ValueError, match="num_nodes must be <= num_replicas"):
        b.optimize([0, 1], [3, 1], [2, 1], backend="cpu")
    with pytest.raises(ValueError, match="atomic_bsz"):
        b.evaluate(0, 1, 1, -4, 0, backend="cpu")
    with pytest.raises(ValueError, match="goodput 0 at one replica"):
        ModelBatch(perf, [[0, 1]] * 2, 32, 64, [(48, 64), (0, 0)]).speedup_tables(4, backend="cpu")
