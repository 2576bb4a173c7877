"""The cluster loop: fixed scheduling intervals over N nodes x G GPUs.

Each round (published ``Cluster.step``): apply the interference slowdown of the allocations
in force, advance every job by the interval, call the policy with the active jobs, and
reallocate every job whose node list changed. Completed jobs release their GPUs at the next
scheduling point; there is no backfilling inside an interval.

Only the jobs that hold GPUs are stepped: a job without GPUs only lets its clock run, and
every job's clock equals the cluster's (each step advances it by exactly the interval), so
it is set when the job is next stepped instead of being counted round by round. The active
jobs (arrived, unfinished) are kept as a set updated by arrivals (a pointer into the jobs
sorted by submission time) and completions (only stepped jobs complete), so a round costs
the jobs in play, not the whole workload.

The jobs' state is a table of arrays the cluster owns (:mod:`fastsched.sim.engine._state`, one row
per job); the held jobs of a fixed batch configuration are stepped by one kernel call per
round (:func:`~fastsched.sim.engine._state.step_jobs`), the adaptive ones by their own step.
"""

from __future__ import annotations

import json
import time
import weakref

import numpy as np

from fastsched.sim.engine._state import NONE, StateTable, step_jobs

__all__ = ["Cluster", "placement_of"]


def placement_of(alloc) -> list[int]:
    """Run-length count of consecutive equal node ids: ``[3, 3, 0] -> [2, 1]``.

    Examples
    --------
    >>> placement_of([3, 3, 0]), placement_of([]), placement_of([1, 1, 1, 1])
    ([2, 1], [], [4])
    """
    placement: list[int] = []
    for i, node in enumerate(alloc):
        if i == 0 or node != alloc[i - 1]:
            placement.append(1)
        else:
            placement[-1] += 1
    return placement


def _same(a, b) -> bool:
    # Policies hand back the lists they were given for the jobs they leave alone.
    return a is b or a == b


class Cluster:
    """A simulated cluster running a list of jobs under a policy.

    Parameters
    ----------
    jobs : list of Job
        In workload order (the order ties are broken in).
    policy : SimPolicy
    num_nodes, gpus_per_node : int
    interference : float
        Slowdown of a distributed job sharing a node with another distributed job.
    max_nodes : int, optional
        Upper bound for autoscaling (the policy's desired node count is followed, clamped
        to ``[num_nodes, max_nodes]``); ``None`` disables autoscaling.
    log : file object, optional
        Receives one JSON object per round.
    spec : ClusterSpec, optional
        Nodes of several GPU types (overrides ``num_nodes``/``gpus_per_node``; no
        autoscaling). Jobs then run on one type at a time: before a reallocation the cluster
        calls ``job.set_gpu_type`` with the type of the job's nodes.

    Examples
    --------
    Two fixed-size jobs under Tiresias on one 4-GPU node, stepped round by round:

    >>> from fastsched.sim import Job
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.policies import make_policy
    >>> app = builtin_applications()["cifar10"]
    >>> jobs = [Job("a", app, 0, target_num_replicas=2, target_batch_size=128),
    ...         Job("b", app, 0, target_num_replicas=4, target_batch_size=512)]
    >>> cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
    >>> cluster.step(60)
    >>> cluster.allocations, cluster.used_gpus
    ({'a': [0, 0]}, [2])
    >>> while not cluster.all_complete():
    ...     cluster.step(60)
    >>> cluster.rounds, [job.completion_time for job in jobs]
    (71, [2890, 4256])
    """

    def __init__(self, jobs, policy, num_nodes, gpus_per_node=4, interference=0.0, max_nodes=None, log=None, spec=None):
        self.jobs = jobs
        self.policy = policy
        self.min_nodes = self.num_nodes = num_nodes
        self.max_nodes = num_nodes if max_nodes is None else max_nodes
        self.gpus_per_node = gpus_per_node
        self.interference = interference
        self.current_time = 0
        self.allocations: dict = {}
        self.log = log
        self.rounds = 0
        self._index = {job.name: i for i, job in enumerate(jobs)}
        # Arrivals in (submission time, workload order); the active and GPU-holding jobs as
        # workload indices; the count of completed jobs.
        self._arrivals = sorted(range(len(jobs)), key=lambda i: (jobs[i].submission_time, i))
        self._next_arrival = 0
        # Which jobs are active, as a mask over the workload (listed in workload order only
        # in the rounds that call the policy), their names, and their count.
        self._is_active = np.zeros(len(jobs), dtype=bool)
        self._active_names: set = set()
        self._num_active = 0
        self._held: set[int] = set()
        # GPUs in use per node under self.allocations, kept as the allocations change (typed
        # clusters: their nodes never change, so only the changed allocations need checking).
        self._node_used: dict = {}
        self.completed = sum(job.completion_time is not None for job in jobs)
        # A policy that only acts on arrivals, completions and times it names
        # (``next_decision_time``) is not called in the rounds between: its answer would not change.
        self._next_decision = getattr(policy, "next_decision_time", None)
        self._decide_at = 0
        self.policy_calls = 0
        # Timeline, one entry per round (after the policy ran).
        self.times: list[int] = []
        self.used_gpus: list[int] = []
        self.total_gpus: list[int] = []
        self.active: list[int] = []
        # Per round, the GPUs held by each unfinished job as (job indices, counts): a dense
        # (rounds, jobs) record only once, at the end (allocation_matrix).
        self._rows: list[tuple[np.ndarray, np.ndarray]] = []
        self.policy_seconds = 0.0
        self.policy_times: list[float] = []
        self.spec = spec
        self.node_types = None if spec is None else spec.node_types
        if spec is not None:
            self.min_nodes = self.num_nodes = self.max_nodes = spec.num_nodes
        # The jobs' state as arrays, one row per job in workload order (see fastsched.sim.engine._state):
        # the fixed-configuration jobs held in a round are stepped by one kernel call.
        seen = set()
        for job in jobs:  # checked before any is bound: a refused cluster takes no job's row
            if id(job) in seen:
                raise ValueError(f"job {job.name} is given twice")
            seen.add(id(job))
            if job._cluster() is not None:
                raise ValueError(
                    f"job {job.name} already belongs to a cluster (its state is that cluster's row); "
                    "give a copy (copy.copy(job)) to run it in another"
                )
        self._table = StateTable(len(jobs))
        self._table.owner = weakref.ref(self)
        for i, job in enumerate(jobs):
            job._bind(self._table, i)

    def __setstate__(self, state):
        # A copied or unpickled cluster owns its copy of the table (see StateTable.owner).
        self.__dict__.update(state)
        self._table.owner = weakref.ref(self)

    def nodes(self) -> dict:
        """``{node id: GPUs}`` of the current cluster.

        Examples
        --------
        >>> from fastsched.sim import Job
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.policies import make_policy
        >>> jobs = [Job("a", builtin_applications()["cifar10"], 0, target_num_replicas=2, target_batch_size=128)]
        >>> cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=2, gpus_per_node=4)
        >>> cluster.nodes()
        {0: 4, 1: 4}
        """
        if self.spec is not None:
            return self.spec.nodes()
        return {i: self.gpus_per_node for i in range(self.num_nodes)}

    def all_complete(self) -> bool:
        """Return True once every job has completed.

        Examples
        --------
        >>> from fastsched.sim import Job
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.policies import make_policy
        >>> jobs = [Job("a", builtin_applications()["cifar10"], 0, target_num_replicas=2, target_batch_size=128)]
        >>> cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=2, gpus_per_node=4)
        >>> cluster.all_complete()
        False
        """
        return self.completed == len(self.jobs)

    def _slowdowns(self):
        if not self.interference:
            return None
        distributed = [set(v) for v in self.allocations.values() if len(set(v)) > 1]
        count: dict = {}
        for nodes in distributed:
            for n in nodes:
                count[n] = count.get(n, 0) + 1
        bad = {n for n, c in count.items() if c > 1}
        out = {}
        for key, alloc in self.allocations.items():
            s = set(alloc)
            if len(s) > 1 and s & bad:
                out[key] = self.interference
        return out

    def step(self, seconds):
        """Run one scheduling round of ``seconds``.

        Examples
        --------
        >>> from fastsched.sim import Job
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.policies import make_policy
        >>> jobs = [Job("a", builtin_applications()["cifar10"], 0, target_num_replicas=2, target_batch_size=128)]
        >>> cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=2, gpus_per_node=4)
        >>> cluster.step(60)
        >>> cluster.rounds, cluster.current_time, cluster.used_gpus, jobs[0].placement
        (1, 60, [2], (2,))
        """
        slow = self._slowdowns()
        jobs = self.jobs
        start = self.current_time
        if type(seconds) is int and type(start) is int:
            finished = step_jobs(jobs, self._table, sorted(self._held), seconds, start, slow)
        else:  # a fractional clock: every job steps itself (its reference loop)
            finished = []
            for i in sorted(self._held):
                job = jobs[i]
                job.current_time = start
                job.step(seconds, slow.get(job.name, 0.0) if slow else 0.0)
                if job.completion_time is not None:
                    # It keeps its nodes until the next scheduling point but never trains again.
                    finished.append(i)
        for i in finished:
            self._held.discard(i)
            self._is_active[i] = False
            self._active_names.discard(jobs[i].name)
        self.completed += len(finished)
        self._num_active -= len(finished)
        self.current_time += seconds
        now = self.current_time
        arrived = False
        order = self._arrivals
        while self._next_arrival < len(order) and jobs[order[self._next_arrival]].submission_time <= now:
            i = order[self._next_arrival]
            if jobs[i].completion_time is None:
                self._is_active[i] = True
                self._active_names.add(jobs[i].name)
                self._num_active += 1
            self._next_arrival += 1
            arrived = True
        due = arrived or finished or self._next_decision is None or now >= self._decide_at
        called = self._num_active > 0 and due
        if called:
            active = [jobs[i] for i in np.flatnonzero(self._is_active).tolist()]
            names = self._active_names
            gone = [k for k in self.allocations if k not in names]
            if gone:
                self._set_allocations({k: v for k, v in self.allocations.items() if k in names}, gone)
            t0 = time.perf_counter()
            new = self.policy.optimize(now, active, self.nodes(), dict(self.allocations))
            took = time.perf_counter() - t0
            self.policy_seconds += took
            self.policy_times.append(took)
            self.policy_calls += 1
            old = self.allocations
            changed = [k for k in new.keys() | old.keys() if not _same(new.get(k), old.get(k))]
            self._check(new, changed)
            if self._next_decision is not None:
                # Skipping is safe only at a fixed point: the same input gives the same answer.
                # A policy may answer differently to its own answer (Tiresias re-admits running
                # jobs before new ones), so a round that changed allocations is followed by a call.
                self._decide_at = self._next_decision(now) if not changed else now
            types = self.node_types
            index = self._index
            for i in sorted(index[k] for k in changed):
                job = jobs[i]
                alloc = new.get(job.name, [])
                if types is not None and alloc:
                    job.set_gpu_type(types[alloc[0]])
                job.current_time = now
                job.reallocate(placement_of(alloc))
                if job.placement:
                    self._held.add(i)
                else:
                    self._held.discard(i)
            self._set_allocations(new, changed)
            want = self.policy.desired_nodes()
            if want is not None and self.max_nodes > self.min_nodes:
                self.num_nodes = int(min(max(want, self.min_nodes), self.max_nodes))
        self.rounds += 1
        if self._rows and not finished and not called:
            row = self._rows[-1]  # nothing changed: the same row, shared
        else:
            idx, cnt = [], []
            completion = self._table.state.completion  # NONE: running (the job's completion_time is None)
            for key, alloc in self.allocations.items():
                i = self._index[key]
                if alloc and completion.item(i) == NONE:
                    idx.append(i)
                    cnt.append(len(alloc))
            row = (np.array(idx, dtype=np.int64), np.array(cnt, dtype=np.int16))
        self.times.append(now)
        self.used_gpus.append(int(row[1].sum()))
        self.total_gpus.append(self.spec.total_gpus if self.spec is not None else self.num_nodes * self.gpus_per_node)
        self.active.append(self._num_active)
        self._rows.append(row)
        if self.log is not None:
            self._write_log(now, seconds)

    def allocation_matrix(self) -> np.ndarray:
        """Return the GPUs held by each unfinished job after each round, ``(rounds, jobs)`` int16.

        Examples
        --------
        >>> from fastsched.sim import Job
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.policies import make_policy
        >>> jobs = [Job("a", builtin_applications()["cifar10"], 0, target_num_replicas=2, target_batch_size=128)]
        >>> cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
        >>> cluster.step(60); cluster.step(60)
        >>> cluster.allocation_matrix().tolist()
        [[2], [2]]
        """
        out = np.zeros((len(self._rows), len(self.jobs)), dtype=np.int16)
        for r, (idx, cnt) in enumerate(self._rows):
            out[r, idx] = cnt
        return out

    def _set_allocations(self, allocations, changed=None):
        """Make ``allocations`` the allocations in force, updating the GPUs used per node.

        ``changed``: the keys whose allocation differs from the present one (``None``: any).
        """
        used, old = self._node_used, self.allocations
        keys = (allocations.keys() | old.keys()) if changed is None else changed
        for k in keys:
            for n in old.get(k, ()):
                used[n] -= 1
            for n in allocations.get(k, ()):
                used[n] = used.get(n, 0) + 1
        self.allocations = allocations

    def _check(self, allocations, changed):
        """Refuse an allocation of an unknown job or of more GPUs than a node has.

        On a typed cluster (fixed nodes) only what changed is checked, the rest having passed
        before; an autoscaled cluster's node count may change, so everything is checked.
        """
        index, old = self._index, self.allocations
        for key in changed:
            if key not in index:
                raise RuntimeError(f"policy allocated an unknown job {key!r}")
        if self.spec is not None:
            used = dict(self._node_used)
            touched = set()
            for k in changed:
                for n in old.get(k, ()):
                    used[n] -= 1
                for n in allocations.get(k, ()):
                    used[n] = used.get(n, 0) + 1
                    touched.add(n)
            self._check_typed({k: allocations[k] for k in changed if k in allocations}, {n: used[n] for n in touched})
            return
        used: dict = {}
        for alloc in allocations.values():
            for n in alloc:
                used[n] = used.get(n, 0) + 1
        for n, c in used.items():
            if not (0 <= n < self.num_nodes) or c > self.gpus_per_node:
                raise RuntimeError(f"policy over-allocated node {n!r} ({c} GPUs)")

    def _check_typed(self, allocations, used):
        gpus, types = self.spec.node_gpus, self.node_types
        for n, c in used.items():
            if not (isinstance(n, int) and 0 <= n < len(gpus)) or c > gpus[n]:
                raise RuntimeError(f"policy over-allocated node {n!r} ({c} GPUs)")
        for key, alloc in allocations.items():
            if len({types[n] for n in alloc}) > 1:
                raise RuntimeError(f"policy placed job {key!r} on two GPU types: nodes {sorted(set(alloc))}")

    def _write_log(self, now, seconds):
        jobs = []
        for job in self.jobs:
            if job.submission_time > now:
                continue
            if job.completion_time is not None and job.completion_time <= now - seconds:
                continue
            alloc = list(self.allocations.get(job.name, []))
            jobs.append(
                {
                    "name": job.name,
                    "application": job.application.name,
                    "epoch": job.epoch,
                    "progress": job.progress,
                    "num_restarts": job.num_restarts,
                    "allocation": alloc,
                    # a job never spans two GPU types; None: no GPU held, or an untyped cluster
                    "gpu_type": self.node_types[alloc[0]] if alloc and self.node_types is not None else None,
                    "placement": list(job.placement),
                    "batch_size": job.batch_size,
                    "accum_steps": job.accum_steps,
                    "submission_time": job.submission_time,
                    "completion_time": job.completion_time,
                }
            )
        record = {
            "timestamp": now,
            "num_nodes": self.num_nodes,
            "used_gpus": self.used_gpus[-1],
            "active_jobs": self.active[-1],
            "jobs": jobs,
        }
        self.log.write(json.dumps(record) + "\n")
