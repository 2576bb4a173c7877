"""When jobs and nodes last changed, so a transfer search can skip what it has seen unchanged.

The relaxation's seed (:mod:`~fastsched.policy._ga.relax`) searches transfers for its
below-target jobs in passes until one applies none; each pass rescanned every node for every
such job, though most found nothing the pass before and little changed since (a x100 round,
1,080 jobs on 1,100 nodes: four passes, 1,162 searches, 141 transfers, 128 of them in the first
pass). A search that found nothing at clock ``t`` finds nothing again on a node whose state and
occupants have not changed since ``t``: what it evaluates there (the node's resources and
owner, its occupants' entries and values, the searching job's own) is the same. So a job that
has not changed either, on nodes that have not, searches only the nodes that have, and finds
the same transfer as a full search (nothing on the others beats the no-move threshold).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from fastsched.policy._ga.linkonly import inner, leaf

__all__ = ["Stamps", "new_stamps", "stamp_transfer", "stamp_changes", "is_dirty", "unchanged_since"]

Stamps = namedtuple("Stamps", "job node clock")
Stamps.__doc__ = """Clock of the last change of each job (``job``: its entries, replicas or value) and
node (``node``: its used resources or owner); ``clock[0]`` counts the changes so far."""


@inner
def new_stamps(njobs, nnodes):
    """Stamps of a state where nothing has changed yet (every stamp 0, clock 0)."""
    st = Stamps(np.empty(njobs, dtype=np.int64), np.empty(nnodes, dtype=np.int64), np.empty(1, dtype=np.int64))
    st.job[:] = 0
    st.node[:] = 0
    st.clock[0] = 0
    return st


@leaf
def stamp_transfer(st, j, out):
    """Stamp the transfer ``out = (node, giving job, taken, added)`` to job ``j`` just applied."""
    st.clock[0] += 1
    st.job[j] = st.clock[0]
    st.job[out[1]] = st.clock[0]
    st.node[out[0]] = st.clock[0]


@leaf
def stamp_changes(st, before, S):
    """Stamp every job and node whose state ``S`` differs from the copy ``before`` (both row states)."""
    st.clock[0] += 1
    now = st.clock[0]
    for j in range(S.jk.shape[0]):
        k = S.jk[j]
        same = before.jk[j] == k and before.reps[j] == S.reps[j] and before.val[j] == S.val[j]
        q = 0
        while same and q < k:
            same = before.jn[j, q] == S.jn[j, q] and before.jc[j, q] == S.jc[j, q]
            q += 1
        if not same:
            st.job[j] = now
    for n in range(S.used.shape[0]):
        same = before.owner[n] == S.owner[n]
        for r in range(S.used.shape[1]):
            if before.used[n, r] != S.used[n, r]:
                same = False
        if not same:
            st.node[n] = now


@leaf
def is_dirty(st, n, since, occ_off, occ_job):
    """Whether node ``n`` or one of its occupants (CSR ``occ_off/occ_job``) changed after clock ``since``."""
    if st.node[n] > since:
        return True
    for t in range(occ_off[n], occ_off[n + 1]):
        if st.job[occ_job[t]] > since:
            return True
    return False


@leaf
def unchanged_since(st, S, j, seen, occ_off, occ_job):
    """Clock from which job ``j`` may search only changed nodes: ``seen`` (its last fruitless search), or -1.

    -1 (search every node) unless ``j`` searched before and neither it nor its own nodes
    changed since (its nodes decide where it may spread).
    """
    if seen < 0 or st.job[j] > seen:
        return np.int64(-1)
    for q in range(S.jk[j]):
        if is_dirty(st, np.int64(S.jn[j, q]), seen, occ_off, occ_job):
            return np.int64(-1)
    return seen
