"""Batched goodput of many jobs' configurations for Sia's matrix (one serial kernel per round).

Each row names one of M models (a :class:`fastsched.goodput.GoodputParams` of M models: the
perf vectors, gradient statistics, initial and bound batch sizes) and a configuration; the
batch-size grid search is the goodput model's own scalar
:func:`fastsched.goodput._kernels.best_config`, so the formula is defined once.
"""

from __future__ import annotations

from fastsched._jit import jit
from fastsched.goodput._kernels import best_config


@jit
def goodput_rows(params, model, multi_node, num_replicas, out):
    """``out[k]`` = best goodput of model ``model[k]`` of ``params`` at ``(multi_node[k], num_replicas[k])``."""
    for k in range(out.shape[0]):
        m = model[k]
        g, _, _ = best_config(
            params.perf[m],
            params.grad_sqr[m],
            params.grad_var[m],
            params.init_bsz[m],
            multi_node[k],
            num_replicas[k],
            params.max_bsz[m],
            params.min_atomic[m],
            params.max_atomic[m],
            params.accumulation[m],
        )
        out[k] = g
