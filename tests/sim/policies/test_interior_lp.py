"""The interior-point LP behind Gavel's allocation: optimal like HiGHS, interior on ties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from fastsched.sim.policies._interior_lp import interior_point_lp, job_type_lp
from fastsched.sim.policies.gavel import max_sum_throughput


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 8), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_same_optimum_as_highs_and_feasible(num_jobs, num_types, seed):
    rng = np.random.default_rng(seed)
    tp = rng.uniform(0.0, 5.0, (num_jobs, num_types)) * (rng.random((num_jobs, num_types)) > 0.2)
    scale = rng.integers(1, 5, num_jobs)
    cap = rng.integers(1, 9, num_types)
    x = max_sum_throughput(tp, scale, cap)
    ref = max_sum_throughput(tp, scale, cap, method="simplex")
    assert (tp * x).sum() == pytest.approx((tp * ref).sum(), rel=1e-4, abs=1e-4)
    assert (x >= 0).all() and (x.sum(axis=1) <= 1 + 1e-4).all()
    assert ((scale[:, None] * x).sum(axis=0) <= cap + 1e-4).all()
    assert (x[tp == 0] == 0).all()


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 10), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_structured_solver_equals_the_generic_one(num_jobs, num_types, seed):
    # The job x type solver (Schur complement) against the plain one on the explicit matrix.
    rng = np.random.default_rng(seed)
    keep = rng.random((num_jobs, num_types)) > 0.3
    jobs, types = np.nonzero(keep)
    n = jobs.size
    if n == 0:
        return
    value = rng.uniform(0.1, 10.0, n)
    weight = rng.integers(1, 5, n).astype(float)
    cap = rng.integers(0, 9, num_types).astype(float)
    a = np.zeros((num_jobs + num_types, n))
    a[jobs, np.arange(n)] = 1.0
    a[num_jobs + types, np.arange(n)] = weight
    ref = interior_point_lp(-value, a, np.concatenate([np.ones(num_jobs), cap]))
    x = job_type_lp(value, jobs, types, weight, num_jobs, cap)
    np.testing.assert_allclose(x, ref, atol=1e-6)


def test_generic_inequality_lp_matches_highs():
    rng = np.random.default_rng(3)
    a = rng.uniform(0, 1, (5, 7))
    b = rng.uniform(1, 2, 5)
    c = -rng.uniform(0, 1, 7)
    x = interior_point_lp(c, a, b)
    ref = linprog(c, A_ub=a, b_ub=b, bounds=(0, None), method="highs")
    assert c @ x == pytest.approx(ref.fun, rel=1e-8)


def test_equal_jobs_get_equal_shares_in_any_order():
    # Four identical 2-GPU jobs, one faster 1-GPU job, 5 GPUs: the fast job runs full time,
    # the four equal jobs share the remaining 4 GPUs evenly (each 0.5), whatever their order.
    tp = np.array([[1.0], [1.0], [3.0], [1.0], [1.0]])
    x = max_sum_throughput(tp, np.array([2, 2, 1, 2, 2]), np.array([5]))
    np.testing.assert_allclose(x.ravel(), [0.5, 0.5, 1.0, 0.5, 0.5], atol=1e-5)


def test_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        interior_point_lp(np.ones(2), np.ones((1, 2)), np.array([-1.0]))
    with pytest.raises(ValueError, match="shapes"):
        interior_point_lp(np.ones(3), np.ones((1, 2)), np.array([1.0]))
    with pytest.raises(ValueError, match="non-negative"):
        job_type_lp(np.ones(1), [0], [0], np.ones(1), 1, np.array([-1.0]))
    with pytest.raises(ValueError, match="one entry per pair"):
        job_type_lp(np.ones(2), [0], [0], np.ones(1), 1, np.array([1.0]))
    with pytest.raises(ValueError, match="method"):
        max_sum_throughput(np.ones((1, 1)), np.ones(1), np.ones(1), method="ecos")


def test_equal_jobs_share_even_when_another_job_gets_nothing():
    # Three equal 1-GPU jobs and a slow one on 2 GPUs: the slow job is left out of every
    # optimum, the equal ones share the 2 GPUs (2/3 each). A tie-break that maximises the
    # smallest share of all jobs cannot see this (that smallest share is 0 in every optimum).
    tp = np.array([[3.0], [3.0], [3.0], [0.5]])
    x = max_sum_throughput(tp, np.ones(4), np.array([2]))
    np.testing.assert_allclose(x.ravel(), [2 / 3, 2 / 3, 2 / 3, 0.0], atol=1e-5)


def test_converges_when_inactive_rows_stall_the_residual():
    # One job, two usable types with spare capacity: the inactive capacity rows' scalings grow
    # without bound and the regularised solve keeps the primal residual near 1e-9 relative.
    # The solver must still stop, at the vertex (job fully on its faster type).
    tp = np.array([[4.21147614, 1.66349978, 0.0]])
    x = max_sum_throughput(tp, np.array([2]), np.array([7, 8, 8]))
    assert x.tolist() == [[1.0, 0.0, 0.0]]
    jobs, types = np.array([0, 0]), np.array([0, 1])
    ref = interior_point_lp(-tp[0, :2], np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 2.0]]), np.array([1.0, 7.0, 8.0]))
    np.testing.assert_allclose(
        job_type_lp(tp[0, :2], jobs, types, np.array([2.0, 2.0]), 1, np.array([7.0, 8.0])), ref, atol=1e-6
    )
