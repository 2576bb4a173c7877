"""An independent upper bound on a Pollux round's first objective, and a feasible packing of it.

The bound is a separable relaxation of the round, solved by scipy's HiGHS (``milp``; its dual
bound when the time limit stops it, so the figure stays an upper bound). Each free job picks one
option:

* nothing (value 0);
* keep its base allocation unchanged (no restart penalty), when within its replica bounds;
* ``r`` replicas on one node (``r`` up to the largest node's capacity for the job);
* ``r >= 2`` replicas over ``k >= 2`` nodes, ``k`` from the fewest nodes that can hold ``r`` up to
  where the speedup table stops depending on ``k``;

and the options share:

* every resource type's free total (the nodes' resources minus the pinned jobs');
* the nodes: distributed jobs hold distinct nodes (AdaptDL's one distributed job per node), so
  their node counts sum to at most the nodes no pinned distributed job holds;
* node sizes (only where all jobs request the same resources): single-node jobs of more than
  ``c`` replicas fit only on nodes holding more than ``c``, and a node with room for ``c`` holds
  at most ``floor(c / s)`` single-node jobs of ``s`` replicas or more.

Any feasible allocation maps to one option per job that satisfies these, with the same objective,
so the relaxation's optimum is an upper bound on the round's optimum on the real nodes. The
objective is the policy's first objective (fairness modes as in ``fastsched.policy._ga.fitness``:
the sum; ``J x`` power mean with exponent ``p``; ``J x`` geometric mean), each job's term being
separable, so the relaxation is an integer program with one choice per job.

:func:`pack` places the relaxation's choice on the real nodes (kept jobs as they were, then the
distributed jobs on whole free nodes, then single-node jobs best-fit; a job that does not fit
takes fewer replicas), which is feasible: its objective is a lower bound on the optimum.

Everything here is plain numpy/scipy written from the policy's documented semantics; nothing calls
the policy's kernels, so a round's score is not the policy's own.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

NONE, KEEP, SINGLE, MULTI = 0, 1, 2, 3
EPS = 1e-3  # FAIR_EPS of the policy: floor (or shift) of a job's value inside a power mean
SUM, POWER, GEOMETRIC, POWER_SHIFTED = 0, 1, 2, 3


class Relaxed(NamedTuple):
    """The relaxation's answer: ``bound`` on the first objective, one ``(kind, r, k)`` per job."""

    bound: float  # upper bound on the round's first objective
    value: float  # the relaxation's own best integer solution (its objective; >= bound when optimal)
    kind: np.ndarray  # int[J]: NONE / KEEP / SINGLE / MULTI (pinned jobs: KEEP)
    reps: np.ndarray  # int[J]
    nodes: np.ndarray  # int[J]
    status: str
    seconds: float
    options: int


def fair_term(v, mode, p):
    """One job's term of the accumulated first objective (vectorised)."""
    v = np.asarray(v, dtype=np.float64)
    if mode == SUM:
        return v
    if mode == POWER_SHIFTED:
        return (v + EPS) ** p
    w = np.maximum(v, EPS)
    if mode == GEOMETRIC:
        return np.log(w)
    return w**p


def fair_total(acc, njobs, mode, p):
    """First objective from the accumulated terms."""
    if mode == SUM or njobs == 0:
        return float(acc)
    if mode == GEOMETRIC:
        return float(njobs * np.exp(acc / njobs))
    if acc <= 0:
        return float("inf")
    return float(njobs * (acc / njobs) ** (1.0 / p))


def _sign(mode, p) -> float:
    """+1 where the objective grows with the accumulator, -1 where it falls (power means, p < 0)."""
    return -1.0 if mode in (POWER, POWER_SHIFTED) and p < 0 else 1.0


def base_dense(prob) -> np.ndarray:
    """Return the base allocation as replica counts ``int64[J, N]`` on the real nodes."""
    out = np.zeros((prob.num_jobs, prob.num_real), dtype=np.int64)
    for j in range(prob.num_jobs):
        for q in range(prob.base_off[j], prob.base_off[j + 1]):
            out[j, prob.base_node[q]] += prob.base_cnt[q]
    return out


def dense_allocation(prob, allocations: dict) -> np.ndarray:
    """Convert an allocation dict (job key -> node keys) to replica counts ``int64[J, N]``."""
    index = {k: i for i, k in enumerate(prob.node_keys)}
    out = np.zeros((prob.num_jobs, prob.num_real), dtype=np.int64)
    for j, key in enumerate(prob.job_keys):
        for nk in allocations.get(key, []) or []:
            out[j, index[nk]] += 1
    return out


def job_values(prob, state, penalty) -> np.ndarray:
    """Each job's value ``table[j, nodes, replicas] * scale_j``, times ``1 - penalty_j`` when moved."""
    base = base_dense(prob)
    kmax = prob.table.shape[1] - 1
    nn = np.count_nonzero(state, axis=1)
    reps = state.sum(axis=1)
    out = np.zeros(prob.num_jobs)
    for j in np.flatnonzero(reps):
        v = prob.table[j, min(nn[j], kmax), reps[j]] * prob.scale[j]
        if np.any(state[j] != base[j]):
            v *= 1.0 - penalty[j]
        out[j] = v
    return out


def score(prob, state, penalty, mode, p) -> float:
    """Score a dense allocation: its first objective (plain formula)."""
    return fair_total(float(fair_term(job_values(prob, state, penalty), mode, p).sum()), prob.num_jobs, mode, p)


def check_feasible(prob, state) -> list:
    """Violations of a dense allocation on the real nodes (empty when feasible)."""
    errors = []
    base = base_dense(prob)
    reps = state.sum(axis=1)
    used = state.T @ prob.job_res
    for n in np.flatnonzero(np.any(used > prob.node_res[: prob.num_real], axis=1)):
        errors.append(f"node {n} over its resources")
    multi = np.count_nonzero(state, axis=1) >= 2
    per_node = np.count_nonzero(state[multi], axis=0)
    for n in np.flatnonzero(per_node > 1):
        errors.append(f"node {n} holds {per_node[n]} distributed jobs")
    for j in range(prob.num_jobs):
        if prob.pinned[j]:
            if np.any(state[j] != base[j]):
                errors.append(f"pinned job {j} moved")
            continue
        if reps[j] > prob.max_rep[j] or (0 < reps[j] < prob.min_rep[j]):
            errors.append(f"job {j} has {reps[j]} replicas outside [{prob.min_rep[j]}, {prob.max_rep[j]}]")
    return errors


def _free(prob):
    """Free resources per real node after the pinned jobs, and the nodes pinned distributed jobs hold."""
    N = prob.num_real
    base = base_dense(prob)
    free = prob.node_res[:N].astype(np.int64).copy()
    owned = np.zeros(N, dtype=bool)
    for j in np.flatnonzero(prob.pinned):
        free -= base[j][:, None] * prob.job_res[j][None, :]
        if np.count_nonzero(base[j]) > 1:
            owned |= base[j] > 0
    return free, owned, base


def _fit(free, need) -> np.ndarray:
    """Replicas of a job requesting ``need`` per replica that each node's ``free`` holds."""
    pos = need > 0
    return np.min(np.maximum(free[:, pos], 0) // need[pos], axis=1)


def options(prob, penalty, mode, p):
    """Every free job's options as arrays ``(job, kind, r, k, coefficient)``; pinned terms; size cuts."""
    J = prob.num_jobs
    free, owned, base = _free(prob)
    K = prob.table.shape[1] - 1
    sign = _sign(mode, p)
    rows = []
    pinned_acc = 0.0
    for j in range(J):
        if prob.pinned[j]:
            nn = int(np.count_nonzero(base[j]))
            r = int(base[j].sum())
            v = prob.table[j, min(nn, K), r] * prob.scale[j] if r else 0.0
            pinned_acc += float(fair_term(v, mode, p))
            continue
        fit = _fit(free, prob.job_res[j])
        fit_multi = np.sort(fit[~owned])[::-1]
        reach = np.cumsum(fit_multi)
        mx, mn = int(prob.max_rep[j]), max(int(prob.min_rep[j]), 1)
        pen = float(penalty[j])
        rows.append((j, NONE, 0, 0, float(fair_term(0.0, mode, p))))
        br, bk = int(base[j].sum()), int(np.count_nonzero(base[j]))
        if br > 0 and mn <= br <= mx:
            rows.append((j, KEEP, br, bk, float(fair_term(prob.table[j, min(bk, K), br] * prob.scale[j], mode, p))))
        best = -np.inf
        for r in range(mn, min(mx, int(fit.max(initial=0))) + 1):
            c = float(fair_term(prob.table[j, 1, r] * prob.scale[j] * (1.0 - pen), mode, p))
            if sign * c > best + 1e-15:  # more replicas for no more value: dominated
                best = sign * c
                rows.append((j, SINGLE, r, 1, c))
        best_k = {}
        for r in range(max(mn, 2), mx + 1):
            kmin = int(np.searchsorted(reach, r)) + 1  # fewest non-owned nodes holding r
            kmin = max(kmin, 2)
            if kmin > min(r, reach.size):
                break
            for k in range(kmin, max(kmin, min(K, r)) + 1):
                c = float(fair_term(prob.table[j, min(k, K), r] * prob.scale[j] * (1.0 - pen), mode, p))
                if sign * c > best_k.get(k, -np.inf) + 1e-15:
                    best_k[k] = sign * c
                    rows.append((j, MULTI, r, k, c))
    arr = np.array(rows, dtype=np.float64).reshape(-1, 5)
    return arr, pinned_acc, free, owned


def relax(prob, penalty, mode, p, time_limit=60.0, integral=True) -> Relaxed:
    """Solve the separable relaxation of the round (see the module docstring)."""
    import scipy.sparse as sp
    from scipy.optimize import Bounds, LinearConstraint, milp

    t0 = time.perf_counter()
    J = prob.num_jobs
    opt, pinned_acc, free, owned = options(prob, penalty, mode, p)
    sign = _sign(mode, p)
    jobs = opt[:, 0].astype(np.int64)
    kind = opt[:, 1].astype(np.int64)
    r = opt[:, 2]
    k = opt[:, 3]
    nvar = opt.shape[0]
    free_jobs = np.flatnonzero(~prob.pinned)
    pos = np.full(J, -1)
    pos[free_jobs] = np.arange(free_jobs.size)
    rows = [sp.csr_array((np.ones(nvar), (pos[jobs], np.arange(nvar))), shape=(free_jobs.size, nvar))]
    lo = [np.ones(free_jobs.size)]
    hi = [np.ones(free_jobs.size)]
    # Resources: replicas x request, per type.
    for t in range(prob.job_res.shape[1]):
        rows.append(sp.csr_array((r * prob.job_res[jobs, t]).reshape(1, -1)))
        lo.append([-np.inf])
        hi.append([float(max(free[:, t].sum(), 0))])
    # Nodes held by distributed jobs (a kept distributed job holds its base nodes).
    multi = (k >= 2).astype(np.float64) * k
    rows.append(sp.csr_array(multi.reshape(1, -1)))
    lo.append([-np.inf])
    hi.append([float((~owned).sum())])
    # Node sizes (all jobs with one request): single-node jobs over c replicas on nodes over c.
    same = prob.job_res.shape[1] > 0 and np.all(prob.job_res == prob.job_res[:1])
    if same and J:
        cap = _fit(free, prob.job_res[0])
        single = (k == 1) & (kind != NONE)
        for c in np.unique(cap)[:-1]:
            sel = single & (r > c)
            if sel.any():
                rows.append(sp.csr_array(np.where(sel, r, 0.0).reshape(1, -1)))
                lo.append([-np.inf])
                hi.append([float(cap[cap > c].sum())])
        # Counts: a node with room c holds at most floor(c / s) single-node jobs of s or more.
        for size in range(2, int(cap.max(initial=0)) + 1):
            sel = single & (r >= size)
            if sel.any():
                rows.append(sp.csr_array(sel.astype(np.float64).reshape(1, -1)))
                lo.append([-np.inf])
                hi.append([float((cap // size).sum())])
    A = sp.vstack(rows).tocsr()
    res = milp(
        c=-sign * opt[:, 4],
        constraints=LinearConstraint(A, np.concatenate(lo), np.concatenate(hi)),
        integrality=np.ones(nvar) if integral else np.zeros(nvar),
        bounds=Bounds(np.zeros(nvar), np.ones(nvar)),
        options={"time_limit": float(time_limit), "mip_rel_gap": 1e-6},
    )
    if res.x is None and integral:
        # Stopped before any integer solution (a loaded machine): its linear relaxation, also a bound.
        return relax(prob, penalty, mode, p, time_limit=time_limit, integral=False)._replace(status="lp")
    if res.x is None:
        raise RuntimeError(f"relaxation not solved: {res.message}")
    # Best accumulator the relaxation allows: the dual bound when stopped early.
    dual = getattr(res, "mip_dual_bound", None)
    best_acc = -(dual if (integral and dual is not None and np.isfinite(dual)) else res.fun) * sign
    val_acc = -res.fun * sign
    bound = fair_total(best_acc + pinned_acc, J, mode, p)
    value = fair_total(val_acc + pinned_acc, J, mode, p)
    x = res.x
    kind_j = np.full(J, KEEP)
    reps_j = np.zeros(J, dtype=np.int64)
    nodes_j = np.zeros(J, dtype=np.int64)
    # The chosen option of each free job (the largest weight where the LP is fractional).
    order = np.lexsort((-x, jobs))
    first = np.ones(nvar, dtype=bool)
    first[1:] = jobs[order][1:] != jobs[order][:-1]
    pick = order[first]
    kind_j[jobs[pick]] = kind[pick]
    reps_j[jobs[pick]] = r[pick].astype(np.int64)
    nodes_j[jobs[pick]] = k[pick].astype(np.int64)
    status = {0: "optimal", 1: "time_limit"}.get(res.status, str(res.status))
    return Relaxed(bound, value, kind_j, reps_j, nodes_j, status, time.perf_counter() - t0, nvar)


def pack(prob, relaxed: Relaxed) -> np.ndarray:
    """Place the relaxation's choice on the real nodes: a feasible dense allocation ``int64[J, N]``."""
    J, N = prob.num_jobs, prob.num_real
    free, owned, base = _free(prob)
    state = np.zeros((J, N), dtype=np.int64)
    for j in np.flatnonzero(prob.pinned):
        state[j] = base[j]

    def take(j, n, c):
        state[j, n] += c
        free[n] -= c * prob.job_res[j]

    kind, reps = relaxed.kind, relaxed.reps
    # Kept jobs first: their base places are consistent with each other.
    for j in np.flatnonzero((kind == KEEP) & ~prob.pinned):
        for n in np.flatnonzero(base[j]):
            take(j, n, base[j, n])
        if np.count_nonzero(base[j]) > 1:
            owned |= base[j] > 0
    single_left = []
    # Distributed jobs, largest first, each on the free non-owned nodes with most room.
    for j in sorted(np.flatnonzero(kind == MULTI), key=lambda j: (-reps[j], j)):
        fit = _fit(free, prob.job_res[j])
        cand = np.flatnonzero(~owned & (fit > 0))
        cand = cand[np.lexsort((cand, -fit[cand]))]
        want = int(reps[j])
        if fit[cand].sum() < want or cand.size < 2:
            single_left.append((j, min(want, int(fit.max(initial=0)))))
            continue
        got = 0
        used = []
        for n in cand:
            c = min(int(fit[n]), want - got)
            used.append((n, c))
            got += c
            if got == want:
                break
        if len(used) < 2:  # fits on one node: split one replica off so it stays as chosen
            n, c = used[0]
            used = [(n, c - 1), (cand[1], 1)] if c > 1 else used
        for n, c in used:
            take(j, n, c)
            owned[n] = True
    # Single-node jobs, largest first, best fit (their base node first when it has room).
    singles = [(j, int(reps[j])) for j in np.flatnonzero(kind == SINGLE)] + single_left
    for j, want in sorted(singles, key=lambda t: (-t[1], t[0])):
        while want > 0:
            fit = _fit(free, prob.job_res[j])
            ok = np.flatnonzero(fit >= want)
            if ok.size:
                home = [n for n in np.flatnonzero(base[j]) if fit[n] >= want]
                n = home[0] if len(home) == 1 and np.count_nonzero(base[j]) == 1 else ok[np.argmin(fit[ok])]
                take(j, n, want)
                break
            want -= 1
        if 0 < state[j].sum() < prob.min_rep[j]:
            for n in np.flatnonzero(state[j]):
                free[n] += state[j, n] * prob.job_res[j]
            state[j] = 0
    return state


def exact(prob, penalty, mode, p, time_limit=300.0):
    """Solve the round on the real nodes as a MILP (HiGHS): ``(objective, dual bound, dense, status)``.

    Per job and real node: replicas ``x``, "uses the node" ``y``, "distributed and on the node"
    ``d``; per job one option: ``r`` replicas on one node, ``r`` over two or more nodes (speedup
    tables with ``K = 2``: the value depends on the node count only through "more than one"),
    or its base allocation unchanged. Sized for a few hundred jobs; slow beyond.
    """
    import scipy.sparse as sp
    from scipy.optimize import Bounds, LinearConstraint, milp

    if prob.table.shape[1] != 3:
        raise ValueError("exact() handles speedup tables with K = 2 (single node, multi node)")
    J, N = prob.num_jobs, prob.num_real
    free, owned, base = _free(prob)
    sign = _sign(mode, p)
    pinned_acc = 0.0
    cost, lo, hi, integ = [], [], [], []

    def var(lb, ub, c=0.0, integer=1):
        cost.append(c)
        lo.append(lb)
        hi.append(ub)
        integ.append(integer)
        return len(cost) - 1

    rows, cols, vals, rlo, rhi = [], [], [], [], []

    def con(terms, lb, ub):
        r = len(rlo)
        for c, v in terms:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        rlo.append(lb)
        rhi.append(ub)

    X = {}
    D = {}
    for j in range(J):
        if prob.pinned[j]:
            nn, r = int(np.count_nonzero(base[j])), int(base[j].sum())
            v = prob.table[j, min(nn, 2), r] * prob.scale[j] if r else 0.0
            pinned_acc += float(fair_term(v, mode, p))
            continue
        fit = _fit(free, prob.job_res[j])
        mx, mn = int(prob.max_rep[j]), max(int(prob.min_rep[j]), 1)
        none = float(fair_term(0.0, mode, p))
        pinned_acc += none  # the empty option's term; options below add their difference
        x = [var(0, int(min(fit[n], mx))) for n in range(N)]
        y = [var(0, 1 if fit[n] > 0 else 0) for n in range(N)]
        d = [var(0, 0 if owned[n] else 1) for n in range(N)]
        X[j], D[j] = x, d
        pen = float(penalty[j])
        single = [
            (r, var(0, 1, -sign * (float(fair_term(prob.table[j, 1, r] * prob.scale[j] * (1 - pen), mode, p)) - none)))
            for r in range(mn, min(mx, int(fit.max(initial=0))) + 1)
        ]
        multi = [
            (r, var(0, 1, -sign * (float(fair_term(prob.table[j, 2, r] * prob.scale[j] * (1 - pen), mode, p)) - none)))
            for r in range(max(mn, 2), mx + 1)
        ]
        br, bk = int(base[j].sum()), int(np.count_nonzero(base[j]))
        keep = []
        if br > 0 and mn <= br <= mx:
            vk = float(fair_term(prob.table[j, min(bk, 2), br] * prob.scale[j], mode, p))
            keep = [(br, var(0, 1, -sign * (vk - none)))]
        opts = single + multi + keep
        con([(c, 1.0) for _, c in opts], -np.inf, 1.0)
        con([(xi, 1.0) for xi in x] + [(c, -float(r)) for r, c in opts], 0.0, 0.0)
        # Nodes used: one for a single-node option, two or more for a distributed one.
        kb = [(c, -float(bk)) for _, c in keep]
        con([(yi, 1.0) for yi in y] + [(c, -1.0) for _, c in single] + [(c, -2.0) for _, c in multi] + kb, 0.0, np.inf)
        con(
            [(yi, 1.0) for yi in y] + [(c, -1.0) for _, c in single] + [(c, -float(N)) for _, c in multi] + kb,
            -np.inf,
            0,
        )
        dist = [(c, 1.0) for _, c in multi] + ([(keep[0][1], 1.0)] if keep and bk >= 2 else [])
        for n in range(N):
            con([(x[n], 1.0), (y[n], -float(max(hi[x[n]], 1)))], -np.inf, 0.0)
            con([(y[n], 1.0), (x[n], -1.0)], -np.inf, 0.0)
            con([(d[n], 1.0), (y[n], -1.0)] + [(c, -v) for c, v in dist], -1.0, np.inf)
            for _, c in keep:  # kept: exactly the base counts
                big = float(max(hi[x[n]], base[j, n]) + 1)
                con([(x[n], 1.0), (c, big)], -np.inf, float(base[j, n]) + big)
                con([(x[n], 1.0), (c, -big)], float(base[j, n]) - big, np.inf)
    for n in range(N):
        con([(D[j][n], 1.0) for j in D], -np.inf, 1.0)
        for t in range(prob.job_res.shape[1]):
            terms = [(X[j][n], float(prob.job_res[j, t])) for j in X if prob.job_res[j, t] > 0]
            if terms:
                con(terms, -np.inf, float(max(free[n, t], 0)))
    A = sp.csr_array((vals, (rows, cols)), shape=(len(rlo), len(cost)))
    res = milp(
        c=np.array(cost),
        constraints=LinearConstraint(A, np.array(rlo), np.array(rhi)),
        integrality=np.array(integ),
        bounds=Bounds(np.array(lo, float), np.array(hi, float)),
        options={"time_limit": float(time_limit), "mip_rel_gap": 1e-6},
    )
    if res.x is None:
        return float("nan"), float("nan"), None, res.message
    state = base_dense(prob) * prob.pinned[:, None]
    sol = np.round(res.x).astype(np.int64)
    for j, x in X.items():
        state[j] = sol[x]
    dual = getattr(res, "mip_dual_bound", -res.fun)
    obj = score(prob, state, penalty, mode, p)
    bound = fair_total(-dual * sign + pinned_acc, J, mode, p)
    return obj, bound, state, "optimal" if res.status == 0 else "time_limit"
