"""Sia's matrix arithmetic: batched goodputs of configurations, and two-decimal powers.

One serial kernel per round evaluates the goodput of many jobs' configurations, and
:func:`_rounded_powers` raises the normalised entries to Sia's power and rounds them.

Each row names one of M models (a :class:`fastsched.goodput.GoodputParams` of M models: the
perf vectors, gradient statistics, initial and bound batch sizes) and a configuration; the
batch-size grid search is the goodput model's own scalar
:func:`fastsched.goodput._kernels.best_config`, so the formula is defined once.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.goodput._kernels import best_config

#: Value of a configuration a job cannot use (Sia's zero-allocation gain).
_ZERO_GAIN = 1e-4


def _rounded_powers(vals, p):
    """``round(max(v, _ZERO_GAIN) ** p, 2)`` of each ``v`` in ``vals``, the same doubles Python gives.

    Python rounds the power's exact value to the nearest cent (half to even), then takes the
    double nearest that decimal. ``rint(x * 100) / 100`` gives that double wherever ``x * 100``
    is clear of a half cent by more than its rounding error (the cent count is then exact and
    the division correctly rounded); the rare elements that are not clear, or are large or not
    finite, take Python's rule. A numpy power an ulp off Python's is still clear of a half cent.
    """
    x = np.maximum(vals, _ZERO_GAIN) ** p
    scaled = x * 100.0
    out = np.rint(scaled) / 100.0
    with np.errstate(invalid="ignore"):  # inf and nan are not clear
        clear = (np.abs(x) < 1e6) & (np.abs(scaled - np.floor(scaled) - 0.5) > 1e-6)
    for i in np.flatnonzero(~clear).tolist():
        out[i] = round(max(float(vals[i]), _ZERO_GAIN) ** p, 2)
    return out


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
