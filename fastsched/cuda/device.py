"""Goodput faces of the CUDA target for device arrays: device arrays in, device arrays out.

:func:`evaluate_device`, :func:`optimize_device` and :func:`speedup_device` serve
:class:`~fastsched.goodput.GoodputFunction` and :class:`~fastsched.goodput.SpeedupFunction`
when they are given ``__cuda_array_interface__`` arrays. They validate on the device (a status
reduction read back as a few int64, see :mod:`fastsched.cuda._status`), return device arrays
without a host round trip, and report errors as the CPU path words them.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from fastsched.cuda import _arrays as interop
from fastsched.cuda import _memory as M
from fastsched.cuda._probe import load
from fastsched.cuda._status import (
    count_message,
    elementwise_status,
    large_check,
    lookup_status,
    new_status,
    read_status,
)
from fastsched.goodput import _formulas as F
from fastsched.goodput._types import TABLE_MAX_REPLICAS

__all__ = ["evaluate_device", "max_value", "optimize_device", "speedup_device"]


def _kernels():
    return load("_goodput_kernels")


def evaluate_device(params, values, with_efficiency, *, threads_per_block=None):
    """Goodput/throughput of device-array configurations, validated on the device.

    Parameters
    ----------
    params : GoodputParams
        ``GoodputFunction.kernel_params`` (its grid-search fields are not read).
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
    cols, shape, caller = interop.as_device_columns(names, values)
    n = int(cols[0].shape[0])
    d_out = M.device_empty(n, np.float64)
    d_status = new_status(2)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.checked_elementwise_kernel[blocks, tpb](
        M.device_params(params),
        *cols,
        bool(with_efficiency),
        d_out,
        d_status,
        0,
    )
    code = elementwise_status(read_status(d_status))
    if code != F.OK:
        return None, code
    return interop.like_caller(d_out, caller, shape), F.OK


def optimize_device(params, nodes, replicas, *, threads_per_block=None):
    """Grid search of every device-array configuration (no host de-duplication of keys).

    Parameters
    ----------
    params : GoodputParams
        ``GoodputFunction.kernel_params_for(max_batch_size, atomic_bsz_range, accumulation)``.
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
    cols, shape, caller = interop.as_device_columns(("num_nodes", "num_replicas"), (nodes, replicas))
    n = int(cols[0].shape[0])
    outs = (M.device_empty(n, np.float64), M.device_empty(n, np.int64), M.device_empty(n, np.int64))
    d_status = new_status(K.COUNT_SLOTS)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.checked_optimize_kernel[blocks, tpb](
        M.device_params(params),
        *cols,
        large_check(cols[0]),
        large_check(cols[1]),
        *outs,
        d_status,
    )
    status = read_status(d_status)
    msg = count_message(status, ("num_nodes", "num_replicas"), cols, (1, 1))
    if msg is None and status[K.C_ORDER] != K.NONE:
        msg = "num_nodes must be <= num_replicas"
    if msg is not None:
        return msg
    return tuple(interop.like_caller(o, caller, shape) for o in outs)


def max_value(d):
    """Largest finite value of a device array (one reduction launch, one 8-byte copy back)."""
    K = _kernels()
    out = M.to_device(np.array([-np.inf]))
    blocks, tpb = M.launch_shape(int(d.shape[0]))
    K.max_kernel[blocks, tpb](d, out)
    return float(M.to_host(out)[0])


_tables_lock = threading.Lock()
_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _device_table(owner, host_table):
    # Entries of a completed range never change, so a device copy stays valid until the
    # range grows; keyed weakly on the table's owner so a dead one frees its device copy.
    if owner is None:
        return M.to_device(host_table)
    with _tables_lock:
        hit = _tables.get(owner)
        if hit is not None and hit[0] == host_table.shape:
            return hit[1]
    d = M.to_device(host_table)
    with _tables_lock:
        _tables[owner] = (host_table.shape, d)
    return d


def speedup_device(table, nodes, replicas, *, threads_per_block=None):
    """Speedups of device-array placements, read from a device copy of a job's speedup table.

    The maximum replica count is reduced on the device first; ``table`` is asked for the host
    table up to it, which is uploaded once per covered range (kept per owner of ``table``,
    weakly), then one kernel validates and looks up.

    Parameters
    ----------
    table : callable
        ``table(max_replicas)`` returns the host table float64[2, >= max_replicas + 1]
        (``[single node, several nodes] x replicas``), e.g. the bound method
        ``SpeedupFunction.table``; the device copy is cached per ``table.__self__``.
    nodes, replicas : device arrays of equal shape
        Integral values of any real dtype.

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
    cols, shape, caller = interop.as_device_columns(("num_nodes", "num_replicas"), (nodes, replicas))
    n = int(cols[0].shape[0])
    max_rep = max_value(cols[1])
    width = 1 if not np.isfinite(max_rep) or max_rep < 1 else int(min(max_rep, TABLE_MAX_REPLICAS)) + 1
    host_table = np.ascontiguousarray(table(width - 1))
    d_table = _device_table(getattr(table, "__self__", None), host_table)
    d_out = M.device_empty(n, np.float64)
    d_status = new_status(K.COUNT_SLOTS)
    blocks, tpb = M.launch_shape(n, threads_per_block)
    K.checked_lookup_kernel[blocks, tpb](d_table, *cols, large_check(cols[0]), large_check(cols[1]), d_out, d_status)
    status = read_status(d_status)
    msg = count_message(status, ("num_nodes", "num_replicas"), cols, (None, None))
    if msg is not None:
        return msg
    code = lookup_status(status[8])
    if code is not None:
        return code
    if max_rep >= width:
        return f"num_replicas above {TABLE_MAX_REPLICAS} is not supported for device arrays"
    return interop.like_caller(d_out, caller, shape)
