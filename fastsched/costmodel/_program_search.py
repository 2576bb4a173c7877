"""numba kernels: the strategy search over a program with per-op costs.

:func:`balanced_cuts` splits the forward ops (program order) into ``p`` contiguous,
non-empty pipeline stages minimising the largest stage's forward time (binary search on
the answer with a greedy feasibility test, then the greedy partition at the found bound).
:func:`program_config_cost` prices one configuration ``(p, d, b, m, schedule, recompute,
zero)`` from the stage sums; :func:`program_search_kernel` applies it to every row of a
configuration table sorted by ``p`` (stages are recomputed when ``p`` changes). The model
is described in :mod:`fastsched.costmodel.program_search`.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.costmodel._comm import allreduce_ms, p2p_ms
from fastsched.costmodel._search import GPIPE, N_OUT, ZB_H1, zb_h1_saving, zero_state_bytes

__all__ = ["balanced_cuts", "program_stages", "program_config_cost", "program_search_kernel"]


@jit
def _blocks_needed(w, cap):
    # greedy: how many contiguous blocks of sum <= cap cover w
    k = 1
    acc = 0.0
    for i in range(w.shape[0]):
        if acc + w[i] > cap and acc > 0.0:
            k += 1
            acc = 0.0
        acc += w[i]
    return k


@jit
def balanced_cuts(w, p):
    """Return the boundaries ``ptr[0..p]`` of ``p`` contiguous non-empty blocks of ``w``.

    ``len(w) >= p``; the largest block sum is minimal (to a relative 1e-12 of the optimum).
    """
    n = w.shape[0]
    ptr = np.zeros(p + 1, np.int64)
    ptr[p] = n
    lo = 0.0
    hi = 0.0
    for i in range(n):
        hi += w[i]
        lo = max(lo, w[i])
    if _blocks_needed(w, lo) <= p:
        hi = lo
    for _ in range(200):
        if hi - lo <= 1e-12 * hi:
            break
        mid = 0.5 * (lo + hi)
        if _blocks_needed(w, mid) <= p:
            hi = mid
        else:
            lo = mid
    # greedy at the bound, leaving at least one op for every later block
    i = 0
    for k in range(p - 1):
        acc = w[i]
        j = i + 1
        while j < n - (p - k - 1) and acc + w[j] <= hi:
            acc += w[j]
            j += 1
        ptr[k + 1] = j
        i = j
    return ptr


@jit
def program_stages(fw, act, par, p):
    """Per-stage ``(fwd_ms, activation_bytes, param_elems, boundary_bytes)`` of a ``p``-way split.

    ``boundary_bytes[s]`` is what stage ``s`` sends to ``s + 1`` (the outputs of its last
    forward op); 0 for the last stage.
    """
    ptr = balanced_cuts(fw, p)
    sf = np.zeros(p, np.float64)
    sa = np.zeros(p, np.float64)
    sp = np.zeros(p, np.float64)
    sbd = np.zeros(p, np.float64)
    for s in range(p):
        for i in range(ptr[s], ptr[s + 1]):
            sf[s] += fw[i]
            sa[s] += act[i]
            sp[s] += par[i]
        if s < p - 1:
            sbd[s] = act[ptr[s + 1] - 1]
    return sf, sa, sp, sbd


@jit(inline="always")
def program_config_cost(sf, sa, sp, sbd, scal, cl, p, d, b, m, sched, rec, zero):
    """Time breakdown (ms) and memory (bytes) of one configuration of a program.

    ``scal = (batch_size, bwd_total, fwd_total, optim_total, param_total, grad_bytes_per_param)``;
    ``cl = (flops, gpus_per_node, bw_intra, lat_intra, bw_inter, lat_inter)``.
    """
    batch, btot, ftot, otot, ptot, gb = scal
    F, gpn, bwi, lati, bwe, late = cl
    r = b / batch
    ratio = btot / ftot if ftot > 0.0 else 0.0
    xmax = -1.0
    xsum = 0.0
    wmin = np.inf  # the smallest weight gradient and forward (ZB-H1's bubble filling)
    fmin = np.inf
    for s in range(p):
        f = r * sf[s]
        bs = r * (sf[s] * ratio if ftot > 0.0 else btot / p)
        x = f + bs
        if rec == 2:
            x += f
        xsum += x
        xmax = max(xmax, x)
        wmin = min(wmin, 0.5 * bs)
        fmin = min(fmin, f)
    T = xsum + (m - 1) * xmax
    if sched == ZB_H1:
        T -= zb_h1_saving(p, m, wmin, fmin)
    mx = 0.0
    for s in range(p):
        mx = max(mx, sbd[s])
    if d >= gpn:
        pp1 = p2p_ms(r * mx, bwe, late)
    else:
        pp1 = p2p_ms(r * mx, bwi, lati)
    pp_c = 2.0 * (p - 1) * pp1 if p > 1 else 0.0
    T += pp_c
    # optimizer: its total split in proportion to the parameters (evenly without any)
    opt = 0.0
    pmax = 0.0
    for s in range(p):
        o = otot * sp[s] / ptot if ptot > 0.0 else otot / p
        opt = max(opt, o)
        pmax = max(pmax, sp[s])
    vol = 1.5 if zero == 3 else 1.0
    if d > gpn:
        dp_c = vol * allreduce_ms(pmax * gb, d, bwe, late)
    else:
        dp_c = vol * allreduce_ms(pmax * gb, d, bwi, lati)
    mem = -1.0
    states_k = 0.0
    act_k = 0.0
    for s in range(p):
        phi = sp[s]
        states = zero_state_bytes(phi, d, zero)
        inflight = m if sched == GPIPE else min(p - s, m)
        if rec == 2:
            inp = r * sbd[s - 1] if s > 0 else 0.0
            a = inflight * inp + r * sa[s]
        else:
            a = inflight * r * sa[s]
        if states + a > mem:
            mem = states + a
            states_k = states
            act_k = a
    compute = m * xmax + opt
    bubble = T - pp_c - m * xmax
    return T + opt + dp_c, compute, bubble, 0.0, pp_c, dp_c, states_k, act_k, mem


@jit
def program_search_kernel(fw, act, par, scal, cl, cfg):
    """Apply :func:`program_config_cost` to every row of ``cfg`` (int64[n, 10], rows grouped by ``p``)."""
    n = cfg.shape[0]
    out = np.empty((n, N_OUT), np.float64)
    cur = -1
    sf = np.zeros(1, np.float64)
    sa = np.zeros(1, np.float64)
    sp = np.zeros(1, np.float64)
    sbd = np.zeros(1, np.float64)
    for i in range(n):
        p = cfg[i, 1]
        if p != cur:
            sf, sa, sp, sbd = program_stages(fw, act, par, p)
            cur = p
        res = program_config_cost(
            sf, sa, sp, sbd, scal, cl, p, cfg[i, 2], cfg[i, 3], cfg[i, 4], cfg[i, 5], cfg[i, 7], cfg[i, 8]
        )
        for k in range(N_OUT):
            out[i, k] = res[k]
    return out
