"""Adversarial input: every public goodput entry point returns a valid result or raises a
documented ``ValueError``/``TypeError`` — never a crash, a hang, or a silent NaN.

CI runs the hypothesis profile's example count; ``HYPOTHESIS_PROFILE=fuzz`` runs a long session.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction, fit_perf_params

weird_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, -1.0, 1e-320, 1e308, -1e308, 1.0, 10.0, 10.000001, 0.999999]),
)
weird_ints = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, 1, -1, 2**31, 2**63 - 1]))
scalars = st.one_of(weird_floats, weird_ints, st.booleans(), st.none(), st.text(max_size=3))
arrays = st.one_of(
    st.lists(st.one_of(weird_floats, st.integers(-5, 300)), max_size=6).map(np.array),
    st.lists(st.integers(-3, 70), min_size=1, max_size=6).map(np.array),
    st.just(np.array([])),
    st.just(np.zeros((2, 0))),
    st.just(np.array(["a"])),
    st.just(np.array([[1, 2], [3, 4]])),
)
anything = st.one_of(scalars, arrays, st.tuples(weird_floats, weird_floats))

GOOD_PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GOOD_GRAD = GradParams(0.00136, 0.000502)
ALLOWED = (ValueError, TypeError)


def _valid_output(value):
    if isinstance(value, (GoodputFunction, SpeedupFunction)):
        return
    for part in value if isinstance(value, tuple) else (value,):
        arr = np.asarray(part, dtype=float)
        assert not np.any(np.isnan(arr)), "silent NaN in an output"


def _call(fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except ALLOWED:
        return None
    _valid_output(out)
    return out


@given(st.lists(weird_floats, min_size=7, max_size=7), st.tuples(weird_floats, weird_floats), anything)
def test_goodput_constructor(perf, grad, init):
    fn = _call(GoodputFunction, perf, grad, init)
    if fn is not None:
        assert all(math.isfinite(v) for v in fn.perf_params)


@given(anything, anything, anything, anything)
def test_evaluate_and_throughput(n, r, a, s):
    fn = GoodputFunction(GOOD_PERF, GOOD_GRAD, 16)
    _call(fn.evaluate, n, r, a, s)
    _call(fn.throughput, n, r, a, s)
    _call(fn.efficiency, a)


@given(anything, anything, anything, st.one_of(st.none(), st.tuples(anything, anything), anything), st.booleans())
def test_optimize(n, r, max_bsz, bsz_range, accumulation):
    fn = GoodputFunction(GOOD_PERF, GOOD_GRAD, 16)
    _call(fn.optimize, n, r, max_bsz, bsz_range, accumulation)


@given(anything, anything, anything, st.one_of(st.none(), st.tuples(anything, anything)))
def test_speedup(n, r, max_bsz, bsz_range):
    fn = GoodputFunction(GOOD_PERF, GOOD_GRAD, 16)
    sp = _call(SpeedupFunction, fn, max_bsz, bsz_range)
    if sp is not None:
        _call(sp, n, r)


@given(anything, anything, anything, anything, anything)
def test_fit(n, r, a, t1, t2):
    out = _call(fit_perf_params, n, r, a, t1, t2)
    if out is not None:
        assert all(math.isfinite(v) for v in out)
