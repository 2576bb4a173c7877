"""Gandiva (OSDI'18): greedy packing with time slicing, on rigid jobs.

What the simulator can model of Gandiva's mechanisms (§3 of the paper):

* **time slicing** (§3.1, suspend-resume): when more GPUs are asked for than the cluster has,
  jobs take turns. A job that started keeps its GPUs for at least one ``quantum``; then, each
  round, jobs are ranked by the time share they received since they arrived (seconds run
  over seconds present, the fairest turn first; ties: arrival) and taken greedily while they
  fit. Swapping out costs the job its restart delay, as in the paper's suspend-resume;
* **greedy packing / affinity** (§3.2): a job's GPUs go on as few nodes as possible, onto the
  fullest node that still holds them (:func:`~fastsched.sim.policies.base.pack`), which keeps
  whole nodes free for large jobs;
* **heterogeneity**: none, as in the paper; a job stays within one GPU type, the type with the
  most free GPUs.

Not modelled: GPU sharing by two jobs (packing in the paper's sense of space sharing, §3.3)
and its introspective profiling; the simulator runs one job per GPU.
"""

from __future__ import annotations

from fastsched.sim.policies.base import SimPolicy, free_gpus, pack

__all__ = ["GandivaPolicy"]


class GandivaPolicy(SimPolicy):
    """Gandiva's time slicing and greedy packing (Xiao et al., OSDI'18, §3.1-3.2); see the module docstring.

    Parameters
    ----------
    quantum : int
        Seconds a started job keeps its GPUs before it can be swapped out (Gandiva's time
        slice; default 600 s, well above the restart delays it costs).

    Examples
    --------
    One 4-GPU node, three 4-GPU jobs: they take turns, one quantum each.

    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> app = builtin_applications()["cifar10"]
    >>> pol = GandivaPolicy(quantum=120)
    >>> rows = [WorkloadJob(n, 0, "cifar10", 4, 512) for n in "abc"]
    >>> jobs = [Job(r.name, app, 0, **pol.job_kwargs(r, app)) for r in rows]
    >>> alloc = {}
    >>> for now in (60, 120, 180, 240, 300, 360, 420):
    ...     alloc = pol.optimize(now, jobs, {0: 4}, alloc)
    ...     print(now, sorted(alloc))
    60 ['a']
    120 ['a']
    180 ['b']
    240 ['b']
    300 ['c']
    360 ['c']
    420 ['a']
    """

    name = "gandiva"

    def __init__(self, quantum=600):
        if isinstance(quantum, bool) or not isinstance(quantum, int) or quantum < 1:
            raise ValueError(f"quantum must be an integer >= 1 (seconds), got {quantum!r}")
        self.quantum = quantum
        self._started: dict = {}  # job name -> time it last started
        self._ran: dict = {}  # job name -> seconds it held GPUs
        self._last = None

    def job_kwargs(self, wjob, app):
        """Run each job at its workload row's GPU count and batch size (see :class:`SimPolicy`)."""
        batch = app.fixed_batch_size if getattr(app, "fixed_batch_size", None) is not None else wjob.batch_size
        return {"target_num_replicas": wjob.num_replicas, "target_batch_size": int(batch)}

    def uses_requested_gpus(self, wjob) -> bool:
        """Tell whether the job runs on exactly its workload-requested GPU count (it does)."""
        return True

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        step = 0 if self._last is None else now - self._last
        self._last = now
        alive = {j.name for j in jobs}
        for name in allocations:
            self._ran[name] = self._ran.get(name, 0) + step
        self._ran = {k: v for k, v in self._ran.items() if k in alive}
        self._started = {k: v for k, v in self._started.items() if k in allocations}
        views = self.views(jobs)
        pinned = {
            v.name for v in views if v.name in allocations and now - self._started.get(v.name, now) < self.quantum
        }
        out = {k: allocations[k] for k in pinned}
        free = free_gpus(nodes, out)
        types = self.cluster.node_types if self.cluster is not None else None

        def turn(v):
            present = max(now - v.submission_time, 1)
            return (self._ran.get(v.name, 0) / present, v.submission_time)

        # Running jobs past their quantum compete with the waiting ones for the next slice.
        for v in sorted((v for v in views if v.name not in pinned), key=turn):
            if v.name in allocations:
                keep = free_gpus(free, {v.name: allocations[v.name]})
                if min(keep.values()) >= 0:  # its GPUs are still free: it keeps them (no restart)
                    free = keep
                    out[v.name] = allocations[v.name]
                    continue
            alloc = pack(v.requested_gpus, free, self._one_type(free, types))
            if alloc is not None:
                out[v.name] = alloc
                self._started[v.name] = now
        for name in out:
            self._started.setdefault(name, now)
        return out

    @staticmethod
    def _one_type(free, types):
        """Nodes of the GPU type with the most free GPUs (all nodes on a cluster without types)."""
        if types is None:
            return None
        by_type: dict = {}
        for n, f in free.items():
            by_type[types[n]] = by_type.get(types[n], 0) + f
        best = max(by_type, key=lambda t: by_type[t])
        return [n for n in free if types[n] == best]
