"""Property tests: constraints always hold, same seed same result, 1 vs 2 threads agree."""

from __future__ import annotations

import numba
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.policy import PolluxPolicy
from tests.policy import naive
from tests.policy.conftest import make_speedup_fn
from tests.policy.strategies import instances

TAB = make_speedup_fn()
FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(instances(tabulated_fn=TAB), st.integers(0, 2**31))
def test_constraints_hold_over_rounds(inst, seed):
    jobs, nodes, base, template = inst
    policy = PolluxPolicy(seed=seed, pop_size=16, generations=8)
    for _ in range(2):
        allocations, desired = policy.optimize(jobs, nodes, base, template)
        assert set(allocations) == set(jobs)
        assert naive.check_allocations(jobs, nodes, base, allocations) == []
        assert desired >= 0
        base = allocations


@FAST
@given(instances(tabulated_fn=TAB), st.integers(0, 2**31))
def test_same_seed_same_result(inst, seed):
    jobs, nodes, base, template = inst
    a = PolluxPolicy(seed=seed, pop_size=12, generations=6).optimize(jobs, nodes, base, template)
    b = PolluxPolicy(seed=seed, pop_size=12, generations=6).optimize(jobs, nodes, base, template)
    assert a == b


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(instances(max_jobs=12, tabulated_fn=TAB), st.integers(0, 2**31))
def test_one_vs_two_threads(inst, seed):
    jobs, nodes, base, template = inst
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        p1 = PolluxPolicy(seed=seed, pop_size=20, generations=6, parallel=True)
        one = [p1.optimize(jobs, nodes, base, template) for _ in range(2)]
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        p2 = PolluxPolicy(seed=seed, pop_size=20, generations=6, parallel=True)
        two = [p2.optimize(jobs, nodes, base, template) for _ in range(2)]
    finally:
        numba.set_num_threads(old)
    assert one == two
