"""ModelBatch on the CUDA path against naive per-model loops and the CPU backend."""

from __future__ import annotations

import numpy as np
import pytest

import fastsched.cuda as fc
from fastsched.goodput import GoodputFunction, ModelBatch, SpeedupFunction, speedup_tables
from fastsched.policy import problem
from tests.cuda._support import random_perf, requires_cuda
from tests.goodput import naive

pytestmark = [requires_cuda, pytest.mark.cudasim]


@pytest.fixture(scope="module")
def models():
    rng = np.random.default_rng(12)
    perf = np.array([random_perf(rng) for _ in range(3)])
    grad = np.column_stack([rng.uniform(0, 2, 3), rng.uniform(0, 20, 3)])
    init = np.array([16.0, 32.0, 48.0])
    max_bsz = init * np.array([8.0, 20.0, 3.0])
    acc = np.array([True, False, True])
    return perf, grad, init, max_bsz, acc, ModelBatch(perf, grad, init, max_bsz, None, acc)


def test_tables_cuda_equal_naive_and_cpu(models):
    perf, grad, init, max_bsz, acc, batch = models
    got = batch.speedup_tables(9, backend="cuda")
    np.testing.assert_allclose(got, batch.speedup_tables(9, backend="cpu"), rtol=1e-12, atol=0)
    for j in range(3):
        base = naive.optimize_one(perf[j], grad[j], init[j], 1, 1, max_bsz[j], None, acc[j])[0]
        for m, nodes in ((0, 1), (1, 2)):
            for r in range(1, 10):
                want = naive.optimize_one(perf[j], grad[j], init[j], nodes, r, max_bsz[j], None, acc[j])[0] / base
                assert abs(got[j, m, r] - want) <= 1e-11 * want


def test_optimize_matrix_evaluate_cuda_equal_cpu(models):
    *_, batch = models
    model = np.array([0, 2, 1, 1, 0, 2])
    nodes, reps = np.array([1, 1, 2, 3, 1, 4]), np.array([1, 3, 2, 7, 5, 9])
    for got, want in zip(
        batch.optimize(model, nodes, reps, backend="cuda"),
        batch.optimize(model, nodes, reps, backend="cpu"),
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    for got, want in zip(
        batch.optimize_matrix(nodes, reps, backend="cuda"),
        batch.optimize_matrix(nodes, reps, backend="cpu"),
        strict=True,
    ):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    atomic, accum = np.full(6, 64.0), np.array([0, 1, 0, 2, 0, 1])
    np.testing.assert_allclose(
        batch.evaluate(model, nodes, reps, atomic, accum, backend="cuda"),
        batch.evaluate(model, nodes, reps, atomic, accum, backend="cpu"),
        rtol=1e-12,
        atol=0,
    )


def test_speedup_tables_launcher_uses_public_accessors():
    rng = np.random.default_rng(13)
    fns = [SpeedupFunction(GoodputFunction(random_perf(rng), (0.5, 4.0), 32), max_batch_size=512) for _ in range(2)]
    got = speedup_tables(fns, 7)
    for j, fn in enumerate(fns):
        np.testing.assert_allclose(got[j], fn.table(7), rtol=1e-12, atol=0)


def test_fill_tables_one_launch_feeds_the_policy(monkeypatch):
    """Above the threshold, the policy's table stacking fills every job's table in one launch."""
    rng = np.random.default_rng(14)
    models = [GoodputFunction(random_perf(rng), (0.5, 4.0), 32) for _ in range(3)]

    def fns():
        return [SpeedupFunction(g, max_batch_size=512, accumulation=bool(i % 2)) for i, g in enumerate(models)]

    want = problem.speedup_tables(fns(), [0, 1, 2], np.array([6, 9, 4]), 4)  # below the threshold: lazy fills
    monkeypatch.setitem(fc.AUTO_THRESHOLDS, "speedup", 1)
    gpu_fns = fns()
    assert SpeedupFunction.fill_tables(gpu_fns, 9, backend="cpu") == 0
    fc.reset_transfer_stats()
    got = problem.speedup_tables(gpu_fns, [0, 1, 2], np.array([6, 9, 4]), 4)
    assert fc.transfer_stats()["d2h_count"] == 1  # one launch brought back every job's table
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert SpeedupFunction.fill_tables(gpu_fns, 9) == 0  # already covered: nothing to do
