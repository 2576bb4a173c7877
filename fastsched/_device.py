"""What every layer may know of devices without importing the CUDA target (a base module: imports nothing of fastsched).

Device-array detection and the error a face raises when CUDA is asked for but unavailable,
shared by :mod:`fastsched._backend` (the backend switch, above :mod:`fastsched.cuda`) and by
the CUDA target itself.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CudaUnavailableError", "any_device", "is_device_array"]


class CudaUnavailableError(RuntimeError):
    """``backend="cuda"`` (or a device array) was given but no usable GPU (or simulator) is present.

    Examples
    --------
    >>> issubclass(CudaUnavailableError, RuntimeError)
    True
    >>> try:
    ...     raise CudaUnavailableError("CUDA is unavailable: no driver")
    ... except RuntimeError as err:
    ...     print(type(err).__name__, "-", err)
    CudaUnavailableError - CUDA is unavailable: no driver
    """


def is_device_array(x) -> bool:
    """Whether ``x`` lives on a GPU (``__cuda_array_interface__``, or a numba device array).

    Checked without importing numba-cuda. numba's simulator arrays expose no CUDA array
    interface but do have ``copy_to_host``, so they count too.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched._device import is_device_array
    >>> is_device_array(np.zeros(3))
    False
    """
    t = type(x)
    if t in _HOST_TYPES or t.__module__ == "numpy":
        return False
    return hasattr(x, "__cuda_array_interface__") or (hasattr(x, "copy_to_host") and hasattr(x, "shape"))


# The common arguments, answered by one set lookup (this check sits on every call's hot path).
_HOST_TYPES = frozenset([np.ndarray, int, float, bool, list, tuple, type(None)])


def any_device(*values) -> bool:
    """Whether any of ``values`` is a device array (:func:`is_device_array`), cheaply for host ones.

    Examples
    --------
    >>> from fastsched._device import any_device
    >>> any_device(1, 2.0, [3])
    False
    """
    for x in values:
        if type(x) not in _HOST_TYPES and is_device_array(x):
            return True
    return False
