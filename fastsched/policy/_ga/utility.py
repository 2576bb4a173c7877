"""AdaptDL's cluster utility of allocations (for the desired cluster size)."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched._numba_private import copy_function
from fastsched.policy._ga.fitness import job_value
from fastsched.policy._ga.linkonly import inner

__all__ = ["cluster_utilities"]


@inner
def _cluster_utilities(off, node, cnt, rows, table, job_res, node_res):
    """AdaptDL's cluster utility of each row in ``rows``.

    Per resource type: sum over jobs of (speedup / replicas) x (job's share of the resources
    of the active nodes); the utility is the best-utilised type's value.
    """
    njobs = job_res.shape[0]
    nres = job_res.shape[1]
    out = np.empty(rows.shape[0], dtype=np.float64)
    out[:] = 0.0
    active = np.empty(node_res.shape[0], dtype=np.bool_)
    active[:] = False
    for t in range(rows.shape[0]):
        i = rows[t]
        active[:] = False
        for q in range(off[i, 0], off[i, njobs]):
            active[node[i, q]] = True
        total = np.empty(nres, dtype=np.float64)
        total[:] = 0.0
        for n in range(node_res.shape[0]):
            if active[n]:
                for r in range(nres):
                    total[r] += node_res[n, r]
        util = np.empty(nres, dtype=np.float64)
        util[:] = 0.0
        for j in range(njobs):
            s = off[i, j]
            e = off[i, j + 1]
            reps = np.int64(0)
            for q in range(s, e):
                reps += cnt[i, q]
            if reps == 0:
                continue
            u = job_value(table, j, e - s, reps, 1.0, np.bool_(False), 0.0) / reps
            for r in range(nres):
                alloc = reps * job_res[j, r]
                if alloc != 0:
                    util[r] += u * alloc / total[r]
        best = util[0] if nres > 0 else 0.0
        for r in range(1, nres):
            if util[r] > best:
                best = util[r]
        out[t] = best
    return out


# The serial round (:mod:`.search`) links ``_cluster_utilities``; Python callers get this twin.
cluster_utilities = jit(copy_function(_cluster_utilities.py_func, "cluster_utilities"))
