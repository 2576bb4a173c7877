"""Hypothesis strategies: random clusters, jobs, pinned jobs and feasible base allocations."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fastsched.policy import JobInfo, NodeInfo


def sublinear(alpha, multi_penalty):
    """A generic (non-tabulated) speedup callable."""

    def fn(n, r):
        n = np.asarray(n)
        r = np.asarray(r, dtype=float)
        return np.where(r > 0, r**alpha * np.where(n > 1, multi_penalty, 1.0), 0.0)

    return fn


@st.composite
def instances(draw, max_jobs=8, max_nodes=4, max_gpus=4, pinned=True, tabulated_fn=None, gpu_only=False, max_rep=6):
    """(jobs, nodes, base_allocations, template) with a feasible base allocation.

    ``gpu_only``: GPUs are the only resource (as in the simulator's rounds), so nodes fill up.
    """
    num_nodes = draw(st.integers(1, max_nodes))
    rtypes = ["gpu", "cpu"]
    nodes = {}
    for i in range(num_nodes):
        res = {"gpu": draw(st.integers(0, max_gpus))}
        if not gpu_only:
            res["cpu"] = draw(st.integers(1, 8)) * 1000
        nodes[f"n{i}"] = NodeInfo(res, preemptible=draw(st.booleans()))
    template = NodeInfo({"gpu": max_gpus} if gpu_only else {"gpu": max_gpus, "cpu": 8000}, preemptible=True)
    num_jobs = draw(st.integers(1, max_jobs))
    jobs = {}
    for i in range(num_jobs):
        if gpu_only:
            res = {"gpu": draw(st.integers(1, 2))}
        else:
            res = {"gpu": draw(st.integers(0, 2)), "cpu": draw(st.integers(0, 4)) * 500}
        if not gpu_only and draw(st.booleans()):
            res["pods"] = 1
        if res["gpu"] == 0 and res["cpu"] == 0:
            res["gpu"] = 1
        mx = draw(st.integers(1, max_rep))
        mn = draw(st.integers(0, mx))
        if tabulated_fn is not None and draw(st.booleans()):
            fn = tabulated_fn
        else:
            fn = sublinear(draw(st.floats(0.3, 1.0)), draw(st.floats(0.5, 1.0)))
        pre = draw(st.booleans()) if pinned else True
        jobs[f"j{i}"] = JobInfo(res, fn, draw(st.integers(0, 5)), mn, mx, preemptible=pre)
    # Feasible base: single-node placements that fit, in random order.
    free = {k: dict(n.resources) for k, n in nodes.items()}
    free_template = {"pods": 10**6}
    base = {}
    for key, job in jobs.items():
        if not draw(st.booleans()):
            continue
        node = draw(st.sampled_from(sorted(nodes)))
        count = draw(st.integers(1, job.max_replicas))
        room = free[node]
        fits = all(room.get(r, free_template.get(r, 0)) >= count * v for r, v in job.resources.items())
        if fits and count >= job.min_replicas:
            for r, v in job.resources.items():
                room[r] = room.get(r, 0) - count * v
            base[key] = [node] * count
    for n in nodes.values():
        if not gpu_only:
            n.resources.setdefault("pods", 32)
    del rtypes
    return jobs, nodes, base, template
