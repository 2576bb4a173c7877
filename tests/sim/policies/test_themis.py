"""Themis's search against the first search (tests/sim/policies/themis_reference.py), on random problems."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.policies import gavel_objectives
from fastsched.sim.policies.themis import ThemisPolicy, finish_time_fairness_allocation
from tests.sim.policies import themis_reference as reference


@st.composite
def problems(draw):
    num_jobs = draw(st.integers(1, 12))
    num_types = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    tput = rng.random((num_jobs, num_types)) + 0.05
    tput[rng.random((num_jobs, num_types)) < 0.2] = 0.0  # some jobs do not fit some types
    scale = rng.integers(1, 5, num_jobs).astype(np.float64)
    capacity = rng.integers(2, 9, num_types).astype(np.float64)
    steps = rng.random(num_jobs) * 1e4 + 10
    elapsed = rng.random(num_jobs) * 3e4 * (rng.random(num_jobs) < 0.7)
    isolated = elapsed * rng.random(num_jobs) + rng.random(num_jobs) * 1e4 + 10
    start = draw(st.none() | st.floats(0.5, 20.0))
    return tput, scale, capacity, steps, elapsed, isolated, start


def _rho_of(x, tput, steps, elapsed, isolated, live):
    thr = (tput * x).sum(axis=1)
    return np.max((steps[live] / thr[live] + elapsed[live]) / isolated[live])


@settings(max_examples=15, deadline=None)
@given(problems())
def test_search_agrees_with_the_regula_falsi_and_is_near_optimal(p):
    tput, scale, capacity, steps, elapsed, isolated, start = p
    rtol = 1e-3
    x, rho = finish_time_fairness_allocation(tput, scale, capacity, steps, elapsed, isolated, rtol=rtol, start=start)
    x_ref, rho_ref = reference.finish_time_fairness_allocation(
        tput, scale, capacity, steps, elapsed, isolated, rtol=rtol
    )
    live = tput.max(axis=1) > 0
    if not live.any():
        assert rho == rho_ref == 0.0
        return
    # Both end within rtol above the optimum, so within about rtol of each other.
    assert abs(rho / rho_ref - 1) <= 1.01 * rtol / (1 - rtol)
    # The allocation returned reaches its bound, but for its rounding to 5 decimals (each
    # entry may have lost up to 5e-6)...
    assert _rho_of(x + 5e-6 * (tput > 0), tput, steps, elapsed, isolated, live) <= rho * (1 + 1e-6)
    # ...and no allocation reaches 2 rtol below it.
    lower = rho * (1 - 2 * rtol)
    slack = lower * isolated - elapsed
    if np.all(slack[live] > 0):
        need = np.zeros(len(steps))
        need[live] = steps[live] / slack[live]
        assert gavel_objectives._BoundedLP(tput, scale, capacity).z(need) < 1.0


def test_the_allocation_is_gavels_constraints():
    rng = np.random.default_rng(3)
    tput = rng.random((6, 2)) + 0.1
    scale, capacity = np.array([1.0, 2, 1, 2, 1, 1]), np.array([3.0, 2.0])
    x, _ = finish_time_fairness_allocation(tput, scale, capacity, np.full(6, 100.0), np.zeros(6), np.full(6, 50.0))
    assert (x.sum(axis=1) <= 1 + 1e-9).all()
    assert (scale @ x <= capacity + 1e-6).all()


def test_policy_rejects_a_bad_tolerance():
    with pytest.raises(ValueError, match="rtol"):
        ThemisPolicy(rtol=1)
