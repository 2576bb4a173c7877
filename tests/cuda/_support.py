"""Shared helpers of the CUDA tests: the skip marker and random-input builders.

The CUDA twins run on a real GPU or, without one, on numba's simulator, which must be switched
on before numba is imported, so these tests run in their own process::

    NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cuda -q

In a plain ``pytest`` run on a machine without a GPU (or without numba-cuda) they skip.
"""

from __future__ import annotations

import numpy as np
import pytest

import fastsched.cuda as fc
from fastsched.goodput import GoodputParams
from tests.goodput._random import random_perf  # noqa: F401 - re-exported to the CUDA tests
from tests.policy import naive

#: Few threads per block so that even small test grids span several blocks (and the
#: grid-stride loops wrap) -- the simulator runs each thread as a Python thread, so keep it small.
TPB = 10

requires_cuda = pytest.mark.skipif(
    not fc.is_available(),
    reason=f"CUDA twins need a GPU or NUMBA_ENABLE_CUDASIM=1 in a separate pytest process ({fc.unavailable_reason()})",
)


def rel_close(got, want, rtol=1e-12):
    """Assert ``got == want`` to ``rtol`` relative (exact where ``want`` is 0)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0.0)


def model_params(perf, sqr, var, init, max_bsz=None, lo=1.0, hi=None, acc=False) -> GoodputParams:
    """A GoodputParams of one model typed as the faces type it (read-only perf, floats, a bool)."""
    perf = np.array(perf, dtype=np.float64)
    perf.flags.writeable = False
    max_bsz = float(init if max_bsz is None else max_bsz)
    return GoodputParams(
        perf, float(sqr), float(var), float(init), max_bsz, float(lo), float(max_bsz if hi is None else hi), bool(acc)
    )


def random_population(rng, rows, njobs, nnodes, max_entries=3, max_cnt=4, base_rows=None):
    """A random sparse CSR population in the GA's encoding, plus a base allocation.

    Some rows copy the base allocation of some jobs so the restart-penalty branch sees both
    outcomes. Returns ``(off, node, cnt, base_off, base_node, base_cnt)``.
    """

    def one_row():
        nodes, cnts, off = [], [], [0]
        for _ in range(njobs):
            k = int(rng.integers(0, max_entries + 1))
            picked = np.sort(rng.choice(nnodes, size=min(k, nnodes), replace=False))
            nodes.extend(int(x) for x in picked)
            cnts.extend(int(x) for x in rng.integers(1, max_cnt + 1, size=picked.size))
            off.append(len(nodes))
        return off, nodes, cnts

    b_off, b_node, b_cnt = one_row()
    width = njobs * max_entries + 1
    off = np.zeros((rows, njobs + 1), dtype=np.int64)
    node = np.zeros((rows, width), dtype=np.int32)
    cnt = np.zeros((rows, width), dtype=np.int32)
    for i in range(rows):
        o, nd, c = one_row()
        # Per job, take the base entries with probability 1/3 (unchanged job: no penalty).
        pos = 0
        for j in range(njobs):
            if rng.random() < 1 / 3:
                seg_n = b_node[b_off[j] : b_off[j + 1]]
                seg_c = b_cnt[b_off[j] : b_off[j + 1]]
            else:
                seg_n = nd[o[j] : o[j + 1]]
                seg_c = c[o[j] : o[j + 1]]
            off[i, j] = pos
            node[i, pos : pos + len(seg_n)] = seg_n
            cnt[i, pos : pos + len(seg_c)] = seg_c
            pos += len(seg_n)
        off[i, njobs] = pos
    return (
        off,
        node,
        cnt,
        np.asarray(b_off, dtype=np.int64),
        np.asarray(b_node if b_node else [0], dtype=np.int32),
        np.asarray(b_cnt if b_cnt else [0], dtype=np.int32),
    )


def naive_fitness(off, node, cnt, row, table, scale, base_off, base_node, base_cnt, penalty, mode, p, eps=1e-3):
    """One sparse row's (first objective, cluster size) by the plain reference :func:`tests.policy.naive.objectives`."""
    num_nodes = int(max(node.max(initial=0), base_node.max(initial=0))) + 1
    state = naive.to_dense(off, node, cnt, row, num_nodes)
    base = naive.to_dense(base_off[None, :], base_node[None, :], base_cnt[None, :], 0, num_nodes)
    return naive.objectives(state, table, scale, base, penalty, mode, p, eps)
