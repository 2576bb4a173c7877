"""numba kernel: op graph and variable live ranges from per-op variable accesses."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.costmodel.graph import BWD, OPTIM

_OP_ROLE_BACKWARD = 1

__all__ = ["op_edges_and_ranges", "rank_columns", "FACT_B4", "FACT_B10", "FACT_B8", "FACT_B9_DTYPE"]

#: Bits of ``rank_columns``'s ``facts`` (see :mod:`fastsched.costmodel.deviations`).
FACT_B4, FACT_B10, FACT_B8, FACT_B9_DTYPE = 1, 2, 4, 8


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


@jit
def _slot_ptr(pair_len, nslots):
    # per-op offsets into the flattened names, from per-slot name counts and per-op slot counts
    n = nslots.shape[0]
    ptr = np.zeros(n + 1, np.int64)
    p = 0
    for i in range(n):
        c = 0
        for _ in range(nslots[i]):
            c += pair_len[p]
            p += 1
        ptr[i + 1] = ptr[i] + c
    return ptr


@jit
def rank_columns(
    in_len,
    in_idx,
    in_nslots,
    out_len,
    out_idx,
    out_nslots,
    persistable,
    shape_len,
    dims,
    dsize,
    grad_var,
    role,
    comm,
    optim,
):
    """Every per-rank array of the encoding in one call (one dispatch instead of ~50 numpy calls).

    ``in_len``/``out_len``: names per slot, ``in_nslots``/``out_nslots``: slots per op.
    Returns ``(in_ptr, out_ptr, phase, var_fixed, var_ndyn, src, dst, first_use, last_use,
    bad_op, bad_var, facts)``: per-op offsets into the flattened names; the phase (2 if
    ``optim``, else 1 if the backward role or any input is a gradient variable, else 0);
    per variable the float64 product of its static dimensions (left to right, as
    ``np.multiply.at`` does) and the number of ``-1`` dimensions; the deduplicated edges
    sorted by ``(src, dst)`` and the live ranges of :func:`op_edges_and_ranges`; ``facts``
    a bit set (``FACT_*``).
    """
    n = in_nslots.shape[0]
    nv = persistable.shape[0]
    in_ptr = _slot_ptr(in_len, in_nslots)
    out_ptr = _slot_ptr(out_len, out_nslots)
    facts = 0
    for i in range(n):
        if in_ptr[i + 1] - in_ptr[i] > in_nslots[i] or out_ptr[i + 1] - out_ptr[i] > out_nslots[i]:
            facts |= FACT_B10
    fixed = np.ones(nv, np.float64)
    ndyn = np.zeros(nv, np.int64)
    k = 0
    for v in range(nv):
        f = 1.0
        for _ in range(shape_len[v]):
            d = dims[k]
            k += 1
            if d == -1:
                ndyn[v] += 1
            else:
                f *= np.float64(d)
        fixed[v] = f
        if ndyn[v] > 0:
            facts |= FACT_B8
        if dsize[v] != 4.0:
            facts |= FACT_B9_DTYPE
    phase = np.zeros(n, np.int64)
    for i in range(n):
        g = False
        for k in range(in_ptr[i], in_ptr[i + 1]):
            if grad_var[in_idx[k]]:
                g = True
                break
        if g and role[i] != _OP_ROLE_BACKWARD and comm[i] == 0:
            facts |= FACT_B4
        if optim[i]:
            phase[i] = OPTIM
        elif role[i] == _OP_ROLE_BACKWARD or g:
            phase[i] = BWD
    src, dst, first, last, bad_op, bad_var = op_edges_and_ranges(n, nv, in_ptr, in_idx, out_ptr, out_idx, persistable)
    m = max(n, 1)
    key = np.sort(src * m + dst)
    ne = 0
    for j in range(key.shape[0]):
        if j == 0 or key[j] != key[j - 1]:
            src[ne] = key[j] // m
            dst[ne] = key[j] % m
            ne += 1
    return in_ptr, out_ptr, phase, fixed, ndyn, src[:ne], dst[:ne], first, last, bad_op, bad_var, facts
