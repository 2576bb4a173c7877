"""Launchers of the many-models kernels (:mod:`fastsched.cuda._batch_kernels`).

Inputs are the validated model arrays of a :class:`fastsched.goodput.GoodputParams` (host or device)
plus flat configuration arrays; outputs are host arrays, or device arrays with
``keep_on_device=True``. Same signatures and results as the CPU kernels of
:mod:`fastsched.goodput._batch_kernels`.
"""

from __future__ import annotations

import numpy as np

from fastsched.cuda import _memory as M
from fastsched.cuda._probe import load

__all__ = ["batch_elementwise", "batch_matrix", "batch_optimize", "batch_tables"]


def _k():
    return load("_batch_kernels")


def _finish(outs, keep_on_device):
    return tuple(outs) if keep_on_device else tuple(M.to_host(o) for o in outs)


def batch_optimize(params, model, multi, reps, *, keep_on_device=False, threads_per_block=None):
    """Grid search of configuration ``i`` under model ``model[i]``: (goodput, atomic, accum).

    Examples
    --------
    Reached through :class:`fastsched.goodput.ModelBatch` with ``backend="cuda"`` (or
    ``"auto"`` on a large batch):

    >>> import fastsched.cuda as fc
    >>> from fastsched.goodput import ModelBatch
    >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]] * 2, [[0.5, 4.0]] * 2, [32, 64], 512)
    >>> g, a, s = b.optimize([0, 1], 1, 4, backend="cuda" if fc.is_available() else "cpu")
    >>> g.shape
    (2,)
    """
    n = int(np.shape(reps)[0])
    outs = [M.device_empty(n, np.float64), M.device_empty(n, np.int64), M.device_empty(n, np.int64)]
    blocks, tpb = M.launch_shape(n, threads_per_block)
    if n:
        _k().optimize_kernel[blocks, tpb](M.device_params(params), M.dev(model), M.dev(multi), M.dev(reps), *outs)
    return _finish(outs, keep_on_device)


def batch_matrix(params, multi, reps, *, keep_on_device=False, threads_per_block=None):
    """Grid search of every (model, configuration) pair: three ``[J, n]`` arrays.

    Examples
    --------
    >>> import fastsched.cuda as fc
    >>> from fastsched.goodput import ModelBatch
    >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]] * 3, [[0.5, 4.0]] * 3, 32, 512)
    >>> b.optimize_matrix([1, 2], [2, 4], backend="cuda" if fc.is_available() else "cpu")[0].shape
    (3, 2)
    """
    shape = (int(np.shape(params.perf)[0]), int(np.shape(reps)[0]))
    outs = [M.device_empty(shape, np.float64), M.device_empty(shape, np.int64), M.device_empty(shape, np.int64)]
    blocks, tpb = M.launch_shape(shape[0] * shape[1], threads_per_block)
    if shape[0] * shape[1]:
        _k().matrix_kernel[blocks, tpb](M.device_params(params), M.dev(multi), M.dev(reps), *outs)
    return _finish(outs, keep_on_device)


def batch_tables(params, base, max_replicas, *, keep_on_device=False, threads_per_block=None):
    """Speedup tables ``float64[J, 2, max_replicas + 1]`` of every model, one launch.

    Examples
    --------
    >>> import fastsched.cuda as fc
    >>> from fastsched.goodput import ModelBatch
    >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]] * 2, [[0.5, 4.0]] * 2, 32, 512)
    >>> b.speedup_tables(4, backend="cuda" if fc.is_available() else "cpu").shape
    (2, 2, 5)
    """
    shape = (int(np.shape(params.perf)[0]), 2, int(max_replicas) + 1)
    out = M.device_empty(shape, np.float64)
    blocks, tpb = M.launch_shape(shape[0] * shape[1] * shape[2], threads_per_block)
    if shape[0]:
        _k().tables_kernel[blocks, tpb](
            M.device_params(params), M.dev(np.ascontiguousarray(base, dtype=np.float64)), out
        )
    return out if keep_on_device else M.to_host(out)


def batch_elementwise(
    params, model, nodes, reps, atomic, accum, with_eff, *, keep_on_device=False, threads_per_block=None
):
    """Throughput (goodput when ``with_eff``) of configuration ``i`` under model ``model[i]``.

    Examples
    --------
    >>> import fastsched.cuda as fc
    >>> from fastsched.goodput import ModelBatch
    >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]], [[0.5, 4.0]], 32)
    >>> b.evaluate([0, 0], 1, [1, 2], 64, 0, backend="cuda" if fc.is_available() else "cpu").shape
    (2,)
    """
    n = int(np.shape(reps)[0])
    out = M.device_empty(n, np.float64)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    if n:
        cols = [M.dev(c) for c in (model, nodes, reps, atomic, accum)]
        _k().elementwise_kernel[blocks, tpb](M.device_params(params), *cols, bool(with_eff), out)
    return out if keep_on_device else M.to_host(out)
