"""numba kernels: pipeline schedules over microbatches, in O(microbatches x stages).

``simulate_seed`` is the seed's first-in first-out queue, exactly: stage ``s`` may have
``S - s`` forwards in flight, a forward that finds no slot goes back to the end of the
queue, the last stage turns a forward into a backward, a backward moves to the previous
stage and frees a slot, and a stage's optimizer step follows its last backward. The seed
requeues blocked forwards one by one (quadratic in microbatches). Here the queue is seen
as a conveyor: processing an item removes it from the head and appends its successor
(or itself, when blocked) to the tail, so every microbatch keeps its place in a cyclic
order and the queue is a round-robin over microbatches. Microbatches that have not
started all wait at stage 0 and form one contiguous block, skipped in O(1) when stage 0
has no slot; the rest are at most ``S`` in flight plus ``S`` optimizer steps. Same events,
same order, same times as the seed; O(S) memory.

``simulate_ordered`` runs a fixed per-stage order of operations (GPipe, 1F1B, interleaved
1F1B, ZB-H1), each starting when its stage is free and its dependency (previous virtual
stage's forward, next virtual stage's backward) has finished, plus the point-to-point
time between devices. The orders are computed arithmetically from the position in the
stage's sequence (nothing of size microbatches x stages is materialised except two
completion-time tables).
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit

__all__ = ["simulate_pipeline", "simulate_seed", "simulate_ordered", "GPIPE", "ONE_F_ONE_B", "INTERLEAVED", "ZB_H1"]

GPIPE, ONE_F_ONE_B, INTERLEAVED, ZB_H1 = 1, 2, 3, 4


@jit
def simulate_seed(fwd, bwd, optim, m, record):
    """Run the seed's FIFO schedule for ``m`` microbatches over ``S = len(fwd)`` stages.

    Returns ``(total, makespan_fb, busy[S], peak_inflight[S], ev_stage, ev_kind, ev_mb,
    ev_start, ev_end)`` (``makespan_fb``: end of the last forward/backward); the event arrays (kind 0 fwd, 1 bwd, 2 optim; mb -1 for optim) are empty
    unless ``record``.
    """
    S = fwd.shape[0]
    n_ev = 2 * m * S + S if record else 0
    ev_stage = np.empty(n_ev, np.int64)
    ev_kind = np.empty(n_ev, np.int64)
    ev_mb = np.empty(n_ev, np.int64)
    ev_start = np.empty(n_ev, np.float64)
    ev_end = np.empty(n_ev, np.float64)
    k = 0
    gtime = np.zeros(S, np.float64)
    busy = np.zeros(S, np.float64)
    slots = np.empty(S, np.int64)
    for s in range(S):
        slots[s] = S - s
    inflight = np.zeros(S, np.int64)
    peak = np.zeros(S, np.int64)
    left = np.full(S, m, np.int64)
    span = 0.0
    # node pool of a singly linked cyclic list; node 0 is the block of unstarted microbatches
    cap = 2 * S + 4
    nxt = np.full(cap, -1, np.int64)
    n_stage = np.zeros(cap, np.int64)
    n_kind = np.zeros(cap, np.int64)
    n_mb = np.zeros(cap, np.int64)
    n_t = np.zeros(cap, np.float64)
    free = np.empty(cap, np.int64)
    nfree = 0
    for j in range(cap - 1, 0, -1):
        free[nfree] = j
        nfree += 1
    nxt[0] = 0
    prev = 0  # the node before the cursor
    cur = 0
    unstarted = m  # microbatches next_mb .. m-1 are in the block
    next_mb = 0
    alive = 1
    while alive > 0:
        if cur == 0:
            # the block: start microbatches while stage 0 has a slot, in order
            while unstarted > 0 and slots[0] > 0:
                mb = next_mb
                start = gtime[0] if gtime[0] > -1.0 else -1.0
                end = start + fwd[0]
                gtime[0] = end
                if end > span:
                    span = end
                busy[0] += fwd[0]
                slots[0] -= 1
                inflight[0] += 1
                if inflight[0] > peak[0]:
                    peak[0] = inflight[0]
                if record:
                    ev_stage[k] = 0
                    ev_kind[k] = 0
                    ev_mb[k] = mb
                    ev_start[k] = start
                    ev_end[k] = end
                k += 1
                # its successor takes its place: just before the block
                nfree -= 1
                j = free[nfree]
                if S > 1:
                    n_stage[j] = 1
                    n_kind[j] = 0
                else:
                    n_stage[j] = 0
                    n_kind[j] = 1
                n_mb[j] = mb
                n_t[j] = end
                nxt[j] = 0
                nxt[prev] = j
                prev = j
                alive += 1
                next_mb += 1
                unstarted -= 1
            if unstarted == 0:
                # the block is empty: unlink it (it never comes back)
                nxt[prev] = nxt[0]
                alive -= 1
                cur = nxt[0]
                if alive == 0:
                    break
                # node 0 is not reused: the cursor moves on from prev
                nxt[0] = -1
                continue
            prev = 0
            cur = nxt[0]
            continue
        s = n_stage[cur]
        kd = n_kind[cur]
        mb = n_mb[cur]
        t0 = n_t[cur]
        if kd == 0 and slots[s] <= 0:
            prev = cur  # blocked: stays in place
            cur = nxt[cur]
            continue
        start = max(gtime[s], t0)
        replace = True  # the node is replaced by a successor (False: removed)
        after_opt = False
        if kd == 0:
            end = start + fwd[s]
            busy[s] += fwd[s]
            if s != S - 1:
                n_stage[cur] = s + 1
            else:
                n_kind[cur] = 1
            n_t[cur] = end
            slots[s] -= 1
            inflight[s] += 1
            if inflight[s] > peak[s]:
                peak[s] = inflight[s]
        elif kd == 1:
            end = start + bwd[s]
            busy[s] += bwd[s]
            if s != 0:
                n_stage[cur] = s - 1
                n_t[cur] = end
            else:
                replace = False
            slots[s] += 1
            inflight[s] -= 1
            left[s] -= 1
            if left[s] == 0:
                after_opt = True
        else:
            end = start + optim[s]
            busy[s] += optim[s]
            replace = False
        gtime[s] = end
        if kd != 2 and end > span:
            span = end
        if record:
            ev_stage[k] = s
            ev_kind[k] = kd
            ev_mb[k] = mb
            ev_start[k] = start
            ev_end[k] = end
        k += 1
        nx = nxt[cur]
        if replace:
            prev = cur
        else:
            nxt[prev] = nx
            free[nfree] = cur
            nfree += 1
            alive -= 1
        if after_opt:
            nfree -= 1
            j = free[nfree]
            n_stage[j] = s
            n_kind[j] = 2
            n_mb[j] = -1
            n_t[j] = end
            nxt[j] = nx
            nxt[prev] = j
            prev = j
            alive += 1
        cur = nx
    total = 0.0
    for s in range(S):
        if gtime[s] > total:
            total = gtime[s]
    return total, span, busy, peak, ev_stage[:k], ev_kind[:k], ev_mb[:k], ev_start[:k], ev_end[:k]


@jit
def simulate_pipeline(fwd, bwd, optim, m):
    """Run the seed's schedule with its events: ``(total, stage, kind, mb, start, end)``."""
    r = simulate_seed(fwd, bwd, optim, m, True)
    return r[0], r[4], r[5], r[6], r[7], r[8]


@jit
def _op_at(kind, s, S, m, v, k):
    """Operation ``k`` of stage ``s``: ``(op, chunk, microbatch)``; op 0 F, 1 B, 2 W."""
    if kind == GPIPE:
        if k < m:
            return 0, 0, k
        return 1, 0, k - m
    if kind == ONE_F_ONE_B:
        w = min(S - s - 1, m)
        if k < w:
            return 0, 0, k
        j = k - w
        if j < 2 * (m - w):
            if j % 2 == 0:
                return 0, 0, w + j // 2
            return 1, 0, j // 2
        return 1, 0, m - w + (j - 2 * (m - w))
    if kind == ZB_H1:
        # 1F1B with B and W split; stage s defers its W by d = s microbatches (ZB-H1), so
        # every stage holds at most S microbatches (1F1B's peak, on stage 0)
        w = min(S - s - 1, m)
        d = min(s, m)
        if k < w:
            return 0, 0, k
        k -= w
        a = min(d, m - w)  # steady groups (F, B) before the first W
        if k < 2 * a:
            if k % 2 == 0:
                return 0, 0, w + k // 2
            return 1, 0, k // 2
        k -= 2 * a
        n3 = m - w - a  # steady groups (F, B, W)
        if k < 3 * n3:
            i = a + k // 3
            r = k % 3
            if r == 0:
                return 0, 0, w + i
            if r == 1:
                return 1, 0, i
            return 2, 0, i - d
        k -= 3 * n3
        c1 = max(0, d - (m - w))  # cool-down B's before any W is due
        if k < c1:
            return 1, 0, m - w + k
        k -= c1
        n2 = w - c1  # cool-down groups (B, W)
        if k < 2 * n2:
            j = m - w + c1 + k // 2
            if k % 2 == 0:
                return 1, 0, j
            return 2, 0, j - d
        k -= 2 * n2
        return 2, 0, m - d + k  # the deferred W's
    # interleaved 1F1B (Megatron-LM's order; m is a multiple of S)
    total = m * v
    w = min((S - s - 1) * 2 + (v - 1) * S, total)
    if k < w:
        f = k
        is_f = True
    else:
        j = k - w
        if j < 2 * (total - w):
            if j % 2 == 0:
                f = w + j // 2
                is_f = True
            else:
                f = j // 2
                is_f = False
        else:
            f = total - w + (j - 2 * (total - w))
            is_f = False
    c = (f // S) % v
    mb = (f // (S * v)) * S + f % S
    if is_f:
        return 0, c, mb
    return 1, v - 1 - c, mb


@jit
def simulate_ordered(kind, fwd, bwd, wgt, optim, m, v, p2p, record):
    """Run schedule ``kind`` (GPIPE, ONE_F_ONE_B, INTERLEAVED, ZB_H1) over ``S`` stages.

    ``fwd, bwd, wgt, optim`` are per-stage times of one microbatch's forward, backward
    (input gradient for ZB_H1, whole backward otherwise), weight gradient (ZB_H1 only) and
    the optimizer step; each of the ``v`` chunks of a stage takes ``1/v`` of them. ``p2p``
    is added to every dependency between different stages.

    Returns ``(total, makespan_fb, busy[S], peak_inflight[S], n_p2p[S], ev_stage, ev_kind,
    ev_mb, ev_start, ev_end, deadlock)``; ``makespan_fb`` ignores the optimizer.
    """
    S = fwd.shape[0]
    V = S * v
    ops_per = 2 * m * v + (m if kind == ZB_H1 else 0)
    n_ev = S * (ops_per + 1) if record else 0
    ev_stage = np.empty(n_ev, np.int64)
    ev_kind = np.empty(n_ev, np.int64)
    ev_mb = np.empty(n_ev, np.int64)
    ev_start = np.empty(n_ev, np.float64)
    ev_end = np.empty(n_ev, np.float64)
    fend = np.full((V, m), -1.0, np.float64)
    bend = np.full((V, m), -1.0, np.float64)
    ptr = np.zeros(S, np.int64)
    free = np.zeros(S, np.float64)
    busy = np.zeros(S, np.float64)
    inflight = np.zeros(S, np.int64)
    peak = np.zeros(S, np.int64)
    n_p2p = np.zeros(S, np.int64)
    k = 0
    done = 0
    total_ops = S * ops_per
    deadlock = False
    # the decoded next operation of each stage, kept while the stage waits on a dependency
    # (a blocked stage is revisited every sweep; decoding is integer divisions)
    nx_op = np.zeros(S, np.int64)
    nx_c = np.zeros(S, np.int64)
    nx_i = np.zeros(S, np.int64)
    nx_k = np.full(S, -1, np.int64)
    while done < total_ops:
        progress = False
        for s in range(S):
            while ptr[s] < ops_per:
                if nx_k[s] != ptr[s]:
                    nx_op[s], nx_c[s], nx_i[s] = _op_at(kind, s, S, m, v, ptr[s])
                    nx_k[s] = ptr[s]
                op = nx_op[s]
                c = nx_c[s]
                i = nx_i[s]
                j = c * S + s  # virtual stage
                dep = 0.0
                cross = False
                if op == 0:
                    if j > 0:
                        dep = fend[j - 1, i]
                        if dep < 0.0:
                            break
                        cross = S > 1
                    dur = fwd[s] / v
                elif op == 1:
                    if j < V - 1:
                        dep = bend[j + 1, i]
                        if dep < 0.0:
                            break
                        cross = S > 1
                    else:
                        dep = fend[j, i]
                        if dep < 0.0:
                            break
                    dur = bwd[s] / v
                else:
                    dep = bend[j, i]
                    dur = wgt[s]
                if cross:
                    dep += p2p
                    n_p2p[s] += 1
                start = max(free[s], dep)
                end = start + dur
                free[s] = end
                busy[s] += dur
                if op == 0:
                    fend[j, i] = end
                    inflight[s] += 1
                    if inflight[s] > peak[s]:
                        peak[s] = inflight[s]
                elif op == 1:
                    bend[j, i] = end
                    if kind != ZB_H1:
                        inflight[s] -= 1
                else:
                    inflight[s] -= 1
                if record:
                    ev_stage[k] = s
                    ev_kind[k] = op if op < 2 else 3
                    ev_mb[k] = i
                    ev_start[k] = start
                    ev_end[k] = end
                    k += 1
                ptr[s] += 1
                done += 1
                progress = True
        if not progress:
            deadlock = True
            break
    makespan = 0.0
    for s in range(S):
        if free[s] > makespan:
            makespan = free[s]
    total = 0.0
    for s in range(S):
        start = free[s]
        end = start + optim[s]
        busy[s] += optim[s]
        if record:
            ev_stage[k] = s
            ev_kind[k] = 2
            ev_mb[k] = -1
            ev_start[k] = start
            ev_end[k] = end
            k += 1
        if end > total:
            total = end
    return total, makespan, busy, peak, n_p2p, ev_stage[:k], ev_kind[:k], ev_mb[:k], ev_start[:k], ev_end[:k], deadlock
