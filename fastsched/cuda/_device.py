"""Compile the CPU formulas for the CUDA target from their own source (one definition per formula).

:func:`device` takes a numba CPU dispatcher (a ``@jit`` function of
:mod:`fastsched.goodput._formulas` or of the policy's fitness formulas) and returns a CUDA device
function compiled from the same ``py_func``. The formula's own calls to other CPU dispatchers are
retargeted the same way: the function is rebuilt over a copy of its module globals in which
every referenced dispatcher is replaced by its device twin (recursively, memoised), so nothing
is left for numba-cuda to guess and the simulator, which runs device functions as Python,
never meets a CPU dispatcher either (a CPU dispatcher cannot take the simulator's fake arrays).

Importing this module needs numba-cuda (or ``NUMBA_ENABLE_CUDASIM=1``).
"""

from __future__ import annotations

import math
import threading
import types

import numpy as np
from numba import cuda

from fastsched._numba_private import Dispatcher, copy_function

__all__ = ["device"]

# numba-cuda 0.30 cannot lower numpy's math ufuncs (np.exp, np.log, ...) in device code, even
# on scalars; the formulas' ``np.<f>(scalar)`` calls read the math module's function instead
# (libdevice's, equal to the CPU's to an ulp).
_NP_SCALAR_MATH = types.ModuleType("numpy_scalar_math")
for _name in ("exp", "log", "log2", "log10", "sqrt", "floor", "ceil", "isnan", "isinf", "isfinite", "sin", "cos"):
    setattr(_NP_SCALAR_MATH, _name, getattr(math, _name))
_NP_SCALAR_MATH.inf = math.inf
_NP_SCALAR_MATH.nan = math.nan

_lock = threading.RLock()
_twins: dict[int, object] = {}


def _retarget(py_func, memo, overrides):
    # Globals named by the code object: dispatchers (bare ``f(...)``) and modules holding
    # dispatchers (``F.f(...)``) are swapped for device twins; numpy for scalar math.
    env = py_func.__globals__
    replace = {}
    for name in set(py_func.__code__.co_names):
        value = env.get(name)
        if name in overrides:
            replace[name] = overrides[name]
        elif isinstance(value, Dispatcher):
            replace[name] = _device(value, memo, overrides)
        elif value is np:
            replace[name] = _NP_SCALAR_MATH
        elif isinstance(value, types.ModuleType) and value is not math:
            shim = _module_shim(value, py_func.__code__.co_names, memo, overrides)
            if shim is not None:
                replace[name] = shim
    if not replace:
        return py_func
    return copy_function(py_func, None, replace)


def _module_shim(module, names, memo, overrides):
    """Make a stand-in for ``module`` whose dispatchers (those named in ``names``) are device twins.

    For formulas that call each other as ``F.network_time(...)``; None when the function uses
    no dispatcher of that module.
    """
    used = [n for n in names if isinstance(getattr(module, n, None), Dispatcher)]
    if not used:
        return None
    shim = types.ModuleType(f"{module.__name__}__cuda")
    for n in names:
        if hasattr(module, n):
            setattr(shim, n, getattr(module, n))
    for n in used:
        setattr(shim, n, overrides.get(n) or _device(getattr(module, n), memo, overrides))
    return shim


def _device(dispatcher, memo, overrides):
    key = (id(dispatcher), tuple(sorted((k, id(v)) for k, v in overrides.items())))
    twin = memo.get(key)
    if twin is None:
        source = _retarget(dispatcher.py_func, memo, overrides)
        twin = cuda.jit(device=True)(source)
        memo[key] = twin
    return twin


def device(dispatcher, overrides=None):
    """CUDA device function compiled from the source of the CPU dispatcher ``dispatcher``.

    One twin per dispatcher (and overrides) per process, memoised, so kernels that share a
    formula share its device function.

    Parameters
    ----------
    dispatcher : numba CPU dispatcher
        A ``@jit`` function whose source is CUDA-compilable.
    overrides : dict, optional
        Global names to replace, in the function and in everything it calls, by the given
        device functions: for helpers that dispatch on argument types at compile time through
        ``@overload`` (the GPU always passes one form, e.g. a per-job penalty array).
    """
    with _lock:
        return _device(dispatcher, _twins, dict(overrides or {}))
