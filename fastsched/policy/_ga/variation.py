"""Variation of the genetic search, per job on a scratch entry list ``tn/tc``.

Crossover (copy a parent's entries below the child's size limit), mutation (one random
move) and the per-job hash that lets a child's hash be its parent's plus the changes.
"""

from __future__ import annotations

import numpy as np

from fastsched.policy._ga.linkonly import leaf
from fastsched.policy._ga.rng import GOLD, M1, M2, mix64, rand_int, rand_u01

__all__ = ["node_capacity", "crossover_job", "mutate_job", "job_hash"]

CAP_NONE = np.int64(1 << 40)  # capacity of a node for a job that requests nothing there


@leaf
def node_capacity(job_res, node_res, used, j, n, cap_default):
    """Replicas of job ``j`` that still fit on node ``n`` given ``used`` resources."""
    cap = cap_default
    for r in range(job_res.shape[1]):
        need = job_res[j, r]
        if need > 0:
            free = node_res[n, r] - used[n, r]
            c = free // need if free > 0 else 0
            if c < cap:
                cap = c
    return cap


@leaf
def crossover_job(off, node, cnt, parent, j, limit, tn, tc):
    """Copy job ``j`` of row ``parent`` into scratch ``tn/tc``, dropping nodes >= ``limit``.

    Returns the number of entries. Called per job with the parent chosen by a single crossover
    point over the job order (AdaptDL's crossover), and ``limit`` the child's cluster size
    drawn between its parents' sizes.
    """
    k = 0
    for q in range(off[parent, j], off[parent, j + 1]):
        if node[parent, q] < limit:
            tn[k] = node[parent, q]
            tc[k] = cnt[parent, q]
            k += 1
    return k


@leaf
def _random_node(st, limit, num_nodes):
    # Mostly stay inside the child's cluster size, sometimes grow it (second objective).
    if limit <= 0 or rand_u01(st) < 0.25:
        return rand_int(st, num_nodes)
    return rand_int(st, limit)


@leaf
def _find_room(st, A, used, j, limit, want):
    """Pick a random node with room for ``want`` replicas of job ``j`` (-1 after a few misses)."""
    num_nodes = A.node_res.shape[0]
    for _ in range(6):
        n = _random_node(st, limit, num_nodes)
        if node_capacity(A.job_res, A.node_res, used, j, n, A.max_rep[j]) >= want:
            return n
    return -1


@leaf
def mutate_job(st, j, tn, tc, k, limit, A, used):
    """Apply one random move to job ``j``'s scratch entries; returns the new entry count.

    Moves: drop the job, revert to its base placement, grow by one replica (or start it),
    shrink by one, move it whole to one node with room, spread one replica to a new node,
    a random single-node placement. Moves see the resources used by the jobs before ``j``
    in this child, so most land feasible; repair fixes the rest.
    """
    num_nodes = A.node_res.shape[0]
    mx = A.max_rep[j]
    lo = A.min_rep[j] if A.min_rep[j] > 1 else 1
    reps = 0
    for q in range(k):
        reps += tc[q]
    op = rand_int(st, np.int64(7))
    if op == 0:
        return 0
    if op == 1:
        k = 0
        for q in range(A.base_off[j], A.base_off[j + 1]):
            tn[k] = A.base_node[q]
            tc[k] = A.base_cnt[q]
            k += 1
        return k
    if op == 2:  # grow
        if k == 0:
            n = _find_room(st, A, used, j, limit, lo)
            if n >= 0:
                tn[0] = n
                tc[0] = lo
                return 1
            return 0
        q = rand_int(st, k)
        if node_capacity(A.job_res, A.node_res, used, j, np.int64(tn[q]), mx) > tc[q]:
            tc[q] += 1
            return k
        op = 5  # no room where it is: spread instead
    if op == 3:  # shrink
        if k == 0:
            return 0
        q = rand_int(st, k)
        tc[q] -= 1
        if tc[q] == 0:
            for t in range(q, k - 1):
                tn[t] = tn[t + 1]
                tc[t] = tc[t + 1]
            k -= 1
        return k
    if op == 4:  # move whole to one node
        want = reps if reps >= lo else lo
        n = _find_room(st, A, used, j, limit, np.int64(1))
        if n < 0:
            return k
        cap = node_capacity(A.job_res, A.node_res, used, j, n, mx)
        tn[0] = n
        tc[0] = want if want < cap else cap
        return 1
    if op == 5:  # spread one replica to a new node
        n = _find_room(st, A, used, j, limit, np.int64(1))
        if n < 0 or k + 1 > tn.shape[0]:
            return k
        for q in range(k):
            if tn[q] == n:
                tc[q] += 1
                return k
        tn[k] = n
        tc[k] = 1 if k > 0 else lo
        return k + 1
    # op == 6: random single-node placement
    n = _random_node(st, limit, num_nodes)
    tn[0] = n
    tc[0] = lo + rand_int(st, mx - lo + 1) if mx >= lo else lo
    return 1


@leaf
def job_hash(j, tn, tc, start, k):
    """Hash one job's entries ``tn/tc[start:start+k]``.

    A row's hash is the (wrapping) sum over its jobs, so a child's hash is its parent's plus
    the changes.
    """
    if k == 0:
        return np.uint64(0)
    # One multiply per entry, one avalanche per job: enough to tell rows apart.
    h = np.uint64(j) * M1 + GOLD
    for a in range(start, start + k):
        h = (h ^ (np.uint64(tn[a]) * M2 + np.uint64(tc[a]))) * GOLD
    return mix64(h)
