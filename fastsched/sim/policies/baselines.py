"""Baseline schedulers of the Pollux study: Tiresias (2-queue discretised LAS) and Optimus+Oracle.

Both are deterministic, so they pin the simulator's mechanics exactly (see SIMULATOR.md §6.9
of the traces' documentation for the algorithms in words).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from itertools import chain
from operator import attrgetter

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


def _positions(names: list, keys) -> list:
    """Return the indices in ``names`` of ``keys``, ascending (one scan of ``names`` when there are many)."""
    if len(keys) > 8:
        keys = set(keys)
        return [i for i, k in enumerate(names) if k in keys]
    return sorted(names.index(k) for k in keys)


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
    free GPUs. No starvation handling. On a cluster of several GPU types a running job stays
    if its own type has room, and a waiting one takes the type with the most unclaimed GPUs.

    Parameters
    ----------
    queue_threshold : float
        GPU-seconds of service before demotion (16 GPU-hours by default).

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
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
        # Per call the work is proportional to what changed, the running jobs and the jobs
        # admitted, not to the waiting jobs: each queue is kept per GPU count as ordered
        # {name: position} dicts, and the walk merges those groups by position, dropping a
        # group once its GPU count exceeds every type's unclaimed GPUs (none of its jobs can
        # run, so the rest of it stays waiting, or is preempted, without being visited).
        self._groups: tuple[dict, dict] = ({}, {})  # queue -> {GPU count: {name: position}}
        self._queue_of: dict = {}  # active name -> 0 or 1
        self._need: dict = {}  # active name -> GPU count (read when it becomes active)
        self._running: set = set()  # admitted at the last call
        self._executed: dict = {}  # name -> executed seconds while running (kept for good)
        self._last_time = 0
        self._position = 0

    def job_kwargs(self, wjob, app):
        """Extra :class:`~fastsched.sim.engine.job.Job` arguments for a workload row and its app (see :class:`SimPolicy`)."""
        return {"target_num_replicas": wjob.num_replicas, "target_batch_size": wjob.batch_size}

    def uses_requested_gpus(self, wjob) -> bool:
        """Tell whether the job runs on exactly its workload-requested GPU count (see :class:`SimPolicy`)."""
        return True

    def _enqueue(self, queue, key):
        self._queue_of[key] = queue
        self._groups[queue].setdefault(self._need[key], {})[key] = self._position
        self._position += 1

    def _dequeue(self, key):
        group = self._groups[self._queue_of.pop(key)]
        need = self._need[key]
        del group[need][key]
        if not group[need]:
            del group[need]

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        event_time = int(now)
        names = list(map(attrgetter("name"), jobs))
        active = set(names)
        known = self._queue_of.keys()
        for key in known - active:  # completed (or otherwise gone): out of the queues
            self._dequeue(key)
            del self._need[key]
            self._running.discard(key)
        new = active - known
        if new:  # new jobs join the first queue in the order of `jobs`
            for i in _positions(names, new):
                key = names[i]
                self._need[key] = jobs[i].target_num_replicas
                self._enqueue(0, key)
        # Service: the jobs admitted last call ran since then; a first-queue job whose
        # GPU-seconds reach the threshold moves to the end of the second queue.
        elapsed = int(event_time - self._last_time)
        self._last_time = event_time
        demoted = []
        for key in self._running:
            done = self._executed[key] = int(self._executed.get(key, 0) + elapsed)
            if self._queue_of[key] == 0 and int(done * self._need[key]) >= self.queue_threshold:
                demoted.append(key)
        if len(demoted) > 1:  # in the order of `jobs`
            demoted = [names[i] for i in _positions(names, demoted)]
        for key in demoted:
            self._dequeue(key)
            self._enqueue(1, key)
        held = {k: v for k, v in allocations.items() if v and k in active}
        typed = self.cluster is not None and not self.cluster.is_homogeneous
        if typed:
            types = self.cluster.node_types
            left = dict(self.cluster.gpus_by_type)
        else:
            types = None
            left = {None: sum(nodes.values())}
        admitted, chosen = self._walk(left, held, types)
        self._running = admitted
        out = {k: v for k, v in allocations.items() if k in admitted}
        if chosen:
            free = dict(nodes)
            for n, c in Counter(chain.from_iterable(v for k, v in out.items() if k in held)).items():
                free[n] -= c
            order = [n for n in nodes if free[n] > 0]
            for key, t in chosen.items():
                on = order if t is None else [n for n in order if types[n] == t]
                out[key] = _pack(self._need[key], free, on)
        return out

    def _walk(self, left, held, types):
        """Admit queue 0 then queue 1 in order; return the admitted names and ``{newly admitted: type}``."""
        admitted: set = set()
        chosen: dict = {}
        most = max(left.values())
        for queue in self._groups:
            heads = []
            for need, group in queue.items():
                if need <= most:
                    it = iter(group.items())
                    for key, pos in it:
                        heads.append((pos, need, key, it))
                        break
            heapq.heapify(heads)
            while heads:
                _, need, key, it = heapq.heappop(heads)
                if need > most:
                    continue  # no type has room for this GPU count any more
                alloc = held.get(key)
                if alloc:
                    t = None if types is None else types[alloc[0]]
                else:
                    t = max(left, key=left.__getitem__)
                if need <= left[t]:
                    left[t] -= need
                    most = max(left.values())
                    admitted.add(key)
                    if not alloc:
                        chosen[key] = t
                for key, pos in it:
                    heapq.heappush(heads, (pos, need, key, it))
                    break
        return admitted, chosen

    def next_decision_time(self, now):
        """Earliest time the allocations can change without an arrival or a completion: a demotion.

        A running job in the first queue is demoted at the first call where its executed
        seconds times its GPU count reach the threshold; this is never later than that, so
        the simulator may skip the calls in between (the executed time is summed from the
        elapsed time between calls, so skipped calls change nothing). ``inf``: no demotion ahead.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.engine.job import Job
        >>> app = builtin_applications()["cifar10"]
        >>> pol = TiresiasPolicy(queue_threshold=600)
        >>> pol.optimize(0, [Job("a", app, 0, target_num_replicas=2, target_batch_size=128)], {0: 4}, {})
        {'a': [0, 0]}
        >>> pol.next_decision_time(0)  # 600 GPU-seconds on 2 GPUs
        300
        """
        soonest = math.inf
        for key in self._running:
            if self._queue_of[key] == 0:
                left = self.queue_threshold / self._need[key] - self._executed.get(key, 0)
                soonest = min(soonest, now + max(0, math.floor(left)))
        return soonest


class OptimusPolicy(SimPolicy):
    """Optimus with an oracle of the remaining work, fixed batch size.

    Every job first gets one GPU while GPUs last; then GPUs go one at a time to the job with
    the largest ``(step_time(r) - step_time(r + 1)) * remaining_iterations``, using the true
    trace step time of a packed placement. Jobs whose GPU count is unchanged keep their
    nodes; the rest are re-placed in ascending GPU-count order.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
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
        """Extra :class:`~fastsched.sim.engine.job.Job` arguments for a workload row and its app (see :class:`SimPolicy`)."""
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
