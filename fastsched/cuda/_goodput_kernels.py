"""CUDA kernels of the goodput model, built from the CPU formulas' own source.

The scalar formulas (:mod:`fastsched.goodput._formulas`) are compiled here as device functions
by :func:`fastsched.cuda._device.device`; this module adds only the parallel structure: one
thread per configuration, key or table cell, grid-stride loops (any launch shape covers any
size), and on-device validation that reports through a small status array.

Status arrays (device-side validation)
--------------------------------------
Kernels that validate write ``status[c] = min(index of an element failing check c)`` with
``cuda.atomic.min`` (``status`` starts at :data:`NONE`), so the host reads a few int64 and
raises exactly the error the CPU path would raise for the same input, naming the same first
offending element. A check list is "packed" (``index * 8 + code``) where the CPU path reports
the first element failing any check, and "per check" where it reports check by check.

Importing this module needs numba-cuda (or ``NUMBA_ENABLE_CUDASIM=1``).
"""

from __future__ import annotations

import math

from numba import cuda

from fastsched.cuda._device import device
from fastsched.goodput import _formulas as F

#: Initial value of a status slot ("no failing element").
NONE = (1 << 62) - 1

#: Slots of the per-check count validation (``_validate.as_int_array`` of nodes then replicas).
C_NONFINITE, C_FRACTION, C_LARGE, C_LOW = 0, 1, 2, 3
C_ORDER = 8  # num_nodes > num_replicas
COUNT_SLOTS = 9

_MAX_INT = 9007199254740992.0  # 2**53, fastsched._validate.MAX_INT

point_value = device(F.point_value)
best_config = device(F.best_config)
# The CPU kernels' checks and status codes (``F.OK``, ``F.BAD_*``, ...), packed as
# ``index * 8 + code`` (every error code is below 8).
config_status = device(F.config_status)
pair_status = device(F.pair_status)


@cuda.jit(device=True)
def _finite(x):
    return abs(x) < math.inf


@cuda.jit(device=True)
def _count_checks(x, check_large, base, status, i):
    """Apply the CPU's ``as_int_array`` checks to one count, reported per check."""
    if not _finite(x):
        cuda.atomic.min(status, base + C_NONFINITE, i)
        return False
    if x != math.floor(x):
        cuda.atomic.min(status, base + C_FRACTION, i)
        return False
    if check_large and abs(x) > _MAX_INT:
        cuda.atomic.min(status, base + C_LARGE, i)
        return False
    return True


# --------------------------------------------------------------------------------------
# Elementwise goodput / throughput
# --------------------------------------------------------------------------------------
@cuda.jit
def elementwise_kernel(params, nodes, replicas, atomic_bsz, accum_steps, with_eff, out):
    """Throughput (goodput when ``with_eff``) per configuration; inputs already validated."""
    perf, grad_sqr, grad_var, init_bsz = params.perf, params.grad_sqr, params.grad_var, params.init_bsz
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        out[i] = point_value(
            perf,
            grad_sqr,
            grad_var,
            init_bsz,
            nodes[i] > 1,
            float(replicas[i]),
            float(atomic_bsz[i]),
            float(accum_steps[i]),
            with_eff,
        )


@cuda.jit
def checked_elementwise_kernel(params, nodes, replicas, atomic_bsz, accum_steps, with_eff, out, status, offset):
    """Validate and compute in one pass (device arrays in, device array out).

    ``status[0]``: packed ``index * 8 + code`` of the first invalid element (``F.config_status``'s
    code); ``status[1]``: first index whose result is not finite (overflow).
    Indices are reported plus ``offset`` (the chunk's start when streaming).
    """
    perf, grad_sqr, grad_var, init_bsz = params.perf, params.grad_sqr, params.grad_var, params.init_bsz
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        r = float(replicas[i])
        a = float(atomic_bsz[i])
        nd = float(nodes[i])
        s = float(accum_steps[i])
        code = config_status(nd, r, a, s, with_eff, init_bsz)
        if code != F.OK:
            cuda.atomic.min(status, 0, (i + offset) * 8 + code)
            out[i] = math.nan
            continue
        v = point_value(perf, grad_sqr, grad_var, init_bsz, nd > 1.0, r, a, s, with_eff)
        out[i] = v
        if not _finite(v):
            cuda.atomic.min(status, 1, i + offset)


# --------------------------------------------------------------------------------------
# Batch-size grid search
# --------------------------------------------------------------------------------------
@cuda.jit
def optimize_keys_kernel(params, multi_node, num_replicas, out_goodput, out_atomic, out_accum):
    """Grid search per (multi_node, num_replicas) key (twin of the CPU kernel of that name)."""
    perf, grad_sqr, grad_var, init_bsz, max_bsz, min_atomic, max_atomic, accumulation = params
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for k in range(start, num_replicas.shape[0], stride):
        g, a, s = best_config(
            perf,
            grad_sqr,
            grad_var,
            init_bsz,
            multi_node[k],
            num_replicas[k],
            max_bsz,
            min_atomic,
            max_atomic,
            accumulation,
        )
        out_goodput[k] = g
        out_atomic[k] = a
        out_accum[k] = s


@cuda.jit
def checked_optimize_kernel(
    params,
    nodes,
    replicas,
    check_large_nodes,
    check_large_replicas,
    out_goodput,
    out_atomic,
    out_accum,
    status,
):
    """Validate (nodes, replicas) and grid-search every configuration (no key de-duplication).

    ``status`` has :data:`COUNT_SLOTS` slots: ``C_*`` for num_nodes, ``4 + C_*`` for
    num_replicas, ``C_ORDER`` for num_nodes > num_replicas.
    """
    perf, grad_sqr, grad_var, init_bsz, max_bsz, min_atomic, max_atomic, accumulation = params
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out_goodput.shape[0], stride):
        nd = float(nodes[i])
        r = float(replicas[i])
        ok_n = _count_checks(nd, check_large_nodes, 0, status, i)
        ok_r = _count_checks(r, check_large_replicas, 4, status, i)
        ok = ok_n and ok_r
        if ok_n and nd < 1.0:
            cuda.atomic.min(status, C_LOW, i)
            ok = False
        if ok_r and r < 1.0:
            cuda.atomic.min(status, 4 + C_LOW, i)
            ok = False
        if ok and nd > r:
            cuda.atomic.min(status, C_ORDER, i)
            ok = False
        if not ok:
            out_goodput[i] = math.nan
            out_atomic[i] = 0
            out_accum[i] = 0
            continue
        g, a, s = best_config(
            perf, grad_sqr, grad_var, init_bsz, nd > 1.0, int(r), max_bsz, min_atomic, max_atomic, accumulation
        )
        out_goodput[i] = g
        out_atomic[i] = a
        out_accum[i] = s


# --------------------------------------------------------------------------------------
# Speedup tables
# --------------------------------------------------------------------------------------
@cuda.jit
def fill_table_kernel(params, base_goodput, table, filled, want_multi, want_rep):
    """``table[m, r] = speedup`` for wanted keys not yet filled (twin of the CPU kernel).

    Duplicate wanted keys write the same value, so the race between them is benign.
    """
    perf, grad_sqr, grad_var, init_bsz, max_bsz, min_atomic, max_atomic, accumulation = params
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for k in range(start, want_rep.shape[0], stride):
        m = 1 if want_multi[k] else 0
        r = want_rep[k]
        if filled[m, r]:
            continue
        g, _a, _s = best_config(
            perf, grad_sqr, grad_var, init_bsz, m == 1, r, max_bsz, min_atomic, max_atomic, accumulation
        )
        table[m, r] = g / base_goodput
        filled[m, r] = True


@cuda.jit
def checked_lookup_kernel(table, nodes, replicas, check_large_nodes, check_large_replicas, out, status):
    """Validate (nodes, replicas) and read speedups from a complete ``[2, R]`` table.

    ``status[0..7]``: per-check slots of the two ``as_int_array`` conversions (``C_*`` and
    ``4 + C_*``; ``C_LOW`` unused); ``status[8]``: packed ``index * 8 + code`` of the first
    invalid pair (``F.pair_status``'s code). The caller sized the table to cover every
    replica count (it read the maximum first).
    """
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        nd = float(nodes[i])
        r = float(replicas[i])
        ok_n = _count_checks(nd, check_large_nodes, 0, status, i)
        ok_r = _count_checks(r, check_large_replicas, 4, status, i)
        if not (ok_n and ok_r):
            out[i] = math.nan
            continue
        code = pair_status(nd, r)
        if code != F.OK:
            cuda.atomic.min(status, 8, i * 8 + code)
            out[i] = math.nan
            continue
        ri = int(r)
        if ri == 0:
            out[i] = 0.0
        elif ri >= table.shape[1]:
            out[i] = math.nan  # the caller's maximum said this cannot happen
        else:
            out[i] = table[1 if nd > 1.0 else 0, ri]


@cuda.jit
def fill_kernel(out, value):
    """``out[:] = value``."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        out[i] = value


@cuda.jit
def max_kernel(values, out):
    """``out[0] = max(out[0], max(values))`` over finite values (float64 reduction by atomics)."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, values.shape[0], stride):
        v = float(values[i])
        if _finite(v):
            cuda.atomic.max(out, 0, v)
