"""The event-driven loop of rigid jobs, as numba kernels (the face is :mod:`.rigid`).

A rigid job needs ``need`` GPUs and ``work`` seconds of running on them. The loop jumps from
event to event: an arrival, a completion, and for the least-attained-service policy the time a
running job's attained GPU-seconds reach its queue's threshold (and, with starvation promotion,
the time a waiting job has starved long enough); under Gandiva and Themis the end of a running
job's slice or lease. All events at one time are applied (completions, then threshold crossings
in job order, then promotions in job order, then arrivals), then the policy decides once. The
plain-Python reference the tests compare against is ``tests/sim/engine/naive_rigid.py``; the
semantics are stated in :mod:`.rigid`.

Placement: a job of ``need <= G`` GPUs goes on one node, the one with the fewest free GPUs that
still fit it (lowest index on ties); a bigger job takes ``ceil(need / G)`` whole free nodes,
the lowest-indexed ones, and holds all their GPUs.
"""

from __future__ import annotations

import heapq

import numpy as np

from fastsched._jit import jit

__all__ = ["FIFO", "SJF", "BACKFILL", "SRTF", "LAS", "GANDIVA", "THEMIS", "run_rigid_kernel"]

FIFO, SJF, BACKFILL, SRTF, LAS, GANDIVA, THEMIS = 0, 1, 2, 3, 4, 5, 6
_INF = np.inf


@jit
def _fits(hist, need, G):
    if need <= G:
        for f in range(need, G + 1):
            if hist[f] > 0:
                return True
        return False
    return hist[G] >= (need + G - 1) // G


@jit
def _choose(free, need, G, out):
    """Write the nodes ``need`` GPUs would take into ``out``; return how many (0: no fit)."""
    N = free.size
    if need <= G:
        best = -1
        bf = G + 1
        for n in range(N):
            f = free[n]
            if f >= need and f < bf:
                best = n
                bf = f
                if f == need:
                    break
        if best < 0:
            return 0
        out[0] = best
        return 1
    k = (need + G - 1) // G
    c = 0
    for n in range(N):
        if free[n] == G:
            out[c] = n
            c += 1
            if c == k:
                return k
    return 0


@jit
def _take(free, hist, nodes, k, need, G):
    """Take the GPUs of a job on ``nodes[:k]`` (as :func:`_choose` chose them)."""
    for i in range(k):
        n = nodes[i]
        hist[free[n]] -= 1
        free[n] -= need if k == 1 and need <= G else G
        hist[free[n]] += 1


@jit
def _give(free, hist, nodes, k, need, G):
    for i in range(k):
        n = nodes[i]
        hist[free[n]] -= 1
        free[n] += need if k == 1 and need <= G else G
        hist[free[n]] += 1


@jit
def _held(need, G):
    return need if need <= G else ((need + G - 1) // G) * G


@jit
def _unlink(j, lv, nxt, prv, qhead, qtail):
    """Take job ``j`` out of the linked list of queue ``lv``."""
    if prv[j] >= 0:
        nxt[prv[j]] = nxt[j]
    else:
        qhead[lv] = nxt[j]
    if nxt[j] >= 0:
        prv[nxt[j]] = prv[j]
    else:
        qtail[lv] = prv[j]


@jit
def _append(j, lv, nxt, prv, qhead, qtail):
    """Put job ``j`` at the tail of queue ``lv``."""
    nxt[j] = -1
    prv[j] = qtail[lv]
    if qtail[lv] >= 0:
        nxt[qtail[lv]] = j
    else:
        qhead[lv] = j
    qtail[lv] = j


@jit
def _start_fresh(j, t, k, free, hist, pnodes, off, need, G, first, run_from, held_from, state, runlist, runpos, nrun):
    """Start waiting job ``j`` for the first time at ``t`` on the ``k`` nodes :func:`_choose` wrote into its slot.

    Returns the new count of running jobs (the caller counts its GPUs and waits, and schedules its end).
    """
    _take(free, hist, pnodes[off[j] : off[j + 1]], k, need[j], G)
    first[j] = t
    run_from[j] = t
    held_from[j] = t
    state[j] = 2
    runlist[nrun] = j
    runpos[j] = nrun
    return nrun + 1


@jit
def _key(policy, j, t, running, submit, work, remaining, run_from, held_from, held_s, started, quantum, restart_s):
    """Return the priority of job ``j`` at time ``t`` under SRTF, Gandiva or Themis: the lowest first.

    SRTF: the work left. Gandiva and Themis: a running job within its slice (lease) first;
    then Gandiva's time share, or minus Themis' finish-time ratio (the largest ratio first).
    """
    left = remaining[j]
    if running and t > run_from[j]:
        left -= t - run_from[j]
    if policy == SRTF:
        return left
    if running and t < run_from[j] + quantum:
        return -np.inf
    if policy == GANDIVA:
        ran = held_s[j] + (t - held_from[j] if running else 0.0)
        return ran / max(t - submit[j], 1.0)
    pause = restart_s if started and not running else 0.0
    return -(((t - submit[j]) + left + pause) / max(work[j], 1.0))


def _grow(a, m):
    b = np.empty(2 * m, a.dtype)
    b[:m] = a[:m]
    return b


_grow = jit(_grow)


@jit
def run_rigid_kernel(submit, work, need, N, G, policy, restart_s, thresholds, depth, quantum, starve):
    """Run rigid jobs (sorted by ``submit``) on ``N`` nodes of ``G`` GPUs under ``policy``.

    ``quantum`` is Gandiva's slice or Themis' lease; ``starve`` Tiresias' starvation limit
    (0: no promotion).

    Returns ``(first_start, finish, restarts, attained, times, queued, used, running)``: per job
    its first start, completion, restarts and GPU-seconds held (recorded GPUs times seconds
    held); per decision its time, the jobs waiting, the GPUs held and the jobs running after it.
    """
    n = submit.size
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    restarts = np.zeros(n, np.int64)
    att = np.zeros(n)
    kn = np.empty(n, np.int64)
    off = np.empty(n + 1, np.int64)
    off[0] = 0
    for j in range(n):
        kn[j] = 1 if need[j] <= G else (need[j] + G - 1) // G
        off[j + 1] = off[j] + kn[j]
    pnodes = np.empty(off[n], np.int64)
    free = np.full(N, G, np.int64)
    hist = np.zeros(G + 1, np.int64)
    hist[G] = N
    scratch = np.empty(N, np.int64)
    m = 1024
    ev_t = np.empty(m)
    ev_q = np.empty(m, np.int64)
    ev_u = np.empty(m, np.int64)
    ev_r = np.empty(m, np.int64)
    ne = 0
    used = 0
    waiting = 0
    # linked list of waiting (or, for the preemptive policies, active) jobs per queue level
    L = thresholds.size + 1 if policy == LAS else 1
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    qhead = np.full(L, -1, np.int64)
    qtail = np.full(L, -1, np.int64)
    level = np.zeros(n, np.int64)
    state = np.zeros(n, np.int64)  # 0 not arrived, 1 waiting, 2 running, 3 done
    remaining = work.copy()
    run_from = np.zeros(n)
    held_from = np.zeros(n)
    held_s = np.zeros(n)  # seconds held before the current slice (Gandiva's time share)
    base = np.zeros(n)  # attained service at the last promotion (the queues count from it)
    ns = n if starve > 0.0 else 0
    wsum = np.zeros(ns)  # starvation: seconds waited below the first queue since the last promotion
    wfrom = np.zeros(ns)  # when the current wait began
    counting = np.zeros(ns, np.bool_)  # whether the current wait counts
    stamp = np.zeros(n, np.int64)
    runpos = np.full(n, -1, np.int64)
    runlist = np.empty(n, np.int64)
    nrun = 0
    admit = np.full(n, -1, np.int64)
    order = np.empty(n, np.int64)
    # events: (time, kind 0 completion / 1 threshold, slice or lease end / 2 promotion, job, stamp)
    heap = [(0.0, 0, 0, 0)]
    heap.pop()
    sjf = [(0.0, 0)]
    sjf.pop()
    # EASY reservation cache: the head it was made for, its shadow time and free GPUs then
    resv_job = -1
    shadow = 0.0
    ft = np.empty(N, np.int64)
    fth = np.empty(G + 1, np.int64)
    aux = [(0.0, 0, 0)]
    aux.pop()
    a = 0
    epoch = 0
    preemptive = policy == SRTF or policy == LAS or policy == GANDIVA or policy == THEMIS
    leased = policy == GANDIVA or policy == THEMIS
    while a < n or len(heap) > 0:
        while len(heap) > 0 and heap[0][3] != stamp[heap[0][2]]:
            heapq.heappop(heap)
        t = _INF
        if a < n:
            t = submit[a]
        if len(heap) > 0 and heap[0][0] < t:
            t = heap[0][0]
        if t == _INF:
            break
        while len(heap) > 0 and heap[0][0] <= t:
            e, kind, j, s = heapq.heappop(heap)
            if s != stamp[j] or (kind < 2 and state[j] != 2):
                continue
            if kind == 0:
                finish[j] = e
                att[j] += need[j] * (e - held_from[j])
                _give(free, hist, pnodes[off[j] : off[j + 1]], kn[j], need[j], G)
                used -= _held(need[j], G)
                state[j] = 3
                stamp[j] += 1
                last = runlist[nrun - 1]
                runlist[runpos[j]] = last
                runpos[last] = runpos[j]
                nrun -= 1
                if preemptive:  # out of its queue
                    _unlink(j, level[j], nxt, prv, qhead, qtail)
            elif kind == 2:  # starved long enough: to the tail of the first queue
                _unlink(j, level[j], nxt, prv, qhead, qtail)
                level[j] = 0
                _append(j, 0, nxt, prv, qhead, qtail)
                base[j] = att[j]
                wsum[j] = 0.0
                counting[j] = False
            elif leased:  # a slice or lease ended: the next decision may swap the job out
                pass
            else:  # a threshold crossed: to the tail of the next queue
                att[j] += need[j] * (e - held_from[j])
                held_from[j] = e
                _unlink(j, level[j], nxt, prv, qhead, qtail)
                lv = level[j] + 1
                level[j] = lv
                _append(j, lv, nxt, prv, qhead, qtail)
                if lv < L - 1:
                    td = e + (thresholds[lv] - (att[j] - base[j])) / need[j]
                    if td < run_from[j] + remaining[j]:
                        heapq.heappush(heap, (td, 1, j, stamp[j]))
        while a < n and submit[a] <= t:
            state[a] = 1
            waiting += 1
            if policy == SJF:
                heapq.heappush(sjf, (work[a], a))
            else:
                _append(a, 0, nxt, prv, qhead, qtail)
            a += 1
        # -- decide ---------------------------------------------------------------------
        if policy == FIFO or policy == BACKFILL or policy == SJF:
            while True:
                if policy == SJF:
                    if len(sjf) == 0:
                        break
                    h = sjf[0][1]
                else:
                    h = qhead[0]
                    if h < 0:
                        break
                if not _fits(hist, need[h], G):
                    break
                if policy == SJF:
                    heapq.heappop(sjf)
                else:
                    _unlink(h, 0, nxt, prv, qhead, qtail)
                k = _choose(free, need[h], G, pnodes[off[h] : off[h + 1]])
                nrun = _start_fresh(h, t, k, free, hist, pnodes, off, need, G, first, run_from, held_from, state,
                                    runlist, runpos, nrun)  # fmt: skip
                used += _held(need[h], G)
                waiting -= 1
                heapq.heappush(heap, (t + work[h], 0, h, stamp[h]))
            h = qhead[0]
            if policy == BACKFILL and h >= 0:
                if resv_job != h:  # the shadow time: running jobs release in end order until h fits
                    resv_job = h
                    ft[:] = free
                    fth[:] = hist
                    aux.clear()
                    aux.append((heap[0][0], heap[0][2], 0))
                    shadow = _INF
                    while len(aux) > 0:
                        e, j, idx = heapq.heappop(aux)
                        if e > shadow:
                            break
                        _give(ft, fth, pnodes[off[j] : off[j + 1]], kn[j], need[j], G)
                        if shadow == _INF and _fits(fth, need[h], G):
                            shadow = e
                        for c in (2 * idx + 1, 2 * idx + 2):
                            if c < len(heap):
                                heapq.heappush(aux, (heap[c][0], heap[c][2], c))
                # the head's reservation at the shadow time, best fit on the free GPUs then
                kh = _choose(ft, need[h], G, scratch)
                _take(ft, fth, scratch, kh, need[h], G)
                c = nxt[h]
                tested = 0
                while c >= 0 and tested < depth:
                    nc = nxt[c]
                    tested += 1
                    k = _choose(free, need[c], G, pnodes[off[c] : off[c + 1]])
                    if k > 0:
                        ok = t + work[c] <= shadow
                        if not ok:
                            ok = True
                            for i in range(k):
                                nd = pnodes[off[c] + i]
                                if ft[nd] < (need[c] if k == 1 and need[c] <= G else G):
                                    ok = False
                            if ok:
                                _take(ft, fth, pnodes[off[c] : off[c + 1]], k, need[c], G)
                        if ok:
                            _unlink(c, 0, nxt, prv, qhead, qtail)
                            nrun = _start_fresh(c, t, k, free, hist, pnodes, off, need, G, first, run_from,
                                                held_from, state, runlist, runpos, nrun)  # fmt: skip
                            used += _held(need[c], G)
                            waiting -= 1
                            heapq.heappush(heap, (t + work[c], 0, c, stamp[c]))
                    c = nc
                _give(ft, fth, scratch, kh, need[h], G)  # the cache keeps the state before the reservation
        else:
            epoch += 1
            na = 0
            if policy == LAS:
                cap = N * G
                for lv in range(L):
                    j = qhead[lv]
                    while j >= 0 and cap > 0:
                        d = _held(need[j], G)
                        if d <= cap:
                            cap -= d
                            admit[j] = epoch
                            order[na] = j
                            na += 1
                        j = nxt[j]
            else:  # SRTF, Gandiva, Themis: by _key, ties by arrival
                cnt = 0
                j = qhead[0]
                while j >= 0:
                    order[cnt] = j
                    cnt += 1
                    j = nxt[j]
                keys = np.empty(cnt)
                for i in range(cnt):
                    j = order[i]
                    keys[i] = _key(
                        policy, j, t, state[j] == 2, submit, work, remaining, run_from, held_from, held_s,
                        not np.isnan(first[j]), quantum, restart_s,
                    )  # fmt: skip
                srt = np.argsort(keys, kind="mergesort")
                act = order[:cnt].copy()
                cap = N * G
                for i in range(cnt):
                    j = act[srt[i]]
                    d = _held(need[j], G)
                    if d <= cap:
                        cap -= d
                        admit[j] = epoch
                        order[na] = j
                        na += 1
                    if cap == 0:
                        break
            i = 0
            while i < nrun:  # preempt the running jobs not admitted
                j = runlist[i]
                if admit[j] == epoch:
                    i += 1
                    continue
                if t > run_from[j]:
                    remaining[j] -= t - run_from[j]
                att[j] += need[j] * (t - held_from[j])
                held_s[j] += t - held_from[j]
                _give(free, hist, pnodes[off[j] : off[j + 1]], kn[j], need[j], G)
                used -= _held(need[j], G)
                state[j] = 1
                waiting += 1
                stamp[j] += 1
                last = runlist[nrun - 1]
                runlist[i] = last
                runpos[last] = i
                runpos[j] = -1
                nrun -= 1
                if starve > 0.0 and level[j] > 0:  # a wait below the first queue: promoted at p + (K E - W)
                    wfrom[j] = t
                    counting[j] = True
                    tp = t + (starve * ((att[j] - base[j]) / need[j]) - wsum[j])
                    heapq.heappush(heap, (tp, 2, j, stamp[j]))
            for i in range(na):  # start the admitted waiting jobs that fit, in order
                j = order[i]
                if state[j] != 1:
                    continue
                k = _choose(free, need[j], G, pnodes[off[j] : off[j + 1]])
                if k == 0:
                    continue
                _take(free, hist, pnodes[off[j] : off[j + 1]], k, need[j], G)
                if np.isnan(first[j]):
                    first[j] = t
                    run_from[j] = t
                else:
                    restarts[j] += 1
                    run_from[j] = t + restart_s
                if starve > 0.0 and counting[j]:
                    wsum[j] += t - wfrom[j]
                    counting[j] = False
                held_from[j] = t
                state[j] = 2
                stamp[j] += 1  # a promotion pending while it waited no longer applies
                used += _held(need[j], G)
                waiting -= 1
                runlist[nrun] = j
                runpos[j] = nrun
                nrun += 1
                end = run_from[j] + remaining[j]
                heapq.heappush(heap, (end, 0, j, stamp[j]))
                if policy == LAS and level[j] < L - 1:
                    td = t + (thresholds[level[j]] - (att[j] - base[j])) / need[j]
                    if td < end:
                        heapq.heappush(heap, (td, 1, j, stamp[j]))
                if leased and run_from[j] + quantum < end:  # a slice (lease) is quantum seconds of progress
                    heapq.heappush(heap, (run_from[j] + quantum, 1, j, stamp[j]))
        if ne == m:
            ev_t = _grow(ev_t, m)
            ev_q = _grow(ev_q, m)
            ev_u = _grow(ev_u, m)
            ev_r = _grow(ev_r, m)
            m *= 2
        ev_t[ne] = t
        ev_q[ne] = waiting
        ev_u[ne] = used
        ev_r[ne] = nrun
        ne += 1
    return first, finish, restarts, att, ev_t[:ne].copy(), ev_q[:ne].copy(), ev_u[:ne].copy(), ev_r[:ne].copy()
