"""Goodput launchers of the CUDA target: host or device arrays in, host or device arrays out.

Two kinds of entry points:

* twins of the CPU kernels with their signatures (already validated flat arrays, host or
  device): :func:`elementwise`, :func:`checked_elementwise`, :func:`optimize_keys`,
  :func:`fill_table`, :func:`speedup_tables`;
* the device-array faces used by :class:`~fastsched.goodput.GoodputFunction` and
  :class:`~fastsched.goodput.SpeedupFunction` when given ``__cuda_array_interface__`` arrays:
  :func:`evaluate_device`, :func:`optimize_device`, :func:`speedup_device`. They validate on the
  device (a status reduction read back as a few int64), return device arrays without a host
  round trip, and report errors as the CPU path words them.

Model parameters come from the public accessors ``GoodputFunction.kernel_params`` and
``SpeedupFunction.grid`` (never from private attributes).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from fastsched import _validate as V
from fastsched.cuda import _arrays as A
from fastsched.cuda import _memory as M
from fastsched.cuda._probe import load
from fastsched.cuda.batch import batch_tables
from fastsched.goodput import _kernels as CPU
from fastsched.goodput.batch import ModelBatch
from fastsched.goodput.speedup import TABLE_MAX_REPLICAS

__all__ = [
    "checked_elementwise",
    "elementwise",
    "evaluate_device",
    "fill_table",
    "optimize_device",
    "optimize_keys",
    "speedup_device",
    "speedup_tables",
]


def _kernels():
    return load("_goodput_kernels")


def _dev_f64(x):
    return x if A.any_device([x]) else M.to_device(np.ascontiguousarray(x, dtype=np.float64))


# --------------------------------------------------------------------------------------
# Twins of the CPU kernels
# --------------------------------------------------------------------------------------
def elementwise(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    nodes,
    replicas,
    atomic_bsz,
    accum_steps,
    with_efficiency=True,
    out=None,
    *,
    keep_on_device=False,
    threads_per_block=None,
):
    """Goodput (or throughput) of flat, already validated configurations on the GPU.

    Parameters
    ----------
    perf : float64[7]
        ``GoodputFunction.kernel_params.perf``.
    grad_sqr, grad_var, init_bsz : float
        Gradient statistics and initial batch size.
    nodes, replicas, atomic_bsz, accum_steps : 1-D arrays of equal length
        Host or device; validate them first -- this kernel does no checks.
    with_efficiency : bool
        Goodput when True, throughput when False.
    out : float64[n], optional
        Host or device output; allocated when None.
    keep_on_device : bool
        Return the device array instead of copying it back.

    Returns
    -------
    numpy.ndarray or device array
        float64[n].

    Examples
    --------
    The launch needs a CUDA GPU (the lines marked ``+SKIP``); the CPU path gives the same values:

    >>> import numpy as np
    >>> from fastsched import GoodputFunction
    >>> fn = GoodputFunction([0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14], (0.00136, 0.000502), 128)
    >>> kp = fn.kernel_params  # (perf, grad_sqr, grad_var, init_bsz)
    >>> nodes, replicas = np.array([1, 1, 2]), np.array([1, 4, 8])
    >>> atomic, accum = np.array([128, 64, 32]), np.array([0, 0, 0])
    >>> cpu = fn.evaluate(nodes, replicas, atomic, accum)  # the CPU path, for comparison
    >>> cpu.round(2)
    array([150.94, 299.15, 428.05])
    >>> gpu = elementwise(*kp, nodes, replicas, atomic, accum)  # doctest: +SKIP
    >>> bool(np.allclose(gpu, cpu))  # doctest: +SKIP
    True
    """
    K = _kernels()
    n = int(np.shape(replicas)[0])
    args = [M.dev(a) for a in (nodes, replicas, atomic_bsz, accum_steps)]
    d_out, host_out = M.out_pair(out, (n,), np.float64)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.elementwise_kernel[blocks, tpb](
        _dev_f64(perf), float(grad_sqr), float(grad_var), float(init_bsz), *args, bool(with_efficiency), d_out
    )
    if keep_on_device or host_out is None and A.any_device([out]):
        return d_out
    return M.to_host(d_out, host_out)


def checked_elementwise(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    nodes,
    replicas,
    atomic_bsz,
    accum_steps,
    with_eff,
    out,
    *,
    chunk=None,
    threads_per_block=None,
):
    """Drop-in for ``fastsched.goodput._kernels.elementwise`` that validates and computes on the GPU.

    Same arguments and status codes as the CPU kernel (host arrays of equal length, ``out``
    float64[n] filled in place). Validation happens on the device, fused with the computation
    (no host pass over the data); inputs of at least ``_memory.STREAM_MIN`` elements are
    streamed in chunks through reusable pinned buffers on two streams, so copies overlap
    kernels. Returns ``OK`` or the CPU's error code for the same input (``out`` then holds no
    valid result).

    Examples
    --------
    The launch needs a CUDA GPU (the lines marked ``+SKIP``); the CPU path gives the same values:

    >>> import numpy as np
    >>> from fastsched import GoodputFunction
    >>> fn = GoodputFunction([0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14], (0.00136, 0.000502), 128)
    >>> kp = fn.kernel_params  # (perf, grad_sqr, grad_var, init_bsz)
    >>> nodes, replicas = np.array([1, 1, 2]), np.array([1, 4, 8])
    >>> atomic, accum = np.array([128, 64, 32]), np.array([0, 0, 0])
    >>> cpu = fn.evaluate(nodes, replicas, atomic, accum)  # the CPU path, for comparison
    >>> cpu.round(2)
    array([150.94, 299.15, 428.05])
    >>> from fastsched.goodput import _kernels as CPU
    >>> out = np.empty(3)
    >>> checked_elementwise(*kp, nodes, replicas, atomic, accum, True, out) == CPU.OK  # doctest: +SKIP
    True
    >>> bool(np.allclose(out, cpu))  # doctest: +SKIP
    True
    """
    K = _kernels()
    cols = (nodes, replicas, atomic_bsz, accum_steps)
    d_perf = _dev_f64(perf)
    d_status = _new_status(2)
    n = int(out.shape[0])
    scalars = (float(grad_sqr), float(grad_var), float(init_bsz))

    def launch(stream, d_in, d_out, offset):
        blocks, tpb = M.launch_shape(int(d_out[0].shape[0]), threads_per_block)
        K.checked_elementwise_kernel[blocks, tpb, stream](
            d_perf, *scalars, *d_in, bool(with_eff), d_out[0], d_status, offset
        )

    if n >= M.STREAM_MIN or chunk is not None:
        M.stream_chunks(cols, (out,), launch, chunk)
    else:
        d_out = M.device_empty(n, np.float64)
        launch(0, [M.to_device(c) for c in cols], [d_out], 0)
        M.to_host(d_out, out)
    return _elementwise_status(_read_status(d_status))


def optimize_keys(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    multi_node,
    num_replicas,
    max_bsz,
    min_atomic,
    max_atomic,
    accumulation,
    out_goodput=None,
    out_atomic=None,
    out_accum=None,
    *,
    keep_on_device=False,
    threads_per_block=None,
    chunk=None,
):
    """Batch-size grid search per ``(multi_node, num_replicas)`` key on the GPU.

    Same arguments and results as ``fastsched.goodput._kernels.optimize_keys_kernel``; host
    outputs are filled in place, device outputs written in place, missing ones allocated.
    Host inputs and outputs of at least ``_memory.STREAM_MIN`` keys (or any size with
    ``chunk``) are streamed in chunks through pinned buffers, copies overlapping kernels.

    Returns
    -------
    (goodput, atomic_bsz, accum_steps)
        Host arrays, or device arrays with ``keep_on_device=True``.

    Examples
    --------
    The launch needs a CUDA GPU (the lines marked ``+SKIP``); the CPU path gives the same values:

    >>> import numpy as np
    >>> from fastsched import GoodputFunction
    >>> fn = GoodputFunction([0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14], (0.00136, 0.000502), 128)
    >>> kp = fn.kernel_params  # (perf, grad_sqr, grad_var, init_bsz)
    >>> nodes, replicas = np.array([1, 1, 2]), np.array([1, 4, 8])
    >>> goodput, atomic, accum = fn.optimize(nodes, replicas, 1280, (64, 256))  # the CPU path
    >>> goodput.round(2), atomic, accum
    (array([150.94, 299.15, 305.72]), array([128,  64,  64]), array([0, 0, 0]))
    >>> gpu = optimize_keys(*kp, nodes > 1, replicas, 1280, 64, 256, False)  # doctest: +SKIP
    >>> bool(np.allclose(gpu[0], goodput)), bool(np.array_equal(gpu[1], atomic))  # doctest: +SKIP
    (True, True)
    """
    K = _kernels()
    n = int(np.shape(num_replicas)[0])
    host_io = not keep_on_device and not A.any_device([multi_node, num_replicas, out_goodput, out_atomic, out_accum])
    if host_io and (n >= M.STREAM_MIN or chunk is not None):
        outs = (
            np.empty(n, np.float64) if out_goodput is None else out_goodput,
            np.empty(n, np.int64) if out_atomic is None else out_atomic,
            np.empty(n, np.int64) if out_accum is None else out_accum,
        )
        d_perf = _dev_f64(perf)
        scalars = (float(grad_sqr), float(grad_var), float(init_bsz))
        bounds = (float(max_bsz), float(min_atomic), float(max_atomic), bool(accumulation))

        def launch(stream, d_in, d_out, offset):
            blocks, tpb = M.launch_shape(int(d_in[0].shape[0]), threads_per_block)
            K.optimize_keys_kernel[blocks, tpb, stream](d_perf, *scalars, *d_in, *bounds, *d_out)

        M.stream_chunks((np.ascontiguousarray(multi_node), np.ascontiguousarray(num_replicas)), outs, launch, chunk)
        return outs
    dg, hg = M.out_pair(out_goodput, (n,), np.float64)
    da, ha = M.out_pair(out_atomic, (n,), np.int64)
    ds, hs = M.out_pair(out_accum, (n,), np.int64)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.optimize_keys_kernel[blocks, tpb](
        _dev_f64(perf),
        float(grad_sqr),
        float(grad_var),
        float(init_bsz),
        M.dev(multi_node),
        M.dev(num_replicas),
        float(max_bsz),
        float(min_atomic),
        float(max_atomic),
        bool(accumulation),
        dg,
        da,
        ds,
    )
    if keep_on_device:
        return dg, da, ds
    return tuple(
        d if h is None and A.any_device([o]) else M.to_host(d, h)
        for d, h, o in ((dg, hg, out_goodput), (da, ha, out_atomic), (ds, hs, out_accum))
    )


def fill_table(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    max_bsz,
    min_atomic,
    max_atomic,
    accumulation,
    base_goodput,
    table,
    filled,
    want_multi,
    want_rep,
    *,
    threads_per_block=None,
):
    """Fill ``table[m, r]`` for wanted keys not yet ``filled`` (``fill_table_kernel``'s twin).

    ``table`` float64[2, R] and ``filled`` bool[2, R] are updated in place (host arrays are
    copied to the device and back; pass device arrays to keep them resident).

    Examples
    --------
    The launch needs a CUDA GPU (the lines marked ``+SKIP``); the CPU path gives the same values:

    >>> import numpy as np
    >>> from fastsched import GoodputFunction
    >>> fn = GoodputFunction([0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14], (0.00136, 0.000502), 128)
    >>> kp = fn.kernel_params  # (perf, grad_sqr, grad_var, init_bsz)
    >>> from fastsched import SpeedupFunction
    >>> speedup = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    >>> want = speedup.table(8)  # the CPU path: [single node, several nodes] x replicas 0..8
    >>> want.shape, want[0, :5].round(3)
    ((2, 9), array([0.   , 1.   , 1.728, 1.892, 1.982]))
    >>> table, filled = np.zeros((2, 9)), np.zeros((2, 9), dtype=bool)
    >>> multi, reps = np.meshgrid([0, 1], np.arange(1, 9), indexing="ij")
    >>> fill_table(*kp, 1280, 64, 256, False, speedup.base_goodput, table, filled,
    ...            multi.ravel(), reps.ravel())  # doctest: +SKIP
    >>> bool(np.allclose(table, want)), bool(filled[:, 1:].all())  # doctest: +SKIP
    (True, True)
    """
    K = _kernels()
    n = int(np.shape(want_rep)[0])
    d_table, d_filled = M.dev(table), M.dev(filled)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.fill_table_kernel[blocks, tpb](
        _dev_f64(perf),
        float(grad_sqr),
        float(grad_var),
        float(init_bsz),
        float(max_bsz),
        float(min_atomic),
        float(max_atomic),
        bool(accumulation),
        float(base_goodput),
        d_table,
        d_filled,
        M.dev(want_multi),
        M.dev(want_rep),
    )
    if d_table is not table:
        M.to_host(d_table, table)
    if d_filled is not filled:
        M.to_host(d_filled, filled)


def speedup_tables(speedup_fns, max_replicas: int, *, keep_on_device=False, threads_per_block=None):
    """Speedup tables of many jobs, one launch: ``float64[J, 2, max_replicas + 1]``.

    ``out[j, 0, r]`` / ``out[j, 1, r]`` equal ``speedup_fns[j].table(max_replicas)[0/1, r]``
    (single node / more than one node), ``out[:, :, 0] == 0``. For models not wrapped in
    SpeedupFunctions use :class:`fastsched.goodput.batch.ModelBatch`.

    Parameters
    ----------
    speedup_fns : sequence of SpeedupFunction
        Each backed by a fastsched GoodputFunction (``is_tabulated``).
    max_replicas : int
        Largest replica count to tabulate.
    keep_on_device : bool
        Return the device array (e.g. to feed the fitness kernel without a copy).

    Examples
    --------
    The launch needs a CUDA GPU (the lines marked ``+SKIP``); the CPU path gives the same values:

    >>> import numpy as np
    >>> from fastsched import GoodputFunction
    >>> fn = GoodputFunction([0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14], (0.00136, 0.000502), 128)
    >>> kp = fn.kernel_params  # (perf, grad_sqr, grad_var, init_bsz)
    >>> from fastsched import SpeedupFunction
    >>> speedup = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    >>> want = speedup.table(8)  # the CPU path: [single node, several nodes] x replicas 0..8
    >>> want.shape, want[0, :5].round(3)
    ((2, 9), array([0.   , 1.   , 1.728, 1.892, 1.982]))
    >>> tables = speedup_tables([speedup, speedup], 8)  # doctest: +SKIP
    >>> tables.shape, bool(np.allclose(tables[1], want))  # doctest: +SKIP
    ((2, 2, 9), True)
    """
    rmax = int(max_replicas)
    if rmax < 0:
        raise ValueError(f"max_replicas must be >= 0, got {rmax}")
    for j, fn in enumerate(speedup_fns):
        if not getattr(fn, "is_tabulated", False):
            raise TypeError(f"speedup_fns[{j}] is not backed by a fastsched GoodputFunction")
    batch = ModelBatch.from_speedup_functions(speedup_fns)
    base = np.array([fn.base_goodput for fn in speedup_fns], dtype=np.float64)
    return batch_tables(
        batch.kernel_params, base, rmax, keep_on_device=keep_on_device, threads_per_block=threads_per_block
    )


# --------------------------------------------------------------------------------------
# Device arrays in, device arrays out
# --------------------------------------------------------------------------------------
_COUNT_CHECKS = ("finite", "integral", "large", "low")


def _read_status(d_status):
    host = np.empty(d_status.shape[0], dtype=np.int64)
    M.to_host(d_status, host)
    return host


def _new_status(n):
    return M.to_device(np.full(n, _kernels().NONE, dtype=np.int64))


def _value_at(d, i):
    """One element of a device array (a counted 1-element copy), for an error message."""
    return M.to_host(d[int(i) : int(i) + 1])[0]


def _count_message(status, names, cols, lows):
    """First failed count check in the CPU's order (field by field, check by check), or None."""
    K = _kernels()
    for f, (name, col, low) in enumerate(zip(names, cols, lows, strict=True)):
        for c, check in enumerate(_COUNT_CHECKS):
            i = status[4 * f + c]
            if i != K.NONE:
                value = int(_value_at(col, i)) if check == "low" else None
                return V.count_error(name, check, value, low)
    return None


def _large_check(col) -> bool:
    return np.dtype(col.dtype).kind in "fu"


def evaluate_device(params, values, with_efficiency, *, threads_per_block=None):
    """Goodput/throughput of device-array configurations, validated on the device.

    Parameters
    ----------
    params : KernelParams
        ``GoodputFunction.kernel_params``.
    values : sequence of 4 device arrays
        num_nodes, num_replicas, atomic_bsz, accum_steps (equal shapes, any real dtype).
    with_efficiency : bool
        Goodput when True, throughput when False.

    Returns
    -------
    (result, status)
        ``result`` is a device float64 array of the input shape in the caller's array type;
        ``status`` is ``fastsched.goodput._kernels.OK`` or the CPU path's error code for the
        same input (``result`` is then None).

    Examples
    --------
    Reached through the faces: device arrays in, device arrays out.

    >>> import numpy as np
    >>> import fastsched.cuda as fc
    >>> from fastsched.goodput import GoodputFunction
    >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
    >>> if fc.is_available():  # a GPU, or NUMBA_ENABLE_CUDASIM=1
    ...     reps = fc.to_device(np.array([1, 2, 4]))
    ...     out = g.evaluate(1, reps, 64, 0).copy_to_host()
    ... else:
    ...     out = g.evaluate(1, [1, 2, 4], 64, 0, backend="cpu")
    >>> out.shape
    (3,)
    """
    K = _kernels()
    names = ("num_nodes", "num_replicas", "atomic_bsz", "accum_steps")
    cols, shape, caller = A.as_device_columns(names, values)
    n = int(cols[0].shape[0])
    d_out = M.device_empty(n, np.float64)
    d_status = _new_status(2)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.checked_elementwise_kernel[blocks, tpb](
        _dev_f64(params.perf),
        params.grad_sqr,
        params.grad_var,
        params.init_bsz,
        *cols,
        bool(with_efficiency),
        d_out,
        d_status,
        0,
    )
    code = _elementwise_status(_read_status(d_status))
    if code != CPU.OK:
        return None, code
    return A.like_caller(d_out, caller, shape), CPU.OK


def _elementwise_status(status):
    """Return the CPU path's status code for a read-back elementwise status pair."""
    K = _kernels()
    if status[0] != K.NONE:
        return {
            K.E_REPLICAS: CPU.BAD_REPLICAS,
            K.E_NODES: CPU.BAD_NODES,
            K.E_ATOMIC: CPU.BAD_ATOMIC,
            K.E_ACCUM: CPU.BAD_ACCUM,
            K.E_BATCH: CPU.BAD_BATCH,
        }[int(status[0] % 8)]
    if status[1] != K.NONE:
        return CPU.OVERFLOW
    return CPU.OK


def optimize_device(params, bounds, accumulation, nodes, replicas, *, threads_per_block=None):
    """Grid search of every device-array configuration (no host de-duplication of keys).

    Parameters
    ----------
    params : KernelParams
        ``GoodputFunction.kernel_params``.
    bounds : GridBounds
        ``GoodputFunction.grid_bounds(max_batch_size, atomic_bsz_range)``.
    accumulation : bool
        Whether gradient accumulation may be used.
    nodes, replicas : device arrays of equal shape
        Integral values of any real dtype.

    Returns
    -------
    (goodput, atomic_bsz, accum_steps) or str
        Device arrays (float64, int64, int64) of the input shape in the caller's type, or the
        CPU path's error message for the same input.

    Examples
    --------
    >>> import numpy as np
    >>> import fastsched.cuda as fc
    >>> from fastsched.goodput import GoodputFunction
    >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
    >>> if fc.is_available():  # a GPU, or NUMBA_ENABLE_CUDASIM=1
    ...     goodput = g.optimize(1, fc.to_device(np.arange(1, 5)), 512)[0].copy_to_host()
    ... else:
    ...     goodput = g.optimize(1, np.arange(1, 5), 512, backend="cpu")[0]
    >>> goodput.shape
    (4,)
    """
    K = _kernels()
    cols, shape, caller = A.as_device_columns(("num_nodes", "num_replicas"), (nodes, replicas))
    n = int(cols[0].shape[0])
    outs = (M.device_empty(n, np.float64), M.device_empty(n, np.int64), M.device_empty(n, np.int64))
    d_status = _new_status(K.COUNT_SLOTS)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.checked_optimize_kernel[blocks, tpb](
        _dev_f64(params.perf),
        params.grad_sqr,
        params.grad_var,
        params.init_bsz,
        *cols,
        float(bounds.max_bsz),
        float(bounds.min_atomic),
        float(bounds.max_atomic),
        bool(accumulation),
        _large_check(cols[0]),
        _large_check(cols[1]),
        *outs,
        d_status,
    )
    status = _read_status(d_status)
    msg = _count_message(status, ("num_nodes", "num_replicas"), cols, (1, 1))
    if msg is None and status[K.C_ORDER] != K.NONE:
        msg = "num_nodes must be <= num_replicas"
    if msg is not None:
        return msg
    return tuple(A.like_caller(o, caller, shape) for o in outs)


_LOOKUP_CODES = {1: CPU.BAD_REPLICAS, 2: CPU.BAD_NODES, 3: CPU.ZERO_MISMATCH}


def max_value(d):
    """Largest finite value of a device array (one reduction launch, one 8-byte copy back)."""
    K = _kernels()
    out = M.to_device(np.array([-np.inf]))
    blocks, tpb = M.launch_shape(int(d.shape[0]))
    K.max_kernel[blocks, tpb](d, out)
    return float(M.to_host(out)[0])


_tables_lock = threading.Lock()
_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _device_table(speedup_fn, host_table):
    # Entries of a completed range never change, so a device copy stays valid until the
    # range grows; keyed weakly on the function so a dead one frees its device copy.
    with _tables_lock:
        hit = _tables.get(speedup_fn)
        if hit is not None and hit[0] == host_table.shape:
            return hit[1]
    d = M.to_device(host_table)
    with _tables_lock:
        _tables[speedup_fn] = (host_table.shape, d)
    return d


def speedup_device(speedup_fn, nodes, replicas, *, threads_per_block=None):
    """Speedups of device-array placements, read from a device copy of the job's table.

    The maximum replica count is reduced on the device first; the host table is completed up
    to it (``SpeedupFunction.table``) and uploaded once per covered range (kept per function,
    weakly), then one kernel validates and looks up.

    Returns
    -------
    device array or int or str
        Speedups of the input shape in the caller's array type, or the CPU path's error (a
        ``_kernels`` code, or a message for a failed count check).

    Examples
    --------
    >>> import numpy as np
    >>> import fastsched.cuda as fc
    >>> from fastsched.goodput import GoodputFunction, SpeedupFunction
    >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
    >>> sp = SpeedupFunction(g, max_batch_size=512)
    >>> if fc.is_available():  # a GPU, or NUMBA_ENABLE_CUDASIM=1
    ...     s = sp(fc.to_device(np.array([1, 1])), fc.to_device(np.array([1, 2]))).copy_to_host()
    ... else:
    ...     s = sp(np.array([1, 1]), np.array([1, 2]))
    >>> float(s[0])
    1.0
    """
    K = _kernels()
    cols, shape, caller = A.as_device_columns(("num_nodes", "num_replicas"), (nodes, replicas))
    n = int(cols[0].shape[0])
    max_rep = max_value(cols[1])
    width = 1 if not np.isfinite(max_rep) or max_rep < 1 else int(min(max_rep, TABLE_MAX_REPLICAS)) + 1
    host_table = np.ascontiguousarray(speedup_fn.table(width - 1))
    d_table = _device_table(speedup_fn, host_table)
    d_out = M.device_empty(n, np.float64)
    d_status = _new_status(K.COUNT_SLOTS)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.checked_lookup_kernel[blocks, tpb](d_table, *cols, _large_check(cols[0]), _large_check(cols[1]), d_out, d_status)
    status = _read_status(d_status)
    msg = _count_message(status, ("num_nodes", "num_replicas"), cols, (None, None))
    if msg is not None:
        return msg
    if status[8] != K.NONE:
        return _LOOKUP_CODES[int(status[8] % 8)]
    if max_rep >= width:
        return f"num_replicas above {TABLE_MAX_REPLICAS} is not supported for device arrays"
    return A.like_caller(d_out, caller, shape)
