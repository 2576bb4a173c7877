"""numba kernel: the strategy search's configuration table, in one call.

:func:`enumerate_kernel` lists every ``(t, p, d, b, m, schedule, v, recompute, zero, sp)`` row
that :func:`fastsched.costmodel.search.enumerate_configs` documents, in its order: tensor degree
``t`` (powers of two up to the node and the heads, dividing the heads and the GPUs), pipeline
degree ``p`` (divisors of the layers up to ``N / t`` that divide ``N / t``), data degree ``d`` (the
rest, dividing the global batch), microbatch ``b`` (divisors of a replica's batch up to the
largest allowed), then sequence parallelism (with ``t > 1``), the schedules (interleaved once per
chunk count ``v``, when ``p > 1`` and the microbatches divide by ``p``), recomputation and ZeRO
stages (beyond 0 only with ``d > 1``). Two passes (count, fill) over the same loops. A profile
prices thousands of plans; the Python loops of numpy blocks this replaces cost ~0.5 ms each.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit

__all__ = ["enumerate_kernel"]


@jit
def _divisors(n, upto):
    # divisors of n that are <= upto, increasing: trial division to min(upto, sqrt(n)), paired
    small = np.empty(0, np.int64)
    large = np.empty(0, np.int64)
    k = 1
    ns = 0
    nl = 0
    while k * k <= n and k <= upto:
        if n % k == 0:
            if ns == small.shape[0]:
                small = np.concatenate((small, np.empty(max(8, ns), np.int64)))
            small[ns] = k
            ns += 1
            q = n // k
            if k * k != n and q <= upto:
                if nl == large.shape[0]:
                    large = np.concatenate((large, np.empty(max(8, nl), np.int64)))
                large[nl] = q
                nl += 1
        k += 1
    out = np.empty(ns + nl, np.int64)
    out[:ns] = small[:ns]
    for i in range(nl):
        out[ns + i] = large[nl - 1 - i]
    return out


@jit
def _walk(layers, heads, gpus, gpn, batch, max_mb, scheds, interleaved, vfilter, recs, zeros, out, fill):
    # one pass over the documented loops: counts the rows, and writes them when ``fill``
    n = 0
    t = 1
    top = min(gpn, heads)
    while t <= top:
        if heads % t == 0 and gpus % t == 0:
            for p in _divisors(layers, gpus // t):
                if (gpus // t) % p:
                    continue
                d = gpus // (t * p)
                if batch % d:
                    continue
                per = batch // d
                ls_div = _divisors(layers // p, layers // p)
                nz = 0
                for z in zeros:
                    if z == 0 or d > 1:
                        nz += 1
                for b in _divisors(per, max_mb):
                    m = per // b
                    inter = p > 1 and m % p == 0
                    nsv = 0
                    for sc in scheds:
                        if sc != interleaved:
                            nsv += 1
                        elif inter:
                            for v in ls_div[1:]:
                                if vfilter.shape[0] == 0 or np.any(vfilter == v):
                                    nsv += 1
                    if nsv == 0 or nz == 0 or recs.shape[0] == 0:
                        continue
                    for sp in range(2 if t > 1 else 1):
                        for sc in scheds:
                            if sc == interleaved and not inter:
                                continue
                            nv = ls_div.shape[0] - 1 if sc == interleaved else 1
                            for iv in range(nv):
                                v = ls_div[1 + iv] if sc == interleaved else 1
                                if sc == interleaved and vfilter.shape[0] > 0 and not np.any(vfilter == v):
                                    continue
                                for rec in recs:
                                    for z in zeros:
                                        if z != 0 and d == 1:
                                            continue
                                        if fill:
                                            r = out[n]
                                            r[0], r[1], r[2], r[3], r[4] = t, p, d, b, m
                                            r[5], r[6], r[7], r[8], r[9] = sc, v, rec, z, sp
                                        n += 1
        t *= 2
    return n


@jit
def enumerate_kernel(layers, heads, gpus, gpn, batch, max_mb, scheds, interleaved, vfilter, recs, zeros):
    """Return the configuration table, int64[n, 10] (see the module docstring).

    ``scheds``, ``recs`` and ``zeros`` are int64 arrays of codes in the order wanted; ``vfilter``
    the allowed chunk counts of the interleaved schedule (empty: every divisor >= 2 of a stage's
    layers); ``interleaved`` its schedule code.
    """
    dummy = np.empty((0, 10), np.int64)
    n = _walk(layers, heads, gpus, gpn, batch, max_mb, scheds, interleaved, vfilter, recs, zeros, dummy, False)
    out = np.empty((n, 10), np.int64)
    _walk(layers, heads, gpus, gpn, batch, max_mb, scheds, interleaved, vfilter, recs, zeros, out, True)
    return out
