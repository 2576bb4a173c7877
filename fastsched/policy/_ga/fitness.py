"""Fitness of the genetic search: one job's value, the fairness aggregate, a row's objectives.

The per-job scalar terms (:func:`job_value`, :func:`fair_term`, :func:`fair_total`,
:func:`differs_from_base`, :func:`row_objectives`) are plain :func:`~.linkonly.leaf` kernels
(compiled once, into their callers) with no CPU-only constructs (``math`` functions, scalar arithmetic, array reads), so
the CUDA backend compiles the same source through ``.py_func``.

First objective (maximised): ``sum_j term(v_j)`` aggregated by the fairness mode, where
``v_j = table[j, min(nodes_j, K), replicas_j] * scale_j`` times ``1 - penalty_j`` when job
``j``'s placement differs from its base allocation. Second objective (minimised): the
cluster size, ``1 +`` the highest node index used.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from fastsched._jit import parallel_region, pjit
from fastsched.policy._ga.linkonly import leaf

__all__ = [
    "SUM",
    "POWER",
    "GEOMETRIC",
    "POWER_SHIFTED",
    "FAIR_EPS",
    "job_value",
    "fair_term",
    "fair_total",
    "improves",
    "differs_from_base",
    "row_objectives",
    "evaluate_population",
    "penalty_array",
]

# Fairness modes of the first objective.
SUM = 0  # plain sum of scaled speedups (AdaptDL)
POWER = 1  # J * power mean with exponent p (p != 0)
GEOMETRIC = 2  # J * geometric mean (p == 0)
POWER_SHIFTED = 3  # J * power mean of (value + FAIR_EPS), the Pollux paper's simulator's form
FAIR_EPS = 1e-3  # floor of a job's value inside a power mean with p <= 0 (0**p is inf)


@leaf
def job_value(table, j, nn, reps, scale_j, changed, penalty_j):
    """Scaled speedup of job ``j`` with ``reps`` replicas on ``nn`` nodes.

    ``table[j, k, r]`` holds the speedup of ``r`` replicas on ``k`` nodes, the node axis
    clipped at its last index. ``penalty_j`` is the fraction lost when ``changed``.
    """
    if reps <= 0:
        return 0.0
    kmax = table.shape[1] - 1
    k = nn if nn < kmax else kmax
    v = table[j, k, reps] * scale_j
    if changed:
        v *= 1.0 - penalty_j
    return v


@leaf
def fair_term(v, mode, p):
    """Contribution of one job's value to the accumulated first objective."""
    if mode == SUM:
        return v
    if mode == POWER_SHIFTED:
        return (v + FAIR_EPS) ** p
    w = v if v > FAIR_EPS else FAIR_EPS
    if mode == GEOMETRIC:
        return math.log(w)
    return w**p


@leaf
def fair_total(acc, njobs, mode, p):
    """First objective (higher is better) from the accumulated terms."""
    if mode == SUM or njobs == 0:
        return acc
    if mode == GEOMETRIC:
        return njobs * math.exp(acc / njobs)
    return njobs * (acc / njobs) ** (1.0 / p)


@leaf
def improves(delta, mode, p):
    """Whether a change ``delta`` of the accumulated terms raises the first objective.

    The aggregate is increasing in the accumulator, except for power means with ``p < 0``
    (``w ** p`` falls as ``w`` grows, and so does the accumulator).
    """
    if (mode == POWER or mode == POWER_SHIFTED) and p < 0.0:
        return -delta
    return delta


@leaf
def differs_from_base(nodes, cnts, start, n, base_off, base_node, base_cnt, j):
    """Whether a job's entries ``nodes/cnts[start:start+n]`` differ from its base entries."""
    b0 = base_off[j]
    if base_off[j + 1] - b0 != n:
        return True
    for i in range(n):
        if nodes[start + i] != base_node[b0 + i] or cnts[start + i] != base_cnt[b0 + i]:
            return True
    return False


@leaf
def row_objectives(off, node, cnt, i, table, scale, base_off, base_node, base_cnt, penalty, mode, p):
    """Objectives of row ``i``: (first objective, cluster size = 1 + highest node used)."""
    njobs = off.shape[1] - 1
    acc = 0.0
    size = 0
    for j in range(njobs):
        s = off[i, j]
        e = off[i, j + 1]
        # An int64 zero that is not a literal 0 (so ``job_value`` compiles once) and needs no
        # numpy (the CUDA backend compiles this source too).
        reps = s - s
        for q in range(s, e):
            reps += cnt[i, q]
            if node[i, q] + 1 > size:
                size = node[i, q] + 1
        changed = differs_from_base(node[i], cnt[i], s, e - s, base_off, base_node, base_cnt, j)
        acc += fair_term(job_value(table, j, e - s, reps, scale[j], changed, penalty[j]), mode, p)
    return fair_total(acc, njobs, mode, p), size


@pjit
def _evaluate(off, node, cnt, table, scale, base_off, base_node, base_cnt, penalty, mode, p, obj, size):
    for i in prange(off.shape[0]):
        # prange compiles its body twice (uint64 and int64 indices): pass an int64 so the
        # helper keeps one specialisation.
        o, s = row_objectives(
            off, node, cnt, np.int64(i), table, scale, base_off, base_node, base_cnt, penalty, mode, p
        )
        obj[i] = o
        size[i] = s


def penalty_array(penalty, njobs: int) -> np.ndarray:
    """Return the restart penalty as the kernels take it: a fresh, writable float64[njobs] array.

    One form whatever was passed (one number for all jobs, or one per job), so every kernel
    compiles once: numba types scalars, read-only arrays and broadcast views apart.

    Examples
    --------
    >>> penalty_array(0.1, 3).tolist(), penalty_array([0.0, 0.5], 2).flags.writeable
    ([0.1, 0.1, 0.1], True)
    """
    return np.broadcast_to(np.asarray(penalty, dtype=np.float64), (njobs,)).copy()


def evaluate_population(off, node, cnt, table, scale, base_off, base_node, base_cnt, penalty, mode, p, obj, size):
    """Fitness of every row of a sparse population (numba threads over rows).

    Parameters
    ----------
    off : int64[rows, J + 1]
        Per-row offsets of each job's entries.
    node, cnt : int32[rows, width]
        Entries ``(node, replicas)``, sorted by node within a job.
    table : float64[J, K + 1, Rmax + 1]
        Speedup of ``r`` replicas on ``k`` nodes.
    scale : float64[J]
        Per-job scale (dominant share x problem nodes).
    base_off, base_node, base_cnt
        Base allocation in the same encoding (one row).
    penalty : float or float64[J]
        Restart penalty, one for all jobs or per job.
    mode : int
        Fairness mode (:data:`SUM`, :data:`POWER`, :data:`GEOMETRIC`, :data:`POWER_SHIFTED`).
    p : float
        Power-mean exponent (ignored by :data:`SUM`).
    obj : float64[rows]
        Output: first objective (higher is better).
    size : int64[rows]
        Output: cluster size (1 + highest node index used).

    Examples
    --------
    >>> import numpy as np
    >>> off = np.array([[0, 1, 2]])
    >>> node = np.array([[0, 1]], dtype=np.int32)
    >>> cnt = np.array([[2, 1]], dtype=np.int32)
    >>> table = np.zeros((2, 3, 3)); table[:, 1, 1] = 1.0; table[:, 1, 2] = 1.5
    >>> empty = np.zeros(0, dtype=np.int32)
    >>> obj, size = np.zeros(1), np.zeros(1, dtype=np.int64)
    >>> evaluate_population(off, node, cnt, table, np.ones(2), np.zeros(3, np.int64), empty, empty,
    ...                     0.1, SUM, 1.0, obj, size)
    >>> float(round(obj[0], 6)), int(size[0])
    (2.25, 2)
    """
    penalty = penalty_array(penalty, table.shape[0])
    with parallel_region():
        _evaluate(off, node, cnt, table, scale, base_off, base_node, base_cnt, penalty, int(mode), float(p), obj, size)
