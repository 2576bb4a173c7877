"""Baseline schedulers of the Pollux study: Tiresias (2-queue discretised LAS) and Optimus+Oracle.

Both are deterministic, so they pin the simulator's mechanics exactly (see SIMULATOR.md §6.9
of the traces' documentation for the algorithms in words).
"""

from __future__ import annotations

import math

from fastsched.sim.policies.base import SimPolicy

__all__ = ["TiresiasPolicy", "OptimusPolicy"]


def _pack(num_replicas: int, free: dict, order: list) -> list:
    """Place ``num_replicas`` by repeatedly taking the node with the most free GPUs.

    Ties go to the node first in ``order``. ``free`` is updated in place.
    """
    alloc: list = []
    while len(alloc) < num_replicas:
        best = None
        for node in order:
            if best is None or free[node] > free[best]:
                best = node
        count = free[best]
        if count <= 0:
            raise RuntimeError("no free GPU left while placing a job")
        num = min(count, num_replicas - len(alloc))
        alloc.extend([best] * num)
        free[best] -= num
    return alloc


def _pack_one_type(num_replicas: int, free: dict, order: list, node_types) -> list:
    """:func:`_pack` within the GPU type with the most free GPUs (a job never spans two types).

    Places fewer replicas if no type has ``num_replicas`` free GPUs (callers check first).
    """
    by_type: dict = {}
    for n in order:
        by_type[node_types[n]] = by_type.get(node_types[n], 0) + free[n]
    best = max(by_type, key=by_type.__getitem__)
    return _pack(min(num_replicas, by_type[best]), free, [n for n in order if node_types[n] == best])


def _free_gpus(nodes: dict, allocations: dict) -> tuple[dict, list]:
    free = dict(nodes)
    for alloc in allocations.values():
        for n in alloc:
            free[n] -= 1
    order = [n for n in nodes if free[n] > 0]
    return free, order


class TiresiasPolicy(SimPolicy):
    """Tiresias: two-queue discretised least-attained-service, fixed GPUs and batch size.

    A job is demoted to the second queue once its executed time times its GPU count reaches
    ``queue_threshold`` GPU-seconds. Each round, queue 0 then queue 1 are walked in arrival
    order and every job that fits in the GPUs still unclaimed runs; the others are preempted.
    Running jobs keep their nodes; a newly started job is packed onto the nodes with the most
    free GPUs. No starvation handling.

    Parameters
    ----------
    queue_threshold : float
        GPU-seconds of service before demotion (16 GPU-hours by default).

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> from fastsched.sim.job import Job
    >>> from fastsched.sim.policies import make_policy
    >>> app = builtin_applications()["cifar10"]
    >>> jobs = [Job("a", app, 0, target_num_replicas=2, target_batch_size=128),
    ...         Job("b", app, 0, target_num_replicas=4, target_batch_size=128)]
    >>> make_policy("tiresias").optimize(0, jobs, {0: 4, 1: 4}, {})
    {'a': [0, 0], 'b': [1, 1, 1, 1]}
    """

    name = "tiresias"

    def __init__(self, queue_threshold=3600 * 16):
        self.queue_threshold = queue_threshold
        self._queues: tuple[list, list] = ([], [])
        self._status: dict = {}
        self._last_check: dict = {}
        self._executed: dict = {}
        self._replicas: dict = {}

    def job_kwargs(self, wjob, app):
        """Extra :class:`~fastsched.sim.job.Job` arguments for a workload row and its app (see :class:`SimPolicy`)."""
        return {"target_num_replicas": wjob.num_replicas, "target_batch_size": wjob.batch_size}

    def uses_requested_gpus(self, wjob) -> bool:
        """Tell whether the job runs on exactly its workload-requested GPU count (see :class:`SimPolicy`)."""
        return True

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        event_time = int(now)
        active = {job.name: job for job in jobs}
        self._replicas = {key: job.target_num_replicas for key, job in active.items()}
        q0, q1 = self._queues
        q0[:] = [k for k in q0 if k in active]
        q1[:] = [k for k in q1 if k in active]
        self._status = {k: v for k, v in self._status.items() if k in active}
        allocations = {k: v for k, v in allocations.items() if k in active}
        for key in active:
            if key not in self._status:
                self._status[key] = "PENDING"
                q0.append(key)
        for key, job in active.items():
            elapsed = int(event_time - self._last_check.get(key, 0))
            self._last_check[key] = event_time
            if self._status[key] == "RUNNING":
                self._executed[key] = int(self._executed.get(key, 0) + elapsed)
                gputime = int(self._executed[key] * job.target_num_replicas)
                if key in q0 and gputime >= self.queue_threshold:
                    q0.remove(key)
                    q1.append(key)
        if self.cluster is not None and not self.cluster.is_homogeneous:
            return self._place_typed(q0, q1, active, nodes, allocations)
        num_gpus = sum(nodes.values())
        for queue in (q0, q1):
            for key in queue:
                need = active[key].target_num_replicas
                if need <= num_gpus:
                    self._status[key] = "RUNNING"
                    num_gpus -= need
                else:
                    self._status[key] = "PENDING"
                    allocations.pop(key, None)
        free, order = _free_gpus(nodes, allocations)
        for queue in (q0, q1):
            for key in queue:
                if self._status[key] == "RUNNING" and not allocations.get(key):
                    allocations[key] = _pack(active[key].target_num_replicas, free, order)
        return allocations

    def next_decision_time(self, now):
        """Earliest time the allocations can change without an arrival or a completion: a demotion.

        A running job in the first queue is demoted at the first call where its executed
        seconds times its GPU count reach the threshold; this is never later than that, so
        the simulator may skip the calls in between (the executed time is summed from the
        elapsed time between calls, so skipped calls change nothing). ``inf``: no demotion ahead.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> from fastsched.sim.job import Job
        >>> app = builtin_applications()["cifar10"]
        >>> pol = TiresiasPolicy(queue_threshold=600)
        >>> pol.optimize(0, [Job("a", app, 0, target_num_replicas=2, target_batch_size=128)], {0: 4}, {})
        {'a': [0, 0]}
        >>> pol.next_decision_time(0)  # 600 GPU-seconds on 2 GPUs
        300
        """
        soonest = math.inf
        for key in self._queues[0]:
            if self._status.get(key) == "RUNNING":
                left = self.queue_threshold / self._replicas[key] - self._executed.get(key, 0)
                soonest = min(soonest, now + max(0, math.floor(left)))
        return soonest

    def _place_typed(self, q0, q1, active, nodes, allocations):
        """Admission per GPU type: a running job stays if its type has room, a new one goes to the type with most room."""
        types = self.cluster.node_types
        left = dict(self.cluster.gpus_by_type)
        chosen: dict = {}
        for queue in (q0, q1):
            for key in queue:
                need = active[key].target_num_replicas
                alloc = allocations.get(key)
                t = types[alloc[0]] if alloc else max(left, key=left.__getitem__)
                if need <= left[t]:
                    self._status[key] = "RUNNING"
                    left[t] -= need
                    chosen[key] = t
                else:
                    self._status[key] = "PENDING"
                    allocations.pop(key, None)
        free, order = _free_gpus(nodes, allocations)
        for queue in (q0, q1):
            for key in queue:
                if self._status[key] == "RUNNING" and not allocations.get(key):
                    t = chosen[key]
                    allocations[key] = _pack(active[key].target_num_replicas, free, [n for n in order if types[n] == t])
        return allocations


class OptimusPolicy(SimPolicy):
    """Optimus with an oracle of the remaining work, fixed batch size.

    Every job first gets one GPU while GPUs last; then GPUs go one at a time to the job with
    the largest ``(step_time(r) - step_time(r + 1)) * remaining_iterations``, using the true
    trace step time of a packed placement. Jobs whose GPU count is unchanged keep their
    nodes; the rest are re-placed in ascending GPU-count order.

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> from fastsched.sim.job import Job
    >>> from fastsched.sim.policies import make_policy
    >>> app = builtin_applications()["cifar10"]
    >>> jobs = [Job("a", app, 0, target_batch_size=128), Job("b", app, 0, target_batch_size=128)]
    >>> alloc = make_policy("optimus").optimize(0, jobs, {0: 4, 1: 4}, {})
    >>> {name: len(nodes) for name, nodes in alloc.items()}
    {'a': 4, 'b': 4}
    """

    name = "optimus"

    def __init__(self):
        self._gpus_per_node = 4

    def job_kwargs(self, wjob, app):
        """Extra :class:`~fastsched.sim.job.Job` arguments for a workload row and its app (see :class:`SimPolicy`)."""
        return {"target_batch_size": wjob.batch_size}

    def _max_replicas(self, job):
        app = job.application
        if app.max_replicas is not None:
            return app.max_replicas
        return job.target_batch_size // app.min_local_bsz

    def predict_step_time(self, job, num_replicas):
        """Return the true seconds per optimizer step at ``num_replicas`` packed GPUs (fixed batch)."""
        app = job.application
        g = self._gpus_per_node
        placement = (g,) * (num_replicas // g) + ((num_replicas % g,) if num_replicas % g else ())
        local_bsz = math.ceil(job.target_batch_size / num_replicas - 1e-8)
        accum_steps = math.ceil(local_bsz / app.max_local_bsz - 1e-8) - 1
        if num_replicas == 1:
            accum_steps = max(1, accum_steps)
        atomic_bsz = math.ceil(local_bsz / (accum_steps + 1) - 1e-8)
        count = num_replicas * (accum_steps + 1)
        atomic_bsz = min(atomic_bsz, int(app.max_batch_size / count))
        step_time, sync_time = app.throughput(placement, atomic_bsz)
        return step_time + (step_time - sync_time) * accum_steps

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        allocations = {job.name: allocations[job.name] for job in jobs if job.name in allocations}
        gpn = max(nodes.values()) if nodes else 4
        self._gpus_per_node = gpn
        remaining = {}
        for job in jobs:
            app = job.application
            completion_epoch = app.completion_epoch(job.target_batch_size)
            if completion_epoch <= job.epoch:
                remaining[job.name] = 1
            else:
                remaining[job.name] = app.iteration(job.target_batch_size, completion_epoch) - app.iteration(
                    job.target_batch_size, job.epoch
                )
        num_gpus = sum(nodes.values())
        num_replicas = {}
        gain = {}
        by_name = {job.name: job for job in jobs}

        def marginal(job):
            r = num_replicas[job.name]
            if r + 1 > self._max_replicas(job) or num_gpus < 1:
                return 0
            return (self.predict_step_time(job, r) - self.predict_step_time(job, r + 1)) * remaining[job.name]

        for job in jobs:  # every job wants 1 GPU first (stable order)
            if num_gpus < 1:
                num_replicas[job.name] = 0
                gain[job.name] = 0
                continue
            num_replicas[job.name] = 1
            num_gpus -= 1
            gain[job.name] = marginal(job)
        while num_gpus > 0 and gain and max(gain.values()) > 0:
            key = max(gain, key=gain.__getitem__)
            num_replicas[key] += 1
            gain[key] = marginal(by_name[key])
            num_gpus -= 1
        allocations = {k: v for k, v in allocations.items() if len(v) == num_replicas[k]}
        free, order = _free_gpus(nodes, allocations)
        typed = self.cluster is not None and not self.cluster.is_homogeneous
        for key in sorted(num_replicas, key=num_replicas.__getitem__):
            if num_replicas[key] > 0 and not allocations.get(key):
                if typed:  # type-agnostic counts; each job packed within one type
                    alloc = _pack_one_type(num_replicas[key], free, order, self.cluster.node_types)
                    if alloc:
                        allocations[key] = alloc
                    continue
                allocations[key] = _pack(num_replicas[key], free, order)
        return allocations
