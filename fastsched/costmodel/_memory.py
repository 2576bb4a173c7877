"""numba kernel: static and peak memory from variable live ranges."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit

__all__ = ["static_and_peak", "static_and_peak_into"]


@jit
def static_and_peak(first_use, last_use, size, persistable, n_ops):
    """Return ``(static, peak)`` memory of one rank.

    Persistable variables are resident for the whole program (static). Any other used
    variable is live from ``first_use`` (its first write, or the start for a feed) to
    ``last_use`` (its last read, or its write when nothing reads it), so freeing happens
    on last use (B1). The peak is static plus the largest sum of sizes live at one op
    (inputs and outputs of an op are live together). Difference array: O(vars + ops).
    """
    return static_and_peak_into(first_use, last_use, size, persistable, n_ops, np.empty(n_ops + 2, np.float64))


@jit
def static_and_peak_into(first_use, last_use, size, persistable, n_ops, work):
    """:func:`static_and_peak` with a caller's float64 workspace of at least ``n_ops + 2``."""
    n = first_use.shape[0]
    delta = work[: n_ops + 2]  # position p+1 <-> op p, 0 <-> program start
    delta[:] = 0.0
    static = 0.0
    for v in range(n):
        if persistable[v]:
            static += size[v]
            continue
        if first_use[v] == -2:
            continue  # declared but never touched: never allocated
        delta[first_use[v] + 1] += size[v]
        delta[last_use[v] + 2] -= size[v]
    cur = 0.0
    top = 0.0
    for p in range(n_ops + 1):
        cur += delta[p]
        if cur > top:
            top = cur
    return static, static + top
