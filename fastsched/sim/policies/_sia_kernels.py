"""Batched goodput of many jobs' configurations for Sia's matrix (one serial kernel per round).

Each row names a job's model (its ``perf`` vector, gradient statistics, initial and bound
batch sizes) and a configuration; the batch-size grid search is the goodput model's own
scalar :func:`fastsched.goodput._kernels.best_config`, so the formula is defined once.
"""

from __future__ import annotations

from fastsched._jit import jit
from fastsched.goodput._kernels import best_config


@jit
def goodput_rows(perf, grad_sqr, grad_var, init_bsz, bounds, model, multi_node, num_replicas, out):
    """``out[k]`` = best goodput of model ``model[k]`` at ``(multi_node[k], num_replicas[k])``.

    ``perf`` is ``(M, 7)``; ``bounds`` ``(M, 3)`` = (max batch, min atomic, max atomic).
    """
    for k in range(out.shape[0]):
        m = model[k]
        g, _, _ = best_config(
            perf[m],
            grad_sqr[m],
            grad_var[m],
            init_bsz[m],
            multi_node[k],
            num_replicas[k],
            bounds[m, 0],
            bounds[m, 1],
            bounds[m, 2],
            True,
        )
        out[k] = g
