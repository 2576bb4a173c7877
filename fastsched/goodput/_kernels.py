"""numba kernels of the Pollux throughput and statistical-efficiency model.

A model travels as one :class:`~fastsched.goodput._types.GoodputParams` bundle (the float64
vector ``perf = (alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma)``, the gradient
statistics, the initial batch size and the grid-search settings, each of one fixed type), so
every kernel compiles once per signature.

A fact the fast paths rely on: the modelled network time depends on ``num_nodes`` only through
``num_nodes > 1`` (inter-node vs intra-node bottleneck). Everything the batch-size grid search
computes for a configuration is therefore a function of ``(multi_node, num_replicas)``, so the
vectorised entry points solve each distinct key once and gather.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from fastsched._jit import jit, pjit
from fastsched._numba_private import copy_function
from fastsched.goodput import _formulas as F

# The scalar formulas live in _formulas (shared with the CUDA target); re-exported here.
GRID_POINTS = F.GRID_POINTS
network_time = F.network_time
step_throughput = F.step_throughput
efficiency = F.efficiency
best_config = F.best_config


@pjit
def efficiency_kernel(params, batch_size, out):
    """Elementwise statistical efficiency."""
    # Fields as locals: the parallel loop's body is compiled as a function of plain values.
    grad_sqr, grad_var, init_bsz = params.grad_sqr, params.grad_var, params.init_bsz
    for i in prange(out.shape[0]):
        out[i] = efficiency(grad_sqr, grad_var, init_bsz, batch_size[i])


@pjit
def optimize_keys_kernel(params, multi_node, num_replicas, out_goodput, out_atomic, out_accum):
    """Grid search for each (multi_node, num_replicas) key, in parallel."""
    perf, grad_sqr, grad_var, init_bsz, max_bsz, min_atomic, max_atomic, accumulation = params
    for k in prange(num_replicas.shape[0]):
        g, a, s = F.best_config(
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


@jit
def dedupe_keys(nodes, replicas, max_replicas):
    """Map each configuration to a dense key id over (multi_node, replicas).

    Returns ``(key_of_config, key_multi, key_replicas)``. Uses a direct-address table of
    size ``2 * (max_replicas + 1)``, so it is linear in the input.
    """
    slot = np.full(2 * (max_replicas + 1), -1, dtype=np.int64)
    key_of = np.empty(nodes.shape[0], dtype=np.int64)
    key_multi = np.empty(nodes.shape[0], dtype=np.bool_)
    key_rep = np.empty(nodes.shape[0], dtype=np.int64)
    n_keys = 0
    for i in range(nodes.shape[0]):
        m = 1 if nodes[i] > 1 else 0
        s = m * (max_replicas + 1) + replicas[i]
        if slot[s] < 0:
            slot[s] = n_keys
            key_multi[n_keys] = m == 1
            key_rep[n_keys] = replicas[i]
            n_keys += 1
        key_of[i] = slot[s]
    return key_of, key_multi[:n_keys].copy(), key_rep[:n_keys].copy()


@pjit
def gather_kernel(key_of, key_goodput, key_atomic, key_accum, out_goodput, out_atomic, out_accum):
    """Scatter per-key results back to configurations."""
    for i in prange(key_of.shape[0]):
        k = key_of[i]
        out_goodput[i] = key_goodput[k]
        out_atomic[i] = key_atomic[k]
        out_accum[i] = key_accum[k]


@pjit
def fill_table_kernel(params, base_goodput, table, filled, want_multi, want_rep):
    """Fill ``table[m, r]`` = speedup for the wanted keys not yet filled.

    ``table`` has shape (2, R); row 0 is single-node, row 1 multi-node. Rows are written
    by distinct keys, so the parallel loop has no write conflicts.
    """
    perf, grad_sqr, grad_var, init_bsz, max_bsz, min_atomic, max_atomic, accumulation = params
    for k in prange(want_rep.shape[0]):
        m = 1 if want_multi[k] else 0
        r = want_rep[k]
        if filled[m, r]:
            continue
        g, _a, _s = F.best_config(
            perf,
            grad_sqr,
            grad_var,
            init_bsz,
            m == 1,
            r,
            max_bsz,
            min_atomic,
            max_atomic,
            accumulation,
        )
        table[m, r] = g / base_goodput
        filled[m, r] = True


@pjit
def fill_cells_kernel(params, base_goodput, fn_of, multi, rep, out):
    """``out[c]``: the speedup of cell ``c`` (``rep[c]`` replicas, multi-node if ``multi[c]``) of model ``fn_of[c]``.

    The cells of many functions' tables in one launch: ``params`` holds one row per function
    (:class:`~fastsched.goodput.GoodputParams` of arrays), ``base_goodput`` their denominators.
    Each cell is :func:`fill_table_kernel`'s arithmetic on the same values, so the same bits.
    """
    perf, grad_sqr, grad_var, init_bsz, max_bsz, min_atomic, max_atomic, accumulation = params
    for c in prange(out.shape[0]):
        j = fn_of[c]
        g, _a, _s = F.best_config(
            perf[j],
            grad_sqr[j],
            grad_var[j],
            init_bsz[j],
            multi[c],
            rep[c],
            max_bsz[j],
            min_atomic[j],
            max_atomic[j],
            accumulation[j],
        )
        out[c] = g / base_goodput[j]


@jit
def lookup_kernel(table, nodes, replicas, out):
    """``out[i] = table[nodes[i] > 1, replicas[i]]``, with (0, 0) -> 0."""
    for i in range(out.shape[0]):
        r = replicas[i]
        if r == 0:
            out[i] = 0.0
        else:
            out[i] = table[1 if nodes[i] > 1 else 0, r]


# Status codes of the fused check-and-compute kernels (0 = success).
# Status codes: one table for the CPU and CUDA kernels (see ``_formulas``).
OK = F.OK
BAD_NODES = F.BAD_NODES
BAD_REPLICAS = F.BAD_REPLICAS
BAD_ATOMIC = F.BAD_ATOMIC
BAD_ACCUM = F.BAD_ACCUM
BAD_BATCH = F.BAD_BATCH
MISSING = F.MISSING
ZERO_MISMATCH = F.ZERO_MISMATCH
OVERFLOW = F.OVERFLOW

# Direct-address tables are used only when they are small relative to the input.
_TABLE_LIMIT = 1 << 20


@pjit
def _scan_inputs(nodes, replicas, atomic_bsz, accum_steps, init_bsz, check_batch):
    """Validate all inputs (parallel reduction); also report whether tables can be used.

    Returns ``(status, max_replicas, atomic_min, atomic_max, integral)`` where ``integral``
    says that replicas and atomic_bsz are all integers (so they can index tables).
    """
    n = nodes.shape[0]
    max_rep = 0.0
    a_min = np.inf
    a_max = -np.inf
    bad = 0
    fractional = 0
    for i in prange(n):
        r = float(replicas[i])
        a = float(atomic_bsz[i])
        nd = float(nodes[i])
        s = float(accum_steps[i])
        if F.config_status(nd, r, a, s, check_batch, init_bsz) != OK:
            bad += 1
        if r != math.floor(r) or a != math.floor(a):
            fractional += 1
        max_rep = max(max_rep, r)
        a_min = min(a_min, a)
        a_max = max(a_max, a)
    if bad == 0:
        return OK, max_rep, a_min, a_max, fractional == 0
    # Slow path only on error: find the first offending element and name its field.
    for i in range(n):
        code = F.config_status(
            float(nodes[i]), float(replicas[i]), float(atomic_bsz[i]), float(accum_steps[i]), check_batch, init_bsz
        )
        if code != OK:
            return code, 0.0, 0.0, 0.0, False
    return BAD_NODES, 0.0, 0.0, 0.0, False  # unreachable (the first pass found a bad element)


@pjit
def _elementwise_kernel(
    params, nodes, replicas, atomic_bsz, accum_steps, with_eff, use_tables, max_rep, a_min, a_max, out
):
    perf, grad_sqr, grad_var, init_bsz = params.perf, params.grad_sqr, params.grad_var, params.init_bsz
    gamma = perf[6]
    inv_gamma = 1.0 / gamma
    # x**gamma is the costly part; on integer inputs it is tabulated once per distinct value
    # (empty tables otherwise).
    r_hi = int(max_rep) if use_tables else -1
    net_pow = np.empty((2, r_hi + 1))
    for r in prange(r_hi + 1):
        net_pow[0, r] = F.network_time(perf, False, float(r)) ** gamma
        net_pow[1, r] = F.network_time(perf, True, float(r)) ** gamma
    lo = int(a_min) if use_tables else 0
    acc_pow = np.empty(int(a_max) - lo + 1 if use_tables else 0)
    for k in prange(acc_pow.shape[0]):
        acc_pow[k] = F.accum_time(perf, lo + k) ** gamma
    # When the input repeats (multi-node, replicas, atomic) keys many times over, also
    # tabulate the optimizer-step time itself (its 1/gamma power is the remaining cost).
    n_atomic = acc_pow.shape[0]
    full = use_tables and 2 * (r_hi + 1) * n_atomic * 4 <= out.shape[0]
    rows = 2 * (r_hi + 1) if full else 0
    optim_tab = np.empty((rows, n_atomic))
    for row in prange(rows):
        m = row // (r_hi + 1)
        r = row - m * (r_hi + 1)
        for k in range(n_atomic):
            optim_tab[row, k] = F.optim_time(acc_pow[k], net_pow[m, r], inv_gamma)
    nonfinite = 0
    for i in prange(out.shape[0]):
        r = float(replicas[i])
        a = float(atomic_bsz[i])
        s = float(accum_steps[i])
        at = F.accum_time(perf, a)
        m = 1 if nodes[i] > 1 else 0
        # The tables memoise x ** gamma (and the optimizer-step time) of the same formulas.
        if full:
            ot = optim_tab[m * (r_hi + 1) + int(r), int(a) - lo]
        elif use_tables:
            ot = F.optim_time(acc_pow[int(a) - lo], net_pow[m, int(r)], inv_gamma)
        else:
            ot = F.optim_time(at**gamma, F.network_time(perf, m == 1, r) ** gamma, inv_gamma)
        v = F.samples_per_second(r, a, s, at, ot)
        if with_eff:
            v *= F.efficiency(grad_sqr, grad_var, init_bsz, r * a * (s + 1.0))
        out[i] = v
        if not (abs(v) < np.inf):
            nonfinite += 1
    return nonfinite


def elementwise(params, nodes, replicas, atomic_bsz, accum_steps, with_eff, out):
    """Validate and compute throughput (or goodput, ``with_eff``) of model ``params`` elementwise.

    The four inputs are flat arrays, either all int64 or all float64 (two compiled
    specialisations). Returns a status code; ``out`` is valid only when it is ``OK``.
    """
    n = out.shape[0]
    scan = sized(_scan_inputs, n, SERIAL_MAX_ELEMENTS)
    status, max_rep, a_min, a_max, integral = scan(nodes, replicas, atomic_bsz, accum_steps, params.init_bsz, with_eff)
    if status != OK:
        return status
    limit = min(_TABLE_LIMIT, 4 * n)
    # Table indices go through int64: values beyond 2**52 are not exactly integral doubles
    # and 2**63 would overflow, so huge batch sizes take the direct path.
    use_tables = integral and max_rep <= limit and (a_max - a_min) <= limit and a_max < 2.0**52
    nonfinite = sized(_elementwise_kernel, n, SERIAL_MAX_ELEMENTS)(
        params,
        nodes,
        replicas,
        atomic_bsz,
        accum_steps,
        with_eff,
        use_tables,
        max_rep,
        a_min,
        a_max,
        out,
    )
    return OVERFLOW if nonfinite else OK


@jit
def checked_lookup(table, filled, nodes, replicas, out):
    """Validate (nodes, replicas) pairs and read speedups from the table in one pass.

    Returns ``OK``, ``MISSING`` (some key is not in the table yet) or an error code.
    """
    width = table.shape[1]
    missing = False
    for i in range(out.shape[0]):
        nd = nodes[i]
        r = replicas[i]
        code = F.pair_status(nd, r)
        if code != OK:
            return code
        if r == 0:
            out[i] = 0.0
            continue
        m = 1 if nd > 1 else 0
        if r >= width or not filled[m, r]:
            missing = True
            continue
        out[i] = table[m, r]
    return MISSING if missing else OK


@jit
def check_pairs(nodes, replicas):
    """Validate (nodes, replicas) pairs for a speedup query; returns a status code."""
    for i in range(nodes.shape[0]):
        code = F.pair_status(nodes[i], replicas[i])
        if code != OK:
            return code
    return OK


# --------------------------------------------------------------------------------------
# Serial twins for small inputs
# --------------------------------------------------------------------------------------
# A parallel launch costs tens to hundreds of microseconds (waking the worker threads; more on
# a loaded host), more than a small input's work: below these sizes the same kernels run
# serially, compiled from the same source (``prange`` is ``range`` without ``parallel``).
SERIAL_MAX_ELEMENTS = 1024  # elementwise model / efficiency evaluations
# Grid searches (3-4 us each): a speedup table of 64 replicas is 130 of them, about 0.4 ms, which
# two worker threads on a shared host do not finish sooner and cost more CPU time.
SERIAL_MAX_KEYS = 256


def _serial_twin(dispatcher):
    py = dispatcher.py_func
    # Its own name, so its own numba cache files; the module's globals themselves, so helpers
    # defined after this call stay visible.
    return jit(copy_function(py, py.__name__ + "_serial", share_globals=True))


_SERIAL = {}


def register_serial(*kernels) -> None:
    """Give each parallel kernel a serial twin for :func:`sized` (at import of its module)."""
    for kernel in kernels:
        _SERIAL[kernel] = _serial_twin(kernel)


register_serial(
    _scan_inputs,
    _elementwise_kernel,
    efficiency_kernel,
    optimize_keys_kernel,
    gather_kernel,
    fill_table_kernel,
    fill_cells_kernel,
)


def sized(kernel, n, limit):
    """``kernel`` for ``n`` work items, or its serial twin when ``n <= limit``."""
    return _SERIAL[kernel] if n <= limit else kernel
