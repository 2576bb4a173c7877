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

import numpy as np

from fastsched._jit import jit

_TINY = 1e-8


@jit
def objective_and_grad(p, nodes, replicas, atomic_bsz, log_accum_time, log_optim_time, grad):
    """Return the objective at ``p`` (7 params) and write its gradient into ``grad``."""
    return smoothed_objective_and_grad(p, nodes, replicas, atomic_bsz, log_accum_time, log_optim_time, 0.0, grad)


@jit
def smoothed_objective_and_grad(p, nodes, replicas, atomic_bsz, log_accum_time, log_optim_time, mu, grad):
    """Evaluate the objective with each RMS term replaced by ``sqrt(mean squared error + mu)``.

    ``mu = 0`` is the objective itself. With ``mu > 0`` it is smooth where a term's error
    is zero (a few observations that the model fits exactly), which a quasi-Newton search
    otherwise meets as a kink it cannot follow.
    """
    terms = np.empty(2)
    net = network_groups(nodes, replicas)
    return _objective(p, net, atomic_bsz, log_accum_time, log_optim_time, mu, grad, terms)


@jit
def network_groups(nodes, replicas):
    """Observations grouped by their network term, for :func:`_objective`.

    The network time depends only on the kind of placement (one replica, several on one
    node, several nodes) and the replica count, and far fewer observations differ in those
    than in their batch size, so each evaluation takes the network term's logarithm once
    per group. Returns ``(kind, m, group, group_kind, group_m, group_net, group_log)``: per
    observation its kind (0, 1: multi-node, 2: multi-replica), ``m = max(replicas - 2,
    1e-8)`` and group; per group (the first ``group.max() + 1`` entries) its kind and ``m``,
    and scratch for its network time and that time's logarithm.
    """
    n = nodes.shape[0]
    kind = np.empty(n, dtype=np.int64)
    m = np.empty(n)
    group = np.empty(n, dtype=np.int64)
    group_kind = np.empty(n, dtype=np.int64)
    group_m = np.empty(n)
    count = 0
    for i in range(n):
        m[i] = max(replicas[i] - 2.0, _TINY)
        if nodes[i] > 1.0:
            kind[i] = 1
        elif replicas[i] > 1.0:
            kind[i] = 2
        else:
            kind[i] = 0
        g = -1
        for j in range(count):
            if group_kind[j] == kind[i] and group_m[j] == m[i]:
                g = j
                break
        if g < 0:
            g = count
            group_kind[g] = kind[i]
            group_m[g] = m[i]
            count += 1
        group[i] = g
    return kind, m, group, group_kind[:count].copy(), group_m[:count].copy(), np.empty(count), np.empty(count)


@jit
def _objective(p, net, atomic_bsz, log_accum_time, log_optim_time, mu, grad, terms):
    """Smoothed objective and gradient; ``terms`` receives the two (smoothed) RMS terms.

    ``net`` is :func:`network_groups` of the observations' nodes and replicas.
    """
    kinds, ms, group, group_kind, group_m, group_net, group_log = net
    n = kinds.shape[0]
    alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, g = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    for j in range(group_kind.shape[0]):
        if group_kind[j] == 1:
            v = alpha_n + beta_n * group_m[j]
        elif group_kind[j] == 2:
            v = alpha_r + beta_r * group_m[j]
        else:
            v = _TINY + _TINY * group_m[j]
        group_net[j] = v
        group_log[j] = math.log(v)
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
        m = ms[i]
        kind = kinds[i]
        net_time = group_net[group[i]]
        log_a = math.log(a)
        log_n = group_log[group[i]]
        e1 = log_a - log_accum_time[i]
        sse1 += e1 * e1
        g1_ac += e1 / a
        g1_bc += e1 * atomic_bsz[i] / a
        ga = g * log_a
        gn = g * log_n
        # log-sum-exp: S = A**g + N**g without overflow; wa, wn = A**g / S, N**g / S.
        # The larger term's exp(0) is exactly 1: skipped (not when hi is infinite or NaN,
        # where the difference is NaN).
        hi = max(ga, gn)
        finite = math.isfinite(hi)
        ea = 1.0 if finite and ga == hi else math.exp(ga - hi)
        en = 1.0 if finite and gn == hi else math.exp(gn - hi)
        total = ea + en
        log_s = hi + math.log(total)
        L = log_s / g
        e2 = L - log_optim_time[i]
        sse2 += e2 * e2
        wa = ea / total
        wn = en / total
        dl_da = wa / a
        dl_dn = wn / net_time
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
    err1 = math.sqrt(sse1 / n + mu)
    err2 = math.sqrt(sse2 / n + mu)
    # d rms / d theta = sum(e * de) / (n * rms); at rms == 0 use the zero subgradient.
    c1 = 1.0 / (n * err1) if err1 > 0.0 else 0.0
    c2 = 1.0 / (n * err2) if err2 > 0.0 else 0.0
    terms[0] = err1
    terms[1] = err2
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


# --------------------------------------------------------------------------------------------
# Bounded quasi-Newton search (projected BFGS), entirely compiled.
#
# Why not scipy's L-BFGS-B: each of its iterations returns to Python (~100 us) and its
# dense algebra goes through BLAS/LAPACK, whose summation order depends on the CPU and the
# library build. Here every sum is a plain sequential loop over 7 entries, so the fitted
# parameters are bit-identical on any machine, thread count or numpy/scipy version.

_N = 7
_ARMIJO = 1e-4
_WOLFE = 0.9
_MAX_BACKTRACK = 20
_MAX_ITER = 400
_FTOL = 1e-14
_XTOL = 1e-13
_GTOL = 1e-12
_MAX_RESTARTS = 6
_SMOOTHING = (1e-6, 1e-9)
#: An RMS term below this may sit on a kink: worth the smoothed second pass.
_KINK = 1e-2


@jit(inline="always")
def _clip(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@jit
def _free_set(x, g, lower, upper, free):
    """Variables the search may move: not pinned and not held at a bound by the gradient."""
    for i in range(_N):
        if lower[i] >= upper[i]:
            free[i] = False
        elif x[i] <= lower[i] and g[i] > 0.0:
            free[i] = False
        elif x[i] >= upper[i] and g[i] < 0.0:
            free[i] = False
        else:
            free[i] = True


@jit
def _reset_hessian(h, x, g, free):
    """Diagonal inverse-Hessian guess in relative units: ``H = c diag(x**2)``.

    Steepest descent in log coordinates: the parameters span many orders of magnitude
    (a compute time of seconds next to a network term of microseconds), and a plain
    identity would leave the small ones unmoved. ``c`` makes the largest first step a 10 %
    change of its parameter; a parameter sitting at its 1e-8 floor gets a floor of 1e-6 on its scale.
    """
    worst = 0.0
    for i in range(_N):
        scale = max(abs(x[i]), 1e-6)
        v = abs(g[i]) * scale
        if free[i] and v > worst:
            worst = v
    c = 0.1 / worst if worst > 0.0 else 1.0
    for i in range(_N):
        scale = max(abs(x[i]), 1e-6)
        for j in range(_N):
            h[i, j] = c * scale * scale if i == j else 0.0


@jit
def _projected_bfgs(x, lower, upper, net, atomic_bsz, log_accum, log_optim, mu, max_iter):
    """Minimise the objective from ``x`` (feasible, updated in place); return the final value.

    Projected quasi-Newton (Bertsekas's two-metric projection, BFGS metric): variables held
    at a bound by the gradient are frozen for the step, the free ones move along
    ``-H g`` (``H`` the BFGS inverse-Hessian estimate), and a backtracking Armijo search
    along the projected path keeps every trial point feasible. The estimate is reset to a
    scaled identity whenever it stops giving a descent direction or the search fails.
    """
    g = np.empty(_N)
    gt = np.empty(_N)
    xt = np.empty(_N)
    d = np.empty(_N)
    s = np.empty(_N)
    y = np.empty(_N)
    hy = np.empty(_N)
    free = np.empty(_N, dtype=np.bool_)
    xlo = np.empty(_N)
    glo = np.empty(_N)
    terms = np.empty(2)
    h = np.empty((_N, _N))
    f = _objective(x, net, atomic_bsz, log_accum, log_optim, mu, g, terms)
    evals = 1
    _free_set(x, g, lower, upper, free)
    _reset_hessian(h, x, g, free)
    fresh = True
    stalls = 0
    for _ in range(max_iter):
        _free_set(x, g, lower, upper, free)
        # Projected-gradient optimality test.
        pg = 0.0
        for i in range(_N):
            if free[i] and abs(g[i]) > pg:
                pg = abs(g[i])
        if pg <= _GTOL:
            break
        # Direction on the free variables.
        gd = 0.0
        for i in range(_N):
            acc = 0.0
            if free[i]:
                for j in range(_N):
                    if free[j]:
                        acc -= h[i, j] * g[j]
            d[i] = acc
            gd += g[i] * acc
        if not gd < 0.0:
            if fresh:
                break
            _reset_hessian(h, x, g, free)
            fresh = True
            continue
        # Largest relative change a unit step makes.
        dmax = 0.0
        for i in range(_N):
            r = abs(d[i]) / max(abs(x[i]), 1e-300)
            if r > dmax:
                dmax = r
        # Weak Wolfe line search along the projected path (bracketing: double the step
        # until the slope turns, halve the bracket while the decrease is too small). The
        # curvature condition keeps s'y > 0, so the BFGS estimate stays positive definite,
        # and it makes BFGS work on the objective's kinks (an RMS term at zero error).
        t = 1.0
        t_lo = 0.0
        t_hi = np.inf
        accepted = False
        ft = f
        f_lo = f
        moved = False
        for _k in range(_MAX_BACKTRACK):
            slope = 0.0
            for i in range(_N):
                xt[i] = _clip(x[i] + t * d[i], lower[i], upper[i])
                slope += g[i] * (xt[i] - x[i])
            ft = _objective(xt, net, atomic_bsz, log_accum, log_optim, mu, gt, terms)
            evals += 1
            if not (ft <= f + _ARMIJO * slope and math.isfinite(ft)):
                t_hi = t
            else:
                new_slope = 0.0
                for i in range(_N):
                    new_slope += gt[i] * (xt[i] - x[i])
                # Projection can stop the path moving: then a longer step changes nothing.
                same = True
                for i in range(_N):
                    if xt[i] != xlo[i]:
                        same = False
                if new_slope >= _WOLFE * slope or (moved and same):
                    accepted = True
                    break
                t_lo = t
                f_lo = ft
                moved = True
                for i in range(_N):
                    xlo[i] = xt[i]
                    glo[i] = gt[i]
            t = 0.5 * (t_lo + t_hi) if t_hi < np.inf else 2.0 * t
            if not moved and t * dmax <= _XTOL:
                break  # the step no longer changes x beyond rounding: no descent along d
        if not accepted and moved:
            # Sufficient decrease without the curvature condition: take the best point found.
            accepted = True
            ft = f_lo
            for i in range(_N):
                xt[i] = xlo[i]
                gt[i] = glo[i]
        # BFGS update of the inverse Hessian on the free variables.
        sy = 0.0
        yy = 0.0
        for i in range(_N):
            if free[i]:
                s[i] = xt[i] - x[i]
                y[i] = gt[i] - g[i]
            else:
                s[i] = 0.0
                y[i] = 0.0
            sy += s[i] * y[i]
            yy += y[i] * y[i]
        if sy > 1e-300 and yy > 0.0:
            if fresh:
                # Scale the diagonal guess to the curvature just measured (Shanno-Phua).
                yhy = 0.0
                for i in range(_N):
                    yhy += y[i] * h[i, i] * y[i]
                if yhy > 0.0:
                    scale = sy / yhy
                    for i in range(_N):
                        h[i, i] *= scale
            rho = 1.0 / sy
            yhy = 0.0
            for i in range(_N):
                acc = 0.0
                for j in range(_N):
                    acc += h[i, j] * y[j]
                hy[i] = acc
                yhy += y[i] * acc
            # H <- H - rho (Hy s' + s y'H) + (rho^2 y'Hy + rho) s s'   (H symmetric)
            c = rho * rho * yhy + rho
            for i in range(_N):
                for j in range(_N):
                    h[i, j] += c * s[i] * s[j] - rho * (hy[i] * s[j] + s[i] * hy[j])
            fresh = False
        gain = f - ft
        for i in range(_N):
            x[i] = xt[i]
            g[i] = gt[i]
        if gain <= _FTOL * max(abs(f), abs(ft), 1.0):
            stalls += 1
            if stalls >= 3:
                break
        else:
            stalls = 0
        f = ft
    return f, evals


@jit
def _descend(x, lower, upper, net, atomic_bsz, log_accum, log_optim):
    """Search on the exact objective from ``x``, restarted from its own answer while it gains.

    A fresh curvature estimate lets the search continue where a stale one stalled in a
    flat valley. Returns the objective at ``x`` and the number of evaluations.
    """
    f, evals = _projected_bfgs(x, lower, upper, net, atomic_bsz, log_accum, log_optim, 0.0, _MAX_ITER)
    for _r in range(_MAX_RESTARTS):
        f2, e = _projected_bfgs(x, lower, upper, net, atomic_bsz, log_accum, log_optim, 0.0, _MAX_ITER)
        evals += e
        improved = f2 < f * (1.0 - 1e-13)
        f = min(f, f2)
        if not improved:
            break
    return f, evals


@jit
def fit_search(starts, lower, upper, nodes, replicas, atomic_bsz, log_accum, log_optim, out):
    """Best of a projected-BFGS search from each row of ``starts``; writes it to ``out``.

    From each start: a search on the exact objective (:func:`_descend`), then, if one of
    the RMS terms is nearly zero there, a second pass from its answer through smoothed
    objectives (``mu`` in ``_SMOOTHING``) back to the exact one, kept if better: where the model fits some observations exactly, the optimum
    lies along a kink of the objective that a quasi-Newton search cannot follow, but can
    on the smoothed versions. Starts are tried in row order and a later one wins only if
    strictly better, so the answer is deterministic. Returns the objective at ``out`` and
    the number of objective evaluations.
    """
    best = np.inf
    evals = 0
    x = np.empty(_N)
    xs = np.empty(_N)
    grad = np.empty(_N)
    terms = np.empty(2)
    net = network_groups(nodes, replicas)
    for k in range(starts.shape[0]):
        for i in range(_N):
            x[i] = _clip(starts[k, i], lower[i], upper[i])
        f, e = _descend(x, lower, upper, net, atomic_bsz, log_accum, log_optim)
        evals += e
        _objective(x, net, atomic_bsz, log_accum, log_optim, 0.0, grad, terms)
        if min(terms[0], terms[1]) < _KINK:
            for i in range(_N):
                xs[i] = x[i]
            for mu in _SMOOTHING:
                _, e = _projected_bfgs(xs, lower, upper, net, atomic_bsz, log_accum, log_optim, mu, _MAX_ITER)
                evals += e
            fs, e = _descend(xs, lower, upper, net, atomic_bsz, log_accum, log_optim)
            evals += e
            if fs < f:
                f = fs
                for i in range(_N):
                    x[i] = xs[i]
        if f < best or k == 0:
            best = f
            for i in range(_N):
                out[i] = x[i]
    return best, evals


@jit
def log_array(values):
    """Elementwise natural log through the C library's ``log``.

    numpy's ``np.log`` on arrays dispatches to SIMD implementations chosen for the CPU
    (AVX-512 or not) that may round differently in the last bit; the fit must not.
    """
    out = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        out[i] = math.log(values[i])
    return out
