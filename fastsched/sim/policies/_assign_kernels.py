"""Exact dynamic program for the per-round assignment (see :mod:`fastsched.sim.policies._assign`).

State: GPUs used per type, flattened with strides (``prod(capacity + 1)`` states). Jobs are
added one at a time; each either takes none of its candidates or one that still fits. The
table of choices is kept per job for the traceback. Exact for any costs; its work grows as
``states * candidates``, so the face falls back to HiGHS on large clusters.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit


@jit
def assign_dp(start, gtype, gpus, cost, forced, capacity, strides, num_states, chosen):
    """Fill ``chosen`` (bool per candidate) with an optimal assignment; return its cost.

    ``start`` (length J + 1) delimits each job's candidates; a job with a forced candidate
    must take it. Returns ``inf`` when the forced candidates do not fit.
    """
    num_jobs = start.shape[0] - 1
    num_types = capacity.shape[0]
    inf = np.inf
    used = np.empty((num_states, num_types), dtype=np.int64)
    for s in range(num_states):
        for t in range(num_types):
            used[s, t] = (s // strides[t]) % (capacity[t] + 1)
    dp = np.full(num_states, inf)
    dp[0] = 0.0
    new = np.empty(num_states)
    choice = np.full((num_jobs, num_states), -1, dtype=np.int32)
    for j in range(num_jobs):
        lo, hi = start[j], start[j + 1]
        must = -1
        for k in range(lo, hi):
            if forced[k]:
                must = k
        if must >= 0:
            new[:] = inf
        else:
            new[:] = dp
        for s in range(num_states):
            base = dp[s]
            if base == inf:
                continue
            for k in range(lo, hi):
                if must >= 0 and k != must:
                    continue
                t = gtype[k]
                g = gpus[k]
                if used[s, t] + g > capacity[t]:
                    continue
                s2 = s + g * strides[t]
                v = base + cost[k]
                if v < new[s2]:
                    new[s2] = v
                    choice[j, s2] = k
        dp[:] = new
    best = 0
    for s in range(num_states):
        if dp[s] < dp[best]:
            best = s
    total = dp[best]
    chosen[:] = False
    if total == inf:
        return total
    s = best
    for j in range(num_jobs - 1, -1, -1):
        k = choice[j, s]
        if k >= 0:
            chosen[k] = True
            s -= gpus[k] * strides[gtype[k]]
    return total
