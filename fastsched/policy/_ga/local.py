"""Local search: steepest single-job moves on one row until no move improves it.

A round-robin over jobs: job ``j`` is taken out of the row and the best of these placements
(given everything else) is put back, if it raises the first objective:

* nothing (drop the job), or its base allocation (no restart penalty);
* one node: the node with the most room below the size ``limit``, with the replica count that
  maximises the single-node speedup up to that room (relocation, consolidation);
* its current nodes with one replica more or less on one of them;
* its current nodes plus a new node (one replica, or as many as fit), for distributed jobs.
* its current nodes plus several free nodes at once (those with the most room, filled): under a
  restart penalty each one-node step can lose while the whole jump pays.

Genetic operators change one job at a time by small random steps; on clusters with more GPUs
than the jobs use, reaching the optimum needs a job to jump from 1 replica to many on a free
node, which random steps rarely do in one go (a half-way placement scores worse). The polish
makes those jumps deterministically. Pinned jobs are never moved; nodes ``>= limit`` are not
used for new placements, so a row's cluster size does not grow beyond ``limit``.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.policy._ga.fitness import fair_term, improves, job_value
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.livenodes import first_node, live_nodes, mark_job, needs, next_node, refresh
from fastsched.policy._ga.rng import rand_int
from fastsched.policy._ga.rowstate import (
    add_job,
    find_entry,
    is_changed,
    pack_row,
    remove_job,
    set_entries,
    unpack_row,
)
from fastsched.policy._ga.transfers import _EPS, _transfer_pass, _value
from fastsched.policy._ga.variation import node_capacity

__all__ = ["NO_TRANSFERS", "ALL_TRANSFERS", "LOCAL_TRANSFERS", "polish_row", "best_single_counts"]

#: Replica transfers of a polish (its ``transfers`` argument): none; to a job on any node (it
#: grows in place, spreads to the node, or starts there); only on the nodes a job already
#: holds (a pass costs O(entries) instead of O(jobs x entries)).
NO_TRANSFERS = 0
ALL_TRANSFERS = 1
LOCAL_TRANSFERS = 2


@inner
def best_single_counts(A):
    """Tabulate ``best[j, m]``, the replica count in ``[lo_j, m]`` with the highest single-node speedup.

    ``lo_j = max(min_replicas, 1)``; the entry is 0 when ``m < lo_j``.
    """
    njobs = A.table.shape[0]
    rmax = A.table.shape[2] - 1
    best = np.empty((njobs, rmax + 1), dtype=np.int64)
    best[:] = 0
    for j in range(njobs):
        lo = A.min_rep[j] if A.min_rep[j] > 1 else 1
        b = 0
        for m in range(lo, rmax + 1):
            if b == 0 or A.table[j, 1, m] > A.table[j, 1, b]:
                b = m
            best[j, m] = b
    return best


@leaf
def _base_fits(S, j, A):
    """Whether job ``j``'s base entries fit the state without ``j`` (and its bounds)."""
    b0 = A.base_off[j]
    kb = A.base_off[j + 1] - b0
    if kb == 0:
        return False
    reps = np.int64(0)
    for q in range(b0, b0 + kb):
        n = np.int64(A.base_node[q])
        if kb > 1 and S.owner[n]:
            return False
        if node_capacity(A.job_res, A.node_res, S.used, j, n, A.max_rep[j]) < A.base_cnt[q]:
            return False
        reps += A.base_cnt[q]
    return A.min_rep[j] <= reps <= A.max_rep[j]


@leaf
def _roomiest(S, j, A, limit, live, skip, cap, spread):
    """Return ``(room, node)``: the lowest node below ``limit`` with the most room for job ``j`` (up to ``cap``).

    ``spread``: only nodes no distributed job owns and ``j`` does not hold (where it may
    spread). ``(0, -1)`` when none has room; ``live``/``skip`` as in :func:`_best_move`.
    """
    room = 0
    rn = -1
    n = first_node(live, limit, skip)
    while n < limit:
        if not spread or (not S.owner[n] and find_entry(S, j, n) < 0):
            c = node_capacity(A.job_res, A.node_res, S.used, j, n, cap)
            if c > room:
                room = c
                rn = n
                if c >= cap:
                    break
        n = next_node(live, n, limit, skip)
    return room, rn


@leaf
def _best_move(S, j, A, limit, best1, tn, tc, hist, live):
    """Write the best placement of job ``j`` (taken out of ``S``) into ``tn/tc``.

    Returns ``(gain, k)`` where gain is the change of the accumulated term (sign-adjusted)
    against its current placement and ``k`` its entry count (``-1``: keep the current placement).
    ``hist`` is scratch of at least ``max_replicas + 1`` entries. ``live`` (the nodes with some
    resource left, :mod:`~fastsched.policy._ga.livenodes`) lets the node scans of a job that
    needs resources skip full nodes, where it fits nothing: every scan below looks for nodes
    with room, so it finds the same nodes.
    """
    skip = needs(A, j)
    mode = A.mode
    p = A.p
    mx = A.max_rep[j]
    lo = A.min_rep[j] if A.min_rep[j] > 1 else 1
    t0 = fair_term(S.val[j], mode, p)
    k0 = S.jk[j]
    r0 = S.reps[j]
    best = _EPS
    bk = -1
    # Nothing.
    g = improves(fair_term(0.0, mode, p) - t0, mode, p)
    if g > best:
        best = g
        bk = 0
    # Base allocation.
    if _base_fits(S, j, A):
        b0 = A.base_off[j]
        kb = A.base_off[j + 1] - b0
        reps = np.int64(0)
        for q in range(kb):
            reps += A.base_cnt[b0 + q]
        v = job_value(A.table, j, kb, reps, A.scale[j], np.bool_(False), A.penalty[j])
        g = improves(fair_term(v, mode, p) - t0, mode, p)
        if g > best:
            best = g
            bk = kb
            for q in range(kb):
                tn[q] = A.base_node[b0 + q]
                tc[q] = A.base_cnt[b0 + q]
    # One node: the lowest node with the most room (up to max_replicas).
    room, rn = _roomiest(S, j, A, limit, live, skip, mx, False)
    if room >= lo:
        r = best1[j, room if room < mx else mx]
        g = improves(fair_term(_value(A, j, np.int64(1), r), mode, p) - t0, mode, p)
        if g > best:
            best = g
            bk = 1
            tn[0] = rn
            tc[0] = r
    if k0 == 0:
        return best, bk
    multi_ok = True  # may the job span nodes (none of its nodes owned by another job)?
    for q in range(k0):
        if S.owner[S.jn[j, q]]:
            multi_ok = False
    # One replica more or less on one of its nodes.
    for q in range(k0):
        n = np.int64(S.jn[j, q])
        c = S.jc[j, q]
        if r0 + 1 <= mx and node_capacity(A.job_res, A.node_res, S.used, j, n, mx) >= c + 1:
            g = improves(fair_term(_value(A, j, k0, r0 + 1), mode, p) - t0, mode, p)
            if g > best:
                best = g
                bk = k0
                for a in range(k0):
                    tn[a] = S.jn[j, a]
                    tc[a] = S.jc[j, a]
                tc[q] += 1
        if r0 - 1 >= lo:
            kk = k0 - 1 if c == 1 else k0
            g = improves(fair_term(_value(A, j, kk, r0 - 1), mode, p) - t0, mode, p)
            if g > best:
                best = g
                bk = kk
                m = 0
                for a in range(k0):
                    ca = S.jc[j, a] - (1 if a == q else 0)
                    if ca > 0:
                        tn[m] = S.jn[j, a]
                        tc[m] = ca
                        m += 1
    # A new node (one replica, or as many as fit).
    if multi_ok and r0 < mx and k0 + 1 <= tn.shape[0]:
        room, rn = _roomiest(S, j, A, limit, live, skip, mx - r0, True)
        if room >= 1:
            for add in (1, room):
                g = improves(fair_term(_value(A, j, k0 + 1, r0 + add), mode, p) - t0, mode, p)
                if g > best:
                    best = g
                    bk = k0 + 1
                    m = 0
                    placed = False
                    for a in range(k0):
                        if not placed and rn < S.jn[j, a]:
                            tn[m] = rn
                            tc[m] = add
                            m += 1
                            placed = True
                        tn[m] = S.jn[j, a]
                        tc[m] = S.jc[j, a]
                        m += 1
                    if not placed:
                        tn[m] = rn
                        tc[m] = add
    # Several new nodes in one jump: the free nodes with the most room (lowest id first on
    # ties), each filled, the last up to max_replicas. Under a restart penalty every one-node
    # step can lose while a jump over several nodes pays (a job on 8 GPUs whose speedup at 16
    # outweighs the penalty but at 12 does not); neither the steps above nor the genetic
    # operators' small random changes make that jump. Rooms are bucketed (``hist``), so the
    # move costs one pass over the nodes plus one over the room sizes.
    if multi_ok and r0 < mx and k0 + 2 <= tn.shape[0]:
        want = mx - r0
        for c in range(want + 1):
            hist[c] = 0
        if live.uniform[0]:
            # Every job's room on a node is the same: the free nodes' rooms are tallied
            # (capped at want), less this job's own nodes (it is taken out of S: none owned).
            for c in range(live.rooms.shape[0]):
                hist[c if c < want else want] += live.rooms[c]
            for q in range(k0):
                c = live.room[S.jn[j, q]]
                if c >= 0:
                    hist[c if c < want else want] -= 1
        else:
            n = first_node(live, limit, skip)  # (hist[0] is not read: skipped nodes would count there)
            while n < limit:
                if not S.owner[n] and find_entry(S, j, n) < 0:
                    hist[node_capacity(A.job_res, A.node_res, S.used, j, n, want)] += 1
                n = next_node(live, n, limit, skip)
        added = np.int64(0)
        nodes = np.int64(0)
        level = np.int64(0)  # nodes taken at room c so far
        jump_room = np.int64(0)
        jump_need = np.int64(0)
        jump_take = np.int64(0)
        c = want
        while c >= 1 and added < want and k0 + nodes < tn.shape[0]:
            if hist[c] == level:
                c -= 1
                level = 0
                continue
            level += 1
            take = c if c < want - added else want - added
            added += take
            nodes += 1
            if nodes >= 2:
                g = improves(fair_term(_value(A, j, k0 + nodes, r0 + added), mode, p) - t0, mode, p)
                if g > best:
                    best = g
                    bk = k0 + nodes
                    jump_room = c
                    jump_need = level
                    jump_take = take
        if jump_need > 0:
            # the chosen nodes: every room above jump_room, the first jump_need at it (by id)
            m = 0
            a = 0
            seen = 0
            n = first_node(live, limit, skip)  # (jump_room >= 1: no full node is chosen)
            while n < limit:
                c = 0
                if not S.owner[n] and find_entry(S, j, n) < 0:
                    c = node_capacity(A.job_res, A.node_res, S.used, j, n, want)
                if c >= 1 and (c > jump_room or (c == jump_room and seen < jump_need)):
                    if c == jump_room:
                        seen += 1
                        if seen == jump_need:
                            c = jump_take
                    while a < k0 and S.jn[j, a] < n:
                        tn[m] = S.jn[j, a]
                        tc[m] = S.jc[j, a]
                        m += 1
                        a += 1
                    tn[m] = n
                    tc[m] = c
                    m += 1
                n = next_node(live, n, limit, skip)
            while a < k0:
                tn[m] = S.jn[j, a]
                tc[m] = S.jc[j, a]
                m += 1
                a += 1
    return best, bk


@inner
def _settle(S, A, limit, best1, tn, tc, hist, max_passes, transfers):
    """Steepest single-job moves (then transfers) until nothing improves; returns moves."""
    njobs = A.job_res.shape[0]
    moves = 0
    live = live_nodes(A, S, limit)
    for _ in range(max_passes):
        changed = 0
        for j in range(njobs):
            if A.pinned[j]:
                continue
            remove_job(S, j, A)
            mark_job(live, A, S, j)
            _, k = _best_move(S, j, A, limit, best1, tn, tc, hist, live)
            if k >= 0:
                set_entries(S, j, tn, tc, k)
                changed += 1
            add_job(S, j, A)
            mark_job(live, A, S, j)
            if k >= 0:
                S.val[j] = job_value(A.table, j, S.jk[j], S.reps[j], A.scale[j], is_changed(S, j, A), A.penalty[j])
        moves += changed
        if changed == 0:
            if transfers == NO_TRANSFERS:
                break
            applied = _transfer_pass(S, A, limit, transfers == LOCAL_TRANSFERS)
            moves += applied
            if applied == 0:
                break
            refresh(live, A, S)
    return moves


@leaf
def _accumulated(S, A):
    acc = 0.0
    for j in range(S.jk.shape[0]):
        acc += fair_term(S.val[j], A.mode, A.p)
    return acc


@leaf
def _copy_state(a, b):
    for j in range(a.jk.shape[0]):
        for q in range(a.jk[j]):
            b.jn[j, q] = a.jn[j, q]
            b.jc[j, q] = a.jc[j, q]
        b.jk[j] = a.jk[j]
        b.reps[j] = a.reps[j]
        b.val[j] = a.val[j]
    for n in range(a.used.shape[0]):
        for r in range(a.used.shape[1]):
            b.used[n, r] = a.used[n, r]
        b.owner[n] = a.owner[n]


@leaf
def _drop(S, j, A):
    remove_job(S, j, A)
    S.jk[j] = 0
    S.reps[j] = 0
    S.val[j] = 0.0


@inner
def _kick(S, A, st, limit, best1, tn, tc, hist, chosen):
    """Ruin and recreate part of the row.

    Drop the jobs on the nodes of two random placed jobs and one more random job, then put
    each back at its best placement (in random order).
    """
    njobs = A.job_res.shape[0]
    m = 0
    for _ in range(2):
        j0 = rand_int(st, njobs)
        if S.jk[j0] == 0:
            continue
        n0 = np.int64(S.jn[j0, rand_int(st, S.jk[j0])])
        for j in range(njobs):
            if not A.pinned[j] and S.jk[j] > 0 and find_entry(S, j, n0) >= 0:
                _drop(S, j, A)
                chosen[m] = j
                m += 1
    j = rand_int(st, njobs)
    if not A.pinned[j]:
        if S.jk[j] > 0:
            _drop(S, j, A)
        chosen[m] = j
        m += 1
    for t in range(m - 1, 0, -1):  # random order
        u = rand_int(st, t + 1)
        x = chosen[t]
        chosen[t] = chosen[u]
        chosen[u] = x
    live = live_nodes(A, S, limit)
    for t in range(m):
        j = chosen[t]
        if S.jk[j] > 0:
            continue  # listed twice
        _, k = _best_move(S, j, A, limit, best1, tn, tc, hist, live)
        if k > 0:
            set_entries(S, j, tn, tc, k)
            add_job(S, j, A)
            mark_job(live, A, S, j)
            S.val[j] = job_value(A.table, j, S.jk[j], S.reps[j], A.scale[j], is_changed(S, j, A), A.penalty[j])


@jit
def polish_row(src, row, A, limit, width, max_passes, transfers, kicks, key, dst, dst_row):
    """Local search from row ``row`` of ``src`` into row ``dst_row`` of ``dst`` (scored).

    Passes over the jobs in order, moving each to its best placement (see the module notes)
    while that raises the first objective, until a pass changes nothing or ``max_passes``
    passes ran. With ``transfers`` (:data:`ALL_TRANSFERS`, :data:`LOCAL_TRANSFERS`; an int64),
    a pass that changes nothing is followed by a pass of replica transfers between pairs of
    jobs sharing a node (see :func:`_best_transfer`), and the search goes on while those apply. Then up to ``kicks`` ruin-and-recreate steps
    (:func:`_kick`, random stream ``key``) each followed by the same descent, keeping the best
    row; the kicks end early after ``max(8, kicks // 4)`` in a row that found nothing better.
    Returns the number of moves made.
    """
    S = unpack_row(src, row, A, width)
    best1 = best_single_counts(A)
    tn = np.empty(width, dtype=np.int32)
    tc = np.empty(width, dtype=np.int32)
    hist = np.empty(A.table.shape[2] + 1, dtype=np.int64)
    moves = _settle(S, A, limit, best1, tn, tc, hist, max_passes, transfers)
    if kicks > 0:
        B = unpack_row(src, row, A, width)
        _copy_state(S, B)
        best = _accumulated(S, A)
        st = np.empty(2, dtype=np.uint64)
        st[0] = key
        st[1] = np.uint64(0)
        chosen = np.empty(A.job_res.shape[0] + 1, dtype=np.int64)
        patience = kicks // 4 if kicks // 4 > 8 else 8  # (builtin max compiles a kernel)
        stall = 0
        for _ in range(kicks):
            _kick(S, A, st, limit, best1, tn, tc, hist, chosen)
            _settle(S, A, limit, best1, tn, tc, hist, max_passes, transfers)
            acc = _accumulated(S, A)
            if improves(acc - best, A.mode, A.p) > _EPS * (1.0 + abs(best)):
                best = acc
                _copy_state(S, B)
                moves += 1
                stall = 0
            else:
                _copy_state(B, S)
                stall += 1
                if stall >= patience:
                    break
        S = B
    pack_row(S, A, dst, dst_row)
    return moves
