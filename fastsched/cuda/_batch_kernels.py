"""CUDA twins of :mod:`fastsched.goodput._batch_kernels` (many goodput models per launch).

Built from the CPU formulas' source (:func:`fastsched.cuda._device.device`); one thread per
(configuration) or (model, configuration) or table cell, grid-stride loops.
"""

from __future__ import annotations

from numba import cuda

from fastsched.cuda._device import device
from fastsched.goodput import _formulas as F

best_config = device(F.best_config)
point_value = device(F.point_value)


@cuda.jit
def optimize_kernel(params, model, multi, reps, out_g, out_a, out_s):
    """Grid search of configuration ``i`` under model ``model[i]``."""
    perf, sqr, var, init, max_bsz, lo, hi, acc = params
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, reps.shape[0], stride):
        j = model[i]
        g, a, s = best_config(perf[j], sqr[j], var[j], init[j], multi[i], reps[i], max_bsz[j], lo[j], hi[j], acc[j])
        out_g[i] = g
        out_a[i] = a
        out_s[i] = s


@cuda.jit
def matrix_kernel(params, multi, reps, out_g, out_a, out_s):
    """Grid search of every (model, configuration) pair into ``out[j, i]``."""
    perf, sqr, var, init, max_bsz, lo, hi, acc = params
    n = reps.shape[0]
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for t in range(start, out_g.shape[0] * n, stride):
        j = t // n
        i = t - j * n
        g, a, s = best_config(perf[j], sqr[j], var[j], init[j], multi[i], reps[i], max_bsz[j], lo[j], hi[j], acc[j])
        out_g[j, i] = g
        out_a[j, i] = a
        out_s[j, i] = s


@cuda.jit
def tables_kernel(params, base, out):
    """Speedup tables ``out[j, m, r]``; ``out[:, :, 0] = 0``."""
    perf, sqr, var, init, max_bsz, lo, hi, acc = params
    width = out.shape[2]
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for t in range(start, out.shape[0] * 2 * width, stride):
        j = t // (2 * width)
        rem = t - j * 2 * width
        m = rem // width
        r = rem - m * width
        if r == 0:
            out[j, m, r] = 0.0
            continue
        g, _a, _s = best_config(perf[j], sqr[j], var[j], init[j], m == 1, r, max_bsz[j], lo[j], hi[j], acc[j])
        out[j, m, r] = g / base[j]


@cuda.jit
def elementwise_kernel(params, model, nodes, reps, atomic, accum, with_eff, out):
    """Throughput (goodput when ``with_eff``) of configuration ``i`` under model ``model[i]``."""
    perf, sqr, var, init = params.perf, params.grad_sqr, params.grad_var, params.init_bsz
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.shape[0], stride):
        j = model[i]
        out[i] = point_value(
            perf[j], sqr[j], var[j], init[j], nodes[i] > 1, float(reps[i]), float(atomic[i]), float(accum[i]), with_eff
        )
