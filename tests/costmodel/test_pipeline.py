"""Pipeline simulation: oracle, closed forms, monotonicity."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel._pipeline import simulate_pipeline

from . import naive

times = st.integers(0, 64).map(lambda k: k / 1024)


def sim(f, b, o, m):
    return simulate_pipeline(np.asarray(f, np.float64), np.asarray(b, np.float64), np.asarray(o, np.float64), m)[0]


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda s: st.tuples(
            st.lists(times, min_size=s, max_size=s),
            st.lists(times, min_size=s, max_size=s),
            st.lists(times, min_size=s, max_size=s),
        )
    ),
    st.integers(1, 12),
)
def test_matches_oracle_and_is_monotone(fbo, m):
    f, b, o = fbo
    t = sim(f, b, o, m)
    assert t == naive.pipeline(f, b, o, m)
    assert sim(f, b, o, m + 1) >= t


@pytest.mark.parametrize("S", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 17])
def test_equal_stages_closed_form(S, m):
    # 1F1B with equal stages: (m + S - 1) * (f + b) + optim
    f, b, o = 3 / 8, 5 / 8, 1 / 16
    assert sim([f] * S, [b] * S, [o] * S, m) == (m + S - 1) * (f + b) + o


def test_many_microbatches():
    # the seed's Queue(1024) would block here (B2)
    assert sim([1.0, 1.0], [1.0, 1.0], [0.0, 0.0], 5000) == (5000 + 1) * 2.0


def test_events_are_complete():
    _, st_, kd, mb, s0, s1 = simulate_pipeline(np.ones(3), np.ones(3), np.zeros(3) + 0.5, 4)
    assert len(st_) == 2 * 4 * 3 + 3
    assert np.all(s1 >= s0)
    assert sorted(mb[(kd == 0) & (st_ == 2)]) == [0, 1, 2, 3]
