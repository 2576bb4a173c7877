"""Queue baselines on rigid jobs: FIFO, SRTF and AlloX, heterogeneity-aware as in Gavel's study.

Jobs run on the GPU count and batch size of their workload row (Gavel's job model: the
throughputs are :meth:`GavelPolicy.throughputs`, true steps per second packed on each type).
Each round the queue is walked in the policy's order and each job takes the fastest GPU type
(by its own throughput) that still has room for all its GPUs; a job never spans two types.
Placement within a type keeps running jobs on their nodes and packs new ones
(:func:`~fastsched.sim.policies._placement.place_type`).
"""

from __future__ import annotations

import numpy as np

from fastsched.sim.policies._oracle import remaining_steps
from fastsched.sim.policies._placement import place_type
from fastsched.sim.policies.gavel import GavelPolicy

__all__ = ["FifoPolicy", "SrtfPolicy", "AlloxPolicy"]


class _QueuePolicy(GavelPolicy):
    """Greedy walk of an ordered queue (Gavel's job model, bind_cluster and throughputs; not its LP)."""

    default_interval = None  # the preset's rounds (60 s): these policies have no round of their own
    preemptive = True

    def __init__(self):
        super().__init__()

    def order(self, now, jobs, tput) -> list:  # pragma: no cover - interface
        """Return the indices of ``jobs`` in scheduling order."""
        raise NotImplementedError

    def candidate_types(self, j, tput) -> list:
        """Return the types job ``j`` may take, preferred first: the fastest (ties: type order)."""
        return [int(t) for t in np.argsort(-tput[j], kind="stable") if tput[j, t] > 0]

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        if self._type_time is None:
            raise RuntimeError(f"{type(self).__name__} needs bind_cluster(spec, interval) before the first round")
        tput = np.array([self._tput(job) for job in jobs]).reshape(len(jobs), len(self.types))
        left = self.capacity.copy()
        index = {t: i for i, t in enumerate(self.types)}
        node_types = self.cluster.node_types
        chosen: dict = {}
        if not self.preemptive:  # running jobs keep their type and GPUs
            for j, job in enumerate(jobs):
                alloc = allocations.get(job.name)
                if alloc:
                    chosen[j] = index[node_types[alloc[0]]]
                    left[chosen[j]] -= len(alloc)
        for j in self.order(now, jobs, tput):
            if j in chosen:
                continue
            need = int(jobs[j].target_num_replicas)
            fits = [t for t in self.candidate_types(j, tput) if left[t] >= need]
            if not fits:
                if self.strict:
                    break
                continue
            chosen[j] = int(fits[0])
            left[fits[0]] -= need
        out = {}
        for t, gtype in enumerate(self.types):
            want = {jobs[j].name: int(jobs[j].target_num_replicas) for j, tt in chosen.items() if tt == t}
            if want:
                current = {
                    k: allocations[k] for k in want if allocations.get(k) and node_types[allocations[k][0]] == gtype
                }
                out.update(place_type(want, self.cluster.nodes_by_type[gtype], self.gpn[gtype], current))
        return out


class FifoPolicy(_QueuePolicy):
    """First in, first out, non-preemptive (Gavel, OSDI'20, §4.1 and its FIFO baseline; heterogeneity-aware).

    Jobs are taken in submission order (ties: workload order); a running job keeps its GPUs
    until it completes. Each waiting job takes the fastest type with room for its requested
    GPUs. With ``strict=False`` (default, as Gavel's FIFO allocation) a job that fits nowhere
    waits and later jobs may start; ``strict=True`` stops at it (head-of-line blocking).

    Parameters
    ----------
    strict : bool
        Head-of-line blocking.

    Examples
    --------
    Two nodes of 4 GPUs; ``a`` (3 GPUs) runs, ``b`` (6 GPUs) does not fit beside it, ``c``
    (1 GPU) does and starts; with ``strict`` it waits behind ``b``:

    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> apps = {"cifar10": HeteroApplication({"aws": builtin_applications()["cifar10"]})}
    >>> rows = [WorkloadJob("a", 0, "cifar10", 3, 128), WorkloadJob("b", 5, "cifar10", 6, 128),
    ...         WorkloadJob("c", 9, "cifar10", 1, 128)]
    >>> def first_round(pol, allocations):
    ...     pol.bind_cluster(parse_cluster("2xaws"), 60)
    ...     jobs = make_hetero_jobs(rows, apps, pol, pol.cluster)
    ...     return pol.optimize(60, jobs, pol.cluster.nodes(), allocations)
    >>> first_round(FifoPolicy(), {"a": [0, 0, 0]})
    {'a': [0, 0, 0], 'c': [0]}
    >>> first_round(FifoPolicy(strict=True), {"a": [0, 0, 0]})
    {'a': [0, 0, 0]}
    """

    name = "fifo"
    preemptive = False

    def __init__(self, strict=False):
        super().__init__()
        if not isinstance(strict, bool):
            raise TypeError(f"strict must be a bool, got {strict!r}")
        self.strict = strict

    def order(self, now, jobs, tput):
        """Submission order, ties in workload order."""
        return sorted(range(len(jobs)), key=lambda j: jobs[j].submission_time)


class SrtfPolicy(_QueuePolicy):
    """Shortest remaining time first, preemptive, with the simulator's true remaining time.

    The oracle baseline of Synergy (OSDI'22, §5 "SRTF") and Gavel's artifact: each round jobs
    are ordered by their true remaining training time on their fastest GPU type (remaining
    optimizer steps at their batch size, :mod:`fastsched.sim.policies._oracle`, over the
    type's steps per second, times the job's slowdown); each takes the fastest type with room,
    preempting longer jobs. Ties: submission time, then workload order.

    Examples
    --------
    One 4-GPU node, two 4-GPU jobs: the shorter (fewer epochs left) runs, preempting the other.

    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> apps = {"cifar10": HeteroApplication({"aws": builtin_applications()["cifar10"]})}
    >>> pol = SrtfPolicy()
    >>> pol.bind_cluster(parse_cluster("1xaws"), 60)
    >>> rows = [WorkloadJob("long", 0, "cifar10", 4, 128), WorkloadJob("short", 0, "cifar10", 4, 128)]
    >>> long, short = make_hetero_jobs(rows, apps, pol, pol.cluster)
    >>> short.progress, short.epoch = short.hetero_application.progress(50), 50  # halfway through
    >>> pol.optimize(60, [long, short], pol.cluster.nodes(), {"long": [0, 0, 0, 0]})
    {'short': [0, 0, 0, 0]}
    """

    name = "srtf"
    strict = False

    def remaining_time(self, job, tput_row) -> float:
        """Return the true seconds of training left on the job's fastest type (``inf`` if it fits nowhere)."""
        best = float(np.max(tput_row)) if tput_row.size else 0.0
        if best <= 0:
            return float("inf")
        return remaining_steps(job) * getattr(job, "slowdown", 1.0) / best

    def order(self, now, jobs, tput):
        """Ascending true remaining time, ties by submission time then workload order."""
        rem = [self.remaining_time(job, tput[j]) for j, job in enumerate(jobs)]
        return sorted(range(len(jobs)), key=lambda j: (rem[j], jobs[j].submission_time))


class AlloxPolicy(_QueuePolicy):
    """AlloX's min-cost matching of jobs to GPU types (Le et al., EuroSys'20, §4.1-4.2), non-preemptive.

    AlloX minimises the average completion time on machines of different speeds by the classic
    matching of jobs to (machine, position) pairs: putting job ``j`` ``k``-th from the end of
    machine ``m``'s queue costs ``k p[j, m]`` (it delays itself and the ``k - 1`` jobs after it).
    Our adaptation to rigid multi-GPU jobs (own, not the paper's): a GPU type ``t`` is one
    machine whose processing time of job ``j`` is its GPU-time share of the type,
    ``q[j, t] = n_j p[j, t] / g_t`` (``p``: the true remaining time at its requested GPUs,
    the oracle of :mod:`fastsched.sim.policies._oracle`; ``g_t``: the type's GPUs). Each round
    the waiting jobs are matched (:func:`scipy.optimize.linear_sum_assignment`); running jobs
    keep their GPUs; each type's queue (largest position first) starts jobs while its GPUs
    last. AlloX's fairness knob is not modelled (its ``alpha = 1``: pure average JCT).

    Examples
    --------
    One type: the matching is shortest-GPU-time first. Two waiting 2-GPU jobs on a 2-GPU node,
    ``b`` nearly done: ``b`` starts.

    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> apps = {"cifar10": HeteroApplication({"aws": builtin_applications()["cifar10"]})}
    >>> pol = AlloxPolicy()
    >>> pol.bind_cluster(parse_cluster("1xaws:2"), 60)
    >>> a, b = make_hetero_jobs([WorkloadJob(n, 0, "cifar10", 2, 128) for n in "ab"], apps, pol, pol.cluster)
    >>> b.progress, b.epoch = b.hetero_application.progress(90), 90
    >>> pol.optimize(60, [a, b], pol.cluster.nodes(), {})
    {'b': [0, 0]}
    """

    name = "allox"
    preemptive = False
    strict = False

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        self._queue = self._match(jobs, allocations)
        return super().optimize(now, jobs, nodes, allocations)

    def _match(self, jobs, allocations) -> list:
        """Return the waiting jobs' indices in start order: by type as matched, each queue's front first."""
        from scipy.optimize import linear_sum_assignment

        waiting = [j for j, job in enumerate(jobs) if not allocations.get(job.name)]
        if not waiting:
            return []
        tput = np.array([self._tput(jobs[j]) for j in waiting]).reshape(len(waiting), len(self.types))
        steps = np.array([remaining_steps(jobs[j]) * getattr(jobs[j], "slowdown", 1.0) for j in waiting])
        gpus = np.array([jobs[j].target_num_replicas for j in waiting], dtype=np.float64)
        with np.errstate(divide="ignore"):
            q = np.where(tput > 0, (gpus * steps)[:, None] / np.where(tput > 0, tput, 1.0), np.inf)
        q = q / self.capacity[None, :]
        n = len(waiting)
        k = np.arange(1, n + 1, dtype=np.float64)
        # Columns: (type t, position k from the end of t's queue), cost k q[j, t].
        cost = (q[:, :, None] * k[None, None, :]).reshape(n, -1)
        big = np.nanmax(np.where(np.isfinite(cost), cost, np.nan)) * 1e3 + 1.0 if np.isfinite(cost).any() else 1.0
        rows, cols = linear_sum_assignment(np.where(np.isfinite(cost), cost, big))
        slot = {int(r): divmod(int(c), n) for r, c in zip(rows, cols, strict=True)}
        # Queue front = largest position from the end; types in order.
        order = sorted(slot, key=lambda r: (slot[r][0], -slot[r][1]))
        self._matched = {waiting[r]: slot[r][0] for r in order if np.isfinite(q[r, slot[r][0]])}
        return list(self._matched)

    def order(self, now, jobs, tput):
        """Return the matching's start order (see the class docstring)."""
        return self._queue

    def candidate_types(self, j, tput):
        """Return the type the matching gave job ``j``."""
        return [self._matched[j]] if j in self._matched else []
