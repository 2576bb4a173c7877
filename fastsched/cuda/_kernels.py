"""numba-cuda twins of the CPU kernels in :mod:`fastsched.goodput._kernels` and
:mod:`fastsched.policy._genetic`.

Importing this module needs numba-cuda (or ``NUMBA_ENABLE_CUDASIM=1``); :mod:`fastsched.cuda`
imports it lazily, only after :func:`fastsched.cuda.is_available` said yes.

Rules that keep the twins equal to the CPU kernels (1e-12 relative, same argmax):

* the arithmetic is written in the same order as the CPU code, in float64, no fastmath;
* the batch-size grid is walked exactly as the CPU ``best_config`` walks it (``i == 0`` is
  ``start``, ``i == 49`` is ``max_bsz``, else ``10 ** (i * step + log_start)``) and the running
  argmax keeps the first maximum (strict ``>``), so exact ties resolve the same way;
* ``ceil`` results are kept as float64 (the CPU kernel unifies them to float64 too).

Every kernel uses a grid-stride loop, so any launch shape covers any size: tests launch few
threads per block on the simulator, production launches a fixed grid on a GPU.
"""

from __future__ import annotations

import math

from numba import cuda

GRID_POINTS = 50  # must equal fastsched.goodput._kernels.GRID_POINTS
_EPS = 1e-8  # tolerance of the floor/ceil operations in the grid search (as on the CPU)
_TINY = 1e-8  # the model's stand-in for "no communication" (as on the CPU)

# Fairness modes of the GA's first objective (fastsched.policy._genetic).
SUM = 0
POWER = 1
GEOMETRIC = 2
FAIR_EPS = 1e-3


# --------------------------------------------------------------------------------------
# Goodput model: device functions
# --------------------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def network_time(perf, multi_node, num_replicas):
    """Modelled all-reduce time (twin of the CPU ``network_time``)."""
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


@cuda.jit(device=True, inline=True)
def step_throughput(perf, accum_time, net_pow, num_replicas, atomic_bsz, accum_steps):
    """Samples per second (twin of the CPU ``step_throughput``)."""
    gamma = perf[6]
    optim_time = (accum_time**gamma + net_pow) ** (1.0 / gamma)
    total_time = accum_steps * accum_time + optim_time
    return num_replicas * atomic_bsz * (accum_steps + 1.0) / total_time


@cuda.jit(device=True, inline=True)
def efficiency(grad_sqr, grad_var, init_bsz, batch_size):
    """Statistical efficiency (twin of the CPU ``efficiency``)."""
    scale = batch_size / init_bsz
    denom = grad_var / scale + grad_sqr
    if denom > 0.0:
        gain = (grad_var + grad_sqr) / denom
    else:
        gain = 1.0
    return gain / scale


@cuda.jit(device=True)
def best_config(perf, grad_sqr, grad_var, init_bsz, multi_node, num_replicas, max_bsz, min_atomic, max_atomic, accum):
    """50-point batch-size grid search of one configuration (twin of the CPU ``best_config``).

    Returns ``(goodput, atomic_bsz, accum_steps)`` with the first maximum winning.
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
        if accum:
            acc = float(math.ceil(local_bsz / max_atomic - _EPS)) - 1.0
            if num_replicas == 1 and local_bsz > init_bsz + _EPS:
                acc = max(acc, 1.0)
            atomic = float(math.ceil(local_bsz / (acc + 1.0) - _EPS))
        else:
            acc = 0.0
            if num_replicas == 1:
                atomic = init_bsz
            else:
                atomic = float(math.ceil(local_bsz - _EPS))
        if min_atomic <= atomic and atomic <= max_atomic:
            accum_time = perf[0] + perf[1] * atomic
            tput = step_throughput(perf, accum_time, net_pow, r, atomic, acc)
            goodput = tput * efficiency(grad_sqr, grad_var, init_bsz, r * atomic * (acc + 1.0))
        else:
            goodput = 0.0
        if goodput > best_goodput:
            best_goodput = goodput
            best_atomic = int(atomic)
            best_accum = int(acc)
    return best_goodput, best_atomic, best_accum


# --------------------------------------------------------------------------------------
# Goodput model: kernels
# --------------------------------------------------------------------------------------
@cuda.jit
def elementwise_kernel(perf, grad_sqr, grad_var, init_bsz, nodes, replicas, atomic_bsz, accum_steps, with_eff, out):
    """Throughput (or goodput when ``with_eff``) per configuration over flat arrays.

    Twin of the CPU ``_elementwise_kernel`` (its table path only memoises ``x ** gamma``
    of the same arguments, so values agree with this direct form).
    """
    gamma = perf[6]
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        r = float(replicas[i])
        a = float(atomic_bsz[i])
        s = float(accum_steps[i])
        accum_time = perf[0] + perf[1] * a
        net = network_time(perf, nodes[i] > 1, r) ** gamma
        v = step_throughput(perf, accum_time, net, r, a, s)
        if with_eff:
            v *= efficiency(grad_sqr, grad_var, init_bsz, r * a * (s + 1.0))
        out[i] = v


@cuda.jit
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
    """Grid search per (multi_node, num_replicas) key (twin of the CPU kernel of that name)."""
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
    """``table[m, r] = speedup`` for wanted keys not yet filled (twin of the CPU kernel).

    Duplicate wanted keys write the same value, so the race between them is benign.
    """
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
def speedup_tables_kernel(perf, grad_sqr, grad_var, init_bsz, max_bsz, min_atomic, max_atomic, accumulation, base, out):
    """Speedup tables of many jobs in one launch: ``out[j, m, r]`` for every (job, multi, replicas).

    Row-wise parameters are indexed by job ``j``; ``out`` is ``[J, 2, R + 1]`` with
    ``out[:, :, 0] == 0``. One thread per cell, so a scheduler round's tables for all jobs cost
    one launch instead of J.
    """
    width = out.shape[2]
    total = out.shape[0] * 2 * width
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for t in range(start, total, stride):
        j = t // (2 * width)
        rem = t - j * 2 * width
        m = rem // width
        r = rem - m * width
        if r == 0:
            out[j, m, r] = 0.0
            continue
        g, _a, _s = best_config(
            perf[j],
            grad_sqr[j],
            grad_var[j],
            init_bsz[j],
            m == 1,
            r,
            max_bsz[j],
            min_atomic[j],
            max_atomic[j],
            accumulation[j],
        )
        out[j, m, r] = g / base[j]


# --------------------------------------------------------------------------------------
# Genetic search: population fitness (twin of fastsched.policy._genetic.evaluate_population)
# --------------------------------------------------------------------------------------
@cuda.jit(device=True, inline=True)
def job_value(table, j, nn, reps, scale_j, changed, penalty):
    """Scaled speedup of one job (twin of the CPU ``job_value``)."""
    if reps <= 0:
        return 0.0
    kmax = table.shape[1] - 1
    k = nn if nn < kmax else kmax
    v = table[j, k, reps] * scale_j
    if changed:
        v *= 1.0 - penalty
    return v


@cuda.jit(device=True, inline=True)
def fair_term(v, mode, p):
    """One job's contribution to the first objective (twin of the CPU ``fair_term``)."""
    if mode == SUM:
        return v
    w = v if v > FAIR_EPS else FAIR_EPS
    if mode == GEOMETRIC:
        return math.log(w)
    return w**p


@cuda.jit(device=True, inline=True)
def fair_total(acc, njobs, mode, p):
    """First objective from the accumulated terms (twin of the CPU ``fair_total``)."""
    if mode == SUM or njobs == 0:
        return acc
    if mode == GEOMETRIC:
        return njobs * math.exp(acc / njobs)
    return njobs * (acc / njobs) ** (1.0 / p)


@cuda.jit(device=True)
def evaluate_row(off, node, cnt, i, table, scale, base_off, base_node, base_cnt, penalty, mode, p):
    """Objectives of row ``i`` (twin of the CPU ``evaluate_row``): (objective, cluster size)."""
    njobs = off.shape[1] - 1
    acc = 0.0
    size = 0
    for j in range(njobs):
        s = off[i, j]
        e = off[i, j + 1]
        reps = 0
        for q in range(s, e):
            reps += cnt[i, q]
            if node[i, q] + 1 > size:
                size = node[i, q] + 1
        # differs_from_base, inlined: the row's entries against the job's base entries.
        n = e - s
        b0 = base_off[j]
        changed = base_off[j + 1] - b0 != n
        if not changed:
            for q in range(n):
                if node[i, s + q] != base_node[b0 + q] or cnt[i, s + q] != base_cnt[b0 + q]:
                    changed = True
                    break
        v = job_value(table, j, n, reps, scale[j], changed, penalty)
        acc += fair_term(v, mode, p)
    return fair_total(acc, njobs, mode, p), size


@cuda.jit
def evaluate_population_kernel(
    off, node, cnt, table, scale, base_off, base_node, base_cnt, penalty, mode, p, obj, size
):
    """Fitness of every row: ``obj`` (maximised), ``size`` (minimised). One thread per row."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, off.shape[0], stride):
        o, s = evaluate_row(off, node, cnt, i, table, scale, base_off, base_node, base_cnt, penalty, mode, p)
        obj[i] = o
        size[i] = s


@cuda.jit
def evaluate_rows_kernel(
    off, node, cnt, rows, table, scale, base_off, base_node, base_cnt, penalty, mode, p, obj, size
):
    """Fitness of rows ``rows[t]`` into ``obj[t]``/``size[t]`` (e.g. only new offspring)."""
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for t in range(start, rows.shape[0], stride):
        o, s = evaluate_row(off, node, cnt, rows[t], table, scale, base_off, base_node, base_cnt, penalty, mode, p)
        obj[t] = o
        size[t] = s
