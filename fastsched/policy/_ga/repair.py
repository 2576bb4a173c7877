"""Repair job entries into feasible ones and rebuild whole rows into a population buffer.

A job's entries are made feasible given the jobs placed before it; a row is rebuilt by
copy, optional mutation, repair and score.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from fastsched._jit import jit, pjit
from fastsched._numba_private import copy_function
from fastsched.policy._ga.fitness import differs_from_base, fair_term, fair_total, job_value
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.rng import M1, next_event, sub_key
from fastsched.policy._ga.variation import CAP_NONE, crossover_job, job_hash, mutate_job, node_capacity

__all__ = ["repair_job", "commit_row", "end_row", "repair_serial", "repair_parallel"]


@leaf
def repair_job(j, tn, tc, k, pinned, used, owner, A):
    """Make job ``j``'s scratch entries feasible given earlier jobs, then commit them.

    In order: merge duplicate nodes (entries sorted by node), clip to ``max_replicas``
    (dropping replicas from the highest nodes, which also shrinks the cluster size), clip each
    entry to the node's free resources, drop nodes already used by another distributed job
    when this job is distributed, zero the job if it ends below ``min_replicas``. A pinned job
    is committed as given. Updates ``used`` and ``owner``; returns the entry count.
    """
    job_res = A.job_res
    node_res = A.node_res
    if not pinned:
        # Insertion sort by node and merge duplicates (lists are short).
        for a in range(1, k):
            xn = tn[a]
            xc = tc[a]
            b = a - 1
            while b >= 0 and tn[b] > xn:
                tn[b + 1] = tn[b]
                tc[b + 1] = tc[b]
                b -= 1
            tn[b + 1] = xn
            tc[b + 1] = xc
        m = 0
        for a in range(k):
            if tc[a] <= 0:
                continue
            if m > 0 and tn[m - 1] == tn[a]:
                tc[m - 1] += tc[a]
            else:
                tn[m] = tn[a]
                tc[m] = tc[a]
                m += 1
        k = m
        # max_replicas: trim from the highest nodes.
        total = 0
        for a in range(k):
            total += tc[a]
        a = k - 1
        while total > A.max_rep[j] and a >= 0:
            cut = total - A.max_rep[j]
            if cut > tc[a]:
                cut = tc[a]
            tc[a] -= cut
            total -= cut
            a -= 1
        # Node resources.
        m = 0
        for a in range(k):
            c = tc[a]
            n = np.int64(tn[a])
            fits = True
            for r in range(job_res.shape[1]):
                if used[n, r] + c * job_res[j, r] > node_res[n, r]:
                    fits = False
            if not fits:  # integer divisions only when clipping is needed
                cap = node_capacity(job_res, node_res, used, j, n, CAP_NONE)
                if c > cap:
                    c = cap
            if c > 0:
                tn[m] = tn[a]
                tc[m] = c
                m += 1
        k = m
        # At most one distributed job per node.
        if k > 1:
            m = 0
            for a in range(k):
                if not owner[tn[a]]:
                    tn[m] = tn[a]
                    tc[m] = tc[a]
                    m += 1
            k = m
        total = 0
        for a in range(k):
            total += tc[a]
        if total < A.min_rep[j]:
            k = 0
    for a in range(k):
        for r in range(job_res.shape[1]):
            used[tn[a], r] += tc[a] * job_res[j, r]
        if k > 1:
            owner[tn[a]] = True
    return k


@leaf
def commit_row(dst, row, j, pos, tn, tc, k, size, A, empty_term):
    """Write job ``j``'s ``k`` entries at ``pos`` of row ``row``; returns (term, size, hash).

    ``empty_term`` is ``fair_term(0.0, A.mode, A.p)``, the term of a job with no entries,
    computed once by the caller: in a round with many more jobs than GPUs most jobs have none,
    and the power mean's term is a ``pow`` call (half the time of repairing such a row).
    """
    if k == 0:
        return empty_term, size, np.uint64(0)
    reps = np.int64(0)
    for a in range(k):
        dst.node[row, pos + a] = tn[a]
        dst.cnt[row, pos + a] = tc[a]
        reps += tc[a]
        if tn[a] + 1 > size:
            size = tn[a] + 1
    changed = differs_from_base(tn, tc, np.int64(0), k, A.base_off, A.base_node, A.base_cnt, j)
    term = fair_term(job_value(A.table, j, k, reps, A.scale[j], changed, A.penalty[j]), A.mode, A.p)
    return term, size, job_hash(j, tn, tc, np.int64(0), k)


@leaf
def end_row(dst, row, pos, acc, size, h, A):
    """Close row ``row`` of ``dst`` after its jobs: end offset, accumulator, objective, size, hash."""
    njobs = A.job_res.shape[0]
    dst.off[row, njobs] = pos
    dst.acc[row] = acc
    dst.obj[row] = fair_total(acc, njobs, A.mode, A.p)
    dst.size[row] = size
    dst.hash[row] = h


@inner
def _build_row(st, src, pa, pm, A, dst, row, tn, tc):
    """Rebuild row ``pa`` of ``src`` into row ``row`` of ``dst``, job by job.

    Each job is copied, optionally mutated (probability ``pm`` per job), repaired and scored.
    """
    njobs = A.job_res.shape[0]
    num_nodes = A.node_res.shape[0]
    used = np.empty(A.node_res.shape, dtype=np.int64)
    used[:] = 0
    owner = np.empty(num_nodes, dtype=np.bool_)
    owner[:] = False
    pos = np.int64(0)
    acc = 0.0
    size = np.int64(0)
    h = np.uint64(0)
    next_mut = next_event(st, np.int64(-1), pm)
    empty_term = fair_term(0.0, A.mode, A.p)
    for j in range(njobs):
        dst.off[row, j] = pos
        if A.pinned[j]:
            k = 0
            for q in range(A.base_off[j], A.base_off[j + 1]):
                tn[k] = A.base_node[q]
                tc[k] = A.base_cnt[q]
                k += 1
        else:
            k = crossover_job(src.off, src.node, src.cnt, pa, j, num_nodes, tn, tc)
            if j == next_mut:
                next_mut = next_event(st, j, pm)
                k = mutate_job(st, j, tn, tc, k, num_nodes, A, used)
        k = repair_job(j, tn, tc, k, A.pinned[j], used, owner, A)
        term, size, hj = commit_row(dst, row, j, pos, tn, tc, k, size, A, empty_term)
        acc += term
        h += hj
        pos += k
    end_row(dst, row, pos, acc, size, h, A)


def repair_population(key, src, rows, pm, A, scratch, dst, dst_start):
    """Repair rows ``rows`` of ``src`` into rows ``dst_start + i`` of ``dst`` and score them.

    Each job is first mutated with probability ``pm``. Each row draws from its own stream,
    so any thread count gives the same rows.

    Compiled twice from this source: :data:`repair_serial` and :data:`repair_parallel`
    (numba threads over rows; compiled on first use, by large problems only).
    """
    for i in prange(rows.shape[0]):
        st = np.empty(2, dtype=np.uint64)
        st[0] = sub_key(key, i, M1)
        st[1] = np.uint64(0)
        tn = np.empty(scratch, dtype=np.int32)
        tc = np.empty(scratch, dtype=np.int32)
        _build_row(st, src, rows[i], pm, A, dst, dst_start + i, tn, tc)


# Each its own copy, so its own name: numba keys its on-disk cache by the function's name and
# source line, not by the options, so two kernels of one function load each other's machine
# code (the parallel one ran the serial code whenever the serial one was cached first).
repair_serial = jit(copy_function(repair_population, "repair_serial", share_globals=True))
repair_parallel = pjit(copy_function(repair_population, "repair_parallel", share_globals=True))
