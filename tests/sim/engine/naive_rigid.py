"""A plain-Python event-driven reference for rigid jobs, written from the semantics in
:mod:`fastsched.sim.engine.rigid` (not from the kernel): every decision recomputed from scratch
(sorted lists, no heaps, no caches), slow and obvious.
"""

from __future__ import annotations

import heapq
import math

INF = math.inf


class _Cluster:
    def __init__(self, nodes, G):
        self.free = [G] * nodes
        self.G = G

    def held(self, need):
        return need if need <= self.G else math.ceil(need / self.G) * self.G

    def choose(self, need, free=None):
        """Nodes best fit picks (list), or None."""
        free = self.free if free is None else free
        if need <= self.G:
            fits = [(f, i) for i, f in enumerate(free) if f >= need]
            return [min(fits)[1]] if fits else None
        k = math.ceil(need / self.G)
        whole = [i for i, f in enumerate(free) if f == self.G]
        return whole[:k] if len(whole) >= k else None

    def per_node(self, need):
        return need if need <= self.G else self.G

    def take(self, nodes, need, free=None):
        free = self.free if free is None else free
        for i in nodes:
            free[i] -= self.per_node(need)

    def give(self, nodes, need, free=None):
        free = self.free if free is None else free
        for i in nodes:
            free[i] += self.per_node(need)


def g_server_fcfs(submit, work, servers):
    """Finish times of a G-server first-come-first-served queue (jobs in submission order)."""
    order = sorted(range(len(submit)), key=lambda i: (submit[i], i))
    free_at = [0.0] * servers
    heapq.heapify(free_at)
    finish = [0.0] * len(submit)
    for i in order:
        start = max(submit[i], heapq.heappop(free_at))
        finish[i] = start + work[i]
        heapq.heappush(free_at, finish[i])
    return finish


def naive_rigid(
    submit, work, need, nodes, G, policy, restart_s=30.0, thresholds=(57600.0,), depth=500, quantum=600.0, starve=None
):
    """Return ``(first_start, finish, restarts)`` lists, jobs in the order given.

    ``quantum`` is Gandiva's slice or Themis' lease; ``starve`` Tiresias' starvation limit K.
    """
    n = len(submit)
    cl = _Cluster(nodes, G)
    order = sorted(range(n), key=lambda i: (submit[i], i))
    rank = {j: r for r, j in enumerate(order)}  # submission order
    first = [None] * n
    finish = [None] * n
    restarts = [0] * n
    remaining = list(map(float, work))
    run_from = [0.0] * n
    held_from = [0.0] * n
    att = [0.0] * n
    held_s = [0.0] * n  # seconds held before the current slice
    base = [0.0] * n  # attained service at the last promotion
    waited = [0.0] * n  # W: seconds waited below the first queue since the last promotion
    wait_began = [None] * n  # the start of the current wait, while it counts
    place = {}
    running = set()
    waiting = []  # arrival order (fifo, sjf, backfill)
    queues = [[] for _ in range(len(thresholds) + 1)]  # tiresias: active jobs per queue, entry order
    level = [0] * n
    active = []  # srtf: arrived, unfinished, arrival order
    arrived = 0
    preemptive = policy in ("srtf", "tiresias", "gandiva", "themis")
    lv_max = len(thresholds) if policy == "tiresias" else 0

    def active_las():
        return [j for q in queues for j in q] if policy == "tiresias" else []

    def end(j):
        return run_from[j] + remaining[j]

    def demote_at(j):
        if policy != "tiresias" or level[j] >= lv_max:
            return INF
        td = held_from[j] + (thresholds[level[j]] - (att[j] - base[j])) / need[j]
        return td if td < end(j) else INF

    def slice_end(j, now):
        """Gandiva, Themis: the end of j's slice (lease), if still ahead (and before it completes)."""
        te = run_from[j] + quantum  # a slice: quantum seconds of progress, after any restart pause
        return te if policy in ("gandiva", "themis") and now < te < end(j) else INF

    def promote_at(j):
        """Tiresias with a starvation limit: when waiting job j reaches W = K E (below the first queue)."""
        if starve is None or j in running or level[j] == 0 or wait_began[j] is None:
            return INF
        e = (att[j] - base[j]) / need[j]  # E: seconds held since the last promotion
        return wait_began[j] + (starve * e - waited[j])

    def start(j, t):
        nodes_ = cl.choose(need[j])
        cl.take(nodes_, need[j])
        place[j] = nodes_
        if first[j] is None:
            first[j] = t
            run_from[j] = t
        else:
            restarts[j] += 1
            run_from[j] = t + restart_s
        if wait_began[j] is not None:
            waited[j] += t - wait_began[j]
            wait_began[j] = None
        held_from[j] = t
        running.add(j)

    def stop(j, t):
        cl.give(place.pop(j), need[j])
        att[j] += need[j] * (t - held_from[j])
        held_s[j] += t - held_from[j]
        running.discard(j)

    now = -INF
    while arrived < n or running:
        t = submit[order[arrived]] if arrived < n else INF
        for j in running:
            t = min(t, end(j), demote_at(j), slice_end(j, now))
        for j in active_las():
            t = min(t, promote_at(j))
        assert t >= now, "time went back"
        now = t
        for j in sorted(running):
            if end(j) <= t:
                stop(j, end(j))
                finish[j] = end(j)
                if policy == "tiresias":
                    queues[level[j]].remove(j)
                if policy in ("srtf", "gandiva", "themis"):
                    active.remove(j)
        for j in sorted(running, key=rank.get):  # demotions at one time: in submission order
            if demote_at(j) <= t:
                att[j] += need[j] * (t - held_from[j])
                held_from[j] = t
                queues[level[j]].remove(j)
                level[j] += 1
                queues[level[j]].append(j)
        for j in sorted(active_las(), key=rank.get):  # promotions at one time: after, in submission order
            if promote_at(j) <= t:
                queues[level[j]].remove(j)
                level[j] = 0
                queues[0].append(j)
                base[j] = att[j]
                waited[j] = 0.0
                wait_began[j] = None
        while arrived < n and submit[order[arrived]] <= t:
            j = order[arrived]
            arrived += 1
            waiting.append(j)
            queues[0].append(j)
            active.append(j)
        if not preemptive:
            if policy == "sjf":
                waiting.sort(key=lambda j: (work[j], rank[j]))
            while waiting and cl.choose(need[waiting[0]]) is not None:
                start(waiting.pop(0), t)
            if policy == "backfill" and waiting:
                h = waiting[0]
                ft = list(cl.free)
                ends = sorted(running, key=lambda j: end(j))
                shadow = INF
                for j in ends:
                    if end(j) > shadow:
                        break
                    cl.give(place[j], need[j], ft)
                    if shadow == INF and cl.choose(need[h], ft) is not None:
                        shadow = end(j)
                cl.take(cl.choose(need[h], ft), need[h], ft)
                for c in list(waiting[1 : 1 + depth]):
                    nodes_ = cl.choose(need[c])
                    if nodes_ is None:
                        continue
                    ok = t + work[c] <= shadow
                    if not ok and all(ft[i] >= cl.per_node(need[c]) for i in nodes_):
                        cl.take(nodes_, need[c], ft)
                        ok = True
                    if ok:
                        waiting.remove(c)
                        start(c, t)
        else:
            if policy == "tiresias":
                prio = [j for q in queues for j in q]
            elif policy == "gandiva":

                def share(j, t=t):
                    if j in running and t < run_from[j] + quantum:
                        return -1.0  # within its slice
                    ran = held_s[j] + (t - held_from[j] if j in running else 0.0)
                    return ran / max(t - submit[j], 1.0)

                prio = sorted(active, key=lambda j: (share(j), rank[j]))
            elif policy == "themis":

                def minus_rho(j, t=t):
                    if j in running and t < run_from[j] + quantum:
                        return -INF  # within its lease
                    left = remaining[j] - max(0.0, t - run_from[j]) if j in running else remaining[j]
                    pause = restart_s if j not in running and first[j] is not None else 0.0
                    return -(((t - submit[j]) + left + pause) / max(work[j], 1.0))

                prio = sorted(active, key=lambda j: (minus_rho(j), rank[j]))
            else:
                left = {j: remaining[j] - max(0.0, t - run_from[j]) if j in running else remaining[j] for j in active}
                prio = sorted(active, key=lambda j: (left[j], rank[j]))
            cap = nodes * G
            admitted = []
            for j in prio:
                if cl.held(need[j]) <= cap:
                    cap -= cl.held(need[j])
                    admitted.append(j)
            for j in sorted(running):
                if j not in admitted:
                    if t > run_from[j]:
                        remaining[j] -= t - run_from[j]
                    stop(j, t)
                    if starve is not None and level[j] > 0:
                        wait_began[j] = t
            for j in admitted:
                if j not in running and cl.choose(need[j]) is not None:
                    start(j, t)
    return first, finish, restarts
