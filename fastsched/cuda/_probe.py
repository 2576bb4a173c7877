"""Device probe: whether the CUDA target can run here, and lazy access to its kernels.

Importing this module needs neither numba-cuda nor a GPU, and :func:`is_available` never
raises: each step may fail differently (numba-cuda missing, a broken or absent driver,
anything odd a vendor stack throws), and each failure becomes a reason string.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import sys
import threading

from fastsched._device import CudaUnavailableError

__all__ = ["is_available", "unavailable_reason", "load", "cuda_api", "is_simulator"]

_lock = threading.Lock()
_avail: tuple[bool, str] | None = None


def is_simulator() -> bool:
    """Whether numba's CUDA simulator is switched on (``NUMBA_ENABLE_CUDASIM=1``).

    Examples
    --------
    >>> from fastsched.cuda import is_simulator
    >>> isinstance(is_simulator(), bool)
    True
    """
    try:
        from numba import config

        return bool(getattr(config, "ENABLE_CUDASIM", 0))
    except Exception:  # noqa: BLE001
        return False


def _driver_library_loads() -> bool:
    """Whether the CUDA driver library can be loaded (a dlopen: milliseconds, unlike numba.cuda)."""
    names = {"win32": ["nvcuda.dll"], "linux": ["libcuda.so.1", "libcuda.so"]}.get(sys.platform)
    if names is None:
        return True  # unknown platform: let numba-cuda decide
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


def _probe() -> tuple[bool, str]:
    # numba < 0.69 still ships a deprecated built-in ``numba.cuda``; we support only the
    # NVIDIA-maintained package, so look for it first.
    try:
        found = importlib.util.find_spec("numba_cuda") is not None
    except (ImportError, ValueError):  # ValueError: a None entry in sys.modules
        found = False
    if not found:
        return False, "numba-cuda is not installed; pip install 'fastsched[cuda]'"
    if not is_simulator() and not _driver_library_loads():
        # Importing numba.cuda costs about a second; without a driver it cannot succeed.
        return False, "no CUDA driver library (libcuda) could be loaded"
    try:
        from numba import cuda
    except Exception as exc:  # noqa: BLE001 - availability must never raise
        return False, f"numba-cuda is not installed ({type(exc).__name__}: {exc}); pip install 'fastsched[cuda]'"
    try:
        if not hasattr(cuda, "is_available"):
            return False, "numba.cuda has no is_available(): numba-cuda missing or too old"
        if not cuda.is_available():
            return False, "numba-cuda found no usable CUDA GPU or driver"
        importlib.import_module("fastsched.cuda._goodput_kernels")  # decorators only; compiles nothing yet
    except Exception as exc:  # noqa: BLE001
        return False, f"CUDA initialisation failed ({type(exc).__name__}: {exc})"
    return True, "simulator (NUMBA_ENABLE_CUDASIM=1)" if is_simulator() else "CUDA GPU"


def is_available(refresh: bool = False) -> bool:
    """Whether the CUDA kernels can run here (a GPU with a working driver, or the simulator).

    Never raises. The probe runs once per process (driver initialisation is not free); pass
    ``refresh=True`` to probe again.

    Examples
    --------
    >>> from fastsched.cuda import is_available
    >>> isinstance(is_available(), bool)
    True
    """
    global _avail
    with _lock:
        if _avail is None or refresh:
            try:
                _avail = _probe()
            except BaseException as exc:  # noqa: BLE001 - e.g. a SystemExit from a vendor hook
                _avail = (False, f"CUDA probe failed ({type(exc).__name__}: {exc})")
        return _avail[0]


def unavailable_reason() -> str:
    """Why :func:`is_available` is False (or what it found when it is True).

    Examples
    --------
    >>> from fastsched.cuda import unavailable_reason
    >>> isinstance(unavailable_reason(), str)
    True
    """
    is_available()
    return _avail[1]


def load(name: str):
    """Import the kernel module ``fastsched.cuda.<name>`` (raises when CUDA is unavailable)."""
    if not is_available():
        raise CudaUnavailableError(f"CUDA is unavailable: {unavailable_reason()}")
    return importlib.import_module(f"fastsched.cuda.{name}")


def cuda_api():
    """Return the ``numba.cuda`` module, once :func:`is_available` said yes."""
    load("_goodput_kernels")
    return importlib.import_module("numba.cuda")
