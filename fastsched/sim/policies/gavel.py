"""Gavel (OSDI'20), max-sum-throughput with time sharing, as the Sia study runs it.

Jobs keep the GPU count and batch size of the workload. Each round (360 s in the study):

1. throughput ``T[j, t]``: true optimizer steps per second of job ``j`` on its GPU count
   packed on type ``t`` (0 where it does not fit);
2. allocation ``X`` from the linear program ``max sum T * X`` subject to ``sum_t X[j, t] <= 1``
   and ``sum_j n_j X[j, t] <= GPUs of t``, ``X >= 0``, solved like Gavel's implementation by an
   interior-point method (its optimum in the interior of the optimal face: equal jobs share
   time evenly, so they take turns) and rounded to 5 decimals;
3. priorities ``X[j, t] / (time j ran on t / time spent on t by all jobs)``, each job
   starting with half a round on every type;
4. walk the (job, type) pairs by decreasing priority (then allocation), giving a job its GPUs
   on the first type with enough left; running jobs keep their nodes when they stay on a type
   and those GPUs are still free, the others take free GPUs in node order (``placement=
   "sequential"``, the study's implementation: a job may straddle nodes) or are packed
   (``"packed"``);
5. charge one round to each scheduled (job, type) and to the type.
"""

from __future__ import annotations

import numpy as np

from fastsched.sim.policies._interior_lp import job_type_lp
from fastsched.sim.policies._placement import packed_placement, place_sequential, place_type
from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.truth.per_type import fixed_batch_throughput

__all__ = ["GavelPolicy", "max_sum_throughput", "gavel_priorities", "allocation_constraints"]


def allocation_constraints(jobs, types, scale, capacity, num_jobs):
    """Build ``A x <= b`` of Gavel's allocations over the variables ``x[i] = X[jobs[i], types[i]]``.

    One row per job (``sum_t X[j, t] <= 1``: at most all of the time), then one per type
    (``sum_j scale[j] X[j, t] <= capacity[t]``). Shared by every objective of Gavel's family.

    Returns
    -------
    tuple
        ``(A, b)``: a sparse ``(num_jobs + num_types, len(jobs))`` matrix and its bounds.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = allocation_constraints(np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([1.0, 2.0]),
    ...                               np.array([4.0, 8.0]), 2)
    >>> a.toarray().tolist(), b.tolist()
    ([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 2.0]], [1.0, 1.0, 4.0, 8.0])
    """
    # scipy is imported where it is used: a run whose policy needs no LP does not load it.
    from scipy.sparse import csr_array

    n = len(jobs)
    num_types = len(capacity)
    a = csr_array(
        (
            np.concatenate([np.ones(n), np.asarray(scale, dtype=np.float64)[jobs]]),
            (np.concatenate([jobs, num_jobs + types]), np.tile(np.arange(n), 2)),
        ),
        shape=(num_jobs + num_types, n),
    )
    return a, np.concatenate([np.ones(num_jobs), np.asarray(capacity, dtype=np.float64)])


def max_sum_throughput(throughput, scale, capacity, method="interior") -> np.ndarray:
    """Gavel's time-sharing allocation maximising the sum of throughputs.

    Parameters
    ----------
    throughput : numpy.ndarray, shape (J, T)
        Throughput of each job on each type (0: cannot run there).
    scale : numpy.ndarray, shape (J,)
        GPUs each job needs.
    capacity : numpy.ndarray, shape (T,)
        GPUs per type.
    method : {"interior", "simplex"}
        ``"interior"`` (Gavel's implementation, an interior-point solver): among several
        optima the one in the interior of the optimal face, so equal jobs share time evenly;
        rounded to 5 decimals as the implementation does. ``"simplex"``: a vertex (HiGHS).

    Returns
    -------
    numpy.ndarray, shape (J, T)
        Fraction of time of each job on each type.

    Examples
    --------
    Two 1-GPU jobs, one GPU of each of two types; job 0 is 3x faster on type 1, job 1 only
    2x: the sum is largest with job 0 on type 1 and job 1 on type 0 (1 + 3 = 4 > 2 + 2).

    >>> import numpy as np
    >>> x = max_sum_throughput(np.array([[1.0, 3.0], [1.0, 2.0]]), np.array([1, 1]), np.array([1, 1]))
    >>> x.tolist()
    [[0.0, 1.0], [1.0, 0.0]]

    Three equal jobs, two GPUs: the interior optimum shares evenly, a vertex does not.

    >>> max_sum_throughput(np.ones((3, 1)), np.ones(3), np.array([2])).tolist()
    [[0.66667], [0.66667], [0.66667]]
    >>> sorted(max_sum_throughput(np.ones((3, 1)), np.ones(3), np.array([2]), method="simplex").ravel().tolist())
    [0.0, 1.0, 1.0]
    """
    if method not in ("interior", "simplex"):
        raise ValueError(f"method must be 'interior' or 'simplex', got {method!r}")
    throughput = np.asarray(throughput, dtype=np.float64)
    num_jobs, num_types = throughput.shape
    out = np.zeros((num_jobs, num_types))
    # Entries with no throughput stay 0: only the others are variables.
    jobs, types = np.nonzero(throughput > 0)
    n = jobs.size
    if n == 0:
        return out
    scale = np.asarray(scale, dtype=np.float64)
    capacity = np.asarray(capacity, dtype=np.float64)
    tp = throughput[jobs, types]
    if method == "interior":
        x = job_type_lp(tp, jobs, types, scale[jobs], num_jobs, capacity).round(5)
    else:
        from scipy.optimize import linprog

        a, b = allocation_constraints(jobs, types, scale, capacity, num_jobs)
        res = linprog(-tp, A_ub=a, b_ub=b, bounds=(0, None), method="highs")
        if res.x is None:  # pragma: no cover - x = 0 is always feasible
            raise RuntimeError(f"Gavel's linear program failed: {res.message}")
        x = res.x
    out[jobs, types] = np.clip(x, 0.0, 1.0)
    return out + 0.0  # no -0.0


def gavel_priorities(allocation, job_time, type_time) -> np.ndarray:
    """Priorities ``X / (job_time / type_time)`` (``X * 1e9`` where a job has no time share yet).

    Examples
    --------
    >>> import numpy as np
    >>> gavel_priorities(np.array([[0.5, 0.0]]), np.array([[60.0, 30.0]]), np.array([120.0, 30.0])).tolist()
    [[1.0, 0.0]]
    """
    allocation = np.asarray(allocation, dtype=np.float64)
    frac = np.divide(
        job_time, type_time[None, :], out=np.zeros_like(job_time, dtype=np.float64), where=type_time[None, :] > 0
    )
    out = np.where(frac > 0, allocation / np.where(frac > 0, frac, 1.0), allocation * 1e9)
    return np.where(allocation > 0, out, 0.0)


class GavelPolicy(SimPolicy):
    """Gavel's heterogeneity-aware max-sum-throughput policy (see the module docstring).

    Parameters
    ----------
    placement : {"sequential", "packed"}
        Worker assignment: the study's sequential one (a job may straddle nodes) or packed.
    lp_method : {"interior", "simplex"}
        Optimum of the allocation LP taken (see :func:`max_sum_throughput`): the interior one
        of Gavel's implementation, or a simplex vertex (for comparison).

    Examples
    --------
    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> pol = GavelPolicy()
    >>> pol.bind_cluster(parse_cluster("1xaws,1xrtx"), 360)
    >>> pol.default_interval
    360

    One round for two new jobs (rigid: the workload's GPU counts 2 and 1):

    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> app = builtin_applications()["cifar10"]
    >>> apps = {"cifar10": HeteroApplication({"aws": app, "rtx": app})}
    >>> wjobs = [WorkloadJob("a", 0, "cifar10", 2, 128), WorkloadJob("b", 0, "cifar10", 1, 128)]
    >>> jobs = make_hetero_jobs(wjobs, apps, pol, pol.cluster)
    >>> pol.optimize(0, jobs, pol.cluster.nodes(), {})
    {'a': [1, 1], 'b': [1]}
    """

    name = "gavel"
    needs_gpu_types = True
    default_interval = 360

    def __init__(self, placement="sequential", lp_method="interior"):
        if placement not in ("sequential", "packed"):
            raise ValueError(f"placement must be 'sequential' or 'packed', got {placement!r}")
        if lp_method not in ("interior", "simplex"):
            raise ValueError(f"lp_method must be 'interior' or 'simplex', got {lp_method!r}")
        self.placement = placement
        self.lp_method = lp_method
        self._job_time: dict = {}
        self._type_time = None

    def job_kwargs(self, wjob, app):
        """Extra :class:`~fastsched.sim.engine.job.Job` arguments for a workload row and its app (see :class:`SimPolicy`)."""
        # The workload's batch size as is (the study's final simulator no longer lowers it to
        # fit memory; per-GPU batches above a type's limit run with gradient accumulation).
        batch = app.fixed_batch_size if app.fixed_batch_size is not None else wjob.batch_size
        return {"target_num_replicas": wjob.num_replicas, "target_batch_size": int(batch)}

    def uses_requested_gpus(self, wjob) -> bool:
        """Tell whether the job runs on exactly its workload-requested GPU count (see :class:`SimPolicy`)."""
        return True

    def bind_cluster(self, spec, interval):
        """Receive the cluster and the round length (see :class:`SimPolicy`)."""
        super().bind_cluster(spec, interval)
        self.types = spec.types
        self.gpn = dict(spec.gpus_per_node_by_type)
        self.capacity = np.array([spec.gpus_by_type[t] for t in self.types], dtype=np.int64)
        self._type_time = np.zeros(len(self.types))

    def throughputs(self, job) -> np.ndarray:
        """Return the true steps per second of ``job`` on each type at its fixed GPU count and batch size."""
        happ = job.hetero_application
        n = int(job.target_num_replicas)
        out = np.zeros(len(self.types))
        for i, t in enumerate(self.types):
            if n > self.capacity[i]:
                continue
            out[i] = fixed_batch_throughput(
                happ.apps[t],
                packed_placement(n, self.gpn[t]),
                job.target_batch_size,
                happ.max_local_bsz_at(t, packed_placement(n, self.gpn[t])),
            )
        return out

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        if self._type_time is None:
            raise RuntimeError("GavelPolicy needs bind_cluster(spec, interval) before the first round")
        half = self.interval / 2
        active = {job.name for job in jobs}
        self._job_time = {k: v for k, v in self._job_time.items() if k in active}
        for job in jobs:
            if job.name not in self._job_time:
                self._job_time[job.name] = np.full(len(self.types), half)
                self._type_time += half
        tput = np.array([self._tput(job) for job in jobs]).reshape(len(jobs), len(self.types))
        scale = np.array([job.target_num_replicas for job in jobs], dtype=np.int64)
        x = self.allocation(jobs, tput, scale)
        jt = np.array([self._job_time[job.name] for job in jobs]).reshape(len(jobs), len(self.types))
        prio = gavel_priorities(x, jt, self._type_time)
        # (priority, allocation) descending; ties keep (type, job) order.
        entries = [(prio[j, t], x[j, t], t, j) for t in range(len(self.types)) for j in range(len(jobs))]
        entries.sort(key=lambda e: (e[0], e[1]), reverse=True)
        left = self.capacity.copy()
        chosen: dict = {}
        for _, _, t, j in entries:
            if j in chosen or scale[j] > left[t] or tput[j, t] <= 0:
                continue
            chosen[j] = t
            left[t] -= scale[j]
        out = {}
        node_types = self.cluster.node_types
        for t, gtype in enumerate(self.types):
            want = {jobs[j].name: int(scale[j]) for j, tt in chosen.items() if tt == t}
            if not want:
                continue
            current = {k: allocations[k] for k in want if allocations.get(k) and node_types[allocations[k][0]] == gtype}
            place = place_sequential if self.placement == "sequential" else place_type
            out.update(place(want, self.cluster.nodes_by_type[gtype], self.gpn[gtype], current))
        for j, t in chosen.items():
            if jobs[j].name in out:
                self._job_time[jobs[j].name][t] += self.interval
                self._type_time[t] += self.interval
        return out

    def allocation(self, jobs, throughput, scale) -> np.ndarray:
        """Fraction of time of each job on each type: the max-sum-throughput LP (Gavel's other objectives override this).

        ``throughput`` is ``(J, T)`` steps per second (:meth:`throughputs`), ``scale`` the GPUs
        each job needs; returns ``(J, T)``.
        """
        return max_sum_throughput(throughput, scale, self.capacity, self.lp_method)

    def _tput(self, job):
        # Fixed GPU count and batch size: a job's throughputs never change. Kept by the policy,
        # by name, with the job itself so a policy reused on another run never answers stale.
        cache = self.__dict__.setdefault("_tputs", {})
        hit = cache.get(job.name)
        if hit is None or hit[0] is not job:
            hit = cache[job.name] = (job, self.throughputs(job))
        return hit[1]
