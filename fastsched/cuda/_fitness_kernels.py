"""CUDA kernels of the genetic search's fitness, compiled from the CPU formulas' own source.

The row evaluation (``fastsched.policy._ga.fitness.row_objectives``: restart penalty per job,
every fairness mode including the shifted power mean) is compiled as a device function by
:func:`fastsched.cuda._device.device`; the penalty is always a per-job float64[J] array (a
scalar is broadcast on the host, as the CPU face does).

One thread per population row; grid-stride loops. Importing this module needs numba-cuda (or
``NUMBA_ENABLE_CUDASIM=1``).
"""

from __future__ import annotations

from numba import cuda

from fastsched.cuda._device import device
from fastsched.policy._ga import fitness as FIT

evaluate_row = device(FIT.row_objectives)


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
