"""What the local search's node scans need to know of the nodes, kept up to date through its edits.

Two things, both exact:

* **The nodes with some resource left.** A job that needs some resource fits no replica on a
  node with every resource used up, so a scan over nodes for such a job may skip those nodes
  and find the same node. On a large, busy cluster almost every node is full: in the late
  rounds of a x100 study (1,100 nodes, 10,000 jobs) the local search scanned every node for
  every job in every pass. :class:`Live` keeps a flag per node and, per block of 32 nodes,
  how many are flagged, so a scan jumps over a block with none.
* **The rooms of the free nodes, when every job requests the same.** The jump onto several free
  nodes (``local._best_move``) counts the free nodes by their room for the job; with one
  request shared by all jobs a node's room is the same for each of them, so a histogram of
  the rooms (nodes below the search's size limit that no distributed job owns) answers in
  O(replicas) instead of a scan of every node, per job and pass. The simulator's rounds
  request one GPU per replica.

The local search (which frees and fills nodes) updates both after each edit of a job's
entries with :func:`mark_job`; the greedy fill (which only fills) keeps its own pointer list
(``seeding._next_live``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.variation import node_capacity

__all__ = ["Live", "exhausted", "needs", "live_nodes", "refresh", "mark_job", "first_node", "next_node"]

Live = namedtuple("Live", "flag count room rooms limit uniform")
Live.__doc__ = """Nodes with some resource left: ``flag[n]``, and ``count[b]`` flagged nodes in block ``b``
(nodes ``32 b`` to ``32 b + 31``). With ``uniform[0]`` (every job requests ``A.job_res[0]``):
``room[n]``, the replicas node ``n`` still holds (capped at the tables' largest count; -1 for a
node owned by a distributed job or at or above ``limit[0]``), and ``rooms[c]``, how many nodes
have room ``c``."""

_SHIFT = 5  # blocks of 32 nodes


@leaf
def exhausted(A, used, n):
    """Whether node ``n`` has no resource left: no replica of a job that needs any fits there."""
    for r in range(A.node_res.shape[1]):
        if A.node_res[n, r] - used[n, r] > 0:
            return False
    return True


@leaf
def needs(A, j):
    """Whether job ``j`` needs any resource (on an exhausted node it then fits no replica)."""
    for r in range(A.job_res.shape[1]):
        if A.job_res[j, r] > 0:
            return True
    return False


@leaf
def _uniform(A):
    """Whether every job requests the same resources per replica (and some)."""
    njobs = A.job_res.shape[0]
    if njobs == 0 or not needs(A, 0):
        return False
    for j in range(1, njobs):
        for r in range(A.job_res.shape[1]):
            if A.job_res[j, r] != A.job_res[0, r]:
                return False
    return True


@inner
def live_nodes(A, S, limit):
    """Return the :class:`Live` view of row state ``S`` for scans below node ``limit``."""
    nodes = A.node_res.shape[0]
    live = Live(
        np.empty(nodes, dtype=np.bool_),
        np.empty((nodes >> _SHIFT) + 1, dtype=np.int64),
        np.empty(nodes, dtype=np.int64),
        np.empty(A.table.shape[2], dtype=np.int64),
        np.empty(1, dtype=np.int64),
        np.empty(1, dtype=np.bool_),
    )
    live.limit[0] = limit
    live.uniform[0] = _uniform(A)
    refresh(live, A, S)
    return live


@leaf
def _room_of(live, A, S, n):
    """Room of node ``n`` for the shared request (see :class:`Live`); -1 when not counted."""
    if n >= live.limit[0] or S.owner[n]:
        return np.int64(-1)
    return node_capacity(A.job_res, A.node_res, S.used, np.int64(0), n, np.int64(live.rooms.shape[0] - 1))


@leaf
def refresh(live, A, S):
    """Recompute ``live`` from row state ``S`` after edits it was not told of."""
    live.count[:] = 0
    live.rooms[:] = 0
    for n in range(live.flag.shape[0]):
        f = not exhausted(A, S.used, n)
        live.flag[n] = f
        if f:
            live.count[n >> _SHIFT] += 1
        live.room[n] = -1
        if live.uniform[0]:
            c = _room_of(live, A, S, n)
            live.room[n] = c
            if c >= 0:
                live.rooms[c] += 1


@leaf
def _mark(live, A, S, n):
    f = not exhausted(A, S.used, n)
    if f != live.flag[n]:
        live.flag[n] = f
        live.count[n >> _SHIFT] += 1 if f else -1
    if live.uniform[0]:
        c = _room_of(live, A, S, n)
        old = live.room[n]
        if c != old:
            if old >= 0:
                live.rooms[old] -= 1
            if c >= 0:
                live.rooms[c] += 1
            live.room[n] = c


@leaf
def mark_job(live, A, S, j):
    """Update ``live`` on the nodes of job ``j``'s entries in row state ``S`` (after ``S`` changed there)."""
    for q in range(S.jk[j]):
        _mark(live, A, S, np.int64(S.jn[j, q]))


@leaf
def _next_flagged(live, n, limit):
    while n < limit:
        b = n >> _SHIFT
        if live.count[b] == 0:
            n = (b + 1) << _SHIFT
        elif live.flag[n]:
            return n
        else:
            n += 1
    return limit


@leaf
def first_node(live, limit, skip):
    """First node of a scan below ``limit``: the first live one when ``skip``, else 0 (``limit``: none)."""
    return _next_flagged(live, np.int64(0), limit) if skip else np.int64(0)


@leaf
def next_node(live, n, limit, skip):
    """Node after ``n`` in a scan below ``limit``: the next live one when ``skip``, else ``n + 1``."""
    return _next_flagged(live, n + 1, limit) if skip else n + 1
