"""Themis's finish-time fairness in Gavel's formulation (Gavel, OSDI'20, §4.1; Themis, NSDI'20, §3).

Each re-solve looks for the smallest bound ``rho`` on every job's finish-time ratio that an
allocation can meet, then the most efficient allocation meeting it. For a fixed ``rho`` the
bound is linear in the allocation (``thr_j(X) >= need_j(rho)``), and whether it can be met is
one linear program: the largest ``z`` with ``thr_j(X) >= need_j(rho) z`` (Gavel's allocation
constraints, :class:`~fastsched.sim.policies.gavel_objectives._BoundedLP`); ``rho`` is feasible
when ``z >= 1``.

The search for ``rho`` solves as few of these programs as it can, using two facts. Every
allocation a program returns is itself a candidate: its largest ratio ``max_j rho_j(X)``
bounds the optimum from above. And with ``p = max_j elapsed_j / isolated_j`` (no ratio can
be lower), ``z(rho) / (rho - p)`` falls as ``rho`` grows (``z`` is a best over allocations of
a least over jobs of ``c_j (rho - p_j)`` with every ``p_j <= p``), so ``t = p + (rho - p) /
z(rho)`` lies between ``rho`` and the optimum, on the same side as ``rho``: a probe below the
optimum gives a lower bound at ``t``, and where one job's bound binds ``t`` is the optimum
itself. The probes follow ``t`` (then secants on ``t(rho) - rho`` once both sides are known),
a third of the tolerance past the estimate so the bracket closes, typically in two or three
programs. It starts from the previous solve's ``rho``. The result is within ``rtol`` above the
optimum, as a regula falsi over ``rho`` (about 8 programs a solve; the tests keep one as the
reference), but not the same point within that tolerance. Each program goes to HiGHS through
:func:`scipy.optimize.milp` (no integer variables: HiGHS's simplex, with less set-up per call
than :func:`scipy.optimize.linprog`).
"""

from __future__ import annotations

import numpy as np

from fastsched.sim.policies._highs import quiet_milp
from fastsched.sim.policies._oracle import remaining_steps
from fastsched.sim.policies.gavel_objectives import _BoundedLP, _OnChange

__all__ = ["ThemisPolicy", "finish_time_fairness_allocation"]


class _FairnessLP(_BoundedLP):
    """Gavel's bounded allocation, its ``z`` program solved through :func:`quiet_milp`."""

    def z_thr(self, need):
        """Largest ``z`` with ``thr_j(X) >= need_j z`` for all jobs, and ``thr_j`` of the allocation reaching it."""
        from scipy.optimize import Bounds, LinearConstraint  # where used (see _highs.quiet_milp)
        from scipy.sparse import csr_array, hstack

        need = need[self.rows]
        column = csr_array(np.concatenate([np.zeros(self.a.shape[0]), need]).reshape(-1, 1))
        a = hstack([self.a2, column]).tocsr()
        res = quiet_milp(self.c1, constraints=LinearConstraint(a, -np.inf, self.b1), bounds=Bounds(0.0, np.inf))
        if res.x is None:  # pragma: no cover - X = 0, z = 0 is feasible
            raise RuntimeError(f"the allocation LP failed: {res.message}")
        thr = np.bincount(self.jobs, weights=self.tp * res.x[:-1], minlength=self.shape[0])
        return max(float(res.x[-1]), 0.0), thr


def finish_time_fairness_allocation(throughput, scale, capacity, steps, elapsed, isolated, *, rtol=1e-3, start=None):
    """Gavel's finish-time fairness (Themis): ``min_X max_j (elapsed_j + steps_j / thr_j(X)) / isolated_j``.

    ``rho_j`` is the job's finish time with ``X`` over its finish time alone on its fair share
    (``isolated_j``). For a fixed bound ``rho`` the constraint is linear,
    ``thr_j(X) >= steps_j / (rho isolated_j - elapsed_j)``; the smallest feasible ``rho`` is
    found to ``rtol`` (``start``: a guess, e.g. the previous solve's; see the module docstring),
    then the allocation of largest total normalised throughput meeting it.

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

    lp = _FairnessLP(throughput, scale, capacity)

    def worst(thr):  # max_j rho_j of an allocation: an upper bound on the optimum it reaches
        if np.any(thr[live] <= 0):
            return np.inf
        return float(np.max((steps[live] / thr[live] + elapsed[live]) / isolated[live]))

    pole = float(np.max(elapsed[live] / isolated[live]))  # every rho_j exceeds its elapsed ratio
    lo, hi = pole, np.inf  # the optimum lies in [lo, hi]; an allocation found reaches hi
    probe = max(2.0 * pole, 1.0) if start is None else max(start, pole * (1 + rtol))
    sides: dict = {}  # True/False (feasible or not) -> (probe, t(probe) - probe)
    streak, last = 0, None  # probes in a row on one side (then each steps further past t)
    while True:
        nd = need(probe)
        z, thr = (0.0, None) if nd is None else lp.z_thr(nd)
        if thr is not None:
            hi = min(hi, worst(thr))
        # z / (rho - pole) falls as rho grows, so t lies between the probe and the optimum.
        t = pole + (probe - pole) / z if z > 0 else np.inf
        if z >= 1.0:
            hi = min(hi, probe)
        else:
            lo = max(lo, probe, t if np.isfinite(t) else lo)
        feasible = bool(z >= 1.0)
        streak = streak + 1 if feasible == last else 0
        last = feasible
        sides[feasible] = (probe, t - probe)
        if hi - lo <= rtol * hi:
            break
        if True in sides and False in sides:  # secant on t(rho) - rho between the two sides
            (pa, fa), (pb, fb) = sides[True], sides[False]
            # Illinois: the side not moved for a while weighs less, so the secant moves off it.
            fa, fb = (fa, fb * 0.5**streak) if feasible else (fa * 0.5**streak, fb)
            est = pb - fb * (pa - pb) / (fa - fb) if np.isfinite(fb) and fa != fb else 0.5 * (lo + hi)
        elif True in sides:  # only feasible probes: step past t (doubling each time), to get below
            est = max(t - (probe - t) * 2.0**streak, 0.5 * (lo + t))
        elif np.isfinite(t):  # only infeasible probes: step past t (doubling each time), to get above
            est = t + (t - probe) * 2.0**streak
        else:
            est = 2.0 * max(probe, 1e-12)
        if not np.isfinite(hi):
            probe = max(est, lo * (1 + 0.5 * rtol))
            continue
        # Probe a little past the estimate, towards the end of the bracket that is farther off,
        # so the bracket closes; every probe lies inside it.
        probe = est * (1 + 0.3 * rtol) if hi - est > est - lo else est * (1 - 0.3 * rtol)
        probe = min(max(probe, lo + 0.25 * rtol * hi), hi - 0.25 * rtol * hi)
    return lp.allocate(need(hi), weight, 1.0), hi


class ThemisPolicy(_OnChange):
    """Themis's finish-time fairness in Gavel's formulation (OSDI'20, §4.1; Themis, NSDI'20, §3).

    Each round, for job ``j`` with ``s_j`` true remaining steps (the oracle, times the job's
    slowdown), waiting ``elapsed_j`` seconds since it arrived:

    * isolated share: with ``N`` active jobs, ``1/N`` of the cluster, i.e. a time fraction
      ``f_j = min(1, G / (N n_j))`` at the even-spread throughput ``T_eq[j]``;
    * isolated time so far ``iso_j``: the seconds that share would have needed for the steps
      made so far (accumulated round by round at that round's ``N``);
    * ``rho_j(X) = (elapsed_j + s_j / thr_j(X)) / (iso_j + s_j / (f_j T_eq[j]))``;

    the allocation minimises ``max_j rho_j`` (:func:`finish_time_fairness_allocation`), then
    Gavel's round mechanism runs it.

    Parameters
    ----------
    rtol : float
        Relative tolerance of the search for the smallest ``max rho``.
    placement : {"sequential", "packed"}
        As :class:`~fastsched.sim.policies.gavel.GavelPolicy`.
    reoptimize : {"on-change", "every-round"}
        When the allocation is solved again (see :class:`~fastsched.sim.policies.gavel_objectives._OnChange`);
        the isolated-time accounting runs every round either way.

    Examples
    --------
    >>> ThemisPolicy().name
    'themis'
    """

    name = "themis"
    # The search that solves each round's program (a subclass may give another, e.g. a reference).
    _search = staticmethod(finish_time_fairness_allocation)

    def __init__(self, rtol=1e-3, placement="sequential", reoptimize="on-change"):
        super().__init__(placement=placement, reoptimize=reoptimize)
        if not (isinstance(rtol, float) and 0 < rtol < 1):
            raise ValueError(f"rtol must be a float in (0, 1), got {rtol!r}")
        self.rtol = rtol
        self._iso: dict = {}  # job name -> (isolated seconds so far, remaining steps then)
        self._now = 0
        self._rho = None  # last solve's max rho: the next search starts there
        self._round = None

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        self._now = now
        return super().optimize(now, jobs, nodes, allocations)

    def allocation(self, jobs, throughput, scale):
        """Account the isolated time of the last round, then the allocation (re-solved when the job set changed)."""
        capacity = self.capacity.astype(np.float64)
        total = capacity.sum()
        t_eq = throughput @ capacity / total
        share = np.minimum(1.0, total / (len(jobs) * np.asarray(scale, dtype=np.float64)))
        iso_tput = share * t_eq
        steps = np.array([remaining_steps(j) * getattr(j, "slowdown", 1.0) for j in jobs])
        iso = np.zeros(len(jobs))
        alive = {j.name for j in jobs}
        self._iso = {k: v for k, v in self._iso.items() if k in alive}
        for i, job in enumerate(jobs):
            past, before = self._iso.get(job.name, (0.0, steps[i]))
            if iso_tput[i] > 0:
                past += max(before - steps[i], 0.0) / iso_tput[i]
            self._iso[job.name] = (past, steps[i])
            iso[i] = past
        self._round = (steps, iso, iso_tput)
        return super().allocation(jobs, throughput, scale)

    def solve(self, jobs, throughput, scale):
        """Finish-time-fair allocation (see the class docstring)."""
        steps, iso, iso_tput = self._round
        elapsed = np.array([max(self._now - j.submission_time, 0) for j in jobs], dtype=np.float64)
        isolated = iso + np.divide(steps, iso_tput, out=np.full(len(jobs), np.inf), where=iso_tput > 0)
        isolated = np.where(np.isfinite(isolated), isolated, 0.0)
        x, self._rho = self._search(
            throughput, scale, self.capacity, steps, elapsed, isolated, rtol=self.rtol, start=self._rho
        )
        return x
