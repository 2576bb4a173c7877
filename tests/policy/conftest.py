"""Fixtures of the policy tests: the seed's realistic speedup function."""

from __future__ import annotations

import pytest

from fastsched.goodput import GoodputFunction, GradParams, PerfParams, SpeedupFunction

PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = GradParams(sqr=0.00136, var=0.000502)


def make_speedup_fn():
    return SpeedupFunction(GoodputFunction(PERF, GRAD, 128), max_batch_size=1280, atomic_bsz_range=(64, 256))


@pytest.fixture(scope="session")
def speedup_fn():
    return make_speedup_fn()
