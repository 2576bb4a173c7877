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


_THREADS_SCRIPT = """
import sys
import numpy as np
from tests.policy.test_quality import random_instance
from fastsched.policy import PolluxPolicy
jobs, nodes, base, template = random_instance(np.random.default_rng(5), 12, 4, 4, 0.3)
out = []
for parallel in (True, False):
    policy = PolluxPolicy(seed=7, pop_size=24, generations=8, parallel=parallel)
    for _ in range(2):  # a warm round too
        allocs, desired = policy.optimize(jobs, nodes, base, template)
        out.append(sorted((str(k), sorted(map(str, v))) for k, v in allocs.items()) + [desired])
print(repr(out))
"""


def test_threads_in_fresh_processes():
    """Same seed, same answer with 1 and 2 numba threads (fresh processes) and with the
    serial and parallel kernels."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads, PYTHONPATH=str(root))
        res = subprocess.run(
            [sys.executable, "-c", _THREADS_SCRIPT], capture_output=True, text=True, env=env, cwd=root, check=True
        )
        outs.append(res.stdout.strip().splitlines()[-1])
    assert outs[0] == outs[1]
    rounds = eval(outs[0])  # noqa: S307 - our own repr of lists of strings and ints
    assert rounds[:2] == rounds[2:]  # parallel == serial kernels
