"""Types and constants of the goodput model shared by the CPU faces, the kernels and the CUDA launchers.

A module of its own so that :mod:`fastsched.cuda` reads them without importing a goodput face.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["TABLE_MAX_REPLICAS", "GoodputParams"]

#: A speedup table covers at most this many replicas (16 MiB): larger queries are answered
#: without memoisation, so no input can make a table grow without bound.
TABLE_MAX_REPLICAS = 1 << 20


class GoodputParams(NamedTuple):
    """A goodput model and its batch-size grid search, as every kernel takes it.

    One model (``GoodputFunction.kernel_params``, ``SpeedupFunction.kernel_params``): ``perf``
    is float64[7] and the other fields are Python floats and a bool. ``J`` models
    (``ModelBatch.kernel_params``): ``perf`` is float64[J, 7], the others float64[J] and
    bool[J]. All validated, arrays read-only; the kernels that evaluate configurations
    without a grid search read the first four fields only.

    Attributes
    ----------
    perf : numpy.ndarray
        The PerfParams in order ``(alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma)``.
    grad_sqr, grad_var : float or numpy.ndarray
        Gradient statistics.
    init_bsz : float or numpy.ndarray
        Initial (reference) total batch size.
    max_bsz : float or numpy.ndarray
        Largest total batch size of the grid search.
    min_atomic, max_atomic : float or numpy.ndarray
        Bounds on the per-replica micro-batch size.
    accumulation : bool or numpy.ndarray
        Whether gradient accumulation is allowed.

    Examples
    --------
    >>> from fastsched.goodput import GoodputFunction
    >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
    >>> p = g.kernel_params_for(512, (None, 64), accumulation=True)
    >>> p.perf.shape, p.init_bsz, p.max_bsz, p.min_atomic, p.max_atomic, p.accumulation
    ((7,), 32.0, 512.0, 1.0, 64.0, True)
    """

    perf: np.ndarray
    grad_sqr: float
    grad_var: float
    init_bsz: float
    max_bsz: float
    min_atomic: float
    max_atomic: float
    accumulation: bool
