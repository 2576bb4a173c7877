"""Replica transfers: one job gives replicas on a node to another job there.

The local search's second move (see :mod:`~fastsched.policy._ga.local`): when no single-job
move raises the first objective, a job ``b`` may give up ``take`` replicas on a node so that
job ``j`` grows there (in place, spreading onto the node, or starting on it). A pass applies
each job's best transfer in turn.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from fastsched.policy._ga.fitness import fair_term, improves, job_value
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.rowstate import add_job, find_entry, is_changed, remove_job, shift_entry
from fastsched.policy._ga.stamps import is_dirty, new_stamps

__all__ = ["Terms", "new_terms", "apply_transfer"]

_EPS = 1e-12  # the smallest gain a move must make (the local search's too)

Terms = namedtuple("Terms", "held_k held_r given val current taker")
Terms.__doc__ = """Memoised terms of a transfer search (the terms are pure functions of their job,
node count and replicas; each is a ``pow`` under the power mean, and a search evaluates the
same giving job's few terms for every job it tries).

``given[b, last, take]``: the term of job ``b`` after giving up ``take`` replicas, with one node
fewer when ``last``; valid while ``b`` holds ``held_k[b]`` nodes and ``held_r[b]`` replicas.
``current[b]``: the term of ``b``'s value ``val[b]``. ``taker[w, add]``: the term of the taking
job with ``add`` more replicas on ``w`` more nodes (refilled for each taking job)."""


@leaf
def _value(A, j, k, reps):
    return job_value(A.table, j, k, reps, A.scale[j], np.bool_(True), A.penalty[j])


@inner
def new_terms(A):
    """Empty :class:`Terms` for the jobs of ``A``."""
    njobs = A.job_res.shape[0]
    rmax = A.table.shape[2] - 1
    # A job holds at most this many replicas on one node (the take axis): the largest node's
    # resources over its request.
    nres = A.job_res.shape[1]
    most = np.empty(nres, dtype=np.int64)
    for r in range(nres):
        most[r] = 0
        for n in range(A.node_res.shape[0]):
            if A.node_res[n, r] > most[r]:
                most[r] = A.node_res[n, r]
    cmax = np.int64(0)
    for j in range(njobs):
        c = np.int64(rmax)
        for r in range(nres):
            if A.job_res[j, r] > 0 and most[r] // A.job_res[j, r] < c:
                c = most[r] // A.job_res[j, r]
        if c > cmax:
            cmax = c
    T = Terms(
        np.empty(njobs, dtype=np.int64),
        np.empty(njobs, dtype=np.int64),
        np.empty((njobs, 2, cmax + 1), dtype=np.float64),
        np.empty(njobs, dtype=np.float64),
        np.empty(njobs, dtype=np.float64),
        np.empty((2, rmax + 1), dtype=np.float64),
    )
    T.held_k[:] = -1
    T.val[:] = np.nan  # (no value equals NaN: every current term is computed once first)
    return T


@leaf
def _given_term(T, S, A, b, take, kb1):
    """``_term_after(S, A, b, kb1, reps[b] - take)`` (``kb1``: ``b``'s node count after), memoised."""
    kb = S.jk[b]
    rb = S.reps[b]
    if take >= T.given.shape[2]:
        return _term_after(S, A, b, kb1, rb - take)
    if T.held_k[b] != kb or T.held_r[b] != rb:
        T.held_k[b] = kb
        T.held_r[b] = rb
        for w in range(2):
            for c in range(T.given.shape[2]):
                T.given[b, w, c] = np.nan
    last = 1 if kb1 < kb else 0
    t = T.given[b, last, take]
    if t != t:
        t = _term_after(S, A, b, kb1, rb - take)
        T.given[b, last, take] = t
    return t


@leaf
def _current_term(T, S, A, b):
    """``fair_term(S.val[b])``, memoised while the value stays."""
    if T.val[b] != S.val[b]:
        T.val[b] = S.val[b]
        T.current[b] = fair_term(S.val[b], A.mode, A.p)
    return T.current[b]


@leaf
def _room_after(S, A, n, j, b, take, cap):
    """Count the replicas of job ``j`` (at most ``cap``) that fit on node ``n``.

    The count assumes job ``b`` has given up ``take`` replicas there.
    """
    for r in range(A.job_res.shape[1]):
        need = A.job_res[j, r]
        if need > 0:
            free = A.node_res[n, r] - S.used[n, r] + take * A.job_res[b, r]
            c = free // need if free > 0 else 0
            if c < cap:
                cap = c
    return cap


@leaf
def _term_after(S, A, j, k, reps):
    if reps <= 0:
        return fair_term(0.0, A.mode, A.p)
    return fair_term(_value(A, j, k, reps), A.mode, A.p)


@leaf
def _transfer_at(S, A, j, n, occ_off, occ_job, out, best, T):
    """Best transfer to job ``j`` on node ``n`` if it beats ``best`` (see :func:`_best_transfer`; ``T``: :class:`Terms`)."""
    mode = A.mode
    p = A.p
    mx = A.max_rep[j]
    lo = A.min_rep[j] if A.min_rep[j] > 1 else 1
    k0 = S.jk[j]
    r0 = S.reps[j]
    t0 = _current_term(T, S, A, j)
    qj = find_entry(S, j, n)
    spread = 0 if qj >= 0 else 1  # j's nodes grow by one
    for t in range(occ_off[n], occ_off[n + 1]):
        b = occ_job[t]
        if b == j or A.pinned[b]:
            continue
        qb = find_entry(S, b, n)
        cb = S.jc[b, qb]
        kb = S.jk[b]
        rb = S.reps[b]
        lob = A.min_rep[b] if A.min_rep[b] > 1 else 1
        tb0 = _current_term(T, S, A, b)
        spans = qj < 0 and k0 > 0  # j becomes (or stays) distributed, now on n too
        if spans and S.owner[n] and kb < 2:
            continue  # another distributed job owns n
        for take in range(1, cb + 1):
            rb1 = rb - take
            if 0 < rb1 < lob:
                continue
            kb1 = kb - 1 if take == cb else kb
            if spans and S.owner[n] and take < cb and kb1 > 1:
                continue  # b stays distributed on n
            # As many replicas of j as fit, up to max_replicas.
            add = _room_after(S, A, n, j, b, take, mx - r0)
            if add <= 0 or (k0 == 0 and add < lo):
                continue
            tj = T.taker[spread, add]
            if tj != tj:
                tj = _term_after(S, A, j, k0 + spread, r0 + add)
                T.taker[spread, add] = tj
            g = improves(tj - t0 + _given_term(T, S, A, b, take, kb1) - tb0, mode, p)
            if g > best:
                best = g
                out[0] = n
                out[1] = b
                out[2] = take
                out[3] = add
    return best


@leaf
def _best_transfer(S, A, j, limit, occ_off, occ_job, out, local, T, stamps, since):
    """Find the best move of replicas from a job ``b`` to job ``j`` on one node.

    ``b`` gives up ``take`` replicas on node ``n``, ``j`` grows there (in place, onto a new
    node, or starts). With ``local``, ``j`` looks only at its own nodes (grows in place; a job
    without replicas gets none). Writes ``(n, b, take, add)`` into ``out``; returns the gain (``<= _EPS``: none).
    ``T`` (:class:`Terms`) memoises the terms the search evaluates. With ``since >= 0`` only
    the nodes changed after that clock of ``stamps`` are searched (see
    :mod:`~fastsched.policy._ga.stamps`; -1: every node).
    """
    k0 = S.jk[j]
    if S.reps[j] >= A.max_rep[j]:
        return 0.0
    for w in range(2):  # this job's terms
        for add in range(A.max_rep[j] - S.reps[j] + 1):
            T.taker[w, add] = np.nan
    best = _EPS
    if local:
        for q in range(k0):
            best = _transfer_at(S, A, j, np.int64(S.jn[j, q]), occ_off, occ_job, out, best, T)
        return best
    # A single-node job may only spread if its node is not owned by a distributed job.
    multi_ok = not (k0 == 1 and S.owner[S.jn[j, 0]])
    for n in range(limit):
        if occ_off[n] == occ_off[n + 1]:
            continue  # nobody to take replicas from
        if since >= 0 and not is_dirty(stamps, np.int64(n), since, occ_off, occ_job):
            continue
        if k0 > 0 and find_entry(S, j, n) < 0 and (not multi_ok or k0 + 1 > S.jn.shape[1]):
            continue
        best = _transfer_at(S, A, j, np.int64(n), occ_off, occ_job, out, best, T)
    return best


@inner
def _occupants(S, num_nodes):
    """Jobs on each node, as CSR ``(occ_off[N + 1], occ_job)``."""
    njobs = S.jk.shape[0]
    occ_off = np.empty(num_nodes + 1, dtype=np.int64)
    occ_off[:] = 0
    for j in range(njobs):
        for q in range(S.jk[j]):
            occ_off[S.jn[j, q] + 1] += 1
    for n in range(num_nodes):
        occ_off[n + 1] += occ_off[n]
    fill = occ_off[:-1].copy()
    occ_job = np.empty(occ_off[num_nodes], dtype=np.int64)
    for j in range(njobs):
        for q in range(S.jk[j]):
            n = S.jn[j, q]
            occ_job[fill[n]] = j
            fill[n] += 1
    return occ_off, occ_job


@leaf
def apply_transfer(S, A, j, out):
    """Apply the transfer ``out = (node, giving job, replicas given, replicas taken)`` to job ``j``."""
    n, b, take, add = out[0], out[1], out[2], out[3]
    remove_job(S, j, A)
    remove_job(S, b, A)
    shift_entry(S, b, n, -take)
    shift_entry(S, j, n, add)
    add_job(S, j, A)
    add_job(S, b, A)
    S.val[j] = job_value(A.table, j, S.jk[j], S.reps[j], A.scale[j], is_changed(S, j, A), A.penalty[j])
    S.val[b] = job_value(A.table, b, S.jk[b], S.reps[b], A.scale[b], is_changed(S, b, A), A.penalty[b])


@inner
def _transfer_pass(S, A, limit, local):
    """Apply the best replica transfer of each job in turn; returns the number applied."""
    njobs = A.job_res.shape[0]
    out = np.empty(4, dtype=np.int64)
    out[:] = 0
    applied = 0
    T = new_terms(A)
    stamps = new_stamps(0, 0)  # (every search here is a full one)
    occ_off, occ_job = _occupants(S, A.node_res.shape[0])
    for j in range(njobs):
        if A.pinned[j]:
            continue
        if _best_transfer(S, A, j, limit, occ_off, occ_job, out, local, T, stamps, np.int64(-1)) <= _EPS:
            continue
        apply_transfer(S, A, j, out)
        applied += 1
        # Who sits where changed (only here: rebuilding it for every job cost O(jobs^2)).
        occ_off, occ_job = _occupants(S, A.node_res.shape[0])
    return applied
