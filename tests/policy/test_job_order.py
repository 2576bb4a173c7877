"""The round's job order: the numeric fast path gives exactly the order of the plain sort."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.policy.problem import _job_order, _numeric_job_order


def _reference(pinned, min_rep, creation):
    """The rule as written: pinned first, then fewer min_replicas, then creation; ties keep input order."""
    return sorted(range(len(pinned)), key=lambda j: (not pinned[j], min_rep[j], creation[j]))


# Few distinct values, so that ties (and the input order they keep) are common; ints near and
# beyond 2**53, where float64 no longer holds every int, and floats next to ints.
_NUMBERS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([0.5, -0.0, 1.0, 2.0**53, 2.0**60]),
    st.sampled_from([2**53 - 1, 2**53, 2**53 + 1, -(2**60) - 1]),
    st.floats(-1e6, 1e6, allow_nan=False),
)
_CREATION = st.one_of(
    st.lists(_NUMBERS, min_size=0, max_size=30),
    st.integers(1, 3).flatmap(lambda width: st.lists(st.tuples(*[_NUMBERS] * width), min_size=0, max_size=30)),
)


@settings(max_examples=300, deadline=None)
@given(_CREATION, st.data())
def test_job_order_equals_the_plain_sort(creation, data):
    n = len(creation)
    pinned = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    min_rep = data.draw(st.lists(st.sampled_from([0, 0, 2, 3, np.int64(2)]), min_size=n, max_size=n))
    assert _job_order(pinned, min_rep, creation) == _reference(pinned, min_rep, creation)


def test_the_simulators_rounds_take_the_fast_path():
    """(attained service, submission time) pairs and plain times: sorted by lexsort, as the plain sort."""
    rng = np.random.default_rng(0)
    n = 500
    pinned = (rng.random(n) < 0.1).tolist()
    min_rep = rng.choice([0, 0, 2], n).tolist()
    pairs = list(zip(rng.integers(0, 50, n).tolist(), rng.integers(0, 20, n).tolist(), strict=True))
    times = rng.integers(0, 30, n).astype(float).tolist()
    for creation in (pairs, times):
        fast = _numeric_job_order(pinned, min_rep, creation)
        assert fast is not None
        assert fast == _reference(pinned, min_rep, creation)


def test_what_float64_cannot_order_exactly_falls_back():
    """NaN, huge ints, strings, lists, ragged tuples and bools keep the plain sort."""
    for creation in (
        [1.0, float("nan")],
        [2**53 + 1, 2**53],
        ["1.5", "10"],
        [[1, 2], [1, 1]],
        [(1, 2), (1,)],
        [True, 0],
    ):
        assert _numeric_job_order([False, False], [0, 0], creation) is None
    assert _numeric_job_order([False, False], [0.5, 0], [1, 2]) is None  # min_replicas not ints
