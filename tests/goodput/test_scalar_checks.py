"""The scalar checkers' fast path accepts and rejects exactly what their full checks do.

``check_finite_scalar``, ``_check_perf_params`` and ``_check_grad_params`` return early for a
float or a plain int plainly in range (a simulator's inner loop); the reference here is the
documented rule written out: a real number that is not a bool, finite, within ``[low, high]``
(``> low`` when ``low_open``), returned as a Python float; otherwise ``TypeError`` for a
non-number and ``ValueError`` naming the field for a bad value.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched._validate import check_finite_scalar
from fastsched.goodput import GoodputFunction, PerfParams
from fastsched.goodput.model import _check_grad_params, _check_perf_params


def _reference(value, low, high, low_open):
    """``float(value)``, or the exception type the rule calls for."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return TypeError
    v = float(value)
    if not math.isfinite(v):
        return ValueError
    if low is not None and (v < low or (low_open and v == low)):
        return ValueError
    if high is not None and v > high:
        return ValueError
    return v


bounds = st.sampled_from([None, -1.0, 0.0, 1.0, 10.0])
values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 10.0, -1.0, 0, 1, 10, -1, 2**60, True, False]),
    st.integers(-(2**70), 2**70),
    st.floats(-20, 20).map(np.float64),
    st.integers(-20, 20).map(np.int64),
    st.sampled_from(["1.0", None, 1 + 0j, np.array(1.0), np.bool_(True)]),
)


@settings(max_examples=400, deadline=None)
@given(value=values, low=bounds, high=bounds, low_open=st.booleans())
def test_check_finite_scalar_follows_the_rule(value, low, high, low_open):
    want = _reference(value, low, high, low_open)
    if isinstance(want, float):
        got = check_finite_scalar("x.field", value, low=low, high=high, low_open=low_open)
        assert type(got) is float and (got == want or (got != got and want != want))
        assert math.copysign(1.0, got) == math.copysign(1.0, want)  # -0.0 stays -0.0
    else:
        with pytest.raises(want, match="x.field"):
            check_finite_scalar("x.field", value, low=low, high=high, low_open=low_open)


@settings(max_examples=150, deadline=None)
@given(params=st.lists(values, min_size=7, max_size=7), kind=st.sampled_from([tuple, list, PerfParams._make]))
def test_perf_params_check_follows_the_rule(params, kind):
    checks = [_reference(v, 1.0 if i == 6 else 0.0, 10.0 if i == 6 else None, False) for i, v in enumerate(params)]
    bad = next((c for c in checks if not isinstance(c, float)), None)
    if bad is None:
        out = _check_perf_params(kind(params))
        assert out.dtype == np.float64 and out.tolist() == checks
    else:
        field = PerfParams._fields[next(i for i, c in enumerate(checks) if not isinstance(c, float))]
        with pytest.raises(bad, match=f"perf_params.{field}"):
            _check_perf_params(kind(params))


@settings(max_examples=100, deadline=None)
@given(grad=st.tuples(values, values))
def test_grad_params_check_follows_the_rule(grad):
    checks = [_reference(v, 0.0, None, False) for v in grad]
    if all(isinstance(c, float) for c in checks):
        assert _check_grad_params(grad) == tuple(checks)
    else:
        field = ("sqr", "var")[next(i for i, c in enumerate(checks) if not isinstance(c, float))]
        with pytest.raises(Exception, match=f"grad_params.{field}"):
            _check_grad_params(grad)


def test_wrong_lengths_and_non_sequences_are_named():
    with pytest.raises(ValueError, match="perf_params must have 7 entries, got 6"):
        _check_perf_params((1.0,) * 6)
    with pytest.raises(TypeError, match="perf_params must be a PerfParams"):
        _check_perf_params(1.0)
    with pytest.raises(ValueError, match="grad_params must have 2 entries"):
        _check_grad_params((1.0, 2.0, 3.0))
    with pytest.raises(TypeError, match="grad_params must be a GradParams"):
        GoodputFunction((1.0,) * 7, 1.0, 32)
