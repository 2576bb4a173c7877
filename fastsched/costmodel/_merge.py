"""numba kernel: series / parallel / serialising merges of an op graph to a fixed point.

Rules (phases: 0 forward, 1 backward, 2 optimizer; optimizer nodes never merge):

1. *series*: ``X``'s only predecessor is ``P`` and ``P``'s only successor is ``X``, same
   phase: one node, cost ``P + X``.
2. *parallel* (the seed's branch merge): every successor ``S`` of a node ``A`` (two or
   more) has ``A`` as its only predecessor and one common node ``E`` as its only
   successor, all of one phase: one node, cost ``max(S)``, edges ``A -> node -> E``.
3. *serialising* (the seed's linear merge of a node that depends on one node only):
   ``X``'s only predecessor is ``P`` (same phase) but ``P`` has other successors: ``X``
   runs after ``P`` on the same stream, cost ``P + X``; the node inherits both nodes'
   successors.

Rules 1 and 2 are applied until neither applies anywhere (they commute); then rule 3 is
applied once, to the node with the smallest key (the smallest original index among its
members), and so on. With ``serial_first`` rule 3 goes first instead (smallest key
first) and rule 2 only applies where no node depends on a single node any more. A merged node is identified by its smallest member, so results do
not depend on any hash or scan order.

Data layout: an edge pool with per-node singly linked in/out lists (O(1) concatenation),
union-find for node identity (so merges never rewrite neighbours' lists), exact distinct
in/out degree counters maintained incrementally, a work stack for rules 1-2 and a binary
min-heap (plus the sorted initial candidates, read with a pointer) for rule 3. Stale list entries (self loops inside merged nodes, duplicates) are
unlinked by the scan that meets them, so each is passed over once: a list that keeps
growing by concatenation (a long chain serialised into one node) is not rescanned, which
kept the merge linear instead of quadratic on chains.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit

__all__ = ["merge_fixed_point", "merge_into", "merge_workspace_size", "WORKSPACE_MAX_OPS"]


@jit
def _find(parent, x):
    r = x
    while parent[r] != r:
        r = parent[r]
    while parent[x] != r:  # path compression
        nxt = parent[x]
        parent[x] = r
        x = nxt
    return r


@jit
def _first_live(head, tail, nxt, other, parent, v):
    # First list entry of v whose other end is not v itself; -1 if none. Leading self loops
    # (edges inside merged nodes) are unlinked on the way: each is passed over once.
    e = head[v]
    while e >= 0:
        u = _find(parent, other[e])
        if u != v:
            return u
        e = nxt[e]
        head[v] = e
        if e < 0:
            tail[v] = -1
    return -1


@jit
def _heap_push(heap, size, x):
    i = size
    heap[i] = x
    while i > 0:
        p = (i - 1) // 2
        if heap[p] <= heap[i]:
            break
        t = heap[p]
        heap[p] = heap[i]
        heap[i] = t
        i = p
    return size + 1


@jit
def _heap_pop(heap, size):
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        lft = 2 * i + 1
        if lft >= size:
            break
        c = lft
        if lft + 1 < size and heap[lft + 1] < heap[lft]:
            c = lft + 1
        if heap[i] <= heap[c]:
            break
        t = heap[c]
        heap[c] = heap[i]
        heap[i] = t
        i = c
    return top, size


# _unlink and _join are inlined by numba: as calls (16 arguments for _join) they made the
# merge of a 1e6-op chain 3x slower in about half of the processes (24 ms or 77 ms)
@jit(inline="always")
def _unlink(head, tail, nxt, v, prev, nx):
    # drop the list entry between ``prev`` (-1: the head) and ``nx`` from v's list
    if prev < 0:
        head[v] = nx
    else:
        nxt[prev] = nx
    if nx < 0:
        tail[v] = prev


@jit(inline="always")
def _join(p, x, ih, it, oh, ot, ind, outd, ncost, parent, ihead, itail, ohead, otail, indeg, outdeg):
    # P and X become one node, named by the smaller index, with cost P + X and the given
    # in/out lists and distinct degrees; returns it
    r = min(p, x)
    parent[x if r == p else p] = r
    ncost[r] = ncost[p] + ncost[x]
    ihead[r] = ih
    itail[r] = it
    ohead[r] = oh
    otail[r] = ot
    indeg[r] = ind
    outdeg[r] = outd
    return r


@jit
def _has_pred(ihead, inext, src, parent, y, p):
    e = ihead[y]
    while e >= 0:
        if _find(parent, src[e]) == p:
            return True
        e = inext[e]
    return False


#: Largest graph (ops) merged in a caller's workspace; larger ones allocate their arrays.
WORKSPACE_MAX_OPS = 4096


@jit(inline="always")
def merge_workspace_size(n, m):
    """int64 workspace :func:`merge_into` needs for ``n`` nodes and ``m`` edges."""
    return 17 * n + 4 * m + 16


@jit(inline="always")
def _take(ws, o, k):
    # k entries of the workspace from o, or a fresh array without a workspace
    if ws.shape[0] == 0:
        return np.empty(k, np.int64)
    return ws[o : o + k]


@jit
def merge_fixed_point(cost, phase, edge_src, edge_dst, serial_first):
    """Merge an op graph (see :func:`merge_into`) in arrays of its own; return ``(label, ncost, *counts)``."""
    n = cost.shape[0]
    ws = np.empty(0, np.int64)  # one graph: its own arrays
    ncost = np.empty(n, np.float64)
    label = np.empty(n, np.int64)
    a, b, c = merge_into(cost, phase, edge_src, edge_dst, serial_first, ws, ncost, label)
    return label, ncost, a, b, c


@jit
def merge_into(cost, phase, edge_src, edge_dst, serial_first, ws, ncost, label):
    """Merge an op graph (deduplicated DAG edges) to the fixed point of rules 1-3.

    Parameters
    ----------
    cost : float64[n]
    phase : int64[n]   (0 fwd, 1 bwd, 2 optim)
    edge_src, edge_dst : int64[m]   distinct edges, no self loops
    serial_first : bool
        Give rule 3 priority over rules 1-2 (the order in which the seed's passes
        effectively fire on most graphs: siblings are serialised before a branch can be
        recognised). Default order (False): rules 1-2 first.

    ws : int64[>= 17 n + 4 m + 16] or int64[0]
        Workspace (overwritten); empty: allocate the arrays.
    ncost : float64[n]
        Output: cost of each merged node, at its label (other entries meaningless).
    label : int64[n]
        Output: merged node (its smallest member) of every original node.

    Returns
    -------
    n_series, n_parallel, n_serial : int
        How many merges of each rule were made.
    """
    n = cost.shape[0]
    m = edge_src.shape[0]
    # with a workspace (``ws`` not empty) every int array is a slice of it: a graph of a few
    # ops is dominated by allocations otherwise. Large graphs get separate arrays (one block
    # measured 3x slower on a 1e6-op chain, and the allocations do not matter there).
    o = 0
    parent = _take(ws, o, n)
    o += n
    indeg = _take(ws, o, n)
    o += n
    outdeg = _take(ws, o, n)
    o += n
    ohead = _take(ws, o, n)
    o += n
    otail = _take(ws, o, n)
    o += n
    ihead = _take(ws, o, n)
    o += n
    itail = _take(ws, o, n)
    o += n
    mark = _take(ws, o, n)
    o += n
    stack = _take(ws, o, n)
    o += n
    instack = np.zeros(n, np.bool_)
    onext = _take(ws, o, m)  # every entry is written by the edge loop below
    o += m
    inext = _take(ws, o, m)
    o += m
    # the work stack holds every node, smallest on top
    for v in range(n):
        parent[v] = v
    for v in range(n):
        ncost[v] = cost[v]
    indeg[:n] = 0
    outdeg[:n] = 0
    ohead[:n] = -1
    otail[:n] = -1
    ihead[:n] = -1
    itail[:n] = -1
    mark[:n] = 0
    for v in range(n):
        stack[v] = n - 1 - v
    instack[:] = True
    for e in range(m - 1, -1, -1):  # prepend backwards: lists keep edge order
        s = edge_src[e]
        d = edge_dst[e]
        onext[e] = ohead[s]
        ohead[s] = e
        if otail[s] < 0:
            otail[s] = e
        inext[e] = ihead[d]
        ihead[d] = e
        if itail[d] < 0:
            itail[d] = e
        outdeg[s] += 1
        indeg[d] += 1
    stamp = 0
    sp = n
    hcap = 3 * n + 2 * m + 16
    heap = _take(ws, o, hcap)
    o += hcap
    hs = 0
    # the initial candidates are already sorted: consume them with a pointer, and keep the
    # heap for keys that become eligible later (the minimum of both is the next key)
    init = _take(ws, o, n)
    o += n
    ni = 0
    for v in range(n):
        if indeg[v] == 1:
            init[ni] = v
            ni += 1
    ip = 0
    members = _take(ws, o, n)
    o += n
    n_series = 0
    n_parallel = 0
    n_serial = 0
    while True:
        merged = -1  # node created by this step (to re-check)
        extra = -1  # second node whose degrees changed
        found = False
        if serial_first or sp == 0:
            # smallest eligible key for rule 3 (stale heap entries are skipped)
            while hs > 0 or ip < ni:
                if ip < ni and (hs == 0 or init[ip] <= heap[0]):
                    x = init[ip]
                    ip += 1
                else:
                    x, hs = _heap_pop(heap, hs)
                if parent[x] != x or indeg[x] != 1 or phase[x] == 2:
                    continue
                p = _first_live(ihead, itail, inext, edge_src, parent, x)
                if phase[p] != phase[x]:
                    continue
                found = True
                break
            if not found and sp == 0:
                break
        if not found:
            sp -= 1
            v = stack[sp]
            instack[v] = False
            if parent[v] != v:
                continue
            ph = phase[v]
            # rule 1, v as the predecessor
            if ph != 2 and outdeg[v] == 1:
                x = _first_live(ohead, otail, onext, edge_dst, parent, v)
                if indeg[x] == 1 and phase[x] == ph:
                    p = v
                    merged = -2
            # rule 1, v as the successor
            if merged == -1 and ph != 2 and indeg[v] == 1:
                p0 = _first_live(ihead, itail, inext, edge_src, parent, v)
                if outdeg[p0] == 1 and phase[p0] == ph:
                    p = p0
                    x = v
                    merged = -2
            if merged == -2:
                n_series += 1
                # P's out-list only leads to X: M's successors are X's
                merged = _join(
                    p, x, ihead[p], itail[p], ohead[x], otail[x], indeg[p], outdeg[x],
                    ncost, parent, ihead, itail, ohead, otail, indeg, outdeg,
                )  # fmt: skip
            else:
                # rule 2 with v as the branch point
                a = v
                ok = outdeg[a] >= 2
                if ok:
                    stamp += 1
                    k = 0
                    end = -1
                    bph = -1
                    e = ohead[a]
                    prev = -1
                    while e >= 0:
                        nx = onext[e]
                        s = _find(parent, edge_dst[e])
                        if s == a or mark[s] == stamp:
                            # a self loop or a duplicate: unlink it (passed over once)
                            _unlink(ohead, otail, onext, a, prev, nx)
                            e = nx
                            continue
                        prev = e
                        e = nx
                        mark[s] = stamp
                        if indeg[s] != 1 or outdeg[s] != 1 or phase[s] == 2:
                            ok = False
                            break
                        if bph < 0:
                            bph = phase[s]
                        elif phase[s] != bph:
                            ok = False
                            break
                        t = _first_live(ohead, otail, onext, edge_dst, parent, s)
                        if end < 0:
                            end = t
                        elif t != end:
                            ok = False
                            break
                        members[k] = s
                        k += 1
                    if ok and k >= 2:
                        n_parallel += 1
                        r = members[0]
                        best = ncost[members[0]]
                        for i in range(1, k):
                            if members[i] < r:
                                r = members[i]
                            if ncost[members[i]] > best:
                                best = ncost[members[i]]
                        keep_ih = ihead[members[0]]
                        keep_it = itail[members[0]]
                        keep_oh = ohead[members[0]]
                        keep_ot = otail[members[0]]
                        for i in range(k):
                            parent[members[i]] = r
                        ncost[r] = best
                        ihead[r] = keep_ih
                        itail[r] = keep_it
                        ohead[r] = keep_oh
                        otail[r] = keep_ot
                        indeg[r] = 1
                        outdeg[r] = 1
                        outdeg[a] = 1
                        indeg[end] -= k - 1
                        merged = r
                        extra = end
                        if indeg[end] == 1:
                            hs = _heap_push(heap, hs, end)
                if merged == -1 and indeg[v] == 1 and outdeg[v] == 1:
                    # v may complete a parallel group of its predecessor
                    pa = _first_live(ihead, itail, inext, edge_src, parent, v)
                    if not instack[pa]:
                        stack[sp] = pa
                        sp += 1
                        instack[pa] = True
                if merged == -1:
                    continue
        else:
            # rule 3: X's only predecessor is P (found above)
            n_serial += 1
            # successors shared by P and X lose one distinct predecessor
            stamp += 1
            overlap = 0
            # walk the shorter successor list (a's), testing each successor for the other node
            a, b = (p, x) if outdeg[p] - 1 <= outdeg[x] else (x, p)
            e = ohead[a]
            prev = -1
            while e >= 0:
                nx = onext[e]
                y = _find(parent, edge_dst[e])
                if y == p or y == x or mark[y] == stamp:
                    # stale, the edge P -> X (a self loop once merged) or a duplicate: unlink
                    _unlink(ohead, otail, onext, a, prev, nx)
                    e = nx
                    continue
                prev = e
                e = nx
                mark[y] = stamp
                if _has_pred(ihead, inext, edge_src, parent, y, b):
                    overlap += 1
                    indeg[y] -= 1
                    if indeg[y] == 1:
                        hs = _heap_push(heap, hs, y)
            outd = outdeg[p] - 1 + outdeg[x] - overlap
            # concatenate P's and X's successor lists in O(1)
            if ohead[p] < 0:
                oh = ohead[x]
                ot = otail[x]
            elif ohead[x] < 0:
                oh = ohead[p]
                ot = otail[p]
            else:
                onext[otail[p]] = ohead[x]
                oh = ohead[p]
                ot = otail[x]
            merged = _join(
                p, x, ihead[p], itail[p], oh, ot, indeg[p], outd,
                ncost, parent, ihead, itail, ohead, otail, indeg, outdeg,
            )  # fmt: skip
        # re-check the new node (all rules) and nodes whose degrees changed
        if merged >= 0:
            if indeg[merged] == 1:
                hs = _heap_push(heap, hs, merged)
            if not instack[merged]:
                stack[sp] = merged
                sp += 1
                instack[merged] = True
            if extra >= 0 and parent[extra] == extra and not instack[extra]:
                stack[sp] = extra
                sp += 1
                instack[extra] = True
    for v in range(n):
        label[v] = _find(parent, v)
    return n_series, n_parallel, n_serial
