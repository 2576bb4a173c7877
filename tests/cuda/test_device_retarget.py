"""fastsched.cuda._device.device compiles CPU formulas for CUDA, module-attribute calls included."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from tests.cuda import _formula_module as FM
from tests.cuda._support import requires_cuda

pytestmark = [requires_cuda, pytest.mark.cudasim]


def test_module_attribute_calls_are_retargeted():
    # Imported here: the module needs numba-cuda, and this file must collect without it.
    from fastsched.cuda._device import device

    outer = device(FM.outer)

    @cuda.jit
    def kernel(a, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = outer(a, i)

    a = np.linspace(-1.0, 1.0, 7)
    out = np.zeros(7)
    kernel[1, 8](a, out)
    want = np.array([FM.outer(a, i) for i in range(7)])
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=0)
