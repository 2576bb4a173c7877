"""Exact oracle: the Pollux first objective on the real nodes as a MILP (scipy/HiGHS).

Maximise ``sum_j scale_j * speedup_j(nodes_j, replicas_j) * (1 - penalty * changed_j)`` over
integer placements on the *real* nodes (the allocation :meth:`PolluxPolicy.optimize` can
return), subject to: pinned jobs keep their base allocation, at most one distributed job
per node, ``min_replicas <= replicas <= max_replicas`` or zero, every resource type on every
node. ``scale_j`` is the same dominant-share scale as the genetic search (shares of real
nodes plus template placeholders), so objectives are directly comparable.

Model (per non-pinned job ``j``, real node ``n``, placement choice ``(k nodes, r replicas)``):
``x[j,n]`` integer replicas, ``y[j,n]`` binary "uses n", ``z[j,k,r]`` binary choice,
``u[j]`` binary "unchanged from base", ``d[j,n]`` binary "distributed and on n".
"""

from __future__ import annotations

import numpy as np

from fastsched.policy.problem import build_problem

__all__ = ["exact_optimize"]


def _capacity(free_row, need):
    pos = need > 0
    if not pos.any():
        return None
    return int(np.min(np.maximum(free_row[pos], 0) // need[pos]))


def exact_optimize(jobs, nodes, base_allocations, node_template, restart_penalty=0.1, time_limit=60.0):
    """Optimal allocation of the first objective on the real nodes.

    Parameters
    ----------
    jobs, nodes, base_allocations, node_template
        As for :meth:`PolluxPolicy.optimize`.
    restart_penalty : float
        Fraction of a job's value lost when its placement changes.
    time_limit : float
        HiGHS time limit in seconds.

    Returns
    -------
    allocations : dict
        Job key → list of node keys.
    objective : float
        The optimal first objective (higher is better).
    status : str
        ``"optimal"``, or ``"time_limit"`` with the best solution found.

    Raises
    ------
    RuntimeError
        When HiGHS finds no feasible solution (it always exists: all-zero plus pinned jobs).

    Examples
    --------
    >>> from fastsched import JobInfo, NodeInfo
    >>> from fastsched.policy import exact_optimize, linear_speedup
    >>> gpu = {"nvidia.com/gpu": 1, "pods": 1}
    >>> jobs = {"a": JobInfo(gpu, linear_speedup, 0, 0, 4), "b": JobInfo(gpu, linear_speedup, 1, 0, 2)}
    >>> nodes = {0: NodeInfo({"nvidia.com/gpu": 4, "pods": 32}, preemptible=False)}
    >>> template = NodeInfo({"nvidia.com/gpu": 4, "pods": 32}, preemptible=True)
    >>> allocations, objective, status = exact_optimize(jobs, nodes, {}, template)
    >>> status, sum(len(replicas) for replicas in allocations.values())   # every GPU used
    ('optimal', 4)
    """
    # scipy is imported here: ``import fastsched`` should not pay for scipy.optimize.
    import scipy.sparse as sp
    from scipy.optimize import Bounds, LinearConstraint, milp

    prob = build_problem(jobs, nodes, base_allocations, node_template)
    J, N = prob.num_jobs, prob.num_real
    if J == 0 or N == 0:
        return {k: [] for k in prob.job_keys}, 0.0, "optimal"
    table = prob.table
    kmax = table.shape[1] - 1
    pen = float(restart_penalty)
    base = np.zeros((J, N), dtype=np.int64)
    for j in range(J):
        for q in range(prob.base_off[j], prob.base_off[j + 1]):
            base[j, prob.base_node[q]] += prob.base_cnt[q]

    def value(j, k, r):
        return float(table[j, min(k, kmax), r]) * float(prob.scale[j]) if r > 0 else 0.0

    free = prob.node_res[:N].copy()
    const = 0.0
    owned = np.zeros(N, dtype=bool)
    for j in np.flatnonzero(prob.pinned):
        free -= base[j][:, None] * prob.job_res[j][None, :]
        used = np.flatnonzero(base[j])
        const += value(j, used.size, int(base[j].sum()))
        if used.size > 1:
            owned[used] = True

    # Variable layout.
    cost, lo, hi, integ = [], [], [], []
    names = {}

    def var(name, lb, ub, c=0.0, integer=1):
        names[name] = len(cost)
        cost.append(c)
        lo.append(lb)
        hi.append(ub)
        integ.append(integer)
        return names[name]

    free_jobs = [j for j in range(J) if not prob.pinned[j]]
    choices = {}
    for j in free_jobs:
        mx = int(prob.max_rep[j])
        mn = max(int(prob.min_rep[j]), 1)
        caps = []
        for n in range(N):
            c = _capacity(free[n], prob.job_res[j])
            caps.append(mx if c is None else min(c, mx))
        for n in range(N):
            var(("x", j, n), 0, caps[n])
            var(("y", j, n), 0, 1 if caps[n] > 0 else 0)
            var(("d", j, n), 0, 1)
        ch = []
        for r in range(mn, mx + 1):
            for k in range(1, min(r, N) + 1):
                v = value(j, k, r)
                # Maximise → milp minimises the negated objective.
                ch.append((k, r, var(("z", j, k, r), 0, 1, -(1.0 - pen) * v)))
        choices[j] = ch
        bk = int(np.count_nonzero(base[j]))
        br = int(base[j].sum())
        vb = value(j, bk, br) if (br > 0 and br <= mx and br >= mn) else 0.0
        var(("u", j), 0, 1, -pen * vb)

    nv = len(cost)
    rows, cols, vals, rlo, rhi = [], [], [], [], []

    def constraint(terms, lb, ub):
        r = len(rlo)
        for c, v in terms:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        rlo.append(lb)
        rhi.append(ub)

    big = 10**6
    for j in free_jobs:
        ch = choices[j]
        x = [names[("x", j, n)] for n in range(N)]
        y = [names[("y", j, n)] for n in range(N)]
        u = names[("u", j)]
        constraint([(c, 1.0) for _, _, c in ch], -np.inf, 1.0)  # one choice (or none)
        # replicas and node count match the choice
        constraint([(xi, 1.0) for xi in x] + [(c, -float(r)) for _, r, c in ch], 0.0, 0.0)
        constraint([(yi, 1.0) for yi in y] + [(c, -float(k)) for k, _, c in ch], 0.0, 0.0)
        multi = [(c, 1.0) for k, _, c in ch if k >= 2]
        for n in range(N):
            ub = hi[x[n]]
            constraint([(x[n], 1.0), (y[n], -float(max(ub, 1)))], -np.inf, 0.0)  # x>0 → y
            constraint([(y[n], 1.0), (x[n], -1.0)], -np.inf, 0.0)  # y → x>0
            d = names[("d", j, n)]
            # d >= y + multi - 1
            constraint([(d, 1.0), (y[n], -1.0)] + [(c, -v) for c, v in multi], -1.0, np.inf)
            # unchanged → x equals base
            constraint([(x[n], 1.0), (u, float(big))], -np.inf, float(base[j, n] + big))
            constraint([(x[n], 1.0), (u, -float(big))], float(base[j, n] - big), np.inf)
    for n in range(N):
        constraint([(names[("d", j, n)], 1.0) for j in free_jobs], -np.inf, 0.0 if owned[n] else 1.0)
        for r in range(prob.job_res.shape[1]):
            terms = [(names[("x", j, n)], float(prob.job_res[j, r])) for j in free_jobs if prob.job_res[j, r] > 0]
            if terms:
                constraint(terms, -np.inf, float(max(free[n, r], 0)))
    A = sp.csr_array((vals, (rows, cols)), shape=(len(rlo), nv))
    res = milp(
        c=np.array(cost),
        constraints=LinearConstraint(A, np.array(rlo), np.array(rhi)),
        integrality=np.array(integ),
        bounds=Bounds(np.array(lo, float), np.array(hi, float)),
        options={"time_limit": float(time_limit)},
    )
    if res.x is None:
        raise RuntimeError(f"MILP found no solution: {res.message}")
    sol = np.round(res.x).astype(np.int64)
    allocations = {}
    for j, key in enumerate(prob.job_keys):
        if prob.pinned[j]:
            counts = base[j]
        else:
            counts = [sol[names[("x", j, n)]] for n in range(N)]
        alloc = []
        for n in range(N):
            alloc.extend([prob.node_keys[n]] * int(counts[n]))
        allocations[key] = alloc
    status = "optimal" if res.status == 0 else "time_limit"
    return allocations, const - float(res.fun), status
