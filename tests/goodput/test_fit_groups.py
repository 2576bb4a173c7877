"""The fit's objective, with its network terms evaluated once per group, equals the per-observation one bit for bit.

The reference is the objective as written before the grouping: every observation takes its
own network time's logarithm and both exponentials of the log-sum-exp. It runs compiled
like the kernel (same code generation), so equality is exact, not approximate.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from fastsched.goodput._fit_kernels import network_groups, objective_and_grad

_TINY = 1e-8


@njit(error_model="numpy")
def per_observation_objective(p, nodes, replicas, atomic_bsz, log_accum_time, log_optim_time, grad):
    n = nodes.shape[0]
    alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, g = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    sse1 = sse2 = 0.0
    g1_ac = g1_bc = g2_ac = g2_bc = g2_an = g2_bn = g2_ar = g2_br = g2_g = 0.0
    for i in range(n):
        a = alpha_c + beta_c * atomic_bsz[i]
        m = max(replicas[i] - 2.0, _TINY)
        kind = 0
        if nodes[i] > 1.0:
            net = alpha_n + beta_n * m
            kind = 1
        elif replicas[i] > 1.0:
            net = alpha_r + beta_r * m
            kind = 2
        else:
            net = _TINY + _TINY * m
        log_a = math.log(a)
        log_n = math.log(net)
        e1 = log_a - log_accum_time[i]
        sse1 += e1 * e1
        g1_ac += e1 / a
        g1_bc += e1 * atomic_bsz[i] / a
        ga = g * log_a
        gn = g * log_n
        hi = max(ga, gn)
        ea = math.exp(ga - hi)
        en = math.exp(gn - hi)
        total = ea + en
        log_s = hi + math.log(total)
        e2 = log_s / g - log_optim_time[i]
        sse2 += e2 * e2
        wa = ea / total
        wn = en / total
        dl_da = wa / a
        dl_dn = wn / net
        dl_dg = -log_s / (g * g) + (wa * log_a + wn * log_n) / g
        g2_ac += e2 * dl_da
        g2_bc += e2 * dl_da * atomic_bsz[i]
        g2_g += e2 * dl_dg
        if kind == 1:
            g2_an += e2 * dl_dn
            g2_bn += e2 * dl_dn * m
        elif kind == 2:
            g2_ar += e2 * dl_dn
            g2_br += e2 * dl_dn * m
    err1 = math.sqrt(sse1 / n)
    err2 = math.sqrt(sse2 / n)
    c1 = 1.0 / (n * err1) if err1 > 0.0 else 0.0
    c2 = 1.0 / (n * err2) if err2 > 0.0 else 0.0
    rn = beta_n / alpha_n
    rr = beta_r / alpha_r
    f = err1 + err2 + 1e-3 * (g - 1.0) ** 2 + 1e-2 * (rn * rn + rr * rr)
    grad[0] = c1 * g1_ac + c2 * g2_ac
    grad[1] = c1 * g1_bc + c2 * g2_bc
    grad[2] = c2 * g2_an - 2e-2 * rn * rn / alpha_n
    grad[3] = c2 * g2_bn + 2e-2 * rn / alpha_n
    grad[4] = c2 * g2_ar - 2e-2 * rr * rr / alpha_r
    grad[5] = c2 * g2_br + 2e-2 * rr / alpha_r
    grad[6] = c2 * g2_g + 2e-3 * (g - 1.0)
    return f


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    scale=st.sampled_from([1e-8, 1e-4, 1.0, 1e4, 1e30]),
)
def test_grouped_objective_is_the_per_observation_objective_bit_for_bit(seed, n, scale):
    rng = np.random.default_rng(seed)
    nodes = rng.integers(1, 4, n).astype(np.float64)
    # Few distinct replica counts, so groups hold several observations; ties between the
    # two log-sum-exp terms (gamma * log A == gamma * log N) through equal times.
    replicas = nodes * rng.integers(1, 4, n)
    atomic = rng.integers(1, 64, n).astype(np.float64)
    p = rng.uniform(1e-8, 1.0, 7) * scale
    p[6] = rng.uniform(1.0, 10.0)
    if rng.random() < 0.3:
        p[2], p[3] = p[0], p[1]  # a multi-node observation at atomic 0 ties its two terms
    la, lo = rng.normal(-2.0, 1.0, n), rng.normal(-1.5, 1.0, n)
    got, want = np.empty(7), np.empty(7)
    f = objective_and_grad(p, nodes, replicas, atomic, la, lo, got)
    f_ref = per_observation_objective(p, nodes, replicas, atomic, la, lo, want)
    assert f == f_ref or (math.isnan(f) and math.isnan(f_ref))
    np.testing.assert_array_equal(got, want)


def test_network_groups():
    nodes = np.array([1.0, 2.0, 1.0, 2.0, 1.0, 4.0])
    replicas = np.array([1.0, 4.0, 2.0, 4.0, 1.0, 4.0])
    kind, m, group, group_kind, group_m, _, _ = network_groups(nodes, replicas)
    assert kind.tolist() == [0, 1, 2, 1, 0, 1]
    assert group.tolist() == [0, 1, 2, 1, 0, 1]
    assert group_kind.tolist() == [0, 1, 2] and group_m.tolist() == [1e-8, 2.0, 1e-8]
    assert m.tolist() == [1e-8, 2.0, 1e-8, 2.0, 1e-8, 2.0]
