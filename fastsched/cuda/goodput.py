"""Goodput launchers of the CUDA target: twins of the CPU kernels.

:func:`elementwise`, :func:`checked_elementwise`, :func:`optimize_keys` and :func:`fill_table`
take the CPU kernels' arguments (already validated flat arrays, host or device) and return
what they return. The device-array faces used by the CPU faces when given
``__cuda_array_interface__`` arrays are in :mod:`fastsched.cuda.device`.

Each takes the model as one :class:`~fastsched.goodput.GoodputParams` (from the public accessors
``GoodputFunction.kernel_params``/``kernel_params_for`` and ``SpeedupFunction.kernel_params``,
never from private attributes), as the CPU kernels do.
"""

from __future__ import annotations

import numpy as np

from fastsched.cuda import _arrays as interop
from fastsched.cuda import _memory as M
from fastsched.cuda._probe import load
from fastsched.cuda._status import elementwise_status, new_status, read_status

__all__ = ["checked_elementwise", "elementwise", "fill_table", "optimize_keys"]


def _kernels():
    return load("_goodput_kernels")


def elementwise(
    params,
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
    params : GoodputParams
        ``GoodputFunction.kernel_params`` (its grid-search fields are not read).
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
    >>> kp = fn.kernel_params
    >>> nodes, replicas = np.array([1, 1, 2]), np.array([1, 4, 8])
    >>> atomic, accum = np.array([128, 64, 32]), np.array([0, 0, 0])
    >>> cpu = fn.evaluate(nodes, replicas, atomic, accum)  # the CPU path, for comparison
    >>> cpu.round(2)
    array([150.94, 299.15, 428.05])
    >>> gpu = elementwise(kp, nodes, replicas, atomic, accum)  # doctest: +SKIP
    >>> bool(np.allclose(gpu, cpu))  # doctest: +SKIP
    True
    """
    K = _kernels()
    n = int(np.shape(replicas)[0])
    args = [M.dev(a) for a in (nodes, replicas, atomic_bsz, accum_steps)]
    d_out, host_out = M.out_pair(out, (n,), np.float64)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.elementwise_kernel[blocks, tpb](M.device_params(params), *args, bool(with_efficiency), d_out)
    if keep_on_device or host_out is None and interop.any_device([out]):
        return d_out
    return M.to_host(d_out, host_out)


def checked_elementwise(
    params,
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
    >>> kp = fn.kernel_params
    >>> nodes, replicas = np.array([1, 1, 2]), np.array([1, 4, 8])
    >>> atomic, accum = np.array([128, 64, 32]), np.array([0, 0, 0])
    >>> cpu = fn.evaluate(nodes, replicas, atomic, accum)  # the CPU path, for comparison
    >>> cpu.round(2)
    array([150.94, 299.15, 428.05])
    >>> from fastsched.goodput import _kernels as CPU
    >>> out = np.empty(3)
    >>> checked_elementwise(kp, nodes, replicas, atomic, accum, True, out) == CPU.OK  # doctest: +SKIP
    True
    >>> bool(np.allclose(out, cpu))  # doctest: +SKIP
    True
    """
    K = _kernels()
    cols = (nodes, replicas, atomic_bsz, accum_steps)
    d_params = M.device_params(params)
    d_status = new_status(2)
    n = int(out.shape[0])

    def launch(stream, d_in, d_out, offset):
        blocks, tpb = M.launch_shape(int(d_out[0].shape[0]), threads_per_block)
        K.checked_elementwise_kernel[blocks, tpb, stream](d_params, *d_in, bool(with_eff), d_out[0], d_status, offset)

    if n >= M.STREAM_MIN or chunk is not None:
        M.stream_chunks(cols, (out,), launch, chunk)
    else:
        d_out = M.device_empty(n, np.float64)
        launch(0, [M.to_device(c) for c in cols], [d_out], 0)
        M.to_host(d_out, out)
    return elementwise_status(read_status(d_status))


def optimize_keys(
    params,
    multi_node,
    num_replicas,
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
    >>> nodes, replicas = np.array([1, 1, 2]), np.array([1, 4, 8])
    >>> goodput, atomic, accum = fn.optimize(nodes, replicas, 1280, (64, 256))  # the CPU path
    >>> goodput.round(2), atomic, accum
    (array([150.94, 299.15, 305.72]), array([128,  64,  64]), array([0, 0, 0]))
    >>> gpu = optimize_keys(fn.kernel_params_for(1280, (64, 256)), nodes > 1, replicas)  # doctest: +SKIP
    >>> bool(np.allclose(gpu[0], goodput)), bool(np.array_equal(gpu[1], atomic))  # doctest: +SKIP
    (True, True)
    """
    K = _kernels()
    n = int(np.shape(num_replicas)[0])
    host_io = not keep_on_device and not interop.any_device(
        [multi_node, num_replicas, out_goodput, out_atomic, out_accum]
    )
    if host_io and (n >= M.STREAM_MIN or chunk is not None):
        outs = (
            np.empty(n, np.float64) if out_goodput is None else out_goodput,
            np.empty(n, np.int64) if out_atomic is None else out_atomic,
            np.empty(n, np.int64) if out_accum is None else out_accum,
        )
        d_params = M.device_params(params)

        def launch(stream, d_in, d_out, offset):
            blocks, tpb = M.launch_shape(int(d_in[0].shape[0]), threads_per_block)
            K.optimize_keys_kernel[blocks, tpb, stream](d_params, *d_in, *d_out)

        M.stream_chunks((np.ascontiguousarray(multi_node), np.ascontiguousarray(num_replicas)), outs, launch, chunk)
        return outs
    dg, hg = M.out_pair(out_goodput, (n,), np.float64)
    da, ha = M.out_pair(out_atomic, (n,), np.int64)
    ds, hs = M.out_pair(out_accum, (n,), np.int64)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.optimize_keys_kernel[blocks, tpb](M.device_params(params), M.dev(multi_node), M.dev(num_replicas), dg, da, ds)
    if keep_on_device:
        return dg, da, ds
    return tuple(
        d if h is None and interop.any_device([o]) else M.to_host(d, h)
        for d, h, o in ((dg, hg, out_goodput), (da, ha, out_atomic), (ds, hs, out_accum))
    )


def fill_table(
    params,
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
    >>> from fastsched import SpeedupFunction
    >>> speedup = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    >>> want = speedup.table(8)  # the CPU path: [single node, several nodes] x replicas 0..8
    >>> want.shape, want[0, :5].round(3)
    ((2, 9), array([0.   , 1.   , 1.728, 1.892, 1.982]))
    >>> table, filled = np.zeros((2, 9)), np.zeros((2, 9), dtype=bool)
    >>> multi, reps = np.meshgrid([0, 1], np.arange(1, 9), indexing="ij")
    >>> fill_table(speedup.kernel_params, speedup.base_goodput, table, filled,
    ...            multi.ravel(), reps.ravel())  # doctest: +SKIP
    >>> bool(np.allclose(table, want)), bool(filled[:, 1:].all())  # doctest: +SKIP
    (True, True)
    """
    K = _kernels()
    n = int(np.shape(want_rep)[0])
    d_table, d_filled = M.dev(table), M.dev(filled)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.fill_table_kernel[blocks, tpb](
        M.device_params(params),
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
