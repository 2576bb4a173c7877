"""``evaluate_grid``: a large goodput grid split into chunks across dask workers."""

from __future__ import annotations

import math

import numpy as np

from fastsched import _validate as V
from fastsched.goodput import GoodputFunction
from fastsched.sweep.client import client_for

__all__ = ["evaluate_grid", "MAX_GRID_POINTS"]

#: Most points one grid may have: the flattened inputs and the results take about 60 bytes a
#: point, so 10**8 points is ~6 GB, checked before anything is broadcast or allocated.
MAX_GRID_POINTS = 10**8


def _optimize_chunk(fn, nodes, replicas, max_batch_size, atomic_bsz_range, accumulation):
    return fn.optimize(
        nodes, replicas, max_batch_size=max_batch_size, atomic_bsz_range=atomic_bsz_range, accumulation=accumulation
    )


def _evaluate_chunk(fn, nodes, replicas, atomic_bsz, accum_steps):
    return fn.evaluate(nodes, replicas, atomic_bsz, accum_steps)


def evaluate_grid(
    goodput_fn,
    num_nodes,
    num_replicas,
    atomic_bsz=None,
    accum_steps=None,
    *,
    max_batch_size=None,
    atomic_bsz_range=None,
    accumulation=False,
    client=None,
    workers=None,
    chunk_size=1_000_000,
):
    """Evaluate or optimise a goodput model over a large grid, in chunks on dask workers.

    Without ``atomic_bsz`` this is :meth:`fastsched.GoodputFunction.optimize` (best goodput over
    batch sizes for each (nodes, replicas)); with ``atomic_bsz`` and ``accum_steps`` it is
    :meth:`fastsched.GoodputFunction.evaluate`. The broadcast grid is flattened, cut into
    chunks of ``chunk_size`` points, each chunk is one task, and the results are reassembled
    in the grid's shape: identical to the single-process call.

    Parameters
    ----------
    goodput_fn : GoodputFunction
        The model (sent to every worker once).
    num_nodes, num_replicas : array_like of int
        Broadcast against each other (and against ``atomic_bsz`` / ``accum_steps``).
    atomic_bsz, accum_steps : array_like, optional
        Give both to evaluate fixed batch configurations.
    max_batch_size, atomic_bsz_range, accumulation
        As in ``GoodputFunction.optimize`` (optimise mode only).
    client : distributed.Client, str or "serial", optional
        A client, a scheduler address, or ``"serial"`` to compute the chunks in this process.
        Default: a ``LocalCluster`` of ``workers`` processes.
    workers : int, optional
        Worker processes of the default cluster.
    chunk_size : int
        Grid points per task (>= 1).

    Returns
    -------
    numpy.ndarray or (goodput, atomic_bsz, accum_steps)
        Evaluate mode: goodput in the broadcast shape. Optimise mode: the three arrays of
        ``optimize``.

    Raises
    ------
    ValueError, TypeError
        As the underlying model method, checked on the first chunk before the rest is sent;
        also for a bad ``chunk_size``, only one of ``atomic_bsz`` / ``accum_steps``, or a grid
        of more than :data:`MAX_GRID_POINTS` points.

    Examples
    --------
    ``client="serial"`` computes the chunks in this process (no dask needed); the answer is the
    one of a single call:

    >>> import numpy as np
    >>> from fastsched import GoodputFunction, GradParams, PerfParams
    >>> from fastsched.sweep import evaluate_grid
    >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
    ...                      GradParams(0.00136, 0.000502), 128)
    >>> nodes, replicas = np.meshgrid([1, 2], [2, 4, 8], indexing="ij")
    >>> goodput, atomic_bsz, accum_steps = evaluate_grid(
    ...     fn, nodes, replicas, max_batch_size=1280, atomic_bsz_range=(64, 256),
    ...     client="serial", chunk_size=4)
    >>> goodput.shape, bool(np.array_equal(goodput, fn.optimize(nodes, replicas, 1280, (64, 256))[0]))
    ((2, 3), True)
    >>> evaluate_grid(fn, [1, 1], [4, 8], atomic_bsz=64, accum_steps=0, client="serial").round(1)
    array([299.1, 319.1])
    """
    if not isinstance(goodput_fn, GoodputFunction):
        raise TypeError(f"goodput_fn must be a GoodputFunction, got {type(goodput_fn).__name__}")
    chunk_size = V.check_int_scalar("chunk_size", chunk_size, low=1)
    if (atomic_bsz is None) != (accum_steps is None):
        raise ValueError("give both atomic_bsz and accum_steps (evaluate mode) or neither (optimize mode)")
    mode_eval = atomic_bsz is not None
    names = ["num_nodes", "num_replicas"] + (["atomic_bsz", "accum_steps"] if mode_eval else [])
    values = [num_nodes, num_replicas] + ([atomic_bsz, accum_steps] if mode_eval else [])
    arrays = []
    for name, v in zip(names, values, strict=True):
        a = np.asarray(v)
        if a.dtype == object or a.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
        arrays.append(a)
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise ValueError(f"{', '.join(names)} have shapes {[a.shape for a in arrays]} that do not broadcast") from None
    size = math.prod(shape)
    if size == 0:
        raise ValueError("the grid is empty")
    if size > MAX_GRID_POINTS:
        raise ValueError(f"the grid {shape} has {size} points, more than the limit of {MAX_GRID_POINTS}")
    flat = [np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in arrays]
    bounds = [(i, min(i + chunk_size, size)) for i in range(0, size, chunk_size)]
    if mode_eval:

        def piece(lo, hi):
            return (goodput_fn, *(f[lo:hi] for f in flat))

        task = _evaluate_chunk
    else:

        def piece(lo, hi):
            return (goodput_fn, flat[0][lo:hi], flat[1][lo:hi], max_batch_size, atomic_bsz_range, accumulation)

        task = _optimize_chunk

    first = task(*piece(*bounds[0]))  # validates the inputs here, before anything is submitted
    parts = [first]
    if len(bounds) > 1:
        if client == "serial":
            parts += [task(*piece(lo, hi)) for lo, hi in bounds[1:]]
        else:
            with client_for(client, workers) as c:
                [fn_future] = c.scatter([goodput_fn], broadcast=True)
                futures = []
                for lo, hi in bounds[1:]:
                    args = piece(lo, hi)
                    futures.append(c.submit(task, fn_future, *args[1:], pure=False))
                parts += c.gather(futures)
    if mode_eval:
        out = np.concatenate([np.atleast_1d(np.asarray(p, dtype=np.float64)) for p in parts])
        return out.reshape(shape) if shape else float(out[0])
    g, a, s = (np.concatenate([np.atleast_1d(np.asarray(p[i])) for p in parts]) for i in range(3))
    if not shape:
        return float(g[0]), int(a[0]), int(s[0])
    return g.reshape(shape), a.reshape(shape), s.reshape(shape)
