"""Compile every CUDA kernel to PTX for sm_90 without a GPU (run by test_ptx.py in a subprocess).

The simulator runs device functions as Python, so it cannot show that they compile for the
real target; NVVM can, when the CUDA toolkit's libnvvm and libdevice are installed. Prints
``PTX <kernel> <bytes>`` per kernel, or ``SKIP <reason>``.
"""

from __future__ import annotations

import glob
import importlib
import os
import sys
import types as types_ns

from numba import types

libdevice = sorted(glob.glob("/usr/local/cuda*/nvvm/libdevice/libdevice*.bc"))
if not libdevice or not glob.glob("/usr/local/cuda*/lib*/libnvvm.so*"):
    print("SKIP no libnvvm/libdevice")
    sys.exit(0)
try:
    from numba import cuda
    from numba.cuda import cuda_paths
    from numba.cuda.cudadrv import nvrtc
except Exception as exc:  # noqa: BLE001
    print(f"SKIP numba-cuda unusable: {exc}")
    sys.exit(0)

# Without NVRTC (not needed to make PTX) numba-cuda cannot list the supported architectures.
nvrtc.get_supported_ccs = lambda: ((7, 5), (8, 0), (8, 6), (9, 0))
try:
    cuda_paths._get_nvrtc_path()
except Exception:  # noqa: BLE001
    cuda_paths._get_nvrtc_path = lambda: cuda_paths._env_path_tuple("none", None)
# Device functions called from a kernel ask the current device for its compute capability.
_dispatcher = importlib.import_module("numba.cuda.dispatcher")
_dispatcher.get_current_device = lambda: types_ns.SimpleNamespace(compute_capability=(9, 0))
os.environ.setdefault("CUDA_HOME", os.path.dirname(os.path.dirname(os.path.dirname(libdevice[0]))))

from fastsched.cuda import _batch_kernels as BK  # noqa: E402
from fastsched.cuda import _fitness_kernels as FK  # noqa: E402
from fastsched.cuda import _goodput_kernels as GK  # noqa: E402
from fastsched.goodput import GoodputParams  # noqa: E402

f8, i8, b1 = types.float64, types.int64, types.boolean
v = types.void


def arr(t, nd=1):
    return types.Array(t, nd, "C")


def anyarr(t):
    return types.Array(t, 1, "A")


# One model (the launchers' device_params) and J models, as GoodputParams bundles.
P1 = types.NamedTuple([arr(f8), f8, f8, f8, f8, f8, f8, b1], GoodputParams)
P8 = types.NamedTuple([arr(f8, 2), *[arr(f8)] * 6, arr(b1)], GoodputParams)
SIGS = {
    "elementwise_kernel": [
        v(P1, *[arr(i8)] * 4, b1, arr(f8)),
        v(P1, *[arr(types.float32)] * 4, b1, arr(f8)),
    ],
    "checked_elementwise_kernel": [
        v(P1, *[arr(types.int32)] * 4, b1, arr(f8), arr(i8), i8),
        v(P1, *[anyarr(f8)] * 4, b1, arr(f8), arr(i8), i8),
    ],
    "optimize_keys_kernel": [v(P1, arr(b1), arr(i8), arr(f8), arr(i8), arr(i8))],
    "checked_optimize_kernel": [
        v(P1, arr(types.int32), arr(types.int32), b1, b1, arr(f8), arr(i8), arr(i8), arr(i8)),
    ],
    "fill_table_kernel": [v(P1, f8, arr(f8, 2), arr(b1, 2), arr(b1), arr(i8))],
    "checked_lookup_kernel": [v(arr(f8, 2), arr(i8), arr(f8), b1, b1, arr(f8), arr(i8))],
    "max_kernel": [v(arr(i8), arr(f8))],
    "fill_kernel": [v(arr(i8), i8), v(arr(f8), f8)],
}
BATCH = {
    "optimize_kernel": [v(P8, arr(i8), arr(b1), arr(i8), arr(f8), arr(i8), arr(i8))],
    "matrix_kernel": [v(P8, arr(b1), arr(i8), arr(f8, 2), arr(i8, 2), arr(i8, 2))],
    "tables_kernel": [v(P8, arr(f8), arr(f8, 3))],
    "elementwise_kernel": [v(P8, arr(i8), *[arr(f8)] * 4, b1, arr(f8))],
}
FITNESS = {
    "evaluate_population_kernel": [
        v(
            arr(i8, 2),
            arr(types.int32, 2),
            arr(types.int32, 2),
            arr(f8, 3),
            arr(f8),
            arr(i8),
            arr(types.int32),
            arr(types.int32),
            arr(f8),
            i8,
            f8,
            arr(f8),
            arr(i8),
        )
    ],
}

failed = 0
for module, table in ((GK, SIGS), (BK, BATCH), (FK, FITNESS)):
    for name, sigs in table.items():
        for sig in sigs:
            try:
                ptx, _ = cuda.compile_ptx(getattr(module, name).py_func, sig, cc=(9, 0))
                print(f"PTX {name} {len(ptx)}")
            except Exception as exc:  # noqa: BLE001
                failed += 1
                print(f"FAIL {name} {type(exc).__name__}: {str(exc)[:400]}")
sys.exit(1 if failed else 0)
