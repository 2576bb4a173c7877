"""Exact dynamic program for the per-round assignment (see :mod:`fastsched.sim.policies._assign`).

State: GPUs used per type, flattened with strides (``prod(capacity + 1)`` states). Jobs are
added one at a time; each either takes none of its candidates or one that still fits. For a
candidate of ``g`` GPUs of type ``t`` the update ``new[s + g * stride_t] = min(., dp[s] + cost)``
runs over the states with room, in contiguous runs along type ``t``'s axis. The new table is
filled block by block (one row of the last type's axis, when that row is long enough), each
block taking all of the job's candidates in order while it stays in the fastest cache; every
state sees the same updates in the same order as candidate by candidate over the whole
table, so the table is the same. The traceback recomputes which candidate produced each
value. Exact for any costs; its work grows as ``states * candidates``, so the face falls
back to HiGHS on large clusters.
"""

from __future__ import annotations

from fastsched._jit import jit


@jit(inline="always")
def _relax(src, dst, c):
    """``dst = min(dst, src + c)`` elementwise.

    On two 1-D views indexed from 0 the loop has no negative-index wraparound and LLVM
    vectorises it (about 10x faster than indexing the table rows with offsets).
    """
    for i in range(src.shape[0]):
        v = src[i] + c
        w = dst[i]
        dst[i] = v if v < w else w


@jit(inline="always")
def _relax_block(dp, new, base, size, lo, hi, must, gtype, gpus, cost, capacity, strides):
    """Relax the states ``base .. base + size - 1`` of ``new`` by candidates ``lo .. hi - 1`` in order.

    ``size`` is a multiple of every span of a type whose span fits in it; a type whose span
    does not is the last type, and the block is one row of its axis.
    """
    for k in range(lo, hi):
        if must >= 0 and k != must:
            continue
        t = gtype[k]
        g = gpus[k]
        st = strides[t]
        span = st * (capacity[t] + 1)
        shift = g * st
        n = (capacity[t] + 1 - g) * st
        if n <= 0 or g < 0:  # does not fit (a negative slice end would wrap around)
            continue
        c = cost[k]
        if span > size:  # the block is the row u of type t's axis: its source is row u - g
            if base // st >= g:
                _relax(dp[base - shift : base - shift + size], new[base : base + size], c)
        else:
            for outer in range(base, base + size, span):
                _relax(dp[outer : outer + n], new[outer + shift : outer + shift + n], c)


@jit
def assign_dp(start, gtype, gpus, cost, forced, capacity, strides, layers, inf, chosen):
    """Fill ``chosen`` (bool per candidate) with an optimal assignment; return its cost.

    ``start`` (length J + 1) delimits each job's candidates; a job with a forced candidate
    must take it. ``layers`` is float64 scratch of shape ``(J + 1, states)``; ``inf`` marks
    unreachable states. Returns ``inf`` when the forced candidates do not fit.
    """
    num_jobs = start.shape[0] - 1
    num_states = layers.shape[1]
    last = capacity.shape[0] - 1
    # Blocks of one row of the last type's axis (a few kB) where rows are long enough to pay.
    block = strides[last] if strides[last] >= 64 else num_states
    # layers[j] is the table after jobs 0..j-1; the traceback finds which candidate produced
    # each value by recomputing it (same operation, so equality is exact).
    layers[0, :] = inf
    layers[0, 0] = 0.0
    for j in range(num_jobs):
        lo, hi = start[j], start[j + 1]
        must = -1
        for k in range(lo, hi):
            if forced[k]:
                must = k
        dp = layers[j]
        new = layers[j + 1]
        for base in range(0, num_states, block):
            if must >= 0:
                new[base : base + block] = inf
            else:
                new[base : base + block] = dp[base : base + block]
            _relax_block(dp, new, base, block, lo, hi, must, gtype, gpus, cost, capacity, strides)
    dp = layers[num_jobs]
    best = 0
    for s in range(num_states):
        if dp[s] < dp[best]:
            best = s
    total = dp[best]
    chosen[:] = False
    if total >= inf:
        return total
    s = best
    for j in range(num_jobs - 1, -1, -1):
        val = layers[j + 1, s]
        prev = layers[j]
        must = -1
        for k in range(start[j], start[j + 1]):
            if forced[k]:
                must = k
        if must < 0 and prev[s] == val:
            continue
        if val >= inf:  # pragma: no cover - the best state is reachable
            break
        for k in range(start[j], start[j + 1]):
            if must >= 0 and k != must:
                continue
            t = gtype[k]
            shift = gpus[k] * strides[t]
            u = (s // strides[t]) % (capacity[t] + 1)
            if u >= gpus[k] and prev[s - shift] + cost[k] == val:
                chosen[k] = True
                s -= shift
                break
    return total
