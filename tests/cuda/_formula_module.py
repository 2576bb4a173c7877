"""Formulas calling each other through a module attribute (``_formula_module.inner``), for
tests/cuda/test_device_retarget.py."""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from tests.cuda import _formula_module as M

SCALE = 3.0


@jit(inline="always")
def inner(x):
    return np.exp(x) * SCALE


@jit
def outer(a, i):
    return M.inner(a[i]) + 1.0
