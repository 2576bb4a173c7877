"""numba kernel: the perf-model fitting objective and its analytic gradient.

The objective (AdaptDL's) over observations i = 1..n::

    A_i = alpha_c + beta_c * atomic_bsz_i                       (accum-step time)
    N_i = network time of (num_nodes_i, num_replicas_i)
    L_i = log(A_i**gamma + N_i**gamma) / gamma                  (log optim-step time)
    f = rms(log A_i - log accum_step_time_i) + rms(L_i - log optim_step_time_i)
        + 1e-3 (gamma - 1)**2 + 1e-2 ((beta_n/alpha_n)**2 + (beta_r/alpha_r)**2)

The gradient is derived by hand (no autograd): with S_i = A_i**g + N_i**g,
dL/dA = A**(g-1)/S, dL/dN = N**(g-1)/S, dL/dg = -log(S)/g**2 + (A**g log A + N**g log N)/(g S).
Powers are taken through logs (log-sum-exp) so large times and gamma stay finite.
"""

from __future__ import annotations

import math

from fastsched._jit import jit

_TINY = 1e-8


@jit
def objective_and_grad(p, nodes, replicas, atomic_bsz, log_accum_time, log_optim_time, grad):
    """Return the objective at ``p`` (7 params) and write its gradient into ``grad``."""
    n = nodes.shape[0]
    alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, g = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    sse1 = 0.0
    sse2 = 0.0
    # Accumulators of sum(e_i * dx_i/dtheta) for each objective term.
    g1_ac = 0.0
    g1_bc = 0.0
    g2_ac = 0.0
    g2_bc = 0.0
    g2_an = 0.0
    g2_bn = 0.0
    g2_ar = 0.0
    g2_br = 0.0
    g2_g = 0.0
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
        log_s = hi + math.log(math.exp(ga - hi) + math.exp(gn - hi))
        L = log_s / g
        e2 = L - log_optim_time[i]
        sse2 += e2 * e2
        dl_da = math.exp((g - 1.0) * log_a - log_s)
        dl_dn = math.exp((g - 1.0) * log_n - log_s)
        wa = math.exp(ga - log_s)
        wn = math.exp(gn - log_s)
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
    # d rms / d theta = sum(e * de) / (n * rms); at rms == 0 use the zero subgradient.
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
