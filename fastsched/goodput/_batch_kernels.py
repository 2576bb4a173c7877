"""CPU kernels of the many-models face (:mod:`fastsched.goodput.batch`).

Model ``j``'s parameters are row ``j`` of the arrays of a ``GoodputParams`` of J models; every kernel calls
the shared scalar formulas of :mod:`fastsched.goodput._formulas` on that row, so a model
evaluated here gives the same bits as the same model in a ``GoodputFunction``. CUDA twins:
:mod:`fastsched.cuda._batch_kernels`.
"""

from __future__ import annotations

from numba import prange

from fastsched._jit import pjit
from fastsched.goodput import _formulas as F
from fastsched.goodput._kernels import register_serial


@pjit
def base_kernel(params, out):
    """``out[j]`` = best goodput of model ``j`` at one node, one replica (speedup denominator)."""
    perf, sqr, var, init, max_bsz, lo, hi, acc = params
    for j in prange(out.shape[0]):
        g, _a, _s = F.best_config(perf[j], sqr[j], var[j], init[j], False, 1, max_bsz[j], lo[j], hi[j], acc[j])
        out[j] = g


@pjit
def optimize_kernel(params, model, multi, reps, out_g, out_a, out_s):
    """Grid search of configuration ``i`` under model ``model[i]``."""
    perf, sqr, var, init, max_bsz, lo, hi, acc = params
    for i in prange(reps.shape[0]):
        j = model[i]
        g, a, s = F.best_config(perf[j], sqr[j], var[j], init[j], multi[i], reps[i], max_bsz[j], lo[j], hi[j], acc[j])
        out_g[i] = g
        out_a[i] = a
        out_s[i] = s


@pjit
def matrix_kernel(params, multi, reps, out_g, out_a, out_s):
    """Grid search of every (model, configuration) pair into ``out[j, i]``."""
    perf, sqr, var, init, max_bsz, lo, hi, acc = params
    n = reps.shape[0]
    for t in prange(out_g.shape[0] * n):
        j = t // n
        i = t - j * n
        g, a, s = F.best_config(perf[j], sqr[j], var[j], init[j], multi[i], reps[i], max_bsz[j], lo[j], hi[j], acc[j])
        out_g[j, i] = g
        out_a[j, i] = a
        out_s[j, i] = s


@pjit
def tables_kernel(params, base, out):
    """Speedup tables ``out[j, m, r]`` (m = 0 single node, 1 multi-node), ``out[:, :, 0] = 0``."""
    perf, sqr, var, init, max_bsz, lo, hi, acc = params
    width = out.shape[2]
    for t in prange(out.shape[0] * 2 * width):
        j = t // (2 * width)
        rem = t - j * 2 * width
        m = rem // width
        r = rem - m * width
        if r == 0:
            out[j, m, r] = 0.0
            continue
        g, _a, _s = F.best_config(perf[j], sqr[j], var[j], init[j], m == 1, r, max_bsz[j], lo[j], hi[j], acc[j])
        out[j, m, r] = g / base[j]


@pjit
def elementwise_kernel(params, model, nodes, reps, atomic, accum, with_eff, out):
    """Throughput (goodput when ``with_eff``) of configuration ``i`` under model ``model[i]``."""
    perf, sqr, var, init = params.perf, params.grad_sqr, params.grad_var, params.init_bsz
    for i in prange(out.shape[0]):
        j = model[i]
        out[i] = F.point_value(
            perf[j], sqr[j], var[j], init[j], nodes[i] > 1, float(reps[i]), float(atomic[i]), float(accum[i]), with_eff
        )


register_serial(base_kernel, optimize_kernel, matrix_kernel, tables_kernel, elementwise_kernel)
