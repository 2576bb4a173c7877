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
