"""numba kernel: op graph and variable live ranges from per-op variable accesses."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit

__all__ = ["op_edges_and_ranges"]


@jit
def op_edges_and_ranges(n_ops, n_vars, in_ptr, in_idx, out_ptr, out_idx, persistable):
    """Return ``(src, dst, first_use, last_use, bad_op, bad_var)`` for one rank.

    Variables are versioned in program order: a reader depends on the op that most
    recently wrote the variable before it, a writer starts a new version. This is what
    the reference's read/write-hazard renaming is for (keeping the graph a DAG), applied
    to every variable and op, so every edge goes forward in program order.

    ``first_use``/``last_use`` are op positions (-1 = live from the start, for variables
    read before any write). ``bad_op >= 0`` reports a non-persistable variable read by
    ``bad_op`` before its first writer (a cycle in the reference's variable graph).
    """
    last_writer = np.full(n_vars, -1, np.int64)
    first_write = np.full(n_vars, -1, np.int64)
    first_read = np.full(n_vars, -1, np.int64)
    first_use = np.full(n_vars, -2, np.int64)  # -2: never used
    last_use = np.full(n_vars, -2, np.int64)
    n_in = in_idx.shape[0]
    src = np.empty(n_in, np.int64)
    dst = np.empty(n_in, np.int64)
    ne = 0
    for op in range(n_ops):
        for k in range(in_ptr[op], in_ptr[op + 1]):
            v = in_idx[k]
            w = last_writer[v]
            if w >= 0 and w != op:
                src[ne] = w
                dst[ne] = op
                ne += 1
            if first_read[v] < 0:
                first_read[v] = op
            if first_use[v] == -2:
                # read before any write: the value exists from the start (a feed)
                first_use[v] = -1 if w < 0 else op
            last_use[v] = op
        for k in range(out_ptr[op], out_ptr[op + 1]):
            v = out_idx[k]
            last_writer[v] = op
            if first_write[v] < 0:
                first_write[v] = op
            if first_use[v] == -2:
                first_use[v] = op
            last_use[v] = op
    bad_op = -1
    bad_var = -1
    for v in range(n_vars):
        if persistable[v]:
            continue
        if first_write[v] >= 0 and 0 <= first_read[v] < first_write[v]:
            if bad_op < 0 or first_read[v] < bad_op:
                bad_op = first_read[v]
                bad_var = v
    return src[:ne], dst[:ne], first_use, last_use, bad_op, bad_var
