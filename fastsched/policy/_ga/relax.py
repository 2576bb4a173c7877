"""A seed from the round's separable relaxation: every job's best option under one shared budget, packed.

On large clusters with fewer jobs than GPUs, the best allocation moves many jobs at once (under
a power mean it takes GPUs from large jobs and evens the rest out), while the genetic operators
and the local search change one or two jobs at a time. This seed starts the search there.

**Relaxation.** Each free job picks one option: nothing, its base allocation unchanged (no
restart penalty), ``r`` replicas on one node (``r`` up to what the roomiest node holds), or
``r >= 2`` replicas over the fewest free nodes that hold them. Options share one budget: the
cluster's free resources, an option costing ``r x`` the job's dominant share per replica (for
one resource type, its replicas against the free GPUs). Node boundaries and AdaptDL's one
distributed job per node are left to the packing. The objective is separable (each job's term
of the first objective, sign-adjusted so that larger is better), so the relaxation is a
multiple-choice knapsack: its linear relaxation is solved exactly by taking the increments of
each job's upper concave hull (of the best term at each replica count) in decreasing order of
gain per cost. The integer choice takes those increments while they fit every resource type's
free total and skips, for good, a job whose next increment does not fit.

**Packing.** Pinned jobs as given; jobs keeping their base allocation where it fits; distributed
jobs (largest first) on the non-owned nodes with most room; single-node jobs (largest first) best
fit, i.e. on the node with the least room that holds them; a job that fits nowhere at its count
takes the most valuable count that fits one node. All within the real nodes.

The seed is then polished by the local search (:mod:`.local`) like the other seeds.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.policy._ga.fitness import fair_term, fair_total, improves, job_value
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.local import _base_fits, _copy_state, _settle, best_single_counts
from fastsched.policy._ga.rowstate import add_job, empty_state, insert_entry, is_changed, pack_row
from fastsched.policy._ga.select import _argsort
from fastsched.policy._ga.stamps import new_stamps, stamp_changes, stamp_transfer, unchanged_since
from fastsched.policy._ga.transfers import _EPS, _best_transfer, _occupants, apply_transfer, new_terms
from fastsched.policy._ga.variation import node_capacity

__all__ = ["NONE", "KEEP", "SINGLE", "MULTI", "relax_row"]

# Option kinds of the relaxation.
NONE = 0
KEEP = 1
SINGLE = 2
MULTI = 3


@leaf
def _term(A, j, k, reps, changed):
    """Sign-adjusted term of job ``j`` with ``reps`` replicas on ``k`` nodes (larger is better)."""
    v = job_value(A.table, j, k, reps, A.scale[j], changed, A.penalty[j])
    return improves(fair_term(v, A.mode, A.p), A.mode, A.p)


@leaf
def _put_base(S, j, A):
    """Give job ``j`` its base allocation's entries and count them."""
    b0 = A.base_off[j]
    k = A.base_off[j + 1] - b0
    for q in range(k):
        S.jn[j, q] = A.base_node[b0 + q]
        S.jc[j, q] = A.base_cnt[b0 + q]
    S.jk[j] = k
    add_job(S, j, A)


@inner
def _pinned_state(A, width):
    """Unpacked row holding only the pinned jobs (at their base allocation)."""
    S = empty_state(A, width)
    for j in range(A.job_res.shape[0]):
        if A.pinned[j]:
            _put_base(S, j, A)
    return S


@leaf
def _same_request(A, a, b):
    """Whether jobs ``a`` and ``b`` request the same resources per replica."""
    for t in range(A.job_res.shape[1]):
        if A.job_res[a, t] != A.job_res[b, t]:
            return False
    return True


@inner
def _hulls(A, S, num_real, share):
    """Upper concave hull of each free job's best term per replica count.

    Returns ``(hr, hk, hs, hn)``: the hull's vertices ``hr[j, :hn[j]]`` (replicas, from 0),
    the option kind at each, its term ``hs`` and the vertex count. ``share[j]`` is the cost of
    one replica (<= 0: the job cannot be placed and keeps only the empty option).
    """
    njobs = A.job_res.shape[0]
    rmax = A.table.shape[2] - 1
    hr = np.empty((njobs, rmax + 2), dtype=np.int64)
    hk = np.empty((njobs, rmax + 2), dtype=np.int64)
    hs = np.empty((njobs, rmax + 2), dtype=np.float64)
    hn = np.empty(njobs, dtype=np.int64)
    hn[:] = 0
    best = np.empty(rmax + 1, dtype=np.float64)
    kind = np.empty(rmax + 1, dtype=np.int64)
    hist = np.empty(rmax + 2, dtype=np.int64)
    # Rooms depend on a job only through its request and its cap: tally the non-owned nodes'
    # rooms (capped at rmax) once per distinct request, then cap them per job. O(jobs x nodes)
    # was most of a large round's relaxation (1,100 nodes, 10,000 jobs of one request).
    full = np.empty(rmax + 2, dtype=np.int64)
    full_top = np.int64(0)
    tallied = -1  # the job whose request ``full`` is the tally of
    for j in range(njobs):
        if A.pinned[j]:
            continue
        mx = A.max_rep[j]
        lo = A.min_rep[j] if A.min_rep[j] > 1 else 1
        hr[j, 0] = 0
        hk[j, 0] = NONE
        hs[j, 0] = _term(A, j, np.int64(0), np.int64(0), np.bool_(True))
        hn[j] = 1
        if share[j] <= 0.0 or mx < lo:
            continue
        # Rooms of the real nodes for this job: the largest (single node) and, over the nodes
        # no distributed job owns, a histogram (the fewest nodes holding r replicas).
        if tallied < 0 or not _same_request(A, j, tallied):
            tallied = j
            full_top = np.int64(0)
            for c in range(rmax + 1):
                full[c] = 0
            for n in range(num_real):
                c = node_capacity(A.job_res, A.node_res, S.used, j, np.int64(n), rmax)
                if c > full_top:
                    full_top = c
                if not S.owner[n]:
                    full[c] += 1
        top = full_top if full_top < mx else mx
        spread = np.int64(0)  # non-owned nodes with room
        for c in range(mx + 1):
            hist[c] = full[c]
        for c in range(mx + 1, rmax + 1):  # rooms beyond the cap count as the cap
            hist[mx] += full[c]
        for c in range(1, mx + 1):
            spread += hist[c]
        for r in range(mx + 1):
            best[r] = -np.inf
            kind[r] = NONE
        for r in range(lo, (top if top < mx else mx) + 1):
            best[r] = _term(A, j, np.int64(1), np.int64(r), np.bool_(True))
            kind[r] = SINGLE
        # Distributed: walk r upwards, taking nodes from the roomiest down.
        nodes = np.int64(0)
        held = np.int64(0)
        c = mx
        level = np.int64(0)
        for r in range(lo if lo > 2 else 2, (mx if spread >= 2 else 1) + 1):
            while held < r and c >= 1:
                if level < hist[c]:
                    level += 1
                    held += c
                    nodes += 1
                else:
                    c -= 1
                    level = 0
            if held < r:
                break
            k = nodes if nodes > 2 else np.int64(2)
            if r < k:
                continue
            t = _term(A, j, k, np.int64(r), np.bool_(True))
            if t > best[r]:
                best[r] = t
                kind[r] = MULTI
        if _base_fits(S, j, A):
            b0 = A.base_off[j]
            kb = A.base_off[j + 1] - b0
            rb = np.int64(0)
            for q in range(b0, b0 + kb):
                rb += A.base_cnt[q]
            t = _term(A, j, kb, rb, np.bool_(False))
            if t >= best[rb]:
                best[rb] = t
                kind[rb] = KEEP
        # Monotone chain: keep the points on or above every chord, strictly concave.
        m = np.int64(1)
        for r in range(lo, mx + 1):
            s = best[r]
            if s == -np.inf:
                continue
            if s <= hs[j, m - 1]:
                continue  # no better than fewer replicas: never on the rising hull
            while m >= 2:
                r1 = hr[j, m - 2]
                s1 = hs[j, m - 2]
                r2 = hr[j, m - 1]
                s2 = hs[j, m - 1]
                # Pop the middle point when it lies on or below the chord from 1 to (r, s).
                if (s2 - s1) * (r - r2) <= (s - s2) * (r2 - r1):
                    m -= 1
                else:
                    break
            hr[j, m] = r
            hk[j, m] = kind[r]
            hs[j, m] = s
            m += 1
        hn[j] = m
    return hr, hk, hs, hn


@inner
def relax_choice(A, S, num_real, kind_out, reps_out, target):
    """Solve the relaxation (see the module notes) given the pinned jobs of ``S``.

    Writes each job's option kind and replicas (pinned jobs: ``KEEP`` and their base count)
    into ``kind_out`` / ``reps_out`` and its sign-adjusted term into ``target`` (pinned jobs:
    -inf); returns the linear relaxation's optimum of the summed sign-adjusted terms of the
    free jobs (an upper bound on the integer choice's).
    """
    njobs = A.job_res.shape[0]
    nres = A.job_res.shape[1]
    free = np.empty(nres, dtype=np.int64)
    for t in range(nres):
        free[t] = 0
        for n in range(num_real):
            free[t] += A.node_res[n, t] - S.used[n, t]
    # Cost of one replica: the largest share of a free total it takes (one resource: 1 / GPUs).
    share = np.empty(njobs, dtype=np.float64)
    for j in range(njobs):
        d = 0.0
        for t in range(nres):
            if A.job_res[j, t] > 0:
                if free[t] <= 0:
                    d = -1.0
                    break
                x = A.job_res[j, t] / free[t]
                if x > d:
                    d = x
        share[j] = d
    hr, hk, hs, hn = _hulls(A, S, num_real, share)
    total = np.int64(0)
    for j in range(njobs):
        if hn[j] > 1:
            total += hn[j] - 1
    inc_job = np.empty(total, dtype=np.int64)
    inc_at = np.empty(total, dtype=np.int64)
    key = np.empty(total, dtype=np.float64)
    i = np.int64(0)
    lp = 0.0
    for j in range(njobs):
        if A.pinned[j]:
            continue
        lp += hs[j, 0]
        for a in range(1, hn[j]):
            inc_job[i] = j
            inc_at[i] = a
            # Gain per unit of budget, descending (stable: job order, then along the hull).
            key[i] = -(hs[j, a] - hs[j, a - 1]) / ((hr[j, a] - hr[j, a - 1]) * share[j])
            i += 1
    order = _argsort(key)
    at = np.empty(njobs, dtype=np.int64)
    at[:] = 0
    blocked = np.empty(njobs, dtype=np.bool_)
    blocked[:] = False
    left = free.copy()
    budget = 1.0  # the linear relaxation's budget, in shares
    lp_open = True
    for t in range(total):
        e = order[t]
        j = inc_job[e]
        a = inc_at[e]
        dr = hr[j, a] - hr[j, a - 1]
        if lp_open:
            cost = dr * share[j]
            if cost <= budget:
                budget -= cost
                lp += hs[j, a] - hs[j, a - 1]
            else:
                lp += (hs[j, a] - hs[j, a - 1]) * budget / cost
                lp_open = False
        if blocked[j]:
            continue
        fits = True
        for q in range(nres):
            if dr * A.job_res[j, q] > left[q]:
                fits = False
        if not fits:
            blocked[j] = True
            continue
        for q in range(nres):
            left[q] -= dr * A.job_res[j, q]
        at[j] = a
    for j in range(njobs):
        if A.pinned[j]:
            kind_out[j] = KEEP
            reps_out[j] = S.reps[j]
            target[j] = -np.inf
        else:
            kind_out[j] = hk[j, at[j]]
            reps_out[j] = hr[j, at[j]]
            target[j] = hs[j, at[j]]
    return lp


@inner
def _by_reps_desc(reps, kind, want, rmax, order):
    """Jobs of option ``want``, most replicas first, then as in ``order`` (a stable counting sort)."""
    njobs = reps.shape[0]
    count = np.empty(rmax + 2, dtype=np.int64)
    count[:] = 0
    m = np.int64(0)
    for j in range(njobs):
        if kind[j] == want:
            count[rmax - reps[j] + 1] += 1
            m += 1
    for r in range(rmax + 1):
        count[r + 1] += count[r]
    out = np.empty(m, dtype=np.int64)
    for i in range(njobs):
        j = order[i]
        if kind[j] == want:
            b = rmax - reps[j]
            out[count[b]] = j
            count[b] += 1
    return out


@inner
def pack_choice(A, S, num_real, kind, reps):
    """Place the relaxation's choice on the real nodes of ``S`` (which holds the pinned jobs)."""
    njobs = A.job_res.shape[0]
    rmax = A.table.shape[2] - 1
    for j in range(njobs):
        if A.pinned[j] or kind[j] != KEEP:
            continue
        if _base_fits(S, j, A):
            _put_base(S, j, A)
        else:
            kind[j] = SINGLE
    index = np.empty(njobs, dtype=np.int64)
    for j in range(njobs):
        index[j] = j
    for j in _by_reps_desc(reps, kind, MULTI, rmax, index):
        want = reps[j]
        # Room on the non-owned nodes, taken from the roomiest (lowest index on ties).
        held = np.int64(0)
        k = np.int64(0)
        while held < want and k < S.jn.shape[1]:
            bn = np.int64(-1)
            bc = np.int64(0)
            for n in range(num_real):
                if S.owner[n]:
                    continue
                c = node_capacity(A.job_res, A.node_res, S.used, j, np.int64(n), want - held)
                if c > bc:
                    bc = c
                    bn = n
            if bn < 0:
                break
            if k == 0 and bc >= want and want >= 2:
                bc = want - 1  # spans two nodes, as chosen
            insert_entry(S, j, bn, bc)
            for t in range(A.job_res.shape[1]):
                S.used[bn, t] += bc * A.job_res[j, t]
            S.owner[bn] = True  # held while this job's nodes are chosen
            held += bc
            k += 1
        if held == want and k >= 2:
            S.reps[j] = held
            continue
        for q in range(S.jk[j]):  # undo: place it on one node below
            n = S.jn[j, q]
            for t in range(A.job_res.shape[1]):
                S.used[n, t] -= S.jc[j, q] * A.job_res[j, t]
            S.owner[n] = False
        S.jk[j] = 0
        kind[j] = SINGLE
    # Among single-node jobs of one size, those that lose most with one replica less go first:
    # when rooms of that size run out, the last ones fall short.
    loss = np.empty(njobs, dtype=np.float64)
    for j in range(njobs):
        loss[j] = 0.0
        if kind[j] == SINGLE:
            lo = A.min_rep[j] if A.min_rep[j] > 1 else 1
            below = _term(A, j, np.int64(0), np.int64(0), np.bool_(True))
            for r in range(lo, reps[j]):
                t = _term(A, j, np.int64(1), np.int64(r), np.bool_(True))
                if t > below:
                    below = t
            loss[j] = below - _term(A, j, np.int64(1), reps[j], np.bool_(True))
    singles = _by_reps_desc(reps, kind, SINGLE, rmax, _argsort(loss))
    short = np.empty(singles.shape[0], dtype=np.int64)
    nshort = 0
    for j in singles:
        bn = _best_fit(S, A, j, num_real, reps[j])
        if bn < 0:
            short[nshort] = j
            nshort += 1
            continue
        insert_entry(S, j, bn, reps[j])
        add_job(S, j, A)
    # Jobs that fit no node at their count, once every job that fits is placed: the better of
    # the most valuable count that one node holds and their count over the smallest rooms of
    # free nodes (leftovers that no single-node job could use).
    for i in range(nshort):
        j = short[i]
        lo = A.min_rep[j] if A.min_rep[j] > 1 else 1
        top = np.int64(0)
        for n in range(num_real):
            c = node_capacity(A.job_res, A.node_res, S.used, j, np.int64(n), A.max_rep[j])
            if c > top:
                top = c
        want = np.int64(0)
        v = -np.inf
        for r in range(lo, (top if top < reps[j] else reps[j]) + 1):
            t = _term(A, j, np.int64(1), np.int64(r), np.bool_(True))
            if t > v:
                v = t
                want = r
        if reps[j] >= 2 and _spread_small(S, A, j, num_real, reps[j], v):
            continue
        if want > 0:
            insert_entry(S, j, _best_fit(S, A, j, num_real, want), want)
            add_job(S, j, A)


@leaf
def _best_fit(S, A, j, num_real, want):
    """Return the real node with the least room for ``want`` replicas of ``j`` (lowest index on ties; -1: none)."""
    bn = np.int64(-1)
    bc = np.int64(0)
    for n in range(num_real):
        c = node_capacity(A.job_res, A.node_res, S.used, j, np.int64(n), A.max_rep[j])
        if c >= want and (bn < 0 or c < bc):
            bn = n
            bc = c
    return bn


@leaf
def _spread_small(S, A, j, num_real, want, beat):
    """Place ``want`` replicas of ``j`` over the smallest rooms of free nodes if that beats term ``beat``.

    Free: no distributed job owns the node. Rooms are taken from the smallest (lowest index on
    ties), at least two nodes. Returns whether the job was placed.
    """
    held = np.int64(0)
    k = np.int64(0)
    for c in range(1, want + 1):
        for n in range(num_real):
            if held >= want:
                break
            if S.owner[n] or node_capacity(A.job_res, A.node_res, S.used, j, np.int64(n), want) != c:
                continue
            held += c
            k += 1
    if held < want or k < 2 or k > S.jn.shape[1]:
        return False
    if not _term(A, j, k, want, np.bool_(True)) > beat:
        return False
    held = 0
    for c in range(1, want + 1):
        for n in range(num_real):
            if held >= want:
                break
            if S.owner[n] or node_capacity(A.job_res, A.node_res, S.used, j, np.int64(n), want) != c:
                continue
            take = c if c < want - held else want - held
            insert_entry(S, j, np.int64(n), take)
            held += take
    add_job(S, j, A)
    return True


@inner
def _polish_to_target(S, A, num_real, width, passes, transfers, target):
    """Local search of the packed seed, then transfers to the jobs left below their target term.

    The descent of :func:`~fastsched.policy._ga.local.polish_row` (single-job moves, then
    ``transfers``); then, while any apply, a pass of replica transfers from any node (as
    ``ALL_TRANSFERS``) to each job whose term is still below the relaxation's choice for it
    (those the packing left short: a few, so the pass costs O(short jobs x entries)), each
    followed by the same descent. Returns the number of moves.
    """
    best1 = best_single_counts(A)
    tn = np.empty(width, dtype=np.int32)
    tc = np.empty(width, dtype=np.int32)
    hist = np.empty(A.table.shape[2] + 1, dtype=np.int64)
    moves = _settle(S, A, num_real, best1, tn, tc, hist, passes, transfers)
    out = np.empty(4, dtype=np.int64)
    out[:] = 0
    njobs = A.job_res.shape[0]
    T = new_terms(A)
    # A job whose search found nothing searches again only what changed since (stamps.py).
    stamps = new_stamps(njobs, A.node_res.shape[0])
    seen = np.empty(njobs, dtype=np.int64)  # clock of each job's last fruitless search (-1: none)
    seen[:] = -1
    before = empty_state(A, width)
    for _ in range(passes):
        occ_off, occ_job = _occupants(S, A.node_res.shape[0])
        applied = 0
        for j in range(njobs):
            if A.pinned[j]:
                continue
            if not (improves(fair_term(S.val[j], A.mode, A.p), A.mode, A.p) < target[j] - _EPS):
                continue
            since = unchanged_since(stamps, S, j, seen[j], occ_off, occ_job)
            if _best_transfer(S, A, j, num_real, occ_off, occ_job, out, False, T, stamps, since) <= _EPS:
                seen[j] = stamps.clock[0]
                continue
            apply_transfer(S, A, j, out)
            stamp_transfer(stamps, j, out)
            applied += 1
            occ_off, occ_job = _occupants(S, A.node_res.shape[0])
        moves += applied
        if applied == 0:
            break
        _copy_state(S, before)
        moves += _settle(S, A, num_real, best1, tn, tc, hist, passes, transfers)
        stamp_changes(stamps, before, S)
    return moves


@jit
def relax_row(A, num_real, width, passes, transfers, kind, reps, dst, row):
    """Build the relaxation seed into row ``row`` of ``dst`` (scored); return the relaxation's bound.

    ``kind`` / ``reps`` (int64[J]) receive the relaxation's choice before packing (option kinds
    :data:`NONE`, :data:`KEEP`, :data:`SINGLE`, :data:`MULTI`). With ``passes > 0`` the packed
    row is polished (:func:`_polish_to_target`; ``transfers`` as for
    :func:`~fastsched.policy._ga.local.polish_row`). The return value is the first objective at
    the optimum of the linear relaxation (pinned jobs included): an upper bound on what any
    allocation within ``num_real`` nodes reaches when jobs request one resource type and the
    speedup tables do not grow with the node count beyond two nodes.
    """
    njobs = A.job_res.shape[0]
    S = _pinned_state(A, width)
    target = np.empty(njobs, dtype=np.float64)
    lp = relax_choice(A, S, num_real, kind, reps, target)
    pinned_acc = 0.0
    for j in range(njobs):
        if A.pinned[j]:
            pinned_acc += fair_term(
                job_value(A.table, j, S.jk[j], S.reps[j], A.scale[j], np.bool_(False), A.penalty[j]), A.mode, A.p
            )
    placed = kind.copy()
    pack_choice(A, S, num_real, placed, reps)
    if passes > 0:
        for j in range(njobs):  # exact values (a placed job may sit at its base allocation)
            S.val[j] = job_value(A.table, j, S.jk[j], S.reps[j], A.scale[j], is_changed(S, j, A), A.penalty[j])
        _polish_to_target(S, A, num_real, width, passes, transfers, target)
    pack_row(S, A, dst, row)
    acc = improves(lp, A.mode, A.p) + pinned_acc
    return fair_total(acc, njobs, A.mode, A.p)
