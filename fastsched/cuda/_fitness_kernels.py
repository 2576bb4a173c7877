"""CUDA kernels of the genetic search's fitness (twins of ``fastsched.policy._genetic``).

One thread per population row; grid-stride loops. Importing this module needs numba-cuda (or
``NUMBA_ENABLE_CUDASIM=1``).
"""

from __future__ import annotations

import math

from numba import cuda

# Fairness modes of the GA's first objective (fastsched.policy._genetic).
SUM = 0
POWER = 1
GEOMETRIC = 2
FAIR_EPS = 1e-3


# ------------------------------------------------------------------------------------
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
