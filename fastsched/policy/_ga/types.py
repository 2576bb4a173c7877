"""Bundles of arrays passed to the kernels (numba accepts namedtuples of arrays).

* :class:`Arrays`: one round's problem (read-only in the kernels).
* :class:`Pop`: a population buffer, rows of sparse individuals and their scores.
* :class:`Work`: per-chunk scratch of the child builders, reused across generations.

Encoding of a row ``i``: ``off[i, j] .. off[i, j + 1]`` index the ``(node, cnt)`` entries of
job ``j``, sorted by node, counts > 0. A repaired row holds at most ``jobs + nodes`` entries
(at most one distributed job per node), plus the base allocation's entries of pinned jobs.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

Arrays = namedtuple(
    "Arrays",
    "job_res node_res max_rep min_rep pinned base_off base_node base_cnt table scale penalty mode p",
)
Arrays.__doc__ = """Problem arrays of one round (see :class:`fastsched.policy.problem.Problem`).

``penalty`` is always a float64[J] array of per-job restart penalties, ``mode`` an int
(fairness mode of :mod:`.fitness`) and ``p`` a float, so every kernel compiles once.
"""

Pop = namedtuple("Pop", "off node cnt acc obj size hash")
Pop.__doc__ = """Population rows: CSR entries (``off`` int64[rows, J + 1], ``node``/``cnt``
int32[rows, width]), the fairness accumulator ``acc``, objective ``obj`` (maximised), cluster
size ``size`` (minimised) and a row hash (sum of per-job hashes)."""

Work = namedtuple("Work", "st tn tc used owner")
Work.__doc__ = """Scratch per chunk of children: streams uint64[C, 2], entry lists int32[C, S],
used resources int64[C, N2, R], distributed-node owners bool[C, N2]."""


def new_pop(rows: int, njobs: int, width: int) -> Pop:
    """Zeroed population buffer of ``rows`` rows."""
    w = max(width, 1)
    return Pop(
        np.zeros((rows, njobs + 1), dtype=np.int64),
        np.zeros((rows, w), dtype=np.int32),
        np.zeros((rows, w), dtype=np.int32),
        np.zeros(rows, dtype=np.float64),
        np.zeros(rows, dtype=np.float64),
        np.zeros(rows, dtype=np.int64),
        np.zeros(rows, dtype=np.uint64),
    )


def new_work(chunks: int, scratch: int, num_nodes: int, nres: int) -> Work:
    """Scratch of ``chunks`` child builders."""
    return Work(
        np.zeros((chunks, 2), dtype=np.uint64),
        np.zeros((chunks, scratch), dtype=np.int32),
        np.zeros((chunks, scratch), dtype=np.int32),
        np.zeros((chunks, num_nodes, nres), dtype=np.int64),
        np.zeros((chunks, num_nodes), dtype=np.bool_),
    )
