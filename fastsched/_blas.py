"""Run small dense-algebra calls with single-threaded OpenBLAS.

scipy's L-BFGS-B calls BLAS/LAPACK on 7x7 problems. With OpenBLAS's thread pool those tiny
calls pay thread wake-ups, and on a loaded machine (a scheduler shares its host) a fit
that takes ~2 ms single-threaded was measured at 70 ms to 1 s. :func:`single_threaded_blas`
limits the OpenBLAS libraries loaded in this process to one thread for the calling thread
only (``openblas_set_num_threads_local``, OpenBLAS >= 0.3.27), falling back to the global
setting under a lock on older builds, and restores the previous value afterwards. It is a
no-op where no OpenBLAS can be found (other BLAS vendors, non-Linux systems).

This is what threadpoolctl does in general; fastsched needs only this one case and keeps
its dependencies to numpy, scipy and numba.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading

__all__ = ["single_threaded_blas"]

_lock = threading.Lock()
_libs: list | None = None


def _find_openblas() -> list:
    """(set_local, set_global, get_global) ctypes functions per loaded OpenBLAS."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return found
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        local = getattr(lib, "openblas_set_num_threads_local", None)
        set_global = get_global = None
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                set_global = set_global or getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                get_global = get_global or getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
        if local is not None:
            local.argtypes = [ctypes.c_int]
            local.restype = ctypes.c_int
        if set_global is not None:
            set_global.argtypes = [ctypes.c_int]
            set_global.restype = None
        if get_global is not None:
            get_global.restype = ctypes.c_int
        if local is not None or (set_global is not None and get_global is not None):
            found.append((local, set_global, get_global))
    return found


@contextlib.contextmanager
def single_threaded_blas():
    """Context in which OpenBLAS calls made by this thread use one thread."""
    global _libs
    if _libs is None:
        _libs = _find_openblas()
    restore = []
    hold_lock = False
    try:
        for local, set_global, get_global in _libs:
            if local is not None:
                restore.append((local, local(1)))
            else:
                if not hold_lock:
                    _lock.acquire()
                    hold_lock = True
                restore.append((set_global, get_global()))
                set_global(1)
        yield
    finally:
        for setter, previous in reversed(restore):
            setter(previous)
        if hold_lock:
            _lock.release()
