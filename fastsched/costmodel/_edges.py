"""numba kernel: op graph and variable live ranges from per-op variable accesses."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.costmodel.graph import BWD, OPTIM

_OP_ROLE_BACKWARD = 1

__all__ = ["op_edges_and_ranges", "rank_columns", "FACT_B4", "FACT_B10", "FACT_B8", "FACT_B9_DTYPE", "FACT_ROLE_OPT"]

#: Bits of ``rank_columns``'s ``facts`` (see :mod:`fastsched.costmodel.deviations`).
FACT_B4, FACT_B10, FACT_B8, FACT_B9_DTYPE = 1, 2, 4, 8
# An op whose op_role has the optimize bit (2) but no LearningRate input: costed as forward or
# backward by Paddle's rule, which deviations() reports (never a silent misclassification).
FACT_ROLE_OPT = 16
_OP_ROLE_OPTIMIZE = 2


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
        else:
            if role[i] & _OP_ROLE_OPTIMIZE:
                facts |= FACT_ROLE_OPT
            if role[i] == _OP_ROLE_BACKWARD or g:
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


#: ``rank_packed``'s status: encoded, a cost negative or not finite, a static element
#: count past float64's integers (exact products needed), a cycle (``bad_op``).
PACKED_OK, PACKED_BAD_COST, PACKED_BIG_SHAPE, PACKED_CYCLE = 0, 1, 2, 3
_N_INT_FIELDS, _N_FLOAT_FIELDS = 15, 3  # len(_estimate.INT_FIELDS), len(FLOAT_FIELDS)


@jit
def _take(a, o, n):
    # a contiguous copy of a[o:o+n] and the offset after it
    return a[o : o + n].copy(), o + n


@jit
def rank_packed(ints, cost):
    """Encode a one-rank program without communication ops straight into the packed layout.

    ``ints`` is ``[n_ops, n_vars, n_in_slots, n_out_slots, n_in, n_out, n_dims]`` followed by
    the inputs of :func:`rank_columns` (without ``comm``, all 0 here), in its argument order,
    booleans and byte sizes as integers; ``cost`` the ops' costs. Returns ``(packed, status,
    facts)``: ``packed`` is ``_estimate.INT_FIELDS`` behind their header, then the bits of
    ``FLOAT_FIELDS`` behind theirs, exactly what the encoder's general path packs for such a
    program; ``status`` one of ``PACKED_*`` (anything but ``PACKED_OK``: ``packed`` is empty
    and the general path reports the problem).
    """
    n, nv, npi, npo, ni, no, nd = ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[6]
    o = 7
    in_len, o = _take(ints, o, npi)
    in_idx, o = _take(ints, o, ni)
    in_ns, o = _take(ints, o, n)
    out_len, o = _take(ints, o, npo)
    out_idx, o = _take(ints, o, no)
    out_ns, o = _take(ints, o, n)
    pers, o = _take(ints, o, nv)
    shape_len, o = _take(ints, o, nv)
    dims, o = _take(ints, o, nd)
    dsize, o = _take(ints, o, nv)
    grad, o = _take(ints, o, nv)
    role, o = _take(ints, o, n)
    optim, o = _take(ints, o, n)
    empty = np.empty(0, np.int64)
    for i in range(n):
        if not (cost[i] >= 0.0 and cost[i] != np.inf):
            return empty, PACKED_BAD_COST, 0
    _, _, phase, fixed, ndyn, src, dst, first, last, bad_op, _, facts = rank_columns(
        in_len,
        in_idx,
        in_ns,
        out_len,
        out_idx,
        out_ns,
        pers != 0,
        shape_len,
        dims,
        dsize.astype(np.float64),
        grad != 0,
        role,
        np.zeros(n, np.int64),  # comm
        optim != 0,
    )
    for v in range(nv):
        if fixed[v] >= 2.0**53:
            return empty, PACKED_BIG_SHAPE, facts
    if bad_op >= 0:
        return empty, PACKED_CYCLE, facts
    ne = src.shape[0]
    ki, kf = _N_INT_FIELDS, _N_FLOAT_FIELDS
    n_i = ki + 1 + 6 + 6 * n + 2 * ne + 4 * nv
    n_f = kf + 1 + n + 2 * nv
    out = np.empty(n_i + n_f, np.int64)
    # int header and segments: op_ptr, edge_ptr, var_ptr, phase, comm, comm_var, comm_ranks,
    # comm_lo, comm_hi, edge_src, edge_dst, var_ndyn, persistable, first_use, last_use
    sizes = (2, 2, 2, n, n, n, n, n, n, ne, ne, nv, nv, nv, nv)
    p = ki + 1
    out[0] = p
    for j in range(ki):
        p += sizes[j]
        out[j + 1] = p
    p = ki + 1
    for a, b in ((0, n), (0, ne), (0, nv)):
        out[p] = a
        out[p + 1] = b
        p += 2
    for i in range(n):
        out[p + i] = phase[i]
        out[p + n + i] = 0  # comm: no communication op
        out[p + 2 * n + i] = -1  # comm_var
        out[p + 3 * n + i] = 2  # comm_ranks
        out[p + 4 * n + i] = 0  # comm_lo, comm_hi: rank 0
        out[p + 5 * n + i] = 0
    p += 6 * n
    for i in range(ne):
        out[p + i] = src[i]
        out[p + ne + i] = dst[i]
    p += 2 * ne
    for v in range(nv):
        out[p + v] = ndyn[v]
        out[p + nv + v] = pers[v] != 0
        out[p + 2 * nv + v] = first[v]
        out[p + 3 * nv + v] = last[v]
    f = np.empty(n_f, np.float64)
    f[0] = kf + 1
    f[1] = kf + 1 + n
    f[2] = kf + 1 + n + nv
    f[3] = kf + 1 + n + 2 * nv
    f[kf + 1 : kf + 1 + n] = cost
    f[kf + 1 + n : kf + 1 + n + nv] = fixed
    f[kf + 1 + n + nv :] = dsize
    out[n_i:] = f.view(np.int64)
    return out, PACKED_OK, facts
