"""Gavel's other objectives (OSDI'20, §4.1): LAS, min total duration, max-sum-throughput.

Finish-time fairness (Themis) is :mod:`fastsched.sim.policies.themis`.

Each is Gavel's heterogeneity-aware formulation over the same allocation ``X[j, t]`` (fraction
of time job ``j`` runs on type ``t``; ``sum_t X <= 1``, ``sum_j n_j X <= GPUs of t``:
:func:`~fastsched.sim.policies.gavel.allocation_constraints`), with a job's effective throughput
``thr_j(X) = sum_t T[j, t] X[j, t]`` (true steps per second at its requested GPUs and batch
size). The round mechanism, priorities and placement are Gavel's
(:class:`~fastsched.sim.policies.gavel.GavelPolicy`); only :meth:`allocation` differs. The linear
programs are solved with HiGHS (:func:`scipy.optimize.linprog`); where an objective leaves the
allocation free (max-min and min-max problems), a second LP takes, among the optimal ones, the
allocation of largest total normalised throughput, so the result is efficient and
deterministic. Gavel's implementation used cvxpy/ECOS; the optimum value is the same.

``T_eq[j] = sum_t T[j, t] g_t / G`` (``g_t`` GPUs of type ``t``, ``G`` all) is the job's
throughput on an even spread over the cluster's GPU types, the normaliser of LAS and of the
isolated share of finish-time fairness.
"""

from __future__ import annotations

import numpy as np

from fastsched.sim.policies._oracle import remaining_steps
from fastsched.sim.policies.gavel import GavelPolicy, allocation_constraints

__all__ = [
    "MaxSumThroughputPolicy",
    "LasPolicy",
    "MinTotalDurationPolicy",
    "max_min_allocation",
    "min_total_duration_allocation",
]

#: Relative slack on the optimal value when the second LP re-optimises within the optimal set.
_SLACK = 1e-6


def _pairs(throughput):
    jobs, types = np.nonzero(throughput > 0)
    return jobs, types, throughput[jobs, types]


def _solve(c, a, b):
    from scipy.optimize import linprog  # loaded by the policies that solve LPs only

    res = linprog(c, A_ub=a, b_ub=b, bounds=(0, None), method="highs")
    if res.status != 0:
        return None
    return res.x


class _BoundedLP:
    """Gavel's allocation with lower bounds ``thr_j(X) >= need_j z``: the largest ``z``, then the most efficient X.

    Built once per round (the constraint matrix); :meth:`z` and :meth:`allocate` take the bounds.
    """

    def __init__(self, throughput, scale, capacity):
        from scipy.sparse import csr_array, vstack

        self.shape = throughput.shape
        num_jobs = throughput.shape[0]
        self.jobs, self.types, self.tp = _pairs(throughput)
        n = self.jobs.size
        self.a, self.b = allocation_constraints(self.jobs, self.types, scale, capacity, num_jobs)
        runnable = np.zeros(num_jobs, dtype=bool)
        runnable[self.jobs] = True
        self.rows = np.flatnonzero(runnable)  # a job that fits nowhere is left out of the bounds
        thr = csr_array((self.tp, (self.jobs, np.arange(n))), shape=(num_jobs, n))[self.rows]
        self.a2 = vstack([self.a, -thr]).tocsr()  # allocation rows, then -thr_j(X) <= -bound_j
        self.c1 = np.zeros(n + 1)
        self.c1[-1] = -1.0  # maximise z, the last variable
        self.b1 = np.concatenate([self.b, np.zeros(self.rows.size)])

    def z(self, need) -> float:
        """Largest ``z`` with ``thr_j(X) >= need_j z`` for all jobs (``inf`` if no bound binds)."""
        from scipy.sparse import csr_array, hstack

        need = need[self.rows]
        if self.jobs.size == 0 or not np.any(need > 0):
            return np.inf
        column = csr_array(np.concatenate([np.zeros(self.a.shape[0]), need]).reshape(-1, 1))
        x = _solve(self.c1, hstack([self.a2, column]).tocsr(), self.b1)
        if x is None:  # pragma: no cover - X = 0, z = 0 is feasible
            raise RuntimeError("the allocation LP failed")
        return max(float(x[-1]), 0.0)

    def allocate(self, need, weight, z) -> np.ndarray:
        """Among allocations with ``thr_j(X) >= need_j z`` (to :data:`_SLACK`), the largest ``sum_j weight_j thr_j``.

        Rounded to 5 decimals as Gavel's implementation does.
        """
        out = np.zeros(self.shape)
        if self.jobs.size == 0:
            return out
        lower = need[self.rows] * (z * (1.0 - _SLACK) if np.isfinite(z) else 0.0)
        x = _solve(-(self.tp * weight[self.jobs]), self.a2, np.concatenate([self.b, -lower]))
        if x is None:  # pragma: no cover - the bound's optimum is feasible
            raise RuntimeError("the allocation LP failed")
        out[self.jobs, self.types] = np.clip(x.round(5), 0.0, 1.0)
        return out + 0.0


def _lower_bounded(throughput, scale, capacity, need, weight):
    """Solve for the largest ``z`` with ``thr_j(X) >= need_j z``, then the most efficient allocation reaching it."""
    lp = _BoundedLP(throughput, scale, capacity)
    z = lp.z(need)
    return lp.allocate(need, weight, z), z


def max_min_allocation(throughput, scale, capacity) -> np.ndarray:
    """Gavel's max-min fairness (LAS): ``max_X min_j n_j thr_j(X) / T_eq[j]``.

    ``n_j thr_j / T_eq[j]`` is the job's GPU share in units of an even spread: the LP equalises
    the GPU-seconds jobs receive (the attained service LAS balances), at each job's speed on the
    types it gets. See the module docstring for the second stage.

    Examples
    --------
    One type of 4 GPUs; a 1-GPU and a 2-GPU job, equally fast: equal GPU shares mean the 1-GPU
    job runs all the time (1 GPU) and the 2-GPU job half of it (1 GPU on average); the spare
    capacity then goes to the 2-GPU job (efficiency), which runs all the time too.

    >>> import numpy as np
    >>> max_min_allocation(np.array([[1.0], [1.0]]), np.array([1, 2]), np.array([2])).tolist()
    [[1.0], [0.5]]
    >>> max_min_allocation(np.array([[1.0], [1.0]]), np.array([1, 2]), np.array([4])).tolist()
    [[1.0], [1.0]]
    """
    throughput = np.asarray(throughput, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    capacity = np.asarray(capacity, dtype=np.float64)
    t_eq = throughput @ capacity / capacity.sum()
    weight = np.divide(scale, t_eq, out=np.zeros_like(t_eq), where=t_eq > 0)
    need = np.divide(1.0, weight, out=np.zeros_like(weight), where=weight > 0)
    return _lower_bounded(throughput, scale, capacity, need, weight)[0]


def min_total_duration_allocation(throughput, scale, capacity, steps) -> np.ndarray:
    """Gavel's minimum total duration: ``min_X max_j steps_j / thr_j(X)`` (makespan of the jobs present).

    Linear in ``z = 1 / makespan``: ``thr_j(X) >= steps_j z``.

    Examples
    --------
    Two 1-GPU jobs on one GPU; the first has 3x the work: it gets 3/4 of the time, both end together.

    >>> import numpy as np
    >>> min_total_duration_allocation(np.ones((2, 1)), np.ones(2), np.array([1]), np.array([3.0, 1.0])).tolist()
    [[0.75], [0.25]]
    """
    throughput = np.asarray(throughput, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    capacity = np.asarray(capacity, dtype=np.float64)
    steps = np.asarray(steps, dtype=np.float64)
    weight = np.divide(1.0, steps, out=np.zeros_like(steps), where=steps > 0)
    return _lower_bounded(throughput, scale, capacity, steps, weight)[0]


class _OnChange(GavelPolicy):
    """Re-solve the allocation only when the set of active jobs changes, as Gavel's scheduler does.

    Gavel recomputes its allocation when a job arrives or completes; in between, the rounds'
    priorities carry the same allocation out. ``reoptimize="every-round"`` solves every round.
    """

    def __init__(self, placement="sequential", lp_method="interior", reoptimize="on-change"):
        super().__init__(placement=placement, lp_method=lp_method)
        if reoptimize not in ("on-change", "every-round"):
            raise ValueError(f"reoptimize must be 'on-change' or 'every-round', got {reoptimize!r}")
        self.reoptimize = reoptimize
        self._last = None  # (job names, allocation)

    def solve(self, jobs, throughput, scale) -> np.ndarray:  # pragma: no cover - interface
        """Return the objective's allocation for this round."""
        raise NotImplementedError

    def allocation(self, jobs, throughput, scale):
        """Return the objective's allocation, re-solved when the job set changed (see the class docstring)."""
        key = tuple(j.name for j in jobs)
        if self.reoptimize == "on-change" and self._last is not None and self._last[0] == key:
            return self._last[1]
        x = self.solve(jobs, throughput, scale)
        self._last = (key, x)
        return x


class MaxSumThroughputPolicy(GavelPolicy):
    """Gavel's maximum sum of throughputs (OSDI'20, §4.1 "Maximize total throughput").

    The objective of :class:`~fastsched.sim.policies.gavel.GavelPolicy` (the Sia study's "Gavel"),
    registered under the name of Gavel's artifact so the whole family is selectable by name.

    Examples
    --------
    >>> MaxSumThroughputPolicy().name, MaxSumThroughputPolicy().default_interval
    ('max-sum-throughput', 360)
    """

    name = "max-sum-throughput"


class LasPolicy(_OnChange):
    """Least attained service as Gavel's max-min fairness (OSDI'20, §4.1 "LAS", heterogeneity-aware).

    Allocation: :func:`max_min_allocation` (equal GPU-seconds, each at the job's own speed);
    Gavel's priorities then make each job's realised time track it, so the GPU-seconds jobs
    attain are balanced round by round.

    Examples
    --------
    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> apps = {"cifar10": HeteroApplication({"aws": builtin_applications()["cifar10"]})}
    >>> pol = LasPolicy()
    >>> pol.bind_cluster(parse_cluster("1xaws"), 360)
    >>> rows = [WorkloadJob("a", 0, "cifar10", 1, 128), WorkloadJob("b", 0, "cifar10", 4, 128)]
    >>> jobs = make_hetero_jobs(rows, apps, pol, pol.cluster)
    >>> pol.solve(jobs, np.array([pol._tput(j) for j in jobs]), np.array([1, 4])).round(3).tolist()
    [[1.0], [0.75]]
    """

    name = "las"

    def solve(self, jobs, throughput, scale):
        """Max-min fair allocation (see the class docstring)."""
        return max_min_allocation(throughput, scale, self.capacity)


class MinTotalDurationPolicy(_OnChange):
    """Gavel's minimum total duration (OSDI'20, §4.1 "Minimize makespan"), with the true remaining steps.

    Allocation: :func:`min_total_duration_allocation` over each job's remaining optimizer steps
    (the simulator's oracle, :mod:`fastsched.sim.policies._oracle`, times its slowdown).

    Examples
    --------
    >>> MinTotalDurationPolicy().name
    'min-total-duration'
    """

    name = "min-total-duration"

    def solve(self, jobs, throughput, scale):
        """Makespan-minimising allocation (see the class docstring)."""
        steps = np.array([remaining_steps(j) * getattr(j, "slowdown", 1.0) for j in jobs])
        return min_total_duration_allocation(throughput, scale, self.capacity, steps)
