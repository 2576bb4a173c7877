"""Sia's rounded powers computed on arrays give Python's ``round(max(v, zero) ** p, 2)``, bit for bit."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.policies._sia_kernels import _ZERO_GAIN, _rounded_powers


def _python_rule(vals, p):
    return [round(max(v, _ZERO_GAIN) ** p, 2) for v in vals]


def _near_half_cents(cents, p, steps):
    """Values whose power lies a few ulps around ``(cents + 0.5) / 100``: where a naive rounding errs."""
    out = []
    for c, k in zip(cents, steps, strict=True):
        x = (c + 0.5) / 100.0
        for _ in range(abs(k)):
            x = math.nextafter(x, math.copysign(math.inf, k))
        out.append(x ** (1.0 / p) if x > 0 else x)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.floats(min_value=-1.0, max_value=1e4), st.sampled_from([math.nan, math.inf])), max_size=30),
    st.lists(st.tuples(st.integers(0, 2000), st.integers(-3, 3)), max_size=30),
    st.sampled_from([-0.5, -1.0, 1.0, 0.5, -2.0]),
)
def test_rounded_powers_equal_pythons_rule(random_vals, near, p):
    vals = random_vals + _near_half_cents([c for c, _ in near], p, [k for _, k in near])
    got = _rounded_powers(np.array(vals, dtype=np.float64), p).tolist()
    want = _python_rule(vals, p)
    assert [x.hex() for x in got] == [x.hex() for x in want]


def test_exact_half_cents_round_half_to_even():
    # 0.125 and 0.375 are exact doubles on a half cent; Python rounds them half to even.
    vals = [0.125, 0.375, 0.005, 1.0 / 3.0, 1e-5, 2.5e7]
    got = _rounded_powers(np.array(vals), 1.0).tolist()
    assert got == _python_rule(vals, 1.0) == [0.12, 0.38, 0.01, 0.33, 0.0, 2.5e7]
