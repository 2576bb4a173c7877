"""One row unpacked for in-place edits (greedy fills, local search).

Per job it holds the sorted ``(node, count)`` entries, replica total and value; per node
the resources used, and which nodes a distributed job owns.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from fastsched.policy._ga.fitness import differs_from_base, fair_term, fair_total, job_value
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.variation import job_hash

__all__ = [
    "State",
    "empty_state",
    "unpack_row",
    "pack_row",
    "add_job",
    "remove_job",
    "find_entry",
    "shift_entry",
    "insert_entry",
    "set_entries",
]

State = namedtuple("State", "jn jc jk reps used owner val")
State.__doc__ = """Unpacked row: entries ``jn/jc[j, :jk[j]]`` sorted by node, ``reps[j]``, used
resources ``used[n, r]``, distributed owners ``owner[n]`` and job values ``val[j]``."""


@inner
def empty_state(A, width):
    """State of a row with no entries (entries per job up to ``width``)."""
    njobs = A.job_res.shape[0]
    # np.empty and a fill: numba's np.zeros compiles two more kernels per array type.
    S = State(
        np.empty((njobs, width), dtype=np.int32),
        np.empty((njobs, width), dtype=np.int32),
        np.empty(njobs, dtype=np.int64),
        np.empty(njobs, dtype=np.int64),
        np.empty(A.node_res.shape, dtype=np.int64),
        np.empty(A.node_res.shape[0], dtype=np.bool_),
        np.empty(njobs, dtype=np.float64),
    )
    S.jn[:] = 0
    S.jc[:] = 0
    S.jk[:] = 0
    S.reps[:] = 0
    S.used[:] = 0
    S.owner[:] = False
    S.val[:] = 0.0
    return S


@inner
def unpack_row(src, row, A, width):
    """State of row ``row`` of population ``src`` (entries per job up to ``width``)."""
    S = empty_state(A, width)
    for j in range(A.job_res.shape[0]):
        s = src.off[row, j]
        k = src.off[row, j + 1] - s
        for q in range(k):
            S.jn[j, q] = src.node[row, s + q]
            S.jc[j, q] = src.cnt[row, s + q]
        S.jk[j] = k
        add_job(S, j, A)
        S.val[j] = job_value(A.table, j, k, S.reps[j], A.scale[j], is_changed(S, j, A), A.penalty[j])
    return S


@leaf
def is_changed(S, j, A):
    """Whether job ``j``'s entries differ from its base allocation."""
    return differs_from_base(S.jn[j], S.jc[j], np.int64(0), S.jk[j], A.base_off, A.base_node, A.base_cnt, j)


@leaf
def add_job(S, j, A):
    """Count job ``j``'s entries in ``used``/``owner``/``reps``."""
    k = S.jk[j]
    reps = 0
    for q in range(k):
        n = S.jn[j, q]
        c = S.jc[j, q]
        reps += c
        for r in range(A.job_res.shape[1]):
            S.used[n, r] += c * A.job_res[j, r]
        if k > 1:
            S.owner[n] = True
    S.reps[j] = reps


@leaf
def remove_job(S, j, A):
    """Take job ``j``'s entries out of ``used``/``owner`` (its entries stay)."""
    k = S.jk[j]
    for q in range(k):
        n = S.jn[j, q]
        c = S.jc[j, q]
        for r in range(A.job_res.shape[1]):
            S.used[n, r] -= c * A.job_res[j, r]
        if k > 1:
            S.owner[n] = False


@leaf
def find_entry(S, j, n):
    """Index of node ``n`` in job ``j``'s entries, or -1."""
    for q in range(S.jk[j]):
        if S.jn[j, q] == n:
            return q
    return -1


@leaf
def shift_entry(S, j, n, delta):
    """Add ``delta`` (may be negative) replicas of job ``j`` on node ``n`` (entries sorted)."""
    q = find_entry(S, j, n)
    if q >= 0:
        S.jc[j, q] += delta
        if S.jc[j, q] == 0:
            for a in range(q, S.jk[j] - 1):
                S.jn[j, a] = S.jn[j, a + 1]
                S.jc[j, a] = S.jc[j, a + 1]
            S.jk[j] -= 1
        return
    insert_entry(S, j, n, delta)


@leaf
def insert_entry(S, j, n, c):
    """Add a new entry of ``c`` replicas of job ``j`` on node ``n`` (not among its entries yet), keeping them sorted."""
    k = S.jk[j]
    q = k
    while q > 0 and S.jn[j, q - 1] > n:
        S.jn[j, q] = S.jn[j, q - 1]
        S.jc[j, q] = S.jc[j, q - 1]
        q -= 1
    S.jn[j, q] = n
    S.jc[j, q] = c
    S.jk[j] = k + 1


@leaf
def set_entries(S, j, tn, tc, k):
    """Replace job ``j``'s entries by ``tn/tc[:k]`` (sorted by node)."""
    for q in range(k):
        S.jn[j, q] = tn[q]
        S.jc[j, q] = tc[q]
    S.jk[j] = k


@inner
def pack_row(S, A, dst, row):
    """Write the state into row ``row`` of ``dst`` and score it."""
    njobs = A.job_res.shape[0]
    pos = np.int64(0)
    acc = 0.0
    size = 0
    h = np.uint64(0)
    for j in range(njobs):
        dst.off[row, j] = pos
        k = S.jk[j]
        for q in range(k):
            dst.node[row, pos + q] = S.jn[j, q]
            dst.cnt[row, pos + q] = S.jc[j, q]
            if S.jn[j, q] + 1 > size:
                size = S.jn[j, q] + 1
        pos += k
        # Exact value: a job's edits may have brought it back to its base allocation.
        S.val[j] = job_value(A.table, j, k, S.reps[j], A.scale[j], is_changed(S, j, A), A.penalty[j])
        acc += fair_term(S.val[j], A.mode, A.p)
        h += job_hash(j, S.jn[j], S.jc[j], np.int64(0), k)
    dst.off[row, njobs] = pos
    dst.acc[row] = acc
    dst.obj[row] = fair_total(acc, njobs, A.mode, A.p)
    dst.size[row] = size
    dst.hash[row] = h
