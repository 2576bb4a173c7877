"""Device-side validation of the CUDA goodput launchers, read back and worded as the CPU path does.

The checked kernels of :mod:`fastsched.cuda._goodput_kernels` record the first failing element
of each check in a small int64 status array (``NONE`` where nothing failed). These helpers make
that array, read it back, and turn it into the CPU kernels' status codes
(:mod:`fastsched.goodput._kernels`) or the CPU faces' error messages, so a device-array input
fails exactly as the same host input would.
"""

from __future__ import annotations

import numpy as np

from fastsched import _validate as V
from fastsched.cuda import _memory as M
from fastsched.cuda._probe import load
from fastsched.goodput import _formulas as F

__all__ = ["count_message", "elementwise_status", "large_check", "lookup_status", "new_status", "read_status"]


def _kernels():
    return load("_goodput_kernels")


_COUNT_CHECKS = ("finite", "integral", "large", "low")


def read_status(d_status):
    host = np.empty(d_status.shape[0], dtype=np.int64)
    M.to_host(d_status, host)
    return host


def new_status(n):
    return M.to_device(np.full(n, _kernels().NONE, dtype=np.int64))


def value_at(d, i):
    """One element of a device array (a counted 1-element copy), for an error message."""
    return M.to_host(d[int(i) : int(i) + 1])[0]


def count_message(status, names, cols, lows):
    """First failed count check in the CPU's order (field by field, check by check), or None."""
    K = _kernels()
    for f, (name, col, low) in enumerate(zip(names, cols, lows, strict=True)):
        for c, check in enumerate(_COUNT_CHECKS):
            i = status[4 * f + c]
            if i != K.NONE:
                value = int(value_at(col, i)) if check == "low" else None
                return V.count_error(name, check, value, low)
    return None


def large_check(col) -> bool:
    return np.dtype(col.dtype).kind in "fu"


def elementwise_status(status):
    """Return the CPU path's status code for a read-back elementwise status pair."""
    K = _kernels()
    if status[0] != K.NONE:
        return int(status[0] % 8)  # the code itself: one table for both targets
    if status[1] != K.NONE:
        return F.OVERFLOW
    return F.OK


def lookup_status(status):
    """Return the CPU path's status code for a read-back speedup-lookup status slot, or ``None``."""
    if status == _kernels().NONE:
        return None
    return int(status % 8)
