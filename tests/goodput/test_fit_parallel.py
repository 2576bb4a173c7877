"""The fit's starts searched side by side give the same bits as one after another.

``fit_perf_params`` runs :func:`fit_search_parallel` when numba has more than one thread
and :func:`fit_search` otherwise; both must return the same answer, objective and
evaluation count on any observations, with or without a warm start.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched import fit_perf_params
from fastsched._jit import parallel_region
from fastsched.goodput._fit_kernels import fit_search, fit_search_parallel, log_array
from fastsched.goodput.fit import _bounds, _initial_guess, _starts
from tests.goodput.test_fit_search import random_case


def _search_args(case, initial):
    nodes, replicas, atomic, accum, optim = (np.asarray(v, dtype=np.float64) for v in case)
    start, lower, upper = _bounds(nodes, replicas, atomic, accum)
    starts = _starts(start, lower, upper, atomic, accum, optim)
    if initial is not None:
        starts = np.vstack([_initial_guess(initial, start, lower, upper), starts])
    return starts, lower, upper, nodes, replicas, atomic, log_array(accum), log_array(optim)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), warm=st.booleans())
def test_parallel_starts_give_the_serial_bits(seed, warm):
    rng = np.random.default_rng(seed)
    case = random_case(rng)
    initial = tuple(rng.uniform(1e-3, 0.3, 6)) + (rng.uniform(1.0, 3.0),) if warm else None
    args = _search_args(case, initial)
    serial, parallel = np.empty(7), np.empty(7)
    f1, e1 = fit_search(*args, serial)
    with parallel_region():
        f2, e2 = fit_search_parallel(*args, parallel)
    assert serial.tobytes() == parallel.tobytes()
    assert (f1, e1) == (f2, e2) and e1 > 0


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_fit_perf_params_is_the_same_with_one_thread_or_more():
    rng = np.random.default_rng(7)
    cases = [random_case(rng) for _ in range(5)]
    many = [fit_perf_params(*c) for c in cases]
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = [fit_perf_params(*c) for c in cases]
    finally:
        numba.set_num_threads(before)
    assert one == many
