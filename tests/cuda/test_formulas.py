"""The CUDA path against the plain references of tests/goodput/naive.py (GPU or NUMBA_ENABLE_CUDASIM=1).

Not only against the CPU kernels: both targets compile the same formulas, so a formula that is
wrong would agree with itself. Extreme inputs are the ones the fuzz suite found: gradients
near the float64 limits and counts near 2**53.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastsched.cuda as fc
from fastsched.goodput import GoodputFunction
from tests.cuda._support import TPB, model_params, random_perf, requires_cuda
from tests.goodput import naive

pytestmark = [requires_cuda, pytest.mark.cudasim]

FEW = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
EXTREME = [0.0, 1e-320, 1e-300, 1e-8, 0.5, 20.0, 1e300, 1e308]
grads = st.tuples(st.sampled_from(EXTREME), st.sampled_from(EXTREME))


def tol(grad, rtol):
    # A subnormal gradient statistic carries few significant bits (1e-320 is ~2000 ulps of
    # the smallest subnormal), and the shared efficiency formula divides by it: both targets
    # lose the same precision there (noted in benchmarks/results/gpu.md).
    return 1e-2 if any(0.0 < x < 2.2250738585072014e-308 for x in grad) else rtol


def close(got, want, rtol=1e-12):
    got, want = float(got), float(want)
    if not np.isfinite(want):
        return got == want
    return abs(got - want) <= rtol * max(abs(want), 1e-300)


@FEW
@given(st.integers(0, 2**32 - 1), grads, st.booleans())
def test_elementwise_matches_naive(seed, grad, with_eff):
    rng = np.random.default_rng(seed)
    perf = random_perf(rng)
    init = float(rng.integers(1, 257))
    n = 24
    replicas = rng.integers(1, 2000, n)
    replicas[:3] = [1, 2, 2**40]
    nodes = np.minimum(rng.integers(1, 64, n), replicas)
    atomic = rng.integers(1, 4096, n)
    atomic[3:5] = [2**40, 2**52]  # overflow-prone counts (finite results in float64)
    accum = rng.integers(0, 8, n)
    atomic = np.maximum(atomic, np.ceil(init / (replicas * (accum + 1))).astype(np.int64))
    got = fc.elementwise(
        model_params(perf, *grad, init), nodes, replicas, atomic, accum, with_eff, threads_per_block=TPB
    )
    for i in range(n):
        args = (int(nodes[i]), float(replicas[i]), float(atomic[i]), float(accum[i]))
        want = naive.goodput(perf, grad, init, *args) if with_eff else naive.throughput(perf, *args)
        assert close(got[i], want, tol(grad, 1e-11)), (i, got[i], want)


@FEW
@given(st.integers(0, 2**32 - 1), grads, st.booleans(), st.sampled_from(["wide", "narrow", "flat"]))
def test_grid_search_matches_naive(seed, grad, accumulation, bounds):
    rng = np.random.default_rng(seed)
    perf = random_perf(rng)
    init = float(rng.integers(1, 257))
    max_bsz = init * float(rng.uniform(1.0, 64.0)) if bounds != "flat" else init
    bsz_range = (None, None) if bounds != "narrow" else (float(rng.integers(1, 16)), float(rng.integers(16, 128)))
    lo = bsz_range[0] or 1.0
    hi = bsz_range[1] or max_bsz
    n = 16
    reps = rng.integers(1, 100, n)
    reps[:2] = 1
    multi = rng.random(n) < 0.5
    multi[reps == 1] = False
    params = model_params(perf, *grad, init, max_bsz, lo, hi, accumulation)
    g, a, s = fc.optimize_keys(params, multi, reps, threads_per_block=TPB)
    for i in range(n):
        nodes = 2 if multi[i] else 1
        wg, wa, ws = naive.optimize_one(perf, grad, init, nodes, int(reps[i]), max_bsz, bsz_range, accumulation)
        # The naive reference ranks by its own (exact) efficiency: accept rounding-level ties.
        assert close(g[i], wg, tol(grad, 1e-11)), (i, g[i], wg)
        if (a[i], s[i]) != (wa, ws):
            mine = naive.goodput(perf, grad, init, nodes, int(reps[i]), int(a[i]), int(s[i]))
            assert close(mine, wg, tol(grad, 1e-11))


def test_overflow_is_reported_like_the_cpu():
    # beta_c near the float64 limit overflows accum_time (0 * inf = NaN in the step time): the
    # device path must raise the CPU path's ValueError, not return NaN.
    g = GoodputFunction([0.1, 1e308, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
    cols = [np.array([1, 1]), np.array([1, 2]), np.array([64, 2**40]), np.array([0, 0])]
    with pytest.raises(ValueError) as cpu:
        g.evaluate(*cols, backend="cpu")
    with pytest.raises(ValueError) as dev:
        g.evaluate(*[fc.to_device(c) for c in cols])
    assert str(dev.value) == str(cpu.value)
