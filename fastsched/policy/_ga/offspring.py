"""Children of one generation: crossover + mutation + repair + incremental scoring.

:func:`offspring` (one source) is compiled twice: :data:`offspring_parallel` runs chunks of
children on numba threads, :data:`offspring_serial` in the calling thread. Each child's
stream is keyed by ``(key, child)``, so neither the thread count nor the chunking changes the
result.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from fastsched._jit import jit, pjit
from fastsched._numba_private import NO_NRT, copy_function
from fastsched.policy._ga.fitness import differs_from_base, fair_term, job_value
from fastsched.policy._ga.linkonly import leaf
from fastsched.policy._ga.repair import end_row, repair_job
from fastsched.policy._ga.rng import M2, next_event, rand_int, sub_key
from fastsched.policy._ga.variation import crossover_job, job_hash, mutate_job

__all__ = ["offspring_parallel", "offspring_serial", "CHUNKS"]

CHUNKS = 16  # chunks of children per generation (scratch is per chunk)


@leaf
def _term(node, cnt, s, k, j, A):
    reps = np.int64(0)
    for a in range(s, s + k):
        reps += cnt[a]
    changed = differs_from_base(node, cnt, s, k, A.base_off, A.base_node, A.base_cnt, j)
    return fair_term(job_value(A.table, j, k, reps, A.scale[j], changed, A.penalty[j]), A.mode, A.p)


@leaf
def _kept_as_parent(src, pa, pb, j, point, limit, used, owner, A):
    """Tell whether job ``j`` of the child is ``pa``'s entries, unchanged and still feasible.

    Then repair would return them as they are and the score does not change.
    """
    s = src.off[pa, j]
    ka = src.off[pa, j + 1] - s
    if j < point:
        for a in range(ka):
            if src.node[pa, s + a] >= limit:
                return False
    else:
        sp = src.off[pb, j]
        if src.off[pb, j + 1] - sp != ka:
            return False
        for a in range(ka):
            n = src.node[pb, sp + a]
            if n >= limit or n != src.node[pa, s + a] or src.cnt[pb, sp + a] != src.cnt[pa, s + a]:
                return False
    for a in range(ka):
        n = src.node[pa, s + a]
        if ka > 1 and owner[n]:
            return False
        for r in range(A.job_res.shape[1]):
            need = A.job_res[j, r]
            if need > 0 and used[n, r] + src.cnt[pa, s + a] * need > A.node_res[n, r]:
                return False
    return True


@leaf
def _entries_equal(node, cnt, s, ka, tn, tc, k):
    if ka != k:
        return False
    for a in range(k):
        if node[s + a] != tn[a] or cnt[s + a] != tc[a]:
            return False
    return True


# A kernel of its own (optimised at -O3 with its helpers before the generation loop links
# it): linked only, LLVM left the per-job helpers un-inlined in the threaded loop and a 1000-job
# generation ran about 2x slower. The serial round (:mod:`.search`) links ``children_linked``
# instead: there its own -O3 pass and machine code were a tenth of a first round's compile time,
# and its rounds run as fast.
@jit(**NO_NRT)
def _children(c0, c1, key, src, parents, pm, A, dst, dst_start, st, tn, tc, used, owner):
    """Children ``c0 .. c1``, each built as a delta of its first parent ``pa``.

    Jobs before a crossover point come from ``pa``, the rest from ``pb``; nodes at or above
    the child's size limit (uniform between its parents' sizes) are dropped; mutated jobs are
    drawn by geometric skips. A job equal to ``pa``'s that still fits is committed without
    repair or rescoring; other jobs are repaired and the objective and hash updated by the
    difference. ``st, tn, tc, used, owner`` are this chunk's scratch.
    """
    njobs = A.job_res.shape[0]
    nres = A.job_res.shape[1]
    for c in range(c0, c1):
        st[0] = sub_key(key, c, M2)
        st[1] = np.uint64(0)
        pa = parents[c, 0]
        pb = parents[c, 1]
        point = rand_int(st, njobs + 1)
        sa = src.size[pa]
        sb = src.size[pb]
        lo = sa if sa < sb else sb
        hi = sa if sa > sb else sb
        limit = lo + rand_int(st, hi - lo + 1)
        row = dst_start + c
        used[:, :] = 0
        owner[:] = False
        acc = src.acc[pa]
        h = src.hash[pa]
        pos = np.int64(0)
        size = np.int64(0)
        next_mut = next_event(st, np.int64(-1), pm)
        for j in range(njobs):
            dst.off[row, j] = pos
            s = src.off[pa, j]
            ka = src.off[pa, j + 1] - s
            mutate = False
            fast = True
            if not A.pinned[j]:
                if j == next_mut:
                    next_mut = next_event(st, j, pm)
                    mutate = True
                    fast = False
                else:
                    fast = _kept_as_parent(src, pa, pb, j, point, limit, used, owner, A)
            if fast:
                for a in range(ka):
                    n = src.node[pa, s + a]
                    cc = src.cnt[pa, s + a]
                    dst.node[row, pos + a] = n
                    dst.cnt[row, pos + a] = cc
                    for r in range(nres):
                        used[n, r] += cc * A.job_res[j, r]
                    if ka > 1:
                        owner[n] = True
                    if n + 1 > size:
                        size = n + 1
                pos += ka
                continue
            par = pa if j < point else pb
            k = crossover_job(src.off, src.node, src.cnt, par, j, limit, tn, tc)
            if mutate:
                k = mutate_job(st, j, tn, tc, k, limit, A, used)
            k = repair_job(j, tn, tc, k, np.bool_(False), used, owner, A)
            for a in range(k):
                dst.node[row, pos + a] = tn[a]
                dst.cnt[row, pos + a] = tc[a]
                if tn[a] + 1 > size:
                    size = tn[a] + 1
            if not _entries_equal(src.node[pa], src.cnt[pa], s, ka, tn, tc, k):
                acc += _term(tn, tc, np.int64(0), k, j, A) - _term(src.node[pa], src.cnt[pa], s, ka, j, A)
                h += job_hash(j, tn, tc, np.int64(0), k) - job_hash(j, src.node[pa], src.cnt[pa], s, ka)
            pos += k
        end_row(dst, row, pos, acc, size, h, A)


def offspring(key, src, parents, pm, A, dst, dst_start, work):
    """Write children ``c`` of parent pairs ``parents[c]`` into rows ``dst_start + c`` of ``dst``.

    ``src`` and ``dst`` may be the same buffer. Children are made over chunks; ``work`` is
    :class:`~fastsched.policy._ga.types.Work` scratch with one slot per chunk.
    """
    count = parents.shape[0]
    chunks = work.st.shape[0] if work.st.shape[0] < count else count  # (builtin min compiles a kernel)
    for t in prange(chunks):
        _children(
            t * count // chunks,
            (t + 1) * count // chunks,
            key,
            src,
            parents,
            pm,
            A,
            dst,
            dst_start,
            work.st[t],
            work.tn[t],
            work.tc[t],
            work.used[t],
            work.owner[t],
        )


# Each its own copy, so its own name: numba keys its on-disk cache by the function's name and
# source line, not by the options, so two kernels of one function load each other's machine
# code (the parallel child builder ran the serial code whenever that was cached first).
offspring_parallel = pjit(copy_function(offspring, "offspring_parallel", share_globals=True))
offspring_serial = jit(copy_function(offspring, "offspring_serial", share_globals=True))
children_linked = leaf(copy_function(_children.py_func, "children_linked"))
