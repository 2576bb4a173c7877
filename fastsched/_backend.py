"""Backend selection shared by every public face, importing the CUDA target only when it is chosen.

The CPU faces (:mod:`fastsched.goodput`, :mod:`fastsched.goodput.batch`) import this module,
never :mod:`fastsched.cuda`: a CPU-only user never loads numba-cuda. The CUDA launchers are
reached through :func:`cuda_launchers`, which imports :mod:`fastsched.cuda` on first use only
(when ``backend`` resolves to ``"cuda"`` or an argument is a device array). This module sits
above :mod:`fastsched.cuda` (it asks its probe); what the CUDA target itself needs of the
backends (device-array checks, the unavailable error) is the base module :mod:`fastsched._device`,
re-exported here, so the two never import each other.

Backends
--------
``"cpu"``
    The numba CPU kernels (always available).
``"cuda"``
    The CUDA kernels; raises :class:`CudaUnavailableError` (a ``RuntimeError``) when no usable
    GPU (or the simulator) is present.
``"auto"``
    CUDA when the work size reaches the entry point's threshold (:func:`auto_threshold`) and
    CUDA is available, else CPU. Device-array arguments always run on the GPU.

Thresholds of ``"auto"`` (host arrays in and out)
-------------------------------------------------
Chosen per entry point from what the transfers cost against what the kernel saves; the
measured figures live in ``benchmarks/results/gpu.md``:

``"evaluate"``
    Never (the elementwise model is a few flops per 32 bytes moved: copies over PCIe cost
    more than computing on every host core). Pass device arrays to compute on the GPU.
``"optimize"``
    20 000 distinct (multi-node, replicas) keys (50 model evaluations per key).
``"speedup"``
    20 000 table cells (one grid search each).
``"batch"``
    20 000 (model, configuration) cells of the many-models face.
``"fitness"``
    100 000 population rows.

``FASTSCHED_CUDA_THRESHOLD`` (read at import) overrides every threshold; :data:`AUTO_THRESHOLDS`
can be edited at run time.
"""

from __future__ import annotations

import importlib
import os

from fastsched._device import CudaUnavailableError, any_device, is_device_array

__all__ = [
    "AUTO_THRESHOLDS",
    "BACKENDS",
    "any_device",
    "CudaUnavailableError",
    "auto_threshold",
    "cuda_launchers",
    "is_device_array",
    "resolve_backend",
]

BACKENDS = ("cpu", "cuda", "auto")

_NEVER = 1 << 62

_DEFAULT_THRESHOLDS = {
    "evaluate": _NEVER,
    "optimize": 20_000,
    "speedup": 20_000,
    "batch": 20_000,
    "fitness": 100_000,
}


def _thresholds_from_env() -> dict:
    out = dict(_DEFAULT_THRESHOLDS)
    raw = os.environ.get("FASTSCHED_CUDA_THRESHOLD")
    if raw is None:
        return out
    try:
        value = max(int(float(raw)), 0)
    except ValueError:
        return out  # a bad environment value must not break import
    return {k: value for k in out}


#: Smallest work size per entry point for which ``backend="auto"`` picks CUDA (see above).
AUTO_THRESHOLDS: dict = _thresholds_from_env()


def auto_threshold(entry: str) -> int:
    """Work size from which ``backend="auto"`` runs entry point ``entry`` on the GPU.

    Parameters
    ----------
    entry : {"evaluate", "optimize", "speedup", "batch", "fitness"}
        The public entry point.

    Returns
    -------
    int
        A count of candidates (configurations, keys, cells or rows).

    Examples
    --------
    >>> from fastsched._backend import auto_threshold
    >>> auto_threshold("optimize") > 0
    True
    """
    return int(AUTO_THRESHOLDS[entry])


def _probe():
    # Deferred so that CPU-only use never imports fastsched.cuda (nor numba-cuda).
    return importlib.import_module("fastsched.cuda._probe")


def resolve_backend(backend: str, size: int, entry: str = "optimize") -> str:
    """Map a ``backend`` option to ``"cpu"`` or ``"cuda"`` for ``size`` candidates of ``entry``.

    Parameters
    ----------
    backend : {"cpu", "cuda", "auto"}
        The user's choice.
    size : int
        Work size in candidates (configurations, keys, table cells or population rows).
    entry : str
        Entry point whose ``"auto"`` threshold applies (see :func:`auto_threshold`).

    Returns
    -------
    str
        ``"cpu"`` or ``"cuda"``.

    Raises
    ------
    ValueError
        On an unknown backend.
    CudaUnavailableError
        For ``"cuda"`` when CUDA is unavailable (the message says why).

    Examples
    --------
    >>> from fastsched._backend import resolve_backend
    >>> resolve_backend("cpu", 10**9)
    'cpu'
    >>> resolve_backend("auto", 1)
    'cpu'
    """
    if backend == "cpu":
        return "cpu"
    if backend == "auto":
        if int(size) < auto_threshold(entry):
            return "cpu"
        return "cuda" if _probe().is_available() else "cpu"
    if backend == "cuda":
        probe = _probe()
        if not probe.is_available():
            raise CudaUnavailableError(
                f"backend='cuda' requested but CUDA is unavailable: {probe.unavailable_reason()}"
            )
        return "cuda"
    raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}")


def cuda_launchers():
    """Return the :mod:`fastsched.cuda` package (imported on first use).

    Raises
    ------
    CudaUnavailableError
        When CUDA is unavailable.

    Examples
    --------
    >>> from fastsched._backend import cuda_launchers
    >>> callable(cuda_launchers)
    True
    """
    probe = _probe()
    if not probe.is_available():
        raise CudaUnavailableError(f"CUDA is unavailable: {probe.unavailable_reason()}")
    return importlib.import_module("fastsched.cuda")
