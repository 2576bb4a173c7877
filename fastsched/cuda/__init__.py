"""Optional CUDA target (numba-cuda) of fastsched's batch evaluations.

Importing :mod:`fastsched.cuda` never needs numba-cuda or a GPU; :func:`is_available` never
raises, and ``backend="auto"`` falls back to the CPU kernels (:mod:`fastsched._backend`).
Every scalar formula is compiled for the GPU from the CPU formulas' own source
(:mod:`fastsched.cuda._device`), so the targets cannot drift.

Modules: :mod:`~fastsched.cuda._probe` (device probe), :mod:`~fastsched.cuda._memory`
(transfers, counters, caches, staging buffers), :mod:`~fastsched.cuda._arrays` (device arrays
of other libraries), :mod:`~fastsched.cuda.goodput` (twins of the CPU goodput kernels),
:mod:`~fastsched.cuda.device` (goodput faces for device arrays), :mod:`~fastsched.cuda._status`
(device-side validation read back as the CPU path's errors),
:mod:`~fastsched.cuda.batch` (many models per launch), :mod:`~fastsched.cuda.fitness` (GA
fitness launcher).

Device arrays in, device arrays out
-----------------------------------
``GoodputFunction.evaluate/throughput/optimize`` and ``SpeedupFunction`` accept CuPy arrays,
PyTorch CUDA tensors or numba device arrays, validate them on the device and return device
arrays (CuPy/PyTorch inputs get CuPy/PyTorch results). The speedup tables of many
SpeedupFunctions in one launch are :func:`fastsched.goodput.speedup_tables`. Which calls gain with host (NumPy)
arrays and which do not is documented in :mod:`fastsched._backend`.
"""

from fastsched._device import CudaUnavailableError
from fastsched._lazy import lazy_exports
from fastsched.cuda._memory import (
    DeviceCache,
    StagingBuffers,
    device_cache,
    reset_transfer_stats,
    set_threads_per_block,
    to_device,
    to_host,
    transfer_stats,
)
from fastsched.cuda._probe import is_available, is_simulator, unavailable_reason
from fastsched.cuda.batch import batch_elementwise, batch_matrix, batch_optimize, batch_tables
from fastsched.cuda.device import evaluate_device, optimize_device, speedup_device
from fastsched.cuda.fitness import evaluate_population
from fastsched.cuda.goodput import checked_elementwise, elementwise, fill_table, optimize_keys

# The backend switch sits above this package (it asks the probe here): its names are
# re-exported lazily, so that neither module imports the other when it loads.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AUTO_THRESHOLDS": "fastsched._backend",
        "auto_threshold": "fastsched._backend",
        "resolve_backend": "fastsched._backend",
    },
)

__all__ = [
    "AUTO_THRESHOLDS",
    "CudaUnavailableError",
    "DeviceCache",
    "StagingBuffers",
    "auto_threshold",
    "batch_elementwise",
    "batch_matrix",
    "batch_optimize",
    "batch_tables",
    "checked_elementwise",
    "device_cache",
    "elementwise",
    "evaluate_device",
    "evaluate_population",
    "fill_table",
    "is_available",
    "is_simulator",
    "optimize_device",
    "optimize_keys",
    "reset_transfer_stats",
    "resolve_backend",
    "set_threads_per_block",
    "speedup_device",
    "to_device",
    "to_host",
    "transfer_stats",
    "unavailable_reason",
]
