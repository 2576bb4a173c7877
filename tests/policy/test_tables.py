"""The round's speedup tables (``fastsched.policy._tables``) against a plain per-job assembly.

The round fills every CPU-side table in one launch (``SpeedupFunction.fill_ranges``) and writes
all jobs' rows with one kernel; the reference below asks each job's function for its own table
one at a time and copies the rows, as a reader of the docstring would.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.goodput import GoodputFunction, SpeedupFunction
from fastsched.policy import InvalidJobError
from fastsched.policy._tables import speedup_tables
from tests.goodput._random import random_perf

FEW = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _model(rng):
    perf = random_perf(rng)
    init = int(rng.integers(1, 257))
    return GoodputFunction(perf, (rng.uniform(0, 2), rng.uniform(0, 20)), init), init


def _speedup(rng):
    g, init = _model(rng)
    hi = None if rng.random() < 0.5 else int(np.ceil(init * rng.uniform(1.0, 4.0)))
    return SpeedupFunction(g, init * rng.uniform(1.0, 40.0), (None, hi), accumulation=bool(rng.random() < 0.5))


class _Scaled:
    """A tabulated wrapper reading another function's table (as the simulator's re-based speedup)."""

    is_tabulated = True

    def __init__(self, fn, factor):
        self.table_source = fn
        self.factor = factor

    def table(self, max_replicas):
        return np.asarray(self.table_source.table(max_replicas)) * self.factor

    def __call__(self, n, r):
        return self.table_source(n, r) * self.factor


class _Fixed:
    """A tabulated callable with given values (finite or not), to test the checks."""

    is_tabulated = True

    def __init__(self, value):
        self.value = value

    def table(self, max_replicas):
        t = np.full((2, max_replicas + 1), self.value, dtype=np.float64)
        t[:, 0] = 0.0
        return t


def _plain_tables(fns, max_reps, num_nodes):
    """Each job's own table, rows copied one job at a time (tabulated fns only; K = 2)."""
    rmax = int(max(max_reps))
    out = np.zeros((len(fns), 3, rmax + 1))
    for j, fn in enumerate(fns):
        m = int(max_reps[j])
        t = np.asarray(fn.table(m))
        out[j, 1, : m + 1] = t[0, : m + 1]
        out[j, 2, : m + 1] = t[1, : m + 1]
    return out


@FEW
@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_round_tables_equal_each_jobs_own_table_bit_for_bit(seed, njobs):
    """Shared functions, wrappers, partly filled tables: every row is the job's own table, to the bit."""
    rng = np.random.default_rng(seed)
    pool = [_speedup(rng) for _ in range(max(1, njobs // 2))]
    for fn in pool:  # some tables already partly filled, as in later rounds
        if rng.random() < 0.5:
            fn.table(int(rng.integers(0, 6)))
    fns = []
    for _ in range(njobs):
        fn = pool[int(rng.integers(len(pool)))]
        fns.append(_Scaled(fn, float(rng.uniform(0.5, 2.0))) if rng.random() < 0.3 else fn)
    max_reps = rng.integers(0, 20, njobs)
    got = speedup_tables(fns, list(range(njobs)), max_reps, 4)
    # The reference reads fresh copies of the functions: their tables filled lazily, one at a time.
    fresh = {id(fn): _speedup_copy(fn) for fn in pool}

    def copy(fn):
        if isinstance(fn, _Scaled):
            return _Scaled(fresh[id(fn.table_source)], fn.factor)
        return fresh[id(fn)]

    want = _plain_tables([copy(fn) for fn in fns], max_reps, 4)
    assert got.shape == (njobs, 3, int(max_reps.max()) + 1)
    np.testing.assert_array_equal(got, want)


def _speedup_copy(fn):
    return SpeedupFunction(fn.goodput_fn, fn._max_batch_size, fn._atomic_bsz_range, accumulation=fn._accumulation)


@FEW
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 24), min_size=1, max_size=6))
def test_fill_ranges_fills_what_table_would(seed, ranges):
    """One launch over several functions leaves each table as its own ``table(m)`` calls would."""
    rng = np.random.default_rng(seed)
    fns = [_speedup(rng) for _ in ranges]
    for fn in fns:
        if rng.random() < 0.5:
            fn.table(int(rng.integers(0, 8)))
    need = sum(
        not (m < fn._state[1].shape[1] and fn._state[1][:, : m + 1].all()) for fn, m in zip(fns, ranges, strict=True)
    )
    assert SpeedupFunction.fill_ranges(fns, ranges) == need
    assert SpeedupFunction.fill_ranges(fns, ranges) == 0  # covered now: nothing left to fill
    for fn, m in zip(fns, ranges, strict=True):
        assert fn._state[1][:, : m + 1].all()
        np.testing.assert_array_equal(fn.table(m), _speedup_copy(fn).table(m))


@FEW
@given(st.integers(0, 2**32 - 1), st.lists(st.tuples(st.booleans(), st.integers(0, 40)), min_size=1, max_size=12))
def test_a_table_knows_the_range_it_covers(seed, cells):
    """``_full`` (what ``table`` and ``fill_ranges`` trust) is the filled prefix, after any fills.

    Cells are filled in any order, one row at a time (as a single CUDA key or a partial range
    would), so the prefix grows only when both rows reach it.
    """
    fn = _speedup(np.random.default_rng(seed))
    for multi, rep in cells:
        fn._ensure(np.array([multi]), np.array([rep], dtype=np.int64), rep)
        filled = fn._state[1]
        both = filled[0] & filled[1]
        prefix = int(np.argmin(both)) - 1 if not both.all() else both.shape[0] - 1
        assert fn._full == prefix
        m = int(np.random.default_rng(rep).integers(0, 45))
        assert fn._covers(m) == (m < filled.shape[1] and bool(filled[:, : m + 1].all()))


def test_fill_ranges_refuses_mismatched_and_ignores_others():
    rng = np.random.default_rng(0)
    fn = _speedup(rng)
    with pytest.raises(ValueError, match="one entry per function"):
        SpeedupFunction.fill_ranges([fn], [3, 4])
    with pytest.raises(ValueError, match="max_replicas"):
        SpeedupFunction.fill_ranges([fn], [-1])
    assert SpeedupFunction.fill_ranges([_Fixed(1.0), fn, fn], [3, 3, 3]) == 1  # repeats and others skipped


@pytest.mark.parametrize(("value", "message"), [(np.nan, "NaN or inf"), (np.inf, "NaN or inf"), (-1.0, "negative")])
def test_invalid_tables_name_the_first_job_in_order(value, message):
    """The first job (in job order) whose speedups are invalid is named, whichever kind it is."""
    rng = np.random.default_rng(1)
    good = _speedup(rng)
    bad = _Fixed(value)
    fns = [good, bad, good, _Fixed(-1.0), lambda n, r: np.full(np.shape(r), np.nan)]
    with pytest.raises(InvalidJobError, match=message) as info:
        speedup_tables(fns, ["a", "b", "c", "d", "e"], np.array([3, 3, 3, 3, 3]), 4)
    assert info.value.key == "b"
    # A generic callable first in order is named first.
    with pytest.raises(InvalidJobError, match="NaN or inf") as info:
        speedup_tables(fns[4:] + fns[:4], ["e", "a", "b", "c", "d"], np.array([3, 3, 3, 3, 3]), 4)
    assert info.value.key == "e"


def test_a_table_of_the_wrong_shape_is_refused_naming_the_job():
    class Short(_Fixed):
        def table(self, max_replicas):
            return super().table(max_replicas)[:, :max_replicas]  # one replica count short

    rng = np.random.default_rng(2)
    with pytest.raises(InvalidJobError, match=r"table\(3\) must have shape \(2, >= 4\)") as info:
        speedup_tables([_speedup(rng), Short(1.0)], ["a", "b"], np.array([3, 3]), 4)
    assert info.value.key == "b"
