"""numba kernels of the Pollux throughput and statistical-efficiency model.

Parameters travel as one float64 vector ``perf = (alpha_c, beta_c, alpha_n, beta_n, alpha_r,
beta_r, gamma)`` plus scalars, so every kernel compiles once per signature.

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

GRID_POINTS = 50  # numpy.geomspace's default, as used by AdaptDL
_EPS = 1e-8  # tolerance of the floor/ceil operations in the grid search
_TINY = 1e-8  # the model's stand-in for "no communication"


@jit(inline="always")
def network_time(perf, multi_node, num_replicas):
    """Modelled all-reduce time: bottleneck link latency plus ring retrogression."""
    if multi_node:
        alpha = perf[2]
        beta = perf[3]
    elif num_replicas > 1.0:
        alpha = perf[4]
        beta = perf[5]
    else:
        alpha = _TINY
        beta = _TINY
    return alpha + beta * max(num_replicas - 2.0, _TINY)


@jit(inline="always")
def step_throughput(perf, accum_time, net_pow, num_replicas, atomic_bsz, accum_steps):
    """Samples per second given accum time and ``network_time ** gamma``.

    ``optim_time = (accum_time**g + network_time**g) ** (1/g)``: the p-norm overlap model.
    """
    gamma = perf[6]
    optim_time = (accum_time**gamma + net_pow) ** (1.0 / gamma)
    total_time = accum_steps * accum_time + optim_time
    return num_replicas * atomic_bsz * (accum_steps + 1.0) / total_time


@jit(inline="always")
def efficiency(grad_sqr, grad_var, init_bsz, batch_size):
    """Statistical efficiency of ``batch_size`` relative to ``init_bsz``."""
    scale = batch_size / init_bsz
    denom = grad_var / scale + grad_sqr
    if denom > 0.0:
        gain = (grad_var + grad_sqr) / denom
    else:
        gain = 1.0
    return gain / scale


@pjit
def throughput_kernel(perf, nodes, replicas, atomic_bsz, accum_steps, out):
    """Elementwise throughput over equally long flat float64 arrays."""
    gamma = perf[6]
    for i in prange(out.shape[0]):
        accum_time = perf[0] + perf[1] * atomic_bsz[i]
        net = network_time(perf, nodes[i] > 1.0, replicas[i]) ** gamma
        out[i] = step_throughput(perf, accum_time, net, replicas[i], atomic_bsz[i], accum_steps[i])


@pjit
def goodput_kernel(perf, grad_sqr, grad_var, init_bsz, nodes, replicas, atomic_bsz, accum_steps, out):
    """Elementwise goodput = throughput x efficiency over flat float64 arrays."""
    gamma = perf[6]
    for i in prange(out.shape[0]):
        r = replicas[i]
        accum_time = perf[0] + perf[1] * atomic_bsz[i]
        net = network_time(perf, nodes[i] > 1.0, r) ** gamma
        tput = step_throughput(perf, accum_time, net, r, atomic_bsz[i], accum_steps[i])
        bsz = r * atomic_bsz[i] * (accum_steps[i] + 1.0)
        out[i] = tput * efficiency(grad_sqr, grad_var, init_bsz, bsz)


@pjit
def efficiency_kernel(grad_sqr, grad_var, init_bsz, batch_size, out):
    """Elementwise statistical efficiency."""
    for i in prange(out.shape[0]):
        out[i] = efficiency(grad_sqr, grad_var, init_bsz, batch_size[i])


@jit
def best_config(
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
):
    """Batch-size grid search for one configuration.

    Walks the 50 geometrically spaced total batch sizes between
    ``max(init_bsz, min_atomic * num_replicas)`` and ``max_bsz`` exactly as
    ``numpy.geomspace`` spaces them, derives (atomic_bsz, accum_steps) per point with
    AdaptDL's rules, zeroes the goodput of points whose atomic batch size falls outside
    ``[min_atomic, max_atomic]`` and keeps a running argmax (first maximum wins, as
    ``numpy.argmax``). Returns ``(goodput, atomic_bsz, accum_steps)``.
    """
    r = float(num_replicas)
    gamma = perf[6]
    net_pow = network_time(perf, multi_node, r) ** gamma
    start = max(init_bsz, min_atomic * r)
    log_start = math.log10(start)
    step = (math.log10(max_bsz) - log_start) / (GRID_POINTS - 1)
    best_goodput = -1.0
    best_atomic = 0
    best_accum = 0
    for i in range(GRID_POINTS):
        if i == 0:
            bsz = start
        elif i == GRID_POINTS - 1:
            bsz = max_bsz
        else:
            bsz = 10.0 ** (i * step + log_start)
        local_bsz = bsz / r
        if accumulation:
            accum = math.ceil(local_bsz / max_atomic - _EPS) - 1.0
            if num_replicas == 1 and local_bsz > init_bsz + _EPS:
                accum = max(accum, 1.0)
            atomic = math.ceil(local_bsz / (accum + 1.0) - _EPS)
        else:
            accum = 0.0
            atomic = init_bsz if num_replicas == 1 else math.ceil(local_bsz - _EPS)
        if min_atomic <= atomic <= max_atomic:
            accum_time = perf[0] + perf[1] * atomic
            tput = step_throughput(perf, accum_time, net_pow, r, atomic, accum)
            goodput = tput * efficiency(grad_sqr, grad_var, init_bsz, r * atomic * (accum + 1.0))
        else:
            goodput = 0.0
        if goodput > best_goodput:
            best_goodput = goodput
            best_atomic = int(atomic)
            best_accum = int(accum)
    return best_goodput, best_atomic, best_accum


@pjit
def optimize_keys_kernel(
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
    out_goodput,
    out_atomic,
    out_accum,
):
    """Grid search for each (multi_node, num_replicas) key, in parallel."""
    for k in prange(num_replicas.shape[0]):
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
def fill_table_kernel(
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
):
    """Fill ``table[m, r]`` = speedup for the wanted keys not yet filled.

    ``table`` has shape (2, R); row 0 is single-node, row 1 multi-node. Rows are written
    by distinct keys, so the parallel loop has no write conflicts.
    """
    for k in prange(want_rep.shape[0]):
        m = 1 if want_multi[k] else 0
        r = want_rep[k]
        if filled[m, r]:
            continue
        g, _a, _s = best_config(
            perf, grad_sqr, grad_var, init_bsz, m == 1, r, max_bsz, min_atomic, max_atomic, accumulation
        )
        table[m, r] = g / base_goodput
        filled[m, r] = True


@jit
def lookup_kernel(table, nodes, replicas, out):
    """``out[i] = table[nodes[i] > 1, replicas[i]]``, with (0, 0) -> 0."""
    for i in range(out.shape[0]):
        r = replicas[i]
        if r == 0:
            out[i] = 0.0
        else:
            out[i] = table[1 if nodes[i] > 1 else 0, r]
