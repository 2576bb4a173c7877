"""Kernels against the plain reference (tests/goodput/naive.py) on random valid inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction
from tests.goodput import naive

positive = st.floats(1e-4, 10.0, allow_nan=False)
perf_st = st.builds(
    lambda vals, gamma: PerfParams(*vals, gamma),
    st.lists(positive, min_size=6, max_size=6),
    st.floats(1.0, 10.0),
)
# Gradient statistics are 0 or normal-sized: near the subnormal range the reference formula
# (var / scale + sqr) underflows and loses all precision, while fastsched's rearranged
# (var + sqr * scale) stays exact; there the two legitimately differ.
grad_value = st.one_of(st.just(0.0), st.floats(1e-200, 10.0))
grad_st = st.builds(GradParams, grad_value, grad_value)
init_st = st.integers(1, 512)


def rel_close(a, b, tol=1e-12):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.all(np.abs(a - b) <= tol * np.maximum(np.abs(b), 1e-300))


@st.composite
def configs(draw, max_size=40):
    n = draw(st.integers(1, max_size))
    replicas = np.array(draw(st.lists(st.integers(1, 64), min_size=n, max_size=n)))
    nodes = np.array([draw(st.integers(1, int(r))) for r in replicas])
    return nodes, replicas


@given(perf_st, grad_st, init_st, configs(), st.data())
def test_evaluate_throughput_efficiency_match_reference(perf, grad, init, cfg, data):
    nodes, replicas = cfg
    atomic = np.array([data.draw(st.integers(1, 1024)) for _ in nodes])
    accum = np.array([data.draw(st.integers(0, 8)) for _ in nodes])
    # Raise the atomic batch where needed so every total batch is >= init.
    atomic = np.maximum(atomic, -(-init // (replicas * (accum + 1))))
    fn = GoodputFunction(perf, grad, init)
    expected_t = [naive.throughput(perf, *args) for args in zip(nodes, replicas, atomic, accum, strict=True)]
    expected_g = [naive.goodput(perf, grad, init, *args) for args in zip(nodes, replicas, atomic, accum, strict=True)]
    bsz = replicas * atomic * (accum + 1)
    expected_e = [naive.efficiency(grad, init, b) for b in bsz]
    assert rel_close(fn.throughput(nodes, replicas, atomic, accum), expected_t)
    assert rel_close(fn.evaluate(nodes, replicas, atomic, accum), expected_g)
    assert rel_close(fn.efficiency(bsz), expected_e)
    # Scalar calls give Python floats equal to the array results.
    g0 = fn(int(nodes[0]), int(replicas[0]), int(atomic[0]), int(accum[0]))
    assert isinstance(g0, float) and rel_close(g0, expected_g[0])


bsz_range_st = st.one_of(
    st.none(),
    st.tuples(st.one_of(st.none(), st.integers(1, 128)), st.one_of(st.none(), st.integers(128, 2048))),
)


@given(perf_st, grad_st, init_st, configs(), st.integers(1, 20), bsz_range_st, st.booleans())
def test_optimize_matches_reference(perf, grad, init, cfg, max_mult, bsz_range, accumulation):
    nodes, replicas = cfg
    max_bsz = init * max_mult
    fn = GoodputFunction(perf, grad, init)
    goodput, atomic, accum = fn.optimize(nodes, replicas, max_bsz, bsz_range, accumulation)
    assert goodput.shape == atomic.shape == accum.shape == nodes.shape
    for i, (n, r) in enumerate(zip(nodes, replicas, strict=True)):
        eg, ea, es = naive.optimize_one(perf, grad, init, int(n), int(r), max_bsz, bsz_range, accumulation)
        assert rel_close(goodput[i], eg)
        if (atomic[i], accum[i]) != (ea, es):
            # Only a tie up to rounding may pick another point (the two sides round the
            # overlap power differently); ours must then score the same in the reference.
            ours = naive.goodput(perf, grad, init, int(n), int(r), int(atomic[i]), int(accum[i]))
            assert rel_close(ours, eg)
    # The scalar path agrees with the vectorised one.
    g0, a0, s0 = fn.optimize(int(nodes[0]), int(replicas[0]), max_bsz, bsz_range, accumulation)
    assert isinstance(g0, float) and isinstance(a0, int) and isinstance(s0, int)
    assert (g0, a0, s0) == (goodput[0], atomic[0], accum[0])


@given(perf_st, grad_st, init_st, st.integers(1, 10), st.booleans(), st.data())
def test_speedup_table_matches_reference(perf, grad, init, max_mult, accumulation, data):
    fn = GoodputFunction(perf, grad, init)
    max_bsz = init * max_mult
    sp = SpeedupFunction(fn, max_batch_size=max_bsz, accumulation=accumulation)
    base = naive.optimize_one(perf, grad, init, 1, 1, max_bsz, None, accumulation)[0]
    replicas = np.array(data.draw(st.lists(st.integers(1, 100), min_size=1, max_size=30)))
    nodes = np.array([data.draw(st.integers(1, int(r))) for r in replicas])
    got = sp(nodes, replicas)
    for i, (n, r) in enumerate(zip(nodes, replicas, strict=True)):
        expect = naive.optimize_one(perf, grad, init, int(n), int(r), max_bsz, None, accumulation)[0] / base
        assert rel_close(got[i], expect)
    table = sp.table(int(replicas.max()))
    assert table[0, 0] == 0.0 and table[1, 0] == 0.0
    assert rel_close(table[(nodes > 1).astype(int), replicas], got)


def test_speedup_zero_and_scalar():
    fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14), (0.00136, 0.000502), 128)
    sp = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    assert sp(0, 0) == 0.0
    assert sp(1, 1) == pytest.approx(1.0, rel=1e-15)
    assert isinstance(sp(2, 4), float)
    # Beyond AdaptDL's 32-entry memo the values are still exact (no cliff).
    big = sp(np.array([1, 2]), np.array([100, 100]))
    g, _, _ = fn.optimize(np.array([1, 2]), np.array([100, 100]), 1280, (64, 256))
    assert rel_close(big, g / sp.base_goodput)
    # Broadcasting of a scalar against an array.
    assert sp(1, np.arange(1, 5)).shape == (4,)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.sampled_from([0.0, 1e-320, 1e-300, 1e-8, 0.5, 20.0, 1e300, 1e308]),
    st.sampled_from([0.0, 1e-320, 1e-300, 1e-8, 0.5, 20.0, 1e300, 1e308]),
    st.sampled_from([1e-6, 0.5, 1.0, 3.0, 1e4, 2.0**53, 1e30]),
)
def test_efficiency_at_the_ends_of_float64(sqr, var, ratio):
    """Gradient statistics near the float64 limits (the fuzz suite's): the exact reference."""
    fn = GoodputFunction(PerfParams(0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0), GradParams(sqr, var), 64)
    got = fn.efficiency(64 * ratio)
    want = naive.efficiency((sqr, var), 64, 64 * ratio)
    # A subnormal statistic carries few significant bits; elsewhere the formula is exact to rounding.
    subnormal = any(0.0 < x < 2.2250738585072014e-308 for x in (sqr, var))
    assert abs(got - want) <= (1e-2 if subnormal else 1e-13) * want
