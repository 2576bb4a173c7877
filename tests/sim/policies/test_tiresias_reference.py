"""Tiresias's incremental rounds against a plain reference that rebuilds everything each call.

The reference is the policy's semantics written directly: every call rebuilds the queues and
statuses from all active jobs, updates every job's service, walks both queues job by job, and
each waiting job picks the type with the most unclaimed GPUs. The policy keeps its queues per
GPU count and visits only the jobs that can change; both must return the same allocations
(dict order included) and the same next decision time after every call.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.policies.baselines import TiresiasPolicy, _free_gpus, _pack


class ReferenceTiresias:
    """Tiresias from its description, O(active jobs) Python per call."""

    def __init__(self, queue_threshold, cluster=None):
        self.queue_threshold = queue_threshold
        self.cluster = cluster
        self.queues: tuple[list, list] = ([], [])
        self.status: dict = {}
        self.last_check: dict = {}
        self.executed: dict = {}
        self.replicas: dict = {}

    def optimize(self, now, jobs, nodes, allocations):
        event_time = int(now)
        active = {job.name: job for job in jobs}
        self.replicas = {key: job.target_num_replicas for key, job in active.items()}
        q0, q1 = self.queues
        q0[:] = [k for k in q0 if k in active]
        q1[:] = [k for k in q1 if k in active]
        self.status = {k: v for k, v in self.status.items() if k in active}
        allocations = {k: v for k, v in allocations.items() if k in active}
        for key in active:
            if key not in self.status:
                self.status[key] = "PENDING"
                q0.append(key)
        for key, job in active.items():
            elapsed = int(event_time - self.last_check.get(key, 0))
            self.last_check[key] = event_time
            if self.status[key] == "RUNNING":
                self.executed[key] = int(self.executed.get(key, 0) + elapsed)
                if key in q0 and int(self.executed[key] * job.target_num_replicas) >= self.queue_threshold:
                    q0.remove(key)
                    q1.append(key)
        typed = self.cluster is not None and not self.cluster.is_homogeneous
        types = self.cluster.node_types if typed else None
        left = dict(self.cluster.gpus_by_type) if typed else {None: sum(nodes.values())}
        chosen = {}
        for key in q0 + q1:
            need = active[key].target_num_replicas
            alloc = allocations.get(key)
            if alloc:
                t = types[alloc[0]] if typed else None
            else:
                t = max(left, key=left.__getitem__)
            if need <= left[t]:
                self.status[key] = "RUNNING"
                left[t] -= need
                chosen[key] = t
            else:
                self.status[key] = "PENDING"
                allocations.pop(key, None)
        free, order = _free_gpus(nodes, allocations)
        for key in q0 + q1:
            if self.status[key] == "RUNNING" and not allocations.get(key):
                t = chosen[key]
                on = [n for n in order if types[n] == t] if typed else order
                allocations[key] = _pack(active[key].target_num_replicas, free, on)
        return allocations

    def next_decision_time(self, now):
        soonest = math.inf
        for key in self.queues[0]:
            if self.status.get(key) == "RUNNING":
                left = self.queue_threshold / self.replicas[key] - self.executed.get(key, 0)
                soonest = min(soonest, now + max(0, math.floor(left)))
        return soonest


_CLUSTERS = {"plain": None, "typed": "2xaws:4,1xrtx:8,3xdgx-ext:2"}


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(sorted(_CLUSTERS)),
    threshold=st.sampled_from([1, 90, 600, 2500.5]),
    needs=st.lists(st.sampled_from([1, 1, 2, 3, 4, 8, 9, 20]), min_size=1, max_size=30),
    events=st.lists(
        st.tuples(
            st.integers(0, 300),  # seconds since the last call
            st.lists(st.integers(0, 29), max_size=12),  # arrivals (indices into needs)
            st.lists(st.integers(0, 29), max_size=3),  # completions
            st.integers(0, 3),  # how the allocations handed back are disturbed (0, 1: not)
        ),
        min_size=1,
        max_size=25,
    ),
)
def test_incremental_rounds_equal_the_reference(kind, threshold, needs, events):
    spec = None if _CLUSTERS[kind] is None else parse_cluster(_CLUSTERS[kind])
    nodes = {0: 4, 1: 4, 2: 8} if spec is None else spec.nodes()
    fast = TiresiasPolicy(queue_threshold=threshold)
    if spec is not None:
        fast.bind_cluster(spec, 60)
    ref = ReferenceTiresias(threshold, spec)
    jobs = [SimpleNamespace(name=f"j{i}", target_num_replicas=n) for i, n in enumerate(needs)]
    active: set = set()
    done: set = set()
    now, alloc = 0, {}
    for dt, arrive, finish, disturb in events:
        now += dt
        active |= {i for i in arrive if i < len(jobs) and i not in done}
        for i in finish:
            if i in active:
                active.discard(i)
                done.add(i)
        if disturb == 2 and alloc:  # a job's allocation lost, an empty one handed in
            first = next(iter(alloc))
            alloc = {k: ([] if k == first else v) for k, v in alloc.items()}
        elif disturb == 3:  # a stale entry for a job that is not active
            alloc = {**alloc, "gone": [0]}
        listed = [jobs[i] for i in sorted(active)]
        got = fast.optimize(now, listed, dict(nodes), dict(alloc))
        want = ref.optimize(now, listed, dict(nodes), dict(alloc))
        assert list(got.items()) == list(want.items())
        assert fast.next_decision_time(now) == ref.next_decision_time(now)
        alloc = got


def test_demotions_follow_the_order_of_jobs_and_new_jobs_queue_behind():
    # a and b both reach the threshold in the same call: b is listed first, so it is demoted
    # first and runs before a once both are in the second queue; c arrives later and, being
    # in the first queue, runs before both.
    pol = TiresiasPolicy(queue_threshold=100)
    a, b, c = (SimpleNamespace(name=n, target_num_replicas=1) for n in "abc")
    assert pol.optimize(0, [b, a], {0: 2}, {}) == {"b": [0], "a": [0]}
    out = pol.optimize(100, [b, a, c], {0: 2}, {"b": [0], "a": [0]})
    assert out == {"b": [0], "c": [0]}
    ref = ReferenceTiresias(100)
    ref.optimize(0, [b, a], {0: 2}, {})
    assert ref.optimize(100, [b, a, c], {0: 2}, {"b": [0], "a": [0]}) == out
