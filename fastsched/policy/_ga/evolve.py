"""The NSGA-II generation loop, with an early stop when the front stops improving."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched._numba_private import NO_NRT, copy_function
from fastsched.policy._ga.linkonly import inner, leaf
from fastsched.policy._ga.offspring import children_linked, offspring_parallel, offspring_serial
from fastsched.policy._ga.rng import CHILDREN, TOURNAMENT, _stream_key
from fastsched.policy._ga.select import (
    _crowding_distance,
    _front_hypervolume,
    _nondominated_rank,
    _survive_ranked,
    _tournament,
)

__all__ = ["gather", "evolve_serial", "evolve_parallel", "STALL_TOL"]

# The search stops when the front's hypervolume grew by less than this fraction over the
# last ``patience`` generations.
STALL_TOL = 0.01


@leaf
def _gather(a, rows, b):
    """Copy rows ``rows`` of population ``a`` into rows ``0 .. len(rows)`` of ``b``."""
    width = a.off.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(width):
            b.off[i, j] = a.off[r, j]
        for q in range(a.off[r, width - 1]):
            b.node[i, q] = a.node[r, q]
            b.cnt[i, q] = a.cnt[r, q]
        b.acc[i] = a.acc[r]
        b.obj[i] = a.obj[r]
        b.size[i] = a.size[r]
        b.hash[i] = a.hash[r]


# The child builder ``_evolve`` calls; each compiled variant below rebinds it.
offspring = offspring_serial


def _evolve(seed, round_, generations, patience, count, start, pm, protect_size, a, b, A, work):
    """Run up to ``generations`` NSGA-II generations on the first ``start`` rows of ``a``.

    Each generation: binary tournaments on rank and crowding, ``count`` children into the
    rows after the population, survival of the best ``count`` into the other buffer (both
    hold ``2 * count`` rows). The population may start smaller than ``count`` and grows to
    it (pymoo's unpadded start). With ``patience > 0`` the search stops once the hypervolume
    of the first front (reference point: objective 0, cluster size = problem nodes + 1) grew
    by less than :data:`STALL_TOL` over the last ``patience`` generations. Returns ``(buffer of the final population: 0 = a, 1 = b,
    generations run)``.
    """
    where = 0
    n = start
    f1 = -a.obj[:n]
    f2 = a.size[:n].astype(np.float64)
    rank = _nondominated_rank(f1, f2)
    crowd = _crowding_distance(f1, f2, rank)
    ref2 = float(A.node_res.shape[0] + 1)
    hv = np.empty(generations + 1, dtype=np.float64)
    hv[:] = 0.0
    hv[0] = _front_hypervolume(f1, f2, rank, ref2)
    ran = 0
    for gen in range(1, generations + 1):
        cur = a if where == 0 else b
        nxt = b if where == 0 else a
        parents = _tournament(rank, crowd, _stream_key(seed, round_, gen, TOURNAMENT), count)
        key = _stream_key(seed, round_, gen, CHILDREN)
        offspring(key, cur, parents, pm, A, cur, n, work)
        total = n + count
        keep, rank, crowd = _survive_ranked(
            -cur.obj[:total], cur.size[:total].astype(np.float64), cur.hash[:total], count, protect_size
        )
        _gather(cur, keep, nxt)
        n = keep.shape[0]
        where = 1 - where
        ran = gen
        hv[gen] = _front_hypervolume(-nxt.obj[:n], nxt.size[:n].astype(np.float64), rank, ref2)
        if patience > 0 and gen >= patience and hv[gen] <= hv[gen - patience] * (1.0 + STALL_TOL):
            break
    return where, ran


# Kernels link ``_gather``; Python callers get this compiled twin of the same source.
gather = jit(copy_function(_gather.py_func, "gather"), **NO_NRT)

# One source, two kernels: the serial one never compiles the parallel child builder (seconds
# of compilation that small problems do not need).
offspring_linked = inner(copy_function(offspring_serial.py_func, "offspring_linked"))
# The serial round's copy, with the child builder linked too (see ``offspring._children``).
offspring_search = inner(copy_function(offspring_serial.py_func, "offspring_search", {"_children": children_linked}))
evolve_serial = jit(copy_function(_evolve, "evolve_serial", {"offspring": offspring_linked}))
evolve_parallel = jit(copy_function(_evolve, "evolve_parallel", {"offspring": offspring_parallel}))
