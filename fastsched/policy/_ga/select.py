"""Selection of NSGA-II on two minimised objectives.

Non-dominated sort, crowding distance, survival (with duplicate removal and elitism) and
binary tournaments.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched._numba_private import copy_function
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.rng import rand_int, rand_u01

__all__ = ["nondominated_rank", "crowding_distance", "survive", "survive_ranked", "tournament", "front_hypervolume"]


# numba's np.argsort / min / max are generic overloads that each compile (and emit machine
# code for) a kernel of their own in a first round; these loops cost a fraction of that.
_RUN = 16  # insertion-sorted run length of the merge sort


@leaf
def _before(x, y):
    """``x < y`` with NaN after every number (numpy's sort order)."""
    return x < y or (y != y and x == x)


@inner
def _argsort(a):
    """Stable argsort of a float64 vector: ``np.argsort(a, kind="mergesort")``.

    Insertion sort of runs of :data:`_RUN`, then bottom-up merges (a stable sort: the same
    permutation as numpy's).
    """
    n = a.shape[0]
    idx = np.empty(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    for s in range(0, n, _RUN):
        e = s + _RUN if s + _RUN < n else n
        for i in range(s, e):
            x = a[i]
            j = i
            while j > s and _before(x, a[idx[j - 1]]):
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = i
    width = _RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i = lo
            j = mid
            for t in range(lo, hi):
                # Take from the right run only when strictly before: equal keys keep their order.
                if j < hi and (i >= mid or _before(a[idx[j]], a[idx[i]])):
                    tmp[t] = idx[j]
                    j += 1
                else:
                    tmp[t] = idx[i]
                    i += 1
        idx, tmp = tmp, idx
        width *= 2
    return idx


@leaf
def _max_rank(rank):
    """Largest entry of a non-empty int64 vector."""
    m = rank[0]
    for i in range(1, rank.shape[0]):
        if rank[i] > m:
            m = rank[i]
    return m


@inner
def _nondominated_rank(f1, f2):
    """Front index of each point (minimising both objectives), O(N log N).

    Points are visited in (f1, f2) order; a point joins the first front whose latest member
    does not dominate it. Fronts' latest f2 values increase with the front index, so the
    front is found by binary search.
    """
    n = f1.shape[0]
    order = np.empty(n, dtype=np.int64)
    # lexsort by (f1, f2): argsort of f2 stable, then stable argsort by f1.
    o2 = _argsort(f2)
    o1 = _argsort(f1[o2])
    for i in range(n):
        order[i] = o2[o1[i]]
    rank = np.empty(n, dtype=np.int64)
    last1 = np.empty(n, dtype=np.float64)
    last2 = np.empty(n, dtype=np.float64)
    nfronts = 0
    for t in range(n):
        i = order[t]
        a = f1[i]
        b = f2[i]
        lo = 0
        hi = nfronts
        while lo < hi:
            mid = (lo + hi) // 2
            # Does front `mid` dominate (a, b)? Its latest member has f1 <= a.
            if last2[mid] < b or (last2[mid] == b and last1[mid] < a):
                lo = mid + 1
            else:
                hi = mid
        rank[i] = lo
        last1[lo] = a
        last2[lo] = b
        if lo == nfronts:
            nfronts += 1
    return rank


@inner
def _crowding_distance(f1, f2, rank):
    """NSGA-II crowding distance within each front (boundary points get inf)."""
    n = f1.shape[0]
    dist = np.empty(n, dtype=np.float64)
    dist[:] = 0.0
    if n == 0:
        return dist
    nf = _max_rank(rank) + 1
    for obj in range(2):
        f = f1 if obj == 0 else f2
        # Sort by (rank, f) so each front is a contiguous sorted run: one sort of a key that
        # is the rank plus f scaled into [0, 0.5].
        lo = f[0]
        hi = f[0]
        for i in range(1, n):  # numpy's min / max: a NaN wins
            v = f[i]
            if lo == lo and not v >= lo:
                lo = v
            if hi == hi and not v <= hi:
                hi = v
        span = hi - lo
        key = np.empty(n, dtype=np.float64)
        for i in range(n):
            key[i] = rank[i] + (0.5 * (f[i] - lo) / span if span > 0.0 else 0.0)
        order = _argsort(key)
        start = 0
        for r in range(nf):
            end = start
            while end < n and rank[order[end]] == r:
                end += 1
            if end > start:
                lo = f[order[start]]
                hi = f[order[end - 1]]
                dist[order[start]] = np.inf
                dist[order[end - 1]] = np.inf
                span = hi - lo
                if span > 0.0:
                    for q in range(start + 1, end - 1):
                        dist[order[q]] += (f[order[q + 1]] - f[order[q - 1]]) / span
            start = end
    return dist


@jit
def survive(f1, f2, hashes, count, protect_size=-1.0):
    """Return the indices of the ``count`` best points (see :func:`survive_ranked`)."""
    keep, _, _ = _survive_ranked(f1, f2, hashes, count, protect_size)
    return keep


@inner
def _survive_ranked(f1, f2, hashes, count, protect_size):
    """Return the indices of the ``count`` best points: by front, then crowding distance (descending).

    Exact duplicates (same hash and objectives) after their first copy are ranked behind
    everything else so clones do not crowd out diversity (pymoo removes them). Returns the
    kept indices and their (duplicate-adjusted) ranks and crowding distances. The best point
    with ``f2 <= protect_size`` is always kept.
    """
    n = f1.shape[0]
    rank = _nondominated_rank(f1, f2)
    crowd = _crowding_distance(f1, f2, rank)
    # Duplicates: equal hashes (one sort) with equal objectives; a row equal to its
    # predecessor in hash order is a clone. O(n log n) even for a converged population.
    # One sort specialisation for the module (float64 mergesort) compiles seconds faster than
    # three; hashes that differ but round to one float64 (about 2**-53) only miss a clone.
    o = _argsort(hashes.astype(np.float64))
    dup = np.empty(n, dtype=np.bool_)
    dup[:] = False
    for t in range(1, n):
        i = o[t]
        k = o[t - 1]
        if hashes[k] == hashes[i] and f1[k] == f1[i] and f2[k] == f2[i]:
            dup[i] = True
    big = _max_rank(rank) + 1 if n > 0 else 1
    key = np.empty(n, dtype=np.float64)
    for i in range(n):
        r = rank[i] + (big if dup[i] else 0)
        c = crowd[i]
        # Lexicographic (rank asc, crowd desc) as one float: crowding is in [0, 2] or inf.
        key[i] = r * 8.0 + (0.0 if c == np.inf else 4.0 - (3.9 if 3.9 < c else c))
    # Elitism for the allocation optimize returns: the best point with f2 <= protect_size
    # (cluster size within the real nodes) always survives, even when the first front is
    # larger than ``count`` and crowding would thin it out.
    best = -1
    for i in range(n):
        if f2[i] <= protect_size and (best < 0 or f1[i] < f1[best]):
            best = i
    if best >= 0:
        key[best] = -1.0
    order = _argsort(key)
    keep = order[:count].copy()
    eff = np.empty(keep.shape[0], dtype=np.int64)
    for t in range(keep.shape[0]):
        eff[t] = rank[keep[t]] + (big if dup[keep[t]] else 0)
    # Ranks and crowding of the survivors feed the next tournament (as in pymoo's NSGA-II).
    return keep, eff, crowd[keep]


@inner
def _tournament(rank, crowd, key, count):
    """Binary tournaments: ``count`` pairs of parent indices (rank, then crowding wins)."""
    n = rank.shape[0]
    out = np.empty((count, 2), dtype=np.int64)
    st = np.empty(2, dtype=np.uint64)
    st[0] = key
    st[1] = np.uint64(0)
    for c in range(count):
        for s in range(2):
            a = rand_int(st, n)
            b = rand_int(st, n)
            if rank[a] < rank[b] or (rank[a] == rank[b] and crowd[a] > crowd[b]):
                out[c, s] = a
            elif rank[b] < rank[a] or crowd[b] > crowd[a]:
                out[c, s] = b
            else:
                out[c, s] = a if rand_u01(st) < 0.5 else b
    return out


@inner
def _first_front(rank):
    """Return the indices of the rank-0 entries of ``rank``, in order (``np.flatnonzero(rank == 0)``)."""
    n = 0
    for i in range(rank.shape[0]):
        if rank[i] == 0:
            n += 1
    out = np.empty(n, dtype=np.int64)
    n = 0
    for i in range(rank.shape[0]):
        if rank[i] == 0:
            out[n] = i
            n += 1
    return out


@inner
def _front_hypervolume(f1, f2, rank, ref2):
    """Return the area dominated by the rank-0 points up to the reference point ``(0, ref2)``.

    Both ``f1 <= 0`` and ``f2`` are minimised; the area is the progress measure of the early stop.
    """
    idx = _first_front(rank)
    order = _argsort(f2[idx])
    hv = 0.0
    best = 0.0
    for t in range(idx.shape[0]):
        i = idx[order[t]]
        gain = -f1[i]
        if gain > best and f2[i] < ref2:
            hv += (gain - best) * (ref2 - f2[i])
            best = gain
    return hv


# The ``_`` kernels above are link-only (see :mod:`.linkonly`): the generation loop and
# :func:`survive` link them. Python callers get these compiled twins of the same source.
nondominated_rank = jit(copy_function(_nondominated_rank.py_func, "nondominated_rank"))
crowding_distance = jit(copy_function(_crowding_distance.py_func, "crowding_distance"))
survive_ranked = jit(copy_function(_survive_ranked.py_func, "survive_ranked"))
tournament = jit(copy_function(_tournament.py_func, "tournament"))
front_hypervolume = jit(copy_function(_front_hypervolume.py_func, "front_hypervolume"))
