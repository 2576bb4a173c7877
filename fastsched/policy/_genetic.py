"""numba kernels of the Pollux genetic search (NSGA-II) on a sparse allocation encoding.

Encoding
--------
AdaptDL stores an allocation as a dense ``[jobs, 2 * nodes]`` matrix of replica counts. At
2048 GPUs with 1000 jobs that is ~1e6 cells per individual, ~1e8 per population, almost all
zero. Here an individual is a CSR list of ``(node, count)`` entries per job:

* ``off[i, j] .. off[i, j + 1]`` index the entries of job ``j`` in row ``i`` of
  ``node[i, :]`` / ``cnt[i, :]``; within a job the entries are sorted by node, counts > 0.
* A single-node job has one entry; a distributed job has one per node, and since at most one
  distributed job may use a node, distributed entries total at most ``#nodes``. So a repaired
  individual holds at most ``jobs + nodes`` entries, whatever the replica bounds are; the
  row width is that bound plus the base allocation's entries (pinned jobs keep theirs even
  if the base breaks the rule). Memory grows with placements, not with jobs x nodes.

Kernels (each a separate function, composed by :func:`make_offspring`):
fitness (:func:`job_value`, :func:`evaluate_population`), :func:`nondominated_rank`
(O(N log N), two objectives), :func:`crowding_distance`, :func:`survive`,
:func:`tournament`, crossover over jobs (:func:`crossover_job`), :func:`mutate_job`,
:func:`repair_job` and :func:`greedy_fill` (seeding).

Randomness
----------
Counter-based: every child of every generation owns a stream keyed by
``(seed, round, generation, child)`` and draws ``splitmix64(key + k * golden)`` for
``k = 0, 1, ...``. No state is shared between threads, so 1 or many threads give the same
population bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import prange, types
from numba.extending import overload

from fastsched._jit import jit, pjit

# Helpers called per job take arrays. Inlined or called as NRT functions, each array argument
# costs an atomic reference-count pair per call (~10 ns per call measured, which dominated
# small problems); these helpers never allocate, so they are compiled without the runtime.
leaf = jit(_nrt=False)

_GOLD = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0

# Fairness modes of the first objective.
SUM = 0  # plain sum of scaled speedups (AdaptDL)
POWER = 1  # J * power mean with exponent p (p != 0)
GEOMETRIC = 2  # J * geometric mean (p == 0)
POWER_SHIFTED = 3  # J * power mean of (value + FAIR_EPS), the Pollux paper's simulator's form
FAIR_EPS = 1e-3  # floor of a job's value inside a power mean with p <= 0 (0**p is inf)


# --------------------------------------------------------------------------------------
# Counter-based random numbers
# --------------------------------------------------------------------------------------
@jit(inline="always")
def mix64(x):
    """splitmix64 finaliser: a bijective avalanche of a uint64."""
    x = x ^ (x >> _S30)
    x = x * _M1
    x = x ^ (x >> _S27)
    x = x * _M2
    return x ^ (x >> _S31)


@jit
def stream_key(seed, a, b, c):
    """Key of the stream ``(seed, a, b, c)`` (all non-negative ints)."""
    k = mix64(np.uint64(seed) + _GOLD)
    k = mix64(k ^ (np.uint64(a) * _M1 + _GOLD))
    k = mix64(k ^ (np.uint64(b) * _M2 + _GOLD))
    return mix64(k ^ (np.uint64(c) * _GOLD + _M1))


@leaf
def rand_u01(st):
    """Next uniform float in [0, 1) of stream ``st = [key, counter]`` (uint64[2])."""
    x = mix64(st[0] + st[1] * _GOLD)
    st[1] += np.uint64(1)
    return float(x >> _S11) * _INV53


@leaf
def rand_int(st, n):
    """Next uniform int in ``[0, n)`` (``n >= 1``)."""
    k = np.int64(rand_u01(st) * n)
    return k if k < n else n - 1


# --------------------------------------------------------------------------------------
# Fitness
# --------------------------------------------------------------------------------------
def penalty_of(penalty, j):
    """Restart penalty of job ``j``: ``penalty`` is one float for all jobs or a float64[J]."""
    if isinstance(penalty, np.ndarray):
        return penalty[j]
    return penalty


@overload(penalty_of, jit_options={"cache": True})
def _penalty_of_impl(penalty, j):
    # Dispatch on the type at compile time: the scalar form (AdaptDL's constant penalty)
    # compiles to exactly the code it had before; a per-job array (the Pollux paper's
    # age/restart-dependent factor) is a separate specialisation of every kernel.
    if isinstance(penalty, types.Array):
        return lambda penalty, j: penalty[j]
    return lambda penalty, j: penalty


@leaf
def job_value(table, j, nn, reps, scale_j, changed, penalty):
    """Scaled speedup of job ``j`` with ``reps`` replicas on ``nn`` nodes.

    ``table[j, k, r]`` holds the speedup of ``r`` replicas on ``k`` nodes, the node axis
    clipped at its last index (for goodput-backed speedups only single/multi matters).
    ``penalty`` (one float, or float64[J] per job) is the fraction lost when ``changed``.
    """
    if reps <= 0:
        return 0.0
    kmax = table.shape[1] - 1
    k = nn if nn < kmax else kmax
    v = table[j, k, reps] * scale_j
    if changed:
        v *= 1.0 - penalty_of(penalty, j)
    return v


@jit(inline="always")
def fair_term(v, mode, p):
    """Contribution of one job's value to the aggregated first objective."""
    if mode == SUM:
        return v
    if mode == POWER_SHIFTED:
        return (v + FAIR_EPS) ** p
    w = v if v > FAIR_EPS else FAIR_EPS
    if mode == GEOMETRIC:
        return np.log(w)
    return w**p


@jit(inline="always")
def fair_total(acc, njobs, mode, p):
    """First objective (higher is better) from the accumulated terms."""
    if mode == SUM or njobs == 0:
        return acc
    if mode == GEOMETRIC:
        return njobs * np.exp(acc / njobs)
    return njobs * (acc / njobs) ** (1.0 / p)


@leaf
def differs_from_base(nodes, cnts, start, n, base_off, base_node, base_cnt, j):
    """Whether a job's entries ``nodes/cnts[start:start+n]`` differ from its base entries."""
    b0 = base_off[j]
    if base_off[j + 1] - b0 != n:
        return True
    for i in range(n):
        if nodes[start + i] != base_node[b0 + i] or cnts[start + i] != base_cnt[b0 + i]:
            return True
    return False


@jit
def evaluate_row(off, node, cnt, i, table, scale, base_off, base_node, base_cnt, penalty, mode, p):
    """Objectives of row ``i``: (first objective, cluster size = 1 + highest node used)."""
    njobs = off.shape[1] - 1
    acc = 0.0
    size = 0
    for j in range(njobs):
        s = off[i, j]
        e = off[i, j + 1]
        reps = 0
        for q in range(s, e):
            reps += cnt[i, q]
            if node[i, q] + 1 > size:
                size = node[i, q] + 1
        changed = differs_from_base(node[i], cnt[i], s, e - s, base_off, base_node, base_cnt, j)
        v = job_value(table, j, e - s, reps, scale[j], changed, penalty)
        acc += fair_term(v, mode, p)
    return fair_total(acc, njobs, mode, p), size


@pjit
def evaluate_population(off, node, cnt, table, scale, base_off, base_node, base_cnt, penalty, mode, p, obj, size):
    """Fitness of every row (prange over the population): ``obj`` (max), ``size`` (min)."""
    for i in prange(off.shape[0]):
        o, s = evaluate_row(off, node, cnt, i, table, scale, base_off, base_node, base_cnt, penalty, mode, p)
        obj[i] = o
        size[i] = s


# --------------------------------------------------------------------------------------
# Selection: non-dominated sort, crowding distance, survival, tournament
# --------------------------------------------------------------------------------------
@jit
def nondominated_rank(f1, f2):
    """Front index of each point (minimising both objectives), O(N log N).

    Points are visited in (f1, f2) order; a point joins the first front whose latest member
    does not dominate it. Fronts' latest f2 values increase with the front index, so the
    front is found by binary search.
    """
    n = f1.shape[0]
    order = np.empty(n, dtype=np.int64)
    # lexsort by (f1, f2): argsort of f2 stable, then stable argsort by f1.
    o2 = np.argsort(f2, kind="mergesort")
    o1 = np.argsort(f1[o2], kind="mergesort")
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


@jit
def crowding_distance(f1, f2, rank):
    """NSGA-II crowding distance within each front (boundary points get inf)."""
    n = f1.shape[0]
    dist = np.zeros(n, dtype=np.float64)
    if n == 0:
        return dist
    nf = rank.max() + 1
    for obj in range(2):
        f = f1 if obj == 0 else f2
        # Sort by (rank, f) so each front is a contiguous sorted run: one sort of a key that
        # is the rank plus f scaled into [0, 0.5].
        lo = f.min()
        span = f.max() - lo
        key = np.empty(n, dtype=np.float64)
        for i in range(n):
            key[i] = rank[i] + (0.5 * (f[i] - lo) / span if span > 0.0 else 0.0)
        order = np.argsort(key)
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
    """Indices of the ``count`` best points (see :func:`survive_ranked`)."""
    keep, _, _ = survive_ranked(f1, f2, hashes, count, protect_size)
    return keep


@jit
def survive_ranked(f1, f2, hashes, count, protect_size):
    """Indices of the ``count`` best points: by front, then crowding distance (descending).

    Exact duplicates (same hash and objectives) after their first copy are ranked behind
    everything else so clones do not crowd out diversity (pymoo removes them). Returns the
    kept indices and their (duplicate-adjusted) ranks and crowding distances. The best point
    with ``f2 <= protect_size`` is always kept.
    """
    n = f1.shape[0]
    rank = nondominated_rank(f1, f2)
    crowd = crowding_distance(f1, f2, rank)
    # Duplicates: equal hashes (one sort) with equal objectives; a row equal to its
    # predecessor in hash order is a clone. O(n log n) even for a converged population.
    o = np.argsort(hashes)
    dup = np.zeros(n, dtype=np.bool_)
    for t in range(1, n):
        i = o[t]
        k = o[t - 1]
        if hashes[k] == hashes[i] and f1[k] == f1[i] and f2[k] == f2[i]:
            dup[i] = True
    big = rank.max() + 1
    key = np.empty(n, dtype=np.float64)
    for i in range(n):
        r = rank[i] + (big if dup[i] else 0)
        c = crowd[i]
        # Lexicographic (rank asc, crowd desc) as one float: crowding is in [0, 2] or inf.
        key[i] = r * 8.0 + (0.0 if c == np.inf else 4.0 - min(c, 3.9))
    # Elitism for the allocation optimize returns: the best point with f2 <= protect_size
    # (cluster size within the real nodes) always survives, even when the first front is
    # larger than ``count`` and crowding would thin it out.
    best = -1
    for i in range(n):
        if f2[i] <= protect_size and (best < 0 or f1[i] < f1[best]):
            best = i
    if best >= 0:
        key[best] = -1.0
    order = np.argsort(key, kind="mergesort")
    keep = order[:count].copy()
    eff = np.empty(keep.shape[0], dtype=np.int64)
    for t in range(keep.shape[0]):
        eff[t] = rank[keep[t]] + (big if dup[keep[t]] else 0)
    # Ranks and crowding of the survivors feed the next tournament (as in pymoo's NSGA-II).
    return keep, eff, crowd[keep]


@jit
def tournament(rank, crowd, key, count):
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


# --------------------------------------------------------------------------------------
# Variation: crossover, mutation, repair (all per job, on a small scratch list)
# --------------------------------------------------------------------------------------
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
def _find_room(st, job_res, node_res, used, j, limit, num_nodes, want, cap_default):
    """A random node with room for ``want`` replicas of job ``j`` (-1 after a few misses)."""
    for _ in range(6):
        n = _random_node(st, limit, num_nodes)
        if node_capacity(job_res, node_res, used, j, n, cap_default) >= want:
            return n
    return -1


@leaf
def mutate_job(
    st,
    j,
    tn,
    tc,
    k,
    limit,
    job_res,
    node_res,
    used,
    max_rep,
    min_rep,
    base_off,
    base_node,
    base_cnt,
):
    """Apply one random move to job ``j``'s scratch entries; returns the new entry count.

    Moves: drop the job, revert to its base placement, grow by one replica (or start it),
    shrink by one, move it whole to one node with room, spread one replica to a new node,
    a random single-node placement. Moves see the resources used by the jobs before ``j``
    in this child, so most land feasible; :func:`repair_job` fixes the rest.
    """
    num_nodes = node_res.shape[0]
    mx = max_rep[j]
    lo = min_rep[j] if min_rep[j] > 1 else 1
    reps = 0
    for q in range(k):
        reps += tc[q]
    op = rand_int(st, 7)
    if op == 0:
        return 0
    if op == 1:
        k = 0
        for q in range(base_off[j], base_off[j + 1]):
            tn[k] = base_node[q]
            tc[k] = base_cnt[q]
            k += 1
        return k
    if op == 2:  # grow
        if k == 0:
            n = _find_room(st, job_res, node_res, used, j, limit, num_nodes, lo, mx)
            if n >= 0:
                tn[0] = n
                tc[0] = lo
                return 1
            return 0
        q = rand_int(st, k)
        if node_capacity(job_res, node_res, used, j, tn[q], mx) > tc[q]:
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
        n = _find_room(st, job_res, node_res, used, j, limit, num_nodes, 1, mx)
        if n < 0:
            return k
        cap = node_capacity(job_res, node_res, used, j, n, mx)
        tn[0] = n
        tc[0] = want if want < cap else cap
        return 1
    if op == 5:  # spread one replica to a new node
        n = _find_room(st, job_res, node_res, used, j, limit, num_nodes, 1, mx)
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
def repair_job(j, tn, tc, k, pinned, used, owner, job_res, node_res, max_rep, min_rep, cap_default):
    """Make job ``j``'s scratch entries feasible given earlier jobs, then commit them.

    In order: merge duplicate nodes (entries sorted by node), clip to ``max_replicas``
    (dropping replicas from the highest nodes, which also shrinks the cluster size), clip each
    entry to the node's free resources, drop nodes already used by another distributed job
    when this job is distributed, zero the job if it ends below ``min_replicas``. A pinned job
    is committed as given. Updates ``used`` and ``owner``; returns the entry count.
    """
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
        while total > max_rep[j] and a >= 0:
            cut = total - max_rep[j]
            if cut > tc[a]:
                cut = tc[a]
            tc[a] -= cut
            total -= cut
            a -= 1
        # Node resources.
        m = 0
        for a in range(k):
            c = tc[a]
            n = tn[a]
            fits = True
            for r in range(job_res.shape[1]):
                if used[n, r] + c * job_res[j, r] > node_res[n, r]:
                    fits = False
            if not fits:  # integer divisions only when clipping is needed
                cap = node_capacity(job_res, node_res, used, j, n, cap_default)
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
        if total < min_rep[j]:
            k = 0
    for a in range(k):
        for r in range(job_res.shape[1]):
            used[tn[a], r] += tc[a] * job_res[j, r]
        if k > 1:
            owner[tn[a]] = True
    return k


@leaf
def job_hash(j, tn, tc, start, k):
    """Hash of one job's entries; a row's hash is the (wrapping) sum over its jobs, so a
    child's hash is its parent's plus the changes."""
    if k == 0:
        return np.uint64(0)
    # One multiply per entry, one avalanche per job: enough to tell rows apart.
    h = np.uint64(j) * _M1 + _GOLD
    for a in range(start, start + k):
        h = (h ^ (np.uint64(tn[a]) * _M2 + np.uint64(tc[a]))) * _GOLD
    return mix64(h)


@leaf
def _next_event(st, j, pm):
    """Index of the next mutated job after ``j`` (geometric skip: one draw per mutation
    instead of one per job)."""
    if pm <= 0.0:
        return np.int64(1) << 62
    if pm >= 1.0:
        return j + 1
    u = rand_u01(st)
    return j + 1 + np.int64(np.log(1.0 - u) / np.log(1.0 - pm))


@jit
def _build_row(
    st,
    src_off,
    src_node,
    src_cnt,
    pa,
    pm,
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    table,
    scale,
    penalty,
    fmode,
    p,
    dst_off,
    dst_node,
    dst_cnt,
    row,
    tn,
    tc,
):
    """Rebuild row ``pa`` of the source into ``row``, job by job: copy, optional mutation
    (probability ``pm`` per job), repair, score. Returns (acc, objective, size, hash)."""
    njobs = job_res.shape[0]
    num_nodes = node_res.shape[0]
    used = np.zeros(node_res.shape, dtype=np.int64)
    owner = np.zeros(num_nodes, dtype=np.bool_)
    cap_default = np.int64(1 << 40)
    pos = 0
    acc = 0.0
    size = 0
    h = np.uint64(0)
    next_mut = _next_event(st, -1, pm)
    for j in range(njobs):
        dst_off[row, j] = pos
        if pinned[j]:
            k = 0
            for q in range(base_off[j], base_off[j + 1]):
                tn[k] = base_node[q]
                tc[k] = base_cnt[q]
                k += 1
        else:
            k = crossover_job(src_off, src_node, src_cnt, pa, j, num_nodes, tn, tc)
            if j == next_mut:
                next_mut = _next_event(st, j, pm)
                k = mutate_job(
                    st,
                    j,
                    tn,
                    tc,
                    k,
                    num_nodes,
                    job_res,
                    node_res,
                    used,
                    max_rep,
                    min_rep,
                    base_off,
                    base_node,
                    base_cnt,
                )
        k = repair_job(
            j,
            tn,
            tc,
            k,
            pinned[j],
            used,
            owner,
            job_res,
            node_res,
            max_rep,
            min_rep,
            cap_default,
        )
        reps = 0
        for a in range(k):
            dst_node[row, pos + a] = tn[a]
            dst_cnt[row, pos + a] = tc[a]
            reps += tc[a]
            if tn[a] + 1 > size:
                size = tn[a] + 1
        h += job_hash(j, tn, tc, 0, k)
        changed = differs_from_base(dst_node[row], dst_cnt[row], pos, k, base_off, base_node, base_cnt, j)
        acc += fair_term(job_value(table, j, k, reps, scale[j], changed, penalty), fmode, p)
        pos += k
    dst_off[row, njobs] = pos
    return acc, fair_total(acc, njobs, fmode, p), size, h


@leaf
def _same_entries(an, ac, s, k, tn, tc, k2):
    if k != k2:
        return False
    for a in range(k):
        if an[s + a] != tn[a] or ac[s + a] != tc[a]:
            return False
    return True


@leaf
def _term_of(node, cnt, s, k, j, table, scale, penalty, fmode, p, base_off, base_node, base_cnt):
    reps = 0
    for a in range(s, s + k):
        reps += cnt[a]
    changed = differs_from_base(node, cnt, s, k, base_off, base_node, base_cnt, j)
    return fair_term(job_value(table, j, k, reps, scale[j], changed, penalty), fmode, p)


@leaf
def _same_entries_2d(node, cnt, row, s, k, tn, tc, k2):
    if k != k2:
        return False
    for a in range(k):
        if node[row, s + a] != tn[a] or cnt[row, s + a] != tc[a]:
            return False
    return True


@leaf
def _term_of_2d(node, cnt, row, s, k, j, table, scale, penalty, fmode, p, base_off, base_node, base_cnt):
    reps = 0
    for a in range(s, s + k):
        reps += cnt[row, a]
    changed = True
    b0 = base_off[j]
    if base_off[j + 1] - b0 == k:
        changed = False
        for a in range(k):
            if node[row, s + a] != base_node[b0 + a] or cnt[row, s + a] != base_cnt[b0 + a]:
                changed = True
                break
    return fair_term(job_value(table, j, k, reps, scale[j], changed, penalty), fmode, p)


@leaf
def job_hash_2d(j, node, cnt, row, start, k):
    """:func:`job_hash` of entries ``start .. start + k`` of row ``row``."""
    if k == 0:
        return np.uint64(0)
    h = np.uint64(j) * _M1 + _GOLD
    for a in range(start, start + k):
        h = (h ^ (np.uint64(node[row, a]) * _M2 + np.uint64(cnt[row, a]))) * _GOLD
    return mix64(h)


@leaf
def _children(
    c0,
    c1,
    key,
    src_off,
    src_node,
    src_cnt,
    src_acc,
    src_size,
    src_hash,
    parents,
    pm,
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    table,
    scale,
    penalty,
    fmode,
    p,
    dst_off,
    dst_node,
    dst_cnt,
    dst_acc,
    dst_obj,
    dst_size,
    dst_hash,
    dst_start,
    st,
    tn,
    tc,
    used,
    owner,
):
    """Children ``c0 .. c1`` (see :func:`make_offspring`); each is built as a delta of
    its first parent ``pa``.

    Jobs before ``point`` come from ``pa``, the rest from ``pb``; nodes ``>= limit`` are
    dropped; mutated jobs are drawn by geometric skips. A job whose entries equal ``pa``'s
    and still fit (resources and distributed owners given the child's earlier jobs) is
    what repair would return: it is committed without repair or rescoring. Other jobs are
    repaired, and the objective and hash are updated by the difference.
    """
    # One call per chunk of children (the child builder is written inline): a call per
    # child would pass ~20 arrays, with their reference counting, per child.
    # Compiled without the runtime (no allocation here): array views and helper calls
    # then cost no reference counting. ``st, tn, tc, used, owner`` are this chunk's scratch.
    for c in range(c0, c1):
        st[0] = mix64(key ^ (np.uint64(c) * _GOLD + _M2))
        st[1] = np.uint64(0)
        pa = parents[c, 0]
        pb = parents[c, 1]
        njobs = job_res.shape[0]
        point = rand_int(st, njobs + 1)
        sa = src_size[pa]
        sb = src_size[pb]
        lo = sa if sa < sb else sb
        hi = sa if sa > sb else sb
        limit = lo + rand_int(st, hi - lo + 1)
        row = dst_start + c
        njobs = job_res.shape[0]
        nres = job_res.shape[1]
        used[:, :] = 0
        owner[:] = False
        cap_default = np.int64(1 << 40)
        acc = src_acc[pa]
        h = src_hash[pa]
        pos = 0
        size = 0
        next_mut = _next_event(st, -1, pm)
        for j in range(njobs):
            dst_off[row, j] = pos
            s = src_off[pa, j]
            ka = src_off[pa, j + 1] - s
            fast = True
            mutate = False
            if not pinned[j]:
                if j == next_mut:
                    next_mut = _next_event(st, j, pm)
                    mutate = True
                    fast = False
                else:
                    # Without a mutation the job is pa's (or pb's) entries below the size limit;
                    # check in place whether that equals pa's entries, which then still fit?
                    if j < point:
                        for a in range(ka):
                            if src_node[pa, s + a] >= limit:
                                fast = False
                                break
                    else:
                        sp = src_off[pb, j]
                        if src_off[pb, j + 1] - sp != ka:
                            fast = False
                        else:
                            for a in range(ka):
                                n = src_node[pb, sp + a]
                                if n >= limit or n != src_node[pa, s + a] or src_cnt[pb, sp + a] != src_cnt[pa, s + a]:
                                    fast = False
                                    break
                if fast:
                    # Plain 2-D indexing: per-entry row views cost reference counting.
                    for a in range(ka):
                        n = src_node[pa, s + a]
                        if ka > 1 and owner[n]:
                            fast = False
                            break
                        for r in range(nres):
                            need = job_res[j, r]
                            if need > 0 and used[n, r] + src_cnt[pa, s + a] * need > node_res[n, r]:
                                fast = False
                        if not fast:
                            break
            if fast:
                # Same as pa and feasible as it is: copy and commit.
                for a in range(ka):
                    n = src_node[pa, s + a]
                    c = src_cnt[pa, s + a]
                    dst_node[row, pos + a] = n
                    dst_cnt[row, pos + a] = c
                    for r in range(nres):
                        used[n, r] += c * job_res[j, r]
                    if ka > 1:
                        owner[n] = True
                    if n + 1 > size:
                        size = n + 1
                pos += ka
                continue
            par = pa if j < point else pb
            k = crossover_job(src_off, src_node, src_cnt, par, j, limit, tn, tc)
            if mutate:
                k = mutate_job(
                    st,
                    j,
                    tn,
                    tc,
                    k,
                    limit,
                    job_res,
                    node_res,
                    used,
                    max_rep,
                    min_rep,
                    base_off,
                    base_node,
                    base_cnt,
                )
            k = repair_job(j, tn, tc, k, False, used, owner, job_res, node_res, max_rep, min_rep, cap_default)
            for a in range(k):
                dst_node[row, pos + a] = tn[a]
                dst_cnt[row, pos + a] = tc[a]
                if tn[a] + 1 > size:
                    size = tn[a] + 1
            if not _same_entries_2d(src_node, src_cnt, pa, s, ka, tn, tc, k):
                new_term = _term_of(
                    tn,
                    tc,
                    0,
                    k,
                    j,
                    table,
                    scale,
                    penalty,
                    fmode,
                    p,
                    base_off,
                    base_node,
                    base_cnt,
                )
                old_term = _term_of_2d(
                    src_node, src_cnt, pa, s, ka, j, table, scale, penalty, fmode, p, base_off, base_node, base_cnt
                )
                acc += new_term - old_term
                h += job_hash(j, tn, tc, 0, k) - job_hash_2d(j, src_node, src_cnt, pa, s, ka)
            pos += k
        dst_off[row, njobs] = pos
        dst_off[row, njobs] = pos
        dst_acc[row] = acc
        dst_obj[row] = fair_total(acc, njobs, fmode, p)
        dst_size[row] = size
        dst_hash[row] = h


@pjit
def make_offspring(
    key,
    src_off,
    src_node,
    src_cnt,
    src_acc,
    src_size,
    src_hash,
    parents,
    pm,
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    table,
    scale,
    penalty,
    fmode,
    p,
    scratch,
    dst_off,
    dst_node,
    dst_cnt,
    dst_acc,
    dst_obj,
    dst_size,
    dst_hash,
    dst_start,
    work,
):
    """Children ``c`` of parent pairs ``parents[c]`` into rows ``dst_start + c`` (prange
    over chunks of children).

    Per child: a crossover point over jobs and a cluster-size limit uniform between the
    parents' sizes (AdaptDL's crossover), then job by job: copy from the chosen parent,
    mutate with probability ``pm``, repair, score (see :func:`_children`). Each child's
    stream is keyed by ``(key, c)``, so neither the thread count nor the chunking changes
    the result. ``work`` is :func:`make_work` scratch, reused across generations.
    """
    count = parents.shape[0]
    chunks = min(count, 16)
    for t in prange(chunks):
        _children(
            t * count // chunks,
            (t + 1) * count // chunks,
            key,
            src_off,
            src_node,
            src_cnt,
            src_acc,
            src_size,
            src_hash,
            parents,
            pm,
            job_res,
            node_res,
            max_rep,
            min_rep,
            pinned,
            base_off,
            base_node,
            base_cnt,
            table,
            scale,
            penalty,
            fmode,
            p,
            dst_off,
            dst_node,
            dst_cnt,
            dst_acc,
            dst_obj,
            dst_size,
            dst_hash,
            dst_start,
            work[0][t],
            work[1][t],
            work[2][t],
            work[3][t],
            work[4][t],
        )


@jit
def make_offspring_serial(
    key,
    src_off,
    src_node,
    src_cnt,
    src_acc,
    src_size,
    src_hash,
    parents,
    pm,
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    table,
    scale,
    penalty,
    fmode,
    p,
    scratch,
    dst_off,
    dst_node,
    dst_cnt,
    dst_acc,
    dst_obj,
    dst_size,
    dst_hash,
    dst_start,
    work,
):
    """:func:`make_offspring` in the calling thread (identical results, no thread
    synchronisation: better for small problems or busy machines)."""
    _children(
        0,
        parents.shape[0],
        key,
        src_off,
        src_node,
        src_cnt,
        src_acc,
        src_size,
        src_hash,
        parents,
        pm,
        job_res,
        node_res,
        max_rep,
        min_rep,
        pinned,
        base_off,
        base_node,
        base_cnt,
        table,
        scale,
        penalty,
        fmode,
        p,
        dst_off,
        dst_node,
        dst_cnt,
        dst_acc,
        dst_obj,
        dst_size,
        dst_hash,
        dst_start,
        work[0][0],
        work[1][0],
        work[2][0],
        work[3][0],
        work[4][0],
    )


@pjit
def repair_population(
    key,
    src_off,
    src_node,
    src_cnt,
    rows,
    pm,
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    table,
    scale,
    penalty,
    fmode,
    p,
    scratch,
    dst_off,
    dst_node,
    dst_cnt,
    dst_acc,
    dst_obj,
    dst_size,
    dst_hash,
    dst_start,
):
    """Repair (and mutate each job with probability ``pm``) rows ``rows`` of a source
    population into rows ``dst_start + i``, scoring them (prange)."""
    for i in prange(rows.shape[0]):
        st = np.empty(2, dtype=np.uint64)
        st[0] = mix64(key ^ (np.uint64(i) * _GOLD + _M1))
        st[1] = np.uint64(0)
        tn = np.empty(scratch, dtype=np.int32)
        tc = np.empty(scratch, dtype=np.int32)
        row = dst_start + i
        a, o, s, h = _build_row(
            st,
            src_off,
            src_node,
            src_cnt,
            rows[i],
            pm,
            job_res,
            node_res,
            max_rep,
            min_rep,
            pinned,
            base_off,
            base_node,
            base_cnt,
            table,
            scale,
            penalty,
            fmode,
            p,
            dst_off,
            dst_node,
            dst_cnt,
            row,
            tn,
            tc,
        )
        dst_acc[row] = a
        dst_obj[row] = o
        dst_size[row] = s
        dst_hash[row] = h


@jit
def make_work(count, scratch, num_nodes, nres):
    """Per-child scratch of :func:`make_offspring`: streams, entry lists, used resources,
    distributed-node owners."""
    return (
        np.zeros((count, 2), dtype=np.uint64),
        np.zeros((count, scratch), dtype=np.int32),
        np.zeros((count, scratch), dtype=np.int32),
        np.zeros((count, num_nodes, nres), dtype=np.int64),
        np.zeros((count, num_nodes), dtype=np.bool_),
    )


@leaf
def gather_rows(src_off, src_node, src_cnt, rows, dst_off, dst_node, dst_cnt):
    """Copy rows ``rows`` of one population into rows ``0..len(rows)`` of another."""
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(src_off.shape[1]):
            dst_off[i, j] = src_off[r, j]
        for q in range(src_off[r, src_off.shape[1] - 1]):
            dst_node[i, q] = src_node[r, q]
            dst_cnt[i, q] = src_cnt[r, q]


@leaf
def _gather_all(
    a_off, a_node, a_cnt, a_acc, a_obj, a_size, a_hash, rows, b_off, b_node, b_cnt, b_acc, b_obj, b_size, b_hash
):
    gather_rows(a_off, a_node, a_cnt, rows, b_off, b_node, b_cnt)
    for i in range(rows.shape[0]):
        b_acc[i] = a_acc[rows[i]]
        b_obj[i] = a_obj[rows[i]]
        b_size[i] = a_size[rows[i]]
        b_hash[i] = a_hash[rows[i]]


@jit
def evolve(
    seed,
    round_,
    generations,
    count,
    parallel,
    pm,
    protect_size,
    a_off,
    a_node,
    a_cnt,
    a_acc,
    a_obj,
    a_size,
    a_hash,
    b_off,
    b_node,
    b_cnt,
    b_acc,
    b_obj,
    b_size,
    b_hash,
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    table,
    scale,
    penalty,
    fmode,
    p,
    scratch,
    start=-1,
):
    """Run ``generations`` NSGA-II generations on the first rows of buffer ``a``.

    The population starts with ``start`` rows (``-1``: ``count``; fewer when a small initial
    set should grow to ``count``, as pymoo does from an unpadded initial population). Each
    generation: rank and crowding of the population, binary tournaments, ``count`` children
    into the rows after the population, survival of the best ``count`` into the other
    buffer. Both buffers hold ``2 * count`` rows. Returns 0 when the final population is in
    buffer ``a``, 1 when in ``b``.
    """
    where = 0
    n = count if start < 0 else start
    work = make_work(count, scratch, node_res.shape[0], job_res.shape[1])
    f1 = -a_obj[:n]
    f2 = a_size[:n].astype(np.float64)
    rank = nondominated_rank(f1, f2)
    crowd = crowding_distance(f1, f2, rank)
    for gen in range(1, generations + 1):
        if where == 0:
            c_off, c_node, c_cnt, c_acc, c_obj, c_size, c_hash = (a_off, a_node, a_cnt, a_acc, a_obj, a_size, a_hash)
            d_off, d_node, d_cnt, d_acc, d_obj, d_size, d_hash = (b_off, b_node, b_cnt, b_acc, b_obj, b_size, b_hash)
        else:
            c_off, c_node, c_cnt, c_acc, c_obj, c_size, c_hash = (b_off, b_node, b_cnt, b_acc, b_obj, b_size, b_hash)
            d_off, d_node, d_cnt, d_acc, d_obj, d_size, d_hash = (a_off, a_node, a_cnt, a_acc, a_obj, a_size, a_hash)
        parents = tournament(rank, crowd, stream_key(seed, round_, gen, 0), count)
        key = stream_key(seed, round_, gen, 1)
        if parallel:
            make_offspring(
                key,
                c_off,
                c_node,
                c_cnt,
                c_acc,
                c_size,
                c_hash,
                parents,
                pm,
                job_res,
                node_res,
                max_rep,
                min_rep,
                pinned,
                base_off,
                base_node,
                base_cnt,
                table,
                scale,
                penalty,
                fmode,
                p,
                scratch,
                c_off,
                c_node,
                c_cnt,
                c_acc,
                c_obj,
                c_size,
                c_hash,
                n,
                work,
            )
        else:
            make_offspring_serial(
                key,
                c_off,
                c_node,
                c_cnt,
                c_acc,
                c_size,
                c_hash,
                parents,
                pm,
                job_res,
                node_res,
                max_rep,
                min_rep,
                pinned,
                base_off,
                base_node,
                base_cnt,
                table,
                scale,
                penalty,
                fmode,
                p,
                scratch,
                c_off,
                c_node,
                c_cnt,
                c_acc,
                c_obj,
                c_size,
                c_hash,
                n,
                work,
            )
        total = n + count
        keep, rank, crowd = survive_ranked(
            -c_obj[:total], c_size[:total].astype(np.float64), c_hash[:total], count, protect_size
        )
        _gather_all(
            c_off, c_node, c_cnt, c_acc, c_obj, c_size, c_hash, keep, d_off, d_node, d_cnt, d_acc, d_obj, d_size, d_hash
        )
        n = keep.shape[0]
        where = 1 - where
    return where


# --------------------------------------------------------------------------------------
# Seeding: greedy marginal-gain fill
# --------------------------------------------------------------------------------------
@jit
def _greedy_candidate(
    j,
    jn,
    jc,
    jk,
    reps,
    used,
    owner,
    limit,
    job_res,
    node_res,
    max_rep,
    min_rep,
    table,
    scale,
    penalty,
    cur_val,
):
    """Best single move that adds replicas to job ``j``: (gain, node, count)."""
    cap_default = np.int64(1 << 40)
    r = reps[j]
    k = jk[j]
    best = -np.inf
    bn = -1
    bc = 0
    if r >= max_rep[j]:
        return best, bn, bc
    if k == 0:
        want = min_rep[j] if min_rep[j] > 1 else 1
        for n in range(limit):
            if node_capacity(job_res, node_res, used, j, n, cap_default) >= want:
                v = job_value(table, j, 1, want, scale[j], True, penalty)
                return v - cur_val[j], n, want
        return best, bn, bc
    if k == 1:
        n0 = jn[j, 0]
        if node_capacity(job_res, node_res, used, j, n0, cap_default) >= 1:
            best = job_value(table, j, 1, r + 1, scale[j], True, penalty) - cur_val[j]
            bn = n0
            bc = 1
        if not owner[n0] and k + 1 <= jn.shape[1]:
            for n in range(limit):
                if n != n0 and not owner[n]:
                    if node_capacity(job_res, node_res, used, j, n, cap_default) >= 1:
                        g = job_value(table, j, 2, r + 1, scale[j], True, penalty) - cur_val[j]
                        if g > best:
                            best = g
                            bn = n
                            bc = 1
                        break
        return best, bn, bc
    # Distributed: grow on one of its nodes, else take a free unowned node.
    for q in range(k):
        if node_capacity(job_res, node_res, used, j, jn[j, q], cap_default) >= 1:
            g = job_value(table, j, k, r + 1, scale[j], True, penalty) - cur_val[j]
            return g, jn[j, q], 1
    if k + 1 <= jn.shape[1]:
        for n in range(limit):
            if not owner[n]:
                if node_capacity(job_res, node_res, used, j, n, cap_default) >= 1:
                    g = job_value(table, j, k + 1, r + 1, scale[j], True, penalty) - cur_val[j]
                    return g, n, 1
    return best, bn, bc


@jit
def greedy_fill(
    src_off,
    src_node,
    src_cnt,
    src_row,
    limit,
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    table,
    scale,
    penalty,
    width,
    dst_off,
    dst_node,
    dst_cnt,
    dst_row,
):
    """Starting from a repaired row, add replicas by best marginal gain until none helps.

    Lazy greedy: stored gains are upper bounds (resources only get scarcer), so the best
    stored gain is recomputed before it is applied. Only nodes ``< limit`` are used for new
    placements, which yields seeds of different cluster sizes. Pinned jobs are untouched.
    """
    njobs = job_res.shape[0]
    num_nodes = node_res.shape[0]
    jn = np.zeros((njobs, width), dtype=np.int32)
    jc = np.zeros((njobs, width), dtype=np.int32)
    jk = np.zeros(njobs, dtype=np.int64)
    reps = np.zeros(njobs, dtype=np.int64)
    used = np.zeros(node_res.shape, dtype=np.int64)
    owner = np.zeros(num_nodes, dtype=np.bool_)
    cur_val = np.zeros(njobs, dtype=np.float64)
    for j in range(njobs):
        s = src_off[src_row, j]
        e = src_off[src_row, j + 1]
        k = e - s
        for q in range(k):
            n = src_node[src_row, s + q]
            c = src_cnt[src_row, s + q]
            jn[j, q] = n
            jc[j, q] = c
            reps[j] += c
            for r in range(job_res.shape[1]):
                used[n, r] += c * job_res[j, r]
            if k > 1:
                owner[n] = True
        jk[j] = k
        changed = differs_from_base(src_node[src_row], src_cnt[src_row], s, k, base_off, base_node, base_cnt, j)
        cur_val[j] = job_value(table, j, k, reps[j], scale[j], changed, penalty)
    gain = np.full(njobs, -np.inf)
    cn = np.full(njobs, -1, dtype=np.int64)
    cc = np.zeros(njobs, dtype=np.int64)
    for j in range(njobs):
        if not pinned[j]:
            gain[j], cn[j], cc[j] = _greedy_candidate(
                j,
                jn,
                jc,
                jk,
                reps,
                used,
                owner,
                limit,
                job_res,
                node_res,
                max_rep,
                min_rep,
                table,
                scale,
                penalty,
                cur_val,
            )
    while True:
        j = np.argmax(gain)
        if not gain[j] > 1e-12:
            break
        g, n, c = _greedy_candidate(
            j,
            jn,
            jc,
            jk,
            reps,
            used,
            owner,
            limit,
            job_res,
            node_res,
            max_rep,
            min_rep,
            table,
            scale,
            penalty,
            cur_val,
        )
        if g < gain[j] - 1e-12:
            gain[j] = g
            cn[j] = n
            cc[j] = c
            continue
        if not g > 1e-12:
            gain[j] = -np.inf
            continue
        # Apply: add c replicas of job j on node n.
        k = jk[j]
        found = False
        for q in range(k):
            if jn[j, q] == n:
                jc[j, q] += c
                found = True
        if not found:
            q = k
            while q > 0 and jn[j, q - 1] > n:
                jn[j, q] = jn[j, q - 1]
                jc[j, q] = jc[j, q - 1]
                q -= 1
            jn[j, q] = n
            jc[j, q] = c
            k += 1
            jk[j] = k
        reps[j] += c
        for r in range(job_res.shape[1]):
            used[n, r] += c * job_res[j, r]
        if k > 1:
            for q in range(k):
                owner[jn[j, q]] = True
        cur_val[j] = job_value(table, j, k, reps[j], scale[j], True, penalty)
        gain[j], cn[j], cc[j] = _greedy_candidate(
            j,
            jn,
            jc,
            jk,
            reps,
            used,
            owner,
            limit,
            job_res,
            node_res,
            max_rep,
            min_rep,
            table,
            scale,
            penalty,
            cur_val,
        )
    pos = 0
    for j in range(njobs):
        dst_off[dst_row, j] = pos
        for q in range(jk[j]):
            dst_node[dst_row, pos] = jn[j, q]
            dst_cnt[dst_row, pos] = jc[j, q]
            pos += 1
    dst_off[dst_row, njobs] = pos


@jit
def first_fit_row(
    job_res,
    node_res,
    max_rep,
    min_rep,
    pinned,
    base_off,
    base_node,
    base_cnt,
    limit,
    dst_off,
    dst_node,
    dst_cnt,
    dst_row,
):
    """Pinned jobs as given, then each job in order gets ``max(min_replicas, 1)`` replicas
    on the first node below ``limit`` with room (the first-fit baseline)."""
    njobs = job_res.shape[0]
    used = np.zeros(node_res.shape, dtype=np.int64)
    cap_default = np.int64(1 << 40)
    for j in range(njobs):
        if pinned[j]:
            for q in range(base_off[j], base_off[j + 1]):
                for r in range(job_res.shape[1]):
                    used[base_node[q], r] += base_cnt[q] * job_res[j, r]
    pos = 0
    for j in range(njobs):
        dst_off[dst_row, j] = pos
        if pinned[j]:
            for q in range(base_off[j], base_off[j + 1]):
                dst_node[dst_row, pos] = base_node[q]
                dst_cnt[dst_row, pos] = base_cnt[q]
                pos += 1
            continue
        want = min_rep[j] if min_rep[j] > 1 else 1
        if want > max_rep[j]:
            continue
        for n in range(limit):
            if node_capacity(job_res, node_res, used, j, n, cap_default) >= want:
                dst_node[dst_row, pos] = n
                dst_cnt[dst_row, pos] = want
                pos += 1
                for r in range(job_res.shape[1]):
                    used[n, r] += want * job_res[j, r]
                break
    dst_off[dst_row, njobs] = pos


# --------------------------------------------------------------------------------------
# Cluster utilities (for the desired cluster size)
# --------------------------------------------------------------------------------------
@jit
def cluster_utilities(off, node, cnt, rows, table, job_res, node_res):
    """AdaptDL's cluster utility of each row in ``rows``.

    Per resource type: sum over jobs of (speedup / replicas) x (job's share of the resources
    of the active nodes); the utility is the best-utilised type's value.
    """
    njobs = job_res.shape[0]
    nres = job_res.shape[1]
    out = np.zeros(rows.shape[0], dtype=np.float64)
    active = np.zeros(node_res.shape[0], dtype=np.bool_)
    for t in range(rows.shape[0]):
        i = rows[t]
        active[:] = False
        for q in range(off[i, 0], off[i, njobs]):
            active[node[i, q]] = True
        total = np.zeros(nres, dtype=np.float64)
        for n in range(node_res.shape[0]):
            if active[n]:
                for r in range(nres):
                    total[r] += node_res[n, r]
        util = np.zeros(nres, dtype=np.float64)
        for j in range(njobs):
            s = off[i, j]
            e = off[i, j + 1]
            reps = 0
            for q in range(s, e):
                reps += cnt[i, q]
            if reps == 0:
                continue
            u = job_value(table, j, e - s, reps, 1.0, False, 0.0) / reps
            for r in range(nres):
                alloc = reps * job_res[j, r]
                if alloc != 0:
                    util[r] += u * alloc / total[r]
        best = util[0] if nres > 0 else 0.0
        for r in range(1, nres):
            if util[r] > best:
                best = util[r]
        out[t] = best
    return out
