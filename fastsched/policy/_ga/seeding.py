"""Seeds of the initial population: first fit and greedy marginal-gain fills."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.policy._ga.fitness import job_value
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.livenodes import exhausted, needs
from fastsched.policy._ga.rowstate import pack_row, shift_entry, unpack_row
from fastsched.policy._ga.variation import CAP_NONE, node_capacity

__all__ = ["first_fit_rows", "greedy_fill"]


@jit
def first_fit_rows(A, limits, dst, rows):
    """Build the first-fit baseline rows (unscored), one per cluster size.

    For each ``limits[i]`` (``limits[0]`` the largest), row ``rows[i]`` of ``dst``: pinned
    jobs are placed as given, then each job in order gets ``max(min_replicas, 1)`` replicas
    on the first node below the limit with room.

    One pass at ``limits[0]`` serves every limit: nodes below ``L`` see the same placements
    with limit ``L`` as with any larger one (a job that finds no room below ``L`` goes to a
    node at or above ``L``, which no later job below ``L`` sees), so the row for ``L`` is the
    pass's row without the unpinned entries at nodes ``>= L``.
    """
    njobs = A.job_res.shape[0]
    used = np.empty(A.node_res.shape, dtype=np.int64)
    used[:] = 0
    for j in range(njobs):
        if A.pinned[j]:
            for q in range(A.base_off[j], A.base_off[j + 1]):
                for r in range(A.job_res.shape[1]):
                    used[A.base_node[q], r] += A.base_cnt[q] * A.job_res[j, r]
    at = np.empty(njobs, dtype=np.int64)  # (np.full compiles a kernel of its own)
    at[:] = -1
    want = np.empty(njobs, dtype=np.int64)
    want[:] = 0
    # Nodes only fill up here: skip the exhausted ones as greedy_fill does (the same first node).
    live = _live_pointers(A, used)
    for j in range(njobs):
        if A.pinned[j]:
            continue
        w = A.min_rep[j] if A.min_rep[j] > 1 else 1
        if w > A.max_rep[j]:
            continue
        skip = needs(A, j)
        n = _next_live(live, 0) if skip else 0
        while n < limits[0]:
            if node_capacity(A.job_res, A.node_res, used, j, n, CAP_NONE) >= w:
                at[j] = n
                want[j] = w
                for r in range(A.job_res.shape[1]):
                    used[n, r] += w * A.job_res[j, r]
                if exhausted(A, used, n):
                    live[n] = n + 1
                break
            n = _step(live, n, skip)
    for i in range(limits.shape[0]):
        limit = limits[i]
        row = rows[i]
        pos = 0
        for j in range(njobs):
            dst.off[row, j] = pos
            if A.pinned[j]:
                for q in range(A.base_off[j], A.base_off[j + 1]):
                    dst.node[row, pos] = A.base_node[q]
                    dst.cnt[row, pos] = A.base_cnt[q]
                    pos += 1
            elif 0 <= at[j] < limit:
                dst.node[row, pos] = at[j]
                dst.cnt[row, pos] = want[j]
                pos += 1
        dst.off[row, njobs] = pos


@inner
def _live_pointers(A, used):
    """Pointers of :func:`_next_live`: ``live[n] == n`` for a node with some resource left, else ``n + 1``.

    Filled only (first fit, greedy fill): a node never comes back, so an exhausted node's
    pointer only ever moves on (to the node after it).
    """
    nodes = A.node_res.shape[0]
    live = np.empty(nodes + 1, dtype=np.int64)
    for n in range(nodes + 1):
        live[n] = n + 1 if n < nodes and exhausted(A, used, n) else n
    return live


@leaf
def _next_live(live, n):
    """Smallest node ``>= n`` not known to be exhausted (``live``: pointers, halved on the way)."""
    while live[n] != n:
        live[n] = live[live[n]]
        n = live[n]
    return n


@leaf
def _step(live, n, skip):
    """Return the node after ``n`` to scan: the next live one when skipping exhausted nodes, else ``n + 1``."""
    return _next_live(live, n + 1) if skip else n + 1


@inner
def _candidate(S, j, A, limit, live):
    """Best single move that adds replicas to job ``j``: (gain, node, count).

    Scans for a node in node order; ``live`` (see :func:`greedy_fill`) lets the scans of a job
    that needs resources skip the nodes with none left, where no replica fits: the node
    found is the same.
    """
    skip = needs(A, j)
    first = _next_live(live, 0) if skip else 0
    r = S.reps[j]
    k = S.jk[j]
    best = -np.inf
    bn = -1
    bc = 0
    if r >= A.max_rep[j]:
        return best, bn, bc
    if k == 0:
        want = A.min_rep[j] if A.min_rep[j] > 1 else 1
        n = first
        while n < limit:
            if node_capacity(A.job_res, A.node_res, S.used, j, n, CAP_NONE) >= want:
                v = job_value(A.table, j, np.int64(1), want, A.scale[j], np.bool_(True), A.penalty[j])
                return v - S.val[j], n, want
            n = _step(live, n, skip)
        return best, bn, bc
    if k == 1:
        n0 = np.int64(S.jn[j, 0])
        if node_capacity(A.job_res, A.node_res, S.used, j, n0, CAP_NONE) >= 1:
            best = job_value(A.table, j, np.int64(1), r + 1, A.scale[j], np.bool_(True), A.penalty[j]) - S.val[j]
            bn = n0
            bc = 1
        if not S.owner[n0] and k + 1 <= S.jn.shape[1]:
            n = first
            while n < limit:
                if n != n0 and not S.owner[n]:
                    if node_capacity(A.job_res, A.node_res, S.used, j, n, CAP_NONE) >= 1:
                        g = (
                            job_value(A.table, j, np.int64(2), r + 1, A.scale[j], np.bool_(True), A.penalty[j])
                            - S.val[j]
                        )
                        if g > best:
                            best = g
                            bn = n
                            bc = 1
                        break
                n = _step(live, n, skip)
        return best, bn, bc
    # Distributed: grow on one of its nodes, else take a free unowned node.
    for q in range(k):
        if node_capacity(A.job_res, A.node_res, S.used, j, np.int64(S.jn[j, q]), CAP_NONE) >= 1:
            g = job_value(A.table, j, k, r + 1, A.scale[j], np.bool_(True), A.penalty[j]) - S.val[j]
            return g, S.jn[j, q], 1
    if k + 1 <= S.jn.shape[1]:
        n = first
        while n < limit:
            if not S.owner[n]:
                if node_capacity(A.job_res, A.node_res, S.used, j, n, CAP_NONE) >= 1:
                    g = job_value(A.table, j, k + 1, r + 1, A.scale[j], np.bool_(True), A.penalty[j]) - S.val[j]
                    return g, n, 1
            n = _step(live, n, skip)
    return best, bn, bc


@leaf
def _winner(gain, a, b):
    """Return the one of indices ``a < b`` that ``np.argmax`` picks (-1: an empty side; NaN first, ties to ``a``)."""
    if a < 0:
        return b
    if b < 0:
        return a
    ga = gain[a]
    if ga != ga:
        return a
    gb = gain[b]
    if gb != gb:
        return b
    return b if gb > ga else a


@inner
def _tournament(gain):
    """Tournament tree over ``gain``: ``tree[1]`` is ``np.argmax(gain)``; leaves at ``tree[m + i]``.

    The greedy fill changes one gain per step; the tree finds the next best job in O(log jobs)
    instead of a scan over all jobs (a late round of a x100 study: 10,000 jobs, each stale
    gain re-checked once, was O(jobs^2) per fill).
    """
    m = 1
    while m < gain.shape[0]:
        m *= 2
    tree = np.empty(2 * m, dtype=np.int64)
    for i in range(m):
        tree[m + i] = i if i < gain.shape[0] else -1
    for i in range(m - 1, 0, -1):
        tree[i] = _winner(gain, tree[2 * i], tree[2 * i + 1])
    return tree


@leaf
def _retally(tree, gain, j):
    """Update the tournament tree after ``gain[j]`` changed."""
    i = (tree.shape[0] // 2 + j) // 2
    while i >= 1:
        tree[i] = _winner(gain, tree[2 * i], tree[2 * i + 1])
        i //= 2


@jit
def greedy_fill(src, src_row, limit, A, width, dst, dst_row):
    """Add replicas to a repaired row by best marginal gain until none helps.

    Lazy greedy: stored gains are upper bounds (resources only get scarcer), so the best
    stored gain is recomputed before it is applied. Only nodes ``< limit`` are used for new
    placements, which yields seeds of different cluster sizes. Pinned jobs are untouched.
    The result is scored into row ``dst_row`` of ``dst``.
    """
    njobs = A.job_res.shape[0]
    S = unpack_row(src, src_row, A, width)
    # Node scans skip exhausted nodes: live[n] == n for a node with some resource left, else a
    # pointer to a later node (resources only get used up here, so a node never comes back).
    live = _live_pointers(A, S.used)
    gain = np.empty(njobs, dtype=np.float64)
    gain[:] = -np.inf
    for j in range(njobs):
        if not A.pinned[j]:
            gain[j] = _candidate(S, j, A, limit, live)[0]
    tree = _tournament(gain)
    while njobs > 0:  # (no jobs: nothing to fill)
        j = tree[1]  # the first job with the best stored gain (np.argmax's choice)
        if not gain[j] > 1e-12:
            break
        g, n, c = _candidate(S, j, A, limit, live)
        if g < gain[j] - 1e-12:
            gain[j] = g
            _retally(tree, gain, j)
            continue
        if not g > 1e-12:
            gain[j] = -np.inf
            _retally(tree, gain, j)
            continue
        # Apply: add c replicas of job j on node n (entries stay sorted by node).
        shift_entry(S, j, n, c)
        k = S.jk[j]
        S.reps[j] += c
        for r in range(A.job_res.shape[1]):
            S.used[n, r] += c * A.job_res[j, r]
        if exhausted(A, S.used, n):
            live[n] = n + 1
        if k > 1:
            for q in range(k):
                S.owner[S.jn[j, q]] = True
        S.val[j] = job_value(A.table, j, k, S.reps[j], A.scale[j], np.bool_(True), A.penalty[j])
        gain[j] = _candidate(S, j, A, limit, live)[0]
        _retally(tree, gain, j)
    pack_row(S, A, dst, dst_row)
