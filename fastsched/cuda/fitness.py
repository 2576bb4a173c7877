"""Fitness launcher of the CUDA target (the genetic search's population scoring)."""

from __future__ import annotations

import numpy as np

from fastsched.cuda import _arrays as interop
from fastsched.cuda import _memory as M
from fastsched.cuda._probe import load

__all__ = ["evaluate_population"]


def evaluate_population(
    off,
    node,
    cnt,
    table,
    scale,
    base_off,
    base_node,
    base_cnt,
    penalty,
    mode,
    p,
    obj=None,
    size=None,
    *,
    rows=None,
    cache_key=None,
    version=None,
    keep_on_device=False,
    threads_per_block=None,
):
    """Fitness of a population on the GPU (``fastsched.policy._ga.fitness.evaluate_population``'s twin).

    Parameters
    ----------
    off : int64[P, J + 1]; node, cnt : int32[P, W]
        The sparse CSR population (see :mod:`fastsched.policy._ga`); host or device.
    table : float64[J, K + 1, Rmax + 1]; scale : float64[J]
        Speedup tables and objective scale of the round.
    base_off : int64[J + 1]; base_node, base_cnt : int32[B]
        The base allocation (restart penalty reference).
    penalty : float or float64[J]
        Restart penalty, one for all jobs or one per job (broadcast to a per-job array on the
        device either way).
    mode, p : int, float
        Fairness mode (``SUM``/``POWER``/``GEOMETRIC``/``POWER_SHIFTED`` of
        :mod:`fastsched.policy._ga.fitness`) and its exponent.
    obj : float64[n], size : int64[n], optional
        Outputs (host or device), ``n = P`` or ``len(rows)``.
    rows : int64[n], optional
        Score only these rows (``obj[t]`` is row ``rows[t]``).
    cache_key, version : hashable, optional
        Keep the round constants (table, scale, base_*) resident on the device under
        ``cache_key``; re-uploaded when ``version`` changes (pass e.g. the round number).

    Returns
    -------
    (obj, size)
        Host arrays, or device arrays with ``keep_on_device=True``.

    Examples
    --------
    One row: job 0 on two GPUs of node 0, job 1 on one GPU of node 1, no base allocation. The
    launch needs a CUDA GPU (the lines marked ``+SKIP``); the CPU twin gives the same values:

    >>> import numpy as np
    >>> from fastsched.policy._ga import fitness as cpu
    >>> off = np.array([[0, 1, 2]])
    >>> node, cnt = np.array([[0, 1]], dtype=np.int32), np.array([[2, 1]], dtype=np.int32)
    >>> table = np.zeros((2, 3, 3))
    >>> table[:, 1, 1], table[:, 1, 2] = 1.0, 1.5
    >>> empty = np.zeros(0, dtype=np.int32)
    >>> args = (off, node, cnt, table, np.ones(2), np.zeros(3, np.int64), empty, empty, 0.1, cpu.SUM, 1.0)
    >>> obj, size = np.zeros(1), np.zeros(1, dtype=np.int64)
    >>> cpu.evaluate_population(*args, obj, size)
    >>> float(round(obj[0], 6)), int(size[0])
    (2.25, 2)
    >>> g_obj, g_size = evaluate_population(*args)  # doctest: +SKIP
    >>> bool(np.allclose(g_obj, obj)), bool(np.array_equal(g_size, size))  # doctest: +SKIP
    (True, True)
    """
    K = load("_fitness_kernels")
    consts = []
    for name, a in (("table", table), ("scale", scale), ("base_off", base_off), ("base_node", base_node)):
        consts.append(M.dev(a, None if cache_key is None else (cache_key, name), version))
    consts.append(M.dev(base_cnt, None if cache_key is None else (cache_key, "base_cnt"), version))
    d_off, d_node, d_cnt = M.dev(off), M.dev(node), M.dev(cnt)
    n = int(np.shape(off)[0] if rows is None else np.shape(rows)[0])
    d_obj, h_obj = M.out_pair(obj, (n,), np.float64)
    d_size, h_size = M.out_pair(size, (n,), np.int64)
    blocks, tpb = M.launch_shape(max(n, 1), threads_per_block)
    njobs = int(np.shape(off)[1]) - 1
    if interop.any_device([penalty]):
        d_penalty = penalty
    else:
        per_job = np.broadcast_to(np.asarray(penalty, dtype=np.float64), (njobs,))
        d_penalty = M.dev(np.ascontiguousarray(per_job), None if cache_key is None else (cache_key, "penalty"), version)
    scalars = (d_penalty, int(mode), float(p))
    if n:
        if rows is None:
            K.evaluate_population_kernel[blocks, tpb](d_off, d_node, d_cnt, *consts, *scalars, d_obj, d_size)
        else:
            K.evaluate_rows_kernel[blocks, tpb](d_off, d_node, d_cnt, M.dev(rows), *consts, *scalars, d_obj, d_size)
    if keep_on_device:
        return d_obj, d_size
    return (
        d_obj if h_obj is None and interop.any_device([obj]) else M.to_host(d_obj, h_obj),
        d_size if h_size is None and interop.any_device([size]) else M.to_host(d_size, h_size),
    )
