"""Plain references of the policy kernels, written from AdaptDL's semantics (numpy / Python)."""

from __future__ import annotations

from collections import Counter

import numpy as np


def to_dense(off, node, cnt, row, num_nodes):
    """Sparse row → dense ``[J, num_nodes]`` replica counts."""
    J = off.shape[1] - 1
    state = np.zeros((J, num_nodes), dtype=np.int64)
    for j in range(J):
        for q in range(off[row, j], off[row, j + 1]):
            state[j, node[row, q]] += cnt[row, q]
    return state


def base_dense(prob):
    state = np.zeros((prob.num_jobs, prob.num_nodes), dtype=np.int64)
    for j in range(prob.num_jobs):
        for q in range(prob.base_off[j], prob.base_off[j + 1]):
            state[j, prob.base_node[q]] += prob.base_cnt[q]
    return state


def objectives(state, table, scale, base, penalty, mode=0, p=-1.0, eps=1e-3):
    """The GA's two objectives of a dense state: (first objective, cluster size).

    The one plain fitness reference of the tests. A job's value is its speedup table entry
    (nodes used, replicas) times its scale; a job whose row differs from ``base`` keeps
    ``1 - penalty`` of it (``penalty``: one float, or one per job). The first objective by
    fairness mode, numbered as ``fastsched.policy._ga.fitness``: 0 the sum of values
    (AdaptDL's ``Problem._evaluate``), 1 J x the power mean (exponent ``p``) of
    ``max(value, eps)``, 2 J x their geometric mean, 3 J x the power mean of ``value + eps``
    (the Pollux paper's simulator). The size is one past the highest node used.
    """
    njobs = state.shape[0]
    pen = np.broadcast_to(np.asarray(penalty, dtype=np.float64), (njobs,))
    kmax = table.shape[1] - 1
    nn = np.count_nonzero(state, axis=1)
    reps = state.sum(axis=1)
    values = np.zeros(njobs)
    for j in range(njobs):
        if reps[j] == 0:
            continue
        v = float(table[j, min(nn[j], kmax), reps[j]]) * float(scale[j])
        if np.any(state[j] != base[j]):
            v *= 1.0 - float(pen[j])
        values[j] = v
    used = np.flatnonzero(state.any(axis=0))
    size = int(used.max()) + 1 if used.size else 0
    if mode == 0 or njobs == 0:
        return float(values.sum()), size
    if mode == 2:
        return float(njobs * np.exp(np.mean(np.log(np.maximum(values, eps))))), size
    shifted = values + eps if mode == 3 else np.maximum(values, eps)
    return float(njobs * np.mean(shifted**p) ** (1.0 / p)), size


def nondominated_rank(f1, f2):
    """O(N^2) fronts by repeated peeling (minimising both)."""
    n = len(f1)
    rank = np.full(n, -1)
    remaining = set(range(n))
    r = 0
    while remaining:
        front = []
        for i in remaining:
            dominated = any(f1[k] <= f1[i] and f2[k] <= f2[i] and (f1[k] < f1[i] or f2[k] < f2[i]) for k in remaining)
            if not dominated:
                front.append(i)
        for i in front:
            rank[i] = r
            remaining.discard(i)
        r += 1
    return rank


def crowding_distance(f1, f2, rank):
    n = len(f1)
    dist = np.zeros(n)
    for r in np.unique(rank):
        idx = np.flatnonzero(rank == r)
        for f in (np.asarray(f1), np.asarray(f2)):
            order = idx[np.argsort(f[idx], kind="mergesort")]
            dist[order[0]] = np.inf
            dist[order[-1]] = np.inf
            span = f[order[-1]] - f[order[0]]
            if span > 0:
                for t in range(1, len(order) - 1):
                    dist[order[t]] += (f[order[t + 1]] - f[order[t - 1]]) / span
    return dist


def repair(state, prob):
    """Sequential repair in job order (the semantics of fastsched's repair_job, in Python)."""
    J, N2 = state.shape
    used = np.zeros_like(prob.node_res)
    owner = np.zeros(N2, dtype=bool)
    base = base_dense(prob)
    out = np.zeros_like(state)
    for j in range(J):
        if prob.pinned[j]:
            row = base[j].copy()
        else:
            row = state[j].copy()
            excess = row.sum() - prob.max_rep[j]
            for n in range(N2 - 1, -1, -1):
                if excess <= 0:
                    break
                cut = min(excess, row[n])
                row[n] -= cut
                excess -= cut
            for n in np.flatnonzero(row):
                need = prob.job_res[j]
                pos = need > 0
                cap = int(np.min(np.maximum(prob.node_res[n] - used[n], 0)[pos] // need[pos])) if pos.any() else row[n]
                row[n] = min(row[n], cap)
            if np.count_nonzero(row) > 1:
                row[owner & (row > 0)] = 0
            if row.sum() < prob.min_rep[j]:
                row[:] = 0
        used += row[:, None] * prob.job_res[j][None, :]
        if np.count_nonzero(row) > 1:
            owner |= row > 0
        out[j] = row
    return out


def cluster_utility(state, table, job_res, node_res):
    """AdaptDL Problem.get_cluster_utilities for one dense state."""
    kmax = table.shape[1] - 1
    reps = state.sum(axis=1)
    nn = np.count_nonzero(state, axis=1)
    speed = np.array([table[j, min(nn[j], kmax), reps[j]] if reps[j] else 0.0 for j in range(len(reps))])
    mask = state.sum(axis=0) > 0
    total = (mask[:, None] * node_res).sum(axis=0)
    alloc = reps[:, None] * job_res
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(alloc, alloc / total[None, :], 0.0)
        util = np.where(reps, speed / np.maximum(reps, 1), 0.0)
    return float(np.max((util[:, None] * shares).sum(axis=0))) if job_res.shape[1] else 0.0


def check_allocations(jobs, nodes, base_allocations, allocations):
    """Assert every constraint of a returned allocation; returns the list of problems."""
    bad = []
    used = Counter()
    dist = Counter()
    for key, alloc in allocations.items():
        job = jobs[key]
        for nk in alloc:
            if nk not in nodes:
                bad.append(f"{key}: unknown node {nk}")
        pinned = (not job.preemptible) and bool(base_allocations.get(key))
        if pinned:
            if Counter(alloc) != Counter(base_allocations[key]):
                bad.append(f"{key}: pinned job moved")
            continue
        if len(alloc) > job.max_replicas:
            bad.append(f"{key}: {len(alloc)} > max_replicas")
        if 0 < len(alloc) < job.min_replicas:
            bad.append(f"{key}: {len(alloc)} < min_replicas")
    for key, alloc in allocations.items():
        for nk, c in Counter(alloc).items():
            for r, v in jobs[key].resources.items():
                used[nk, r] += c * v
        if len(set(alloc)) > 1:
            for nk in set(alloc):
                dist[nk] += 1
    for (nk, r), v in used.items():
        if v > nodes[nk].resources.get(r, 0):
            # Only a problem if pinned jobs alone do not already exceed the node.
            bad.append(f"node {nk}: {r} over capacity ({v})")
    for nk, c in dist.items():
        if c > 1:
            bad.append(f"node {nk}: {c} distributed jobs")
    return bad


def allocation_value(jobs, nodes, template, base_allocations, allocations, penalty=0.1):
    """AdaptDL's first objective of an allocation dict, from the job infos alone.

    ``sum_j speedup_fn_j(nodes_j, replicas_j) * dominant_share_j * |problem nodes|``, times
    ``1 - penalty`` for jobs whose per-node placement differs from the base allocation; the
    problem nodes are the real nodes plus one template copy each (AdaptDL's placeholders).
    """
    infos = list(nodes.values()) + ([template] * len(nodes) if template is not None else [])
    rtypes = sorted(set().union(*(set(j.resources) for j in jobs.values()))) if jobs else []
    total = {r: sum(n.resources.get(r, 0) for n in infos) for r in rtypes}
    value = 0.0
    for key, job in jobs.items():
        alloc = Counter(allocations.get(key, []))
        reps = sum(alloc.values())
        if reps == 0:
            continue
        share = max(job.resources.get(r, 0) / total[r] for r in rtypes if total[r] > 0)
        v = float(np.asarray(job.speedup_fn(len(alloc), reps))) * share * len(infos)
        if alloc != Counter(base_allocations.get(key, []) or []):
            v *= 1.0 - penalty
        value += v
    return value


def fair_term(v, mode, p, eps=1e-3):
    """One job's term of the accumulated first objective (modes as in ``objectives``)."""
    if mode == 0:
        return v
    if mode == 3:
        return (v + eps) ** p
    w = max(v, eps)
    return float(np.log(w)) if mode == 2 else w**p


def fair_total(acc, njobs, mode, p):
    """First objective from the accumulated terms (modes as in ``objectives``)."""
    if mode == 0 or njobs == 0:
        return acc
    if mode == 2:
        return njobs * float(np.exp(acc / njobs))
    return njobs * (acc / njobs) ** (1.0 / p)


def relaxation_options(prob, num_real, penalty, mode, p):
    """Each free job's options of the separable relaxation, written from its definition.

    Returns ``(options, share, pinned_acc)``: ``options[j]`` lists ``(kind, replicas, term)``
    with ``term`` sign-adjusted (larger is better) and kinds 0 nothing, 1 base allocation kept,
    2 one node, 3 distributed (empty for pinned jobs); ``share[j]`` the cost of one replica
    (the largest share of a resource's free total; -1 when a requested resource has none);
    ``pinned_acc`` the pinned jobs' terms. Rooms and free totals count the real nodes only,
    after the pinned jobs.
    """
    J, N = prob.num_jobs, num_real
    K = prob.table.shape[1] - 1
    sign = -1.0 if mode in (1, 3) and p < 0 else 1.0
    pen = np.broadcast_to(np.asarray(penalty, dtype=np.float64), (J,))
    base = base_dense(prob)[:, :N]
    used = np.zeros((N, prob.job_res.shape[1]), dtype=np.int64)
    owned = np.zeros(N, dtype=bool)
    pinned_acc = 0.0
    for j in np.flatnonzero(prob.pinned):
        used += base[j][:, None] * prob.job_res[j][None, :]
        nn, r = int(np.count_nonzero(base[j])), int(base[j].sum())
        v = float(prob.table[j, min(nn, K), r]) * float(prob.scale[j]) if r else 0.0
        pinned_acc += fair_term(v, mode, p)
        if nn > 1:
            owned |= base[j] > 0
    free = (prob.node_res[:N] - used).sum(axis=0)

    def room(j, n, cap):
        need = prob.job_res[j]
        pos = need > 0
        return min(cap, int(np.min(np.maximum(prob.node_res[n] - used[n], 0)[pos] // need[pos])))

    options, share = [], np.zeros(J)
    for j in range(J):
        opts = []
        options.append(opts)
        if prob.pinned[j]:
            continue
        need = prob.job_res[j]
        share[j] = -1.0 if np.any((need > 0) & (free <= 0)) else max(need[t] / free[t] for t in np.flatnonzero(need))

        def term(k, r, changed, j=j):
            v = float(prob.table[j, min(k, K), r]) * float(prob.scale[j])
            return sign * fair_term(v * (1.0 - pen[j]) if changed else v, mode, p)

        opts.append((0, 0, sign * fair_term(0.0, mode, p)))
        mx, lo = int(prob.max_rep[j]), max(int(prob.min_rep[j]), 1)
        if share[j] < 0 or mx < lo:
            continue
        rooms = [room(j, n, mx) for n in range(N)]
        for r in range(lo, min(mx, max(rooms)) + 1):
            opts.append((2, r, term(1, r, True)))
        spread = sorted((rooms[n] for n in range(N) if not owned[n] and rooms[n] > 0), reverse=True)
        reach = np.cumsum(spread)
        for r in range(max(lo, 2), mx + 1):
            if len(spread) < 2 or reach[-1] < r:
                break
            k = max(int(np.searchsorted(reach, r)) + 1, 2)
            if r >= k:
                opts.append((3, r, term(k, r, True)))
        nodes = np.flatnonzero(base[j])
        rb = int(base[j].sum())
        fits = all(room(j, n, mx) >= base[j, n] and (len(nodes) < 2 or not owned[n]) for n in nodes)
        if len(nodes) and fits and lo <= rb <= mx:
            opts.append((1, rb, term(len(nodes), rb, False)))
    return options, share, pinned_acc


def relaxation_lp(prob, num_real, penalty, mode, p):
    """Optimum of the relaxation's linear program (scipy's HiGHS), as a first objective.

    One choice per free job (weights summing to 1 over its options), one shared budget: the
    options' replicas times the job's ``share`` sum to at most 1.
    """
    from scipy.optimize import linprog

    options, share, pinned_acc = relaxation_options(prob, num_real, penalty, mode, p)
    sign = -1.0 if mode in (1, 3) and p < 0 else 1.0
    cols = [(j, r, t) for j, opts in enumerate(options) for _, r, t in opts]
    free_jobs = [j for j, opts in enumerate(options) if opts]
    if not cols:
        return fair_total(pinned_acc, prob.num_jobs, mode, p)
    a_eq = np.zeros((len(free_jobs), len(cols)))
    row = {j: i for i, j in enumerate(free_jobs)}
    for c, (j, _, _) in enumerate(cols):
        a_eq[row[j], c] = 1.0
    a_ub = np.array([[r * max(share[j], 0.0) for j, r, _ in cols]])
    res = linprog(
        -np.array([t for _, _, t in cols]),
        A_ub=a_ub,
        b_ub=[1.0],
        A_eq=a_eq,
        b_eq=np.ones(len(free_jobs)),
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0, res.message
    return fair_total(sign * -res.fun + pinned_acc, prob.num_jobs, mode, p)
