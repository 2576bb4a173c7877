"""Every documented bad input raises ValueError/TypeError naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction

PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = GradParams(0.00136, 0.000502)


@pytest.mark.parametrize(
    "perf, grad, init, exc, match",
    [
        (PERF._replace(alpha_c=np.nan), GRAD, 128, ValueError, "alpha_c"),
        (PERF._replace(beta_n=np.inf), GRAD, 128, ValueError, "beta_n"),
        (PERF._replace(beta_r=-1.0), GRAD, 128, ValueError, "beta_r"),
        (PERF._replace(gamma=0.5), GRAD, 128, ValueError, "gamma"),
        (PERF._replace(gamma=10.5), GRAD, 128, ValueError, "gamma"),
        (PERF[:6], GRAD, 128, ValueError, "7 entries"),
        (PERF, GradParams(-1.0, 0.1), 128, ValueError, "sqr"),
        (PERF, GradParams(0.1, np.nan), 128, ValueError, "var"),
        (PERF, GRAD, 0, ValueError, "init_batch_size"),
        (PERF, GRAD, "128", TypeError, "init_batch_size"),
        (5, GRAD, 128, TypeError, "perf_params"),
    ],
)
def test_constructor_rejects(perf, grad, init, exc, match):
    with pytest.raises(exc, match=match):
        GoodputFunction(perf, grad, init)


@pytest.fixture
def fn():
    return GoodputFunction(PERF, GRAD, 128)


def test_optimize_rejects(fn):
    with pytest.raises(ValueError, match="num_nodes"):
        fn.optimize(0, 1)
    with pytest.raises(ValueError, match="num_nodes"):
        fn.optimize(3, 2)
    with pytest.raises(ValueError, match="num_nodes"):
        fn.optimize(np.array([1, 3]), np.array([2, 2]))
    with pytest.raises(ValueError, match="max_batch_size"):
        fn.optimize(1, 1, max_batch_size=64)
    with pytest.raises(ValueError, match="atomic_bsz_range"):
        fn.optimize(1, 1, max_batch_size=1280, atomic_bsz_range=(256, 64))
    with pytest.raises(ValueError, match="empty"):
        fn.optimize(np.array([], dtype=int), np.array([], dtype=int))
    with pytest.raises(ValueError, match="broadcast"):
        fn.optimize(np.ones(3, int), np.ones(4, int))
    with pytest.raises(ValueError, match="num_replicas"):
        fn.optimize(np.array([1.0]), np.array([np.nan]))
    with pytest.raises(ValueError, match="integer"):
        fn.optimize(1, 2.5)
    with pytest.raises(TypeError, match="num_replicas"):
        fn.optimize(1, "2")
    with pytest.raises(ValueError, match="max_batch_size"):
        fn.optimize(1, 1, max_batch_size=np.inf)


def test_evaluate_rejects(fn):
    with pytest.raises(ValueError, match="init_batch_size"):
        fn.evaluate(1, 1, 64, 0)  # total batch 64 < 128
    with pytest.raises(ValueError, match="atomic_bsz"):
        fn.evaluate(1, 1, np.nan, 0)
    with pytest.raises(ValueError, match="accum_steps"):
        fn.throughput(1, 1, 128, -1)
    with pytest.raises(ValueError, match="num_nodes"):
        fn.throughput(2, 1, 128, 0)
    with pytest.raises(ValueError, match="broadcast"):
        fn.evaluate(np.ones(2), np.ones(3), 128, 0)
    with pytest.raises(ValueError, match="batch_size"):
        fn.efficiency(0)
    with pytest.raises(ValueError, match="batch_size"):
        fn.efficiency(np.array([128.0, -1.0]))


def test_speedup_rejects(fn):
    with pytest.raises(TypeError, match="goodput_fn"):
        SpeedupFunction(object())
    with pytest.raises(ValueError, match="goodput at"):
        # One replica cannot run the initial batch of 128 within atomic range (16, 64).
        SpeedupFunction(fn, atomic_bsz_range=(16, 64))
    sp = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    with pytest.raises(ValueError, match="num_nodes"):
        sp(2, 1)
    with pytest.raises(ValueError, match="0 exactly"):
        sp(0, 2)
    with pytest.raises(ValueError, match="num_replicas"):
        sp(1, -1)


# -- issue 27: extreme batch limits ------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_huge_max_batch_size_named(dtype):
    # 7.66e299 gave atomic batch -2**63 and accumulation steps -1 (an int64 overflow).
    fn = GoodputFunction(PERF, GRAD, 16)
    nodes, reps = np.array([1, 1, 2], dtype), np.array([1, 4, 8], dtype)
    for kwargs in ({"max_batch_size": 7.66e299}, {"max_batch_size": 2.0**53 + 2**11}):
        with pytest.raises(ValueError, match="max_batch_size"):
            fn.optimize(nodes, reps, accumulation=True, **kwargs)
    with pytest.raises(ValueError, match=r"atomic_bsz_range\[1\]"):
        fn.optimize(nodes, reps, 1280, (1, 1e300), True)
    with pytest.raises(ValueError, match="init_batch_size"):
        GoodputFunction(PERF, GRAD, 1e300)


def test_many_models_bound_batch_sizes():
    from fastsched.goodput import ModelBatch

    perf = np.array([PERF, PERF])
    with pytest.raises(ValueError, match="max_batch_size"):
        ModelBatch(perf, [GRAD, GRAD], 16, max_batch_size=[1e300, 64])
    with pytest.raises(ValueError, match="atomic_bsz_range"):
        ModelBatch(perf, [GRAD, GRAD], 16, max_batch_size=64, atomic_bsz_range=(1, 1e300))


@pytest.mark.parametrize("accumulation", [False, True])
def test_grid_search_at_the_batch_bounds(accumulation):
    # At the largest accepted batch size (and atomic ranges from 1e-300 up) every result is a
    # valid count: before, max_atomic > 1e8 x the per-replica batch gave accum steps -1.
    fn = GoodputFunction(PERF, GRAD, 16)
    reps = np.array([1, 2, 4, 8, 2**20, 2**40])
    for rng in (None, (1e-300, 1e-300), (1e-300, 0.5), (1, 2.0**53), (2.0**53, 2.0**53)):
        g, a, s = fn.optimize(np.ones_like(reps), reps, 2.0**53, rng, accumulation)
        assert np.all(np.isfinite(g) & (g >= 0)) and np.all(a >= 0) and np.all(s >= 0), (rng, g, a, s)
    g, a, s = fn.optimize(np.ones(2, int), np.array([1, 4]), 2.0**53, None, accumulation)
    assert np.all(g > 1.0)  # a real configuration is found, not a zero-goodput grid point


def test_formula_saturates_beyond_the_face():
    # The kernels themselves (shared with CUDA) saturate: no negative or overflowed count even
    # for batch limits the faces refuse.
    from fastsched.goodput import _formulas as F

    fn = GoodputFunction(PERF, GRAD, 16)
    p = fn.kernel_params
    for max_bsz, lo, hi in ((7.66e299, 1.0, 7.66e299), (1e3, 1e-300, 1e-300), (1.7e308, 1.0, 1e-300)):
        for r in (1, 4, 2**40):
            g, a, s = F.best_config(p.perf, p.grad_sqr, p.grad_var, p.init_bsz, r > 1, r, max_bsz, lo, hi, True)
            assert np.isfinite(g) and g >= 0 and a >= 0 and s >= 0
