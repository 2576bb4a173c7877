"""numba kernel: one pass over an encoded program (all ranks) for a given setting.

Per rank: communication ops costed from tensor bytes and ring size (the seed's ring
formulas), call overhead added once per op (B12), merge to the fixed point
(:func:`._merge.merge_fixed_point`), per-phase sums before and after merging, static and
peak memory (:func:`._memory.static_and_peak`). Sums use numpy's pairwise order so the
results are bit-identical to ``ndarray.sum`` (what the reference-matching tests compare).
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched._numba_private import borrow
from fastsched.costmodel._comm import comm_ms
from fastsched.costmodel._memory import static_and_peak_into
from fastsched.costmodel._merge import WORKSPACE_MAX_OPS, merge_into, merge_workspace_size
from fastsched.costmodel._pipeline import ZB_H1, simulate_ordered, simulate_seed

__all__ = ["estimate_packed", "pack", "pairwise_sum", "INT_FIELDS", "FLOAT_FIELDS", "PARAMS"]

#: Segments of the packed int64 array (after a header of ``len + 1`` offsets), in order.
INT_FIELDS = (
    "op_ptr",
    "edge_ptr",
    "var_ptr",
    "phase",
    "comm",
    "comm_var",
    "comm_ranks",
    "comm_lo",
    "comm_hi",
    "edge_src",
    "edge_dst",
    "var_ndyn",
    "persistable",
    "first_use",
    "last_use",
)
#: Segments of the packed float64 array (same header layout, offsets stored as floats).
FLOAT_FIELDS = ("base_cost", "var_fixed", "var_dsize")
#: Slots of the settings vector ``P`` of :func:`estimate_packed` (activation bytes follow, per stage).
PARAMS = (
    "batch",
    "bw_intra",
    "lat_intra",
    "bw_inter",
    "lat_inter",
    "gpus_per_node",
    "overhead",
    "comm_model",
    "mem_bytes",
    "serial_first",
    "microbatch_num",
    "schedule_kind",
    "virtual_stages",
    "p2p_ms",
    "wgrad_fraction",
    "act_given",
    "pp_start",
)
_NI = len(INT_FIELDS)
_NF = len(FLOAT_FIELDS)
_NP = len(PARAMS)


@jit
def _block(a, lo, n):
    # numpy's pairwise_sum leaf (n <= 128): 8 accumulators, or a plain loop below 8
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    stop = n - (n % 8)
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@jit
def pairwise_sum(a, n):
    """``a[:n].sum()`` in numpy's pairwise order (bit-identical for float64).

    numpy splits a block of more than 128 elements at ``n2 = n // 2 - (n // 2) % 8`` and
    adds the two halves' sums; the recursion is run here on an explicit stack.
    """
    if n <= 128:
        return 0.0 + _block(a, 0, n)
    # post-order walk: (lo, n, state) with state 0 = unexpanded, 1 = left half summed
    st_lo = np.empty(128, np.int64)
    st_n = np.empty(128, np.int64)
    st_state = np.empty(128, np.int64)
    st_left = np.empty(128, np.float64)
    top = 0
    st_lo[0] = 0
    st_n[0] = n
    st_state[0] = 0
    result = 0.0
    while top >= 0:
        lo = st_lo[top]
        k = st_n[top]
        if k <= 128:
            result = _block(a, lo, k)
            top -= 1
            continue
        n2 = k // 2
        n2 -= n2 % 8
        if st_state[top] == 0:
            st_state[top] = 1
            top += 1
            st_lo[top] = lo
            st_n[top] = n2
            st_state[top] = 0
        elif st_state[top] == 1:
            st_left[top] = result
            st_state[top] = 2
            top += 1
            st_lo[top] = lo + n2
            st_n[top] = k - n2
            st_state[top] = 0
        else:
            result = st_left[top] + result
            top -= 1
    return 0.0 + result


@jit(inline="always")
def _seg(a, k):
    # segment k of a packed array whose header holds the segment offsets
    return a[int(a[k]) : int(a[k + 1])]


@jit
def _scratch(I, F):
    # Largest rank (ops, edges, variables) and the scratch of _ranks_into: one float and one
    # int block on graphs up to WORKSPACE_MAX_OPS, empty arrays above (see _ranks_into)
    op_ptr = _seg(I, 0)
    edge_ptr = _seg(I, 1)
    var_ptr = _seg(I, 2)
    nmax = 0
    mmax = 0
    vmax = 0
    for r in range(op_ptr.shape[0] - 1):
        nmax = max(nmax, op_ptr[r + 1] - op_ptr[r])
        mmax = max(mmax, edge_ptr[r + 1] - edge_ptr[r])
        vmax = max(vmax, var_ptr[r + 1] - var_ptr[r])
    nv_all = _seg(F, 1).shape[0]
    if nmax > WORKSPACE_MAX_OPS:
        return nmax, vmax, np.empty(0, np.float64), np.empty(0, np.int64)
    fs = np.empty(4 * nmax + vmax + 2 + nv_all, np.float64)
    return nmax, vmax, fs, np.empty(nmax + merge_workspace_size(nmax, mmax), np.int64)


@jit
def _ranks_into(I, F, P, out, nmax, vmax, fs_own, is_own):
    # Every rank of the packed program: merged and pre-merge phase times, static and peak
    # memory, node counts, written straight into ``out`` (layout of estimate_packed).
    # I, F, P and out are borrowed views; fs_own and is_own are the caller's scratch (kept
    # alive by the caller's variables across this call), used through borrowed views too.
    op_ptr = _seg(I, 0)
    edge_ptr = _seg(I, 1)
    var_ptr = _seg(I, 2)
    phase = _seg(I, 3)
    comm = _seg(I, 4)
    comm_var = _seg(I, 5)
    comm_ranks = _seg(I, 6)
    comm_lo = _seg(I, 7)
    comm_hi = _seg(I, 8)
    edge_src = _seg(I, 9)
    edge_dst = _seg(I, 10)
    var_ndyn = _seg(I, 11)
    persistable = _seg(I, 12)
    first_use = _seg(I, 13)
    last_use = _seg(I, 14)
    base_cost = _seg(F, 0)
    var_fixed = _seg(F, 1)
    var_dsize = _seg(F, 2)
    batch = P[0]
    bw_intra = P[1]
    lat_intra = P[2]
    bw_inter = P[3]
    lat_inter = P[4]
    gpus_per_node = np.int64(P[5])
    overhead = P[6]
    comm_model = P[7] != 0.0
    mem_bytes = P[8] != 0.0
    serial_first = P[9] != 0.0
    R = op_ptr.shape[0] - 1
    nv_all = var_fixed.shape[0]
    if nmax <= WORKSPACE_MAX_OPS:
        fs = borrow(fs_own)
        c_all = fs[:nmax]
        buf_all = fs[nmax : 2 * nmax]
        ncost_all = fs[2 * nmax : 3 * nmax]
        delta_all = fs[3 * nmax : 4 * nmax + 2]
        size_all = fs[4 * nmax + 2 : 4 * nmax + 2 + vmax]
        elems = fs[4 * nmax + 2 + vmax :]
        ints = borrow(is_own)
        label = ints[:nmax]
        ws = ints[nmax:]
    else:
        # large graphs: separate arrays (one block was 3x slower on a 1e6-op chain); the
        # merge allocates its own
        c_all = np.empty(nmax, np.float64)
        buf_all = np.empty(nmax, np.float64)
        ncost_all = np.empty(nmax, np.float64)
        delta_all = np.empty(nmax + 2, np.float64)
        size_all = np.empty(vmax, np.float64)
        elems = np.empty(nv_all, np.float64)
        label = np.empty(nmax, np.int64)
        ws = np.empty(0, np.int64)
    for v in range(nv_all):
        e = var_fixed[v]
        for _ in range(var_ndyn[v]):
            e *= batch
        elems[v] = e
    for r in range(R):
        o0 = op_ptr[r]
        n = op_ptr[r + 1] - o0
        v0 = var_ptr[r]
        nv = var_ptr[r + 1] - v0
        c = c_all[:n]
        ph = phase[o0 : o0 + n]
        for i in range(n):
            x = base_cost[o0 + i]
            k = comm[o0 + i]
            if k != 0 and comm_model:
                j = comm_var[o0 + i]
                nb = 0.0 if j < 0 else elems[v0 + j] * var_dsize[v0 + j]
                if comm_lo[o0 + i] // gpus_per_node != comm_hi[o0 + i] // gpus_per_node:
                    x = comm_ms(k, nb, comm_ranks[o0 + i], bw_inter, lat_inter)
                else:
                    x = comm_ms(k, nb, comm_ranks[o0 + i], bw_intra, lat_intra)
            c[i] = x + overhead
        buf = buf_all[:n]
        for p in range(3):
            k = 0
            for i in range(n):
                if ph[i] == p:
                    buf[k] = c[i]
                    k += 1
            out[1 + 3 * R + 3 * r + p] = pairwise_sum(buf, k)
        e0 = edge_ptr[r]
        e1 = edge_ptr[r + 1]
        ncost = ncost_all[:n]
        merge_into(c, ph, edge_src[e0:e1], edge_dst[e0:e1], serial_first, ws, ncost, label)
        cnt = 0
        for p in range(3):
            k = 0
            for i in range(n):
                if label[i] == i and ph[i] == p:
                    buf[k] = ncost[i]
                    k += 1
            out[1 + 3 * r + p] = pairwise_sum(buf, k)
            cnt += k
        out[1 + 8 * R + r] = cnt
        size = size_all[:nv]
        for v in range(nv):
            size[v] = elems[v0 + v] * var_dsize[v0 + v] if mem_bytes else elems[v0 + v]
        st, pk = static_and_peak_into(
            first_use[v0 : v0 + nv], last_use[v0 : v0 + nv], size, persistable[v0 : v0 + nv], n, delta_all
        )
        out[1 + 6 * R + r] = st
        out[1 + 7 * R + r] = pk
    return R


@jit
def estimate_packed(IF, P, out):
    """One call for a whole estimate: ranks, stages, pipeline schedule; results into ``out``.

    ``IF`` is an encoded program packed by ``encode``: the int64 segments
    :data:`INT_FIELDS` behind their header, then the float64 segments
    :data:`FLOAT_FIELDS` behind theirs, stored as int64 bits (one array: each array
    argument costs the call ~35 ns). ``P`` holds the settings (:data:`PARAMS`), then one
    activation size per stage when ``act_given``, then, from index ``pp_start`` (0: no
    pipeline), the stage table ``[S, stage_ptr[0..S], ranks...]``. ``out`` (float64, length
    ``2 + 9 R + 4 S``) receives::

        [runtime, times[R, 3], premerge[R, 3], static[R], peak[R], nodes[R],
         bubble, busy[S], peak_inflight[S], p2p_time[S], peak_activation_bytes[S]]

    ``times`` and ``premerge`` hold forward, backward and optimizer ms per rank; memory is
    in bytes (``mem_bytes``) or elements. ``batch`` fills ``-1`` dimensions. A
    communication op uses the inter-node link (bytes/ms, ms per step) when its lowest and
    highest rank sit on different nodes of ``gpus_per_node`` GPUs.

    Returns 0, or 1 when a fixed-order schedule deadlocked (never on valid input).
    Without a pipeline the runtime is the slowest rank's ``fwd + bwd + optim`` and the
    pipeline block is absent.
    """
    # borrowed views (no reference counting, see _borrow): the caller holds the arguments
    IF = borrow(IF)
    I = IF[: IF[_NI]]
    F = IF[IF[_NI] :].view(np.float64)
    P = borrow(P)
    out = borrow(out)
    nmax, vmax, fs, ints = _scratch(I, F)
    R = _ranks_into(I, F, P, out, nmax, vmax, fs, ints)
    k = 1 + 9 * R
    if P[16] == 0.0:
        top = 0.0
        for r in range(R):
            t = out[1 + 3 * r] + out[2 + 3 * r] + out[3 + 3 * r]
            if r == 0 or t > top:
                top = t
        out[0] = top
        return 0
    PP = P[int(P[16]) :].astype(np.int64)
    S = PP[0]
    sf = np.zeros(S, np.float64)
    sb = np.zeros(S, np.float64)
    so = np.zeros(S, np.float64)
    act = np.zeros(S, np.float64)
    for s in range(S):
        pk = -np.inf
        st = -np.inf
        for j in range(PP[1 + s], PP[2 + s]):
            r = PP[2 + S + j]
            f, b, o = out[1 + 3 * r], out[2 + 3 * r], out[3 + 3 * r]
            if j == PP[1 + s] or f > sf[s]:
                sf[s] = f
            if j == PP[1 + s] or b > sb[s]:
                sb[s] = b
            if j == PP[1 + s] or o > so[s]:
                so[s] = o
            pk = max(pk, out[1 + 7 * R + r])
            st = max(st, out[1 + 6 * R + r])
        act[s] = P[_NP + s] if P[15] != 0.0 else max(pk - st, 0.0)
    m = np.int64(P[10])
    kind = np.int64(P[11])
    v = np.int64(P[12])
    p2p = P[13]
    n_p2p = np.zeros(S, np.int64)
    if kind == 0:
        total, span, busy, inflight, _, _, _, _, _ = simulate_seed(sf, sb, so, m, False)
    else:
        bb = sb
        w = np.zeros(S, np.float64)
        if kind == ZB_H1:  # the weight-gradient share of the backward
            w = sb * P[14]
            bb = sb - w
        total, span, busy, inflight, n_p2p, _, _, _, _, _, dead = simulate_ordered(
            kind, sf, bb, w, so, m, v, p2p, False
        )
        if dead:
            return 1
    fb = busy - so
    bubble = 0.0
    if span > 0:
        bubble = max(1.0 - pairwise_sum(fb, S) / (S * span), 0.0)
    out[0] = total
    out[k] = bubble
    k += 1
    for s in range(S):
        out[k + s] = busy[s]
        out[k + S + s] = inflight[s]
        out[k + 2 * S + s] = n_p2p[s] * p2p
        out[k + 3 * S + s] = inflight[s] * act[s] / v
    return 0


def pack(arrays, fields, dtype):
    """Concatenate ``arrays[f]`` for ``f`` in ``fields`` behind a header of segment offsets.

    Examples
    --------
    >>> import numpy as np
    >>> pack({"a": np.array([5, 6]), "b": np.array([7])}, ("a", "b"), np.int64).tolist()
    [3, 5, 6, 5, 6, 7]
    """
    k = len(fields)
    sizes = [arrays[f].shape[0] for f in fields]
    out = np.empty(k + 1 + sum(sizes), dtype)
    pos = k + 1
    for i, f in enumerate(fields):
        out[i] = pos
        out[pos : pos + sizes[i]] = arrays[f]
        pos += sizes[i]
    out[k] = pos
    out.flags.writeable = False
    return out
