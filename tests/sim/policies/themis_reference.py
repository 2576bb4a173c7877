"""The first finish-time-fairness search (Gavel's formulation of Themis), kept as the reference of the
current one (:mod:`fastsched.sim.policies.themis`): a search over ``rho`` with about 8 linear programs
per solve, each through :func:`scipy.optimize.linprog`. Both stop within ``rtol`` of the optimum.
"""

from __future__ import annotations

import numpy as np

from fastsched.sim.policies import themis
from fastsched.sim.policies.gavel_objectives import _BoundedLP

__all__ = ["ThemisPolicy", "finish_time_fairness_allocation"]


def finish_time_fairness_allocation(throughput, scale, capacity, steps, elapsed, isolated, *, rtol=1e-3, start=None):
    """Gavel's finish-time fairness (Themis): ``min_X max_j (elapsed_j + steps_j / thr_j(X)) / isolated_j``.

    ``rho_j`` is the job's finish time with ``X`` over its finish time alone on its fair share
    (``isolated_j``). For a fixed bound ``rho`` the constraint is linear,
    ``thr_j(X) >= steps_j / (rho isolated_j - elapsed_j)``; the smallest feasible ``rho`` is
    found by regula falsi (to ``rtol``; ``start``: a guess, e.g. the previous round's), then the
    allocation of largest total normalised throughput meeting it.

    Returns
    -------
    tuple
        ``(X, rho)``.

    Examples
    --------
    Two equal 1-GPU jobs sharing one GPU, isolated finish 2 (half a GPU each, 1 step each);
    the second has waited 1 s already: it gets more of the GPU so both end equally late.

    >>> import numpy as np
    >>> x, rho = finish_time_fairness_allocation(np.ones((2, 1)), np.ones(2), np.array([1]),
    ...                                          np.ones(2), np.array([0.0, 1.0]), np.full(2, 2.0))
    >>> np.round(x.ravel(), 2).tolist(), round(rho, 2)
    ([0.38, 0.62], 1.31)
    """
    throughput = np.asarray(throughput, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    capacity = np.asarray(capacity, dtype=np.float64)
    steps = np.asarray(steps, dtype=np.float64)
    elapsed = np.asarray(elapsed, dtype=np.float64)
    isolated = np.asarray(isolated, dtype=np.float64)
    num_jobs = throughput.shape[0]
    live = (throughput.max(axis=1, initial=0.0) > 0) & (steps > 0) & (isolated > 0)
    if not live.any():
        return np.zeros_like(throughput), 0.0
    t_eq = throughput @ capacity / capacity.sum()
    weight = np.divide(scale, t_eq, out=np.zeros_like(t_eq), where=t_eq > 0)

    def need(rho):
        slack = rho * isolated - elapsed
        out = np.zeros(num_jobs)
        if np.any(live & (slack <= 0)):
            return None
        out[live] = steps[live] / slack[live]
        return out

    lp = _BoundedLP(throughput, scale, capacity)

    def excess(rho):  # z(rho) - 1: >= 0 where rho is reachable
        nd = need(rho)
        return -1.0 if nd is None else min(lp.z(nd), 2.0) - 1.0

    lo = float(np.max(elapsed[live] / isolated[live]))
    f_lo = -1.0
    hi = max(2.0 * lo, 1.0) if start is None else max(start, lo * (1 + rtol))
    f_hi = excess(hi)
    while f_hi < 0:
        lo, f_lo, hi = hi, f_hi, 2.0 * hi
        f_hi = excess(hi)
    # Regula falsi, Illinois variant: z(rho) is increasing and smooth, a few LPs suffice.
    side = 0
    while hi - lo > rtol * hi:
        mid = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = 0.5 * (lo + hi)
        f_mid = excess(mid)
        if f_mid >= 0:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo *= 0.5
            side = 1
        else:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi *= 0.5
            side = -1
    return lp.allocate(need(hi), weight, 1.0), hi


class ThemisPolicy(themis.ThemisPolicy):
    """:class:`fastsched.sim.policies.themis.ThemisPolicy` solving each round with the first search.

    Examples
    --------
    >>> ThemisPolicy().name
    'themis'
    """

    _search = staticmethod(finish_time_fairness_allocation)
