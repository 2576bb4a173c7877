"""Device arrays from other libraries: zero-copy views in, the caller's array type out.

Any object with ``__cuda_array_interface__`` (CuPy arrays, PyTorch CUDA tensors, numba device
arrays) is viewed as a numba device array without a copy. Metadata (dtype, shape, strides,
device) is checked on the host from the interface; the values themselves are checked on the
device by the launchers' status kernels.

Results are numba device arrays, converted back to the caller's type when the first device
argument is a CuPy array or a PyTorch tensor and that library is importable (zero-copy both
ways, through the same interface). To wrap a numba device array yourself:
``cupy.asarray(d)`` or ``torch.as_tensor(d, device="cuda")``.
"""

from __future__ import annotations

import importlib

import numpy as np

from fastsched import _validate as V
from fastsched._device import is_device_array
from fastsched.cuda import _memory as M
from fastsched.cuda._probe import cuda_api, is_simulator, load

__all__ = ["as_device_columns", "like_caller"]


def _device_ordinal(ptr: int):
    """CUDA device ordinal of the allocation holding ``ptr`` (None when it cannot be told)."""
    if is_simulator() or not ptr:
        return None
    try:
        drv = importlib.import_module("numba.cuda.cudadrv.driver")
        attr = drv.binding.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        return int(drv.driver.cuPointerGetAttribute(attr, drv.binding.CUdeviceptr(int(ptr))))
    except Exception:  # noqa: BLE001 - an exotic pointer: let the kernel launch decide
        return None


def _current_ordinal():
    if is_simulator():
        return None
    try:
        return int(cuda_api().get_current_device().id)
    except Exception:  # noqa: BLE001
        return None


def as_device(name: str, x):
    """Zero-copy numba device view of ``x``, flattened to 1-D; checks dtype, layout and device."""
    cuda = cuda_api()
    cai = getattr(x, "__cuda_array_interface__", None)
    d = x if hasattr(x, "copy_to_host") else cuda.as_cuda_array(x)
    dtype = np.dtype(d.dtype)
    if dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {dtype}")
    if d.size == 0:
        raise ValueError(f"{name} must not be empty")
    if cai is not None:
        where, here = _device_ordinal(cai["data"][0]), _current_ordinal()
        if where is not None and here is not None and where != here:
            raise ValueError(f"{name} lives on CUDA device {where}, but fastsched computes on device {here}")
    if d.ndim != 1:
        if not d.is_c_contiguous():
            raise ValueError(
                f"{name} must be C-contiguous when it has more than one dimension (got strides {d.strides})"
            )
        d = d.reshape(d.size)
    return d


def as_device_columns(names, values):
    """Device columns of a call that got at least one device array.

    Returns ``(columns, shape, caller)``: 1-D device arrays of ``prod(shape)`` elements and the
    first device argument (whose array type the results take). Device arrays must share one
    shape (no broadcasting on the device); plain scalars (or one-element host arrays) are
    filled on the device without a transfer; other host arrays of the full shape are copied
    up (counted). Non-broadcasting shapes raise the CPU path's message.
    """
    on_device = [is_device_array(v) for v in values]
    host = {i: V.real_array(names[i], v) for i, v in enumerate(values) if not on_device[i]}
    shapes = [tuple(v.shape) if on_device[i] else host[i].shape for i, v in enumerate(values)]
    text = ", ".join(names[:-1]) + " and " + names[-1]
    try:
        full = np.broadcast_shapes(*shapes)
    except ValueError:
        shown = shapes if len(shapes) > 2 else f"{shapes[0]} and {shapes[1]}"
        raise ValueError(f"{text} have shapes {shown} that do not broadcast") from None
    dev_shapes = {shapes[i] for i in range(len(values)) if on_device[i]}
    if dev_shapes != {full} or any(not on_device[i] and 1 < host[i].size != int(np.prod(full)) for i in host):
        raise ValueError(f"device arrays {text} must have equal shapes (no broadcasting on the device), got {shapes}")
    n = int(np.prod(full))
    cols = []
    for i, name in enumerate(names):
        if on_device[i]:
            cols.append(as_device(name, values[i]))
        elif host[i].size == 1:
            cols.append(_constant(host[i].reshape(-1)[0], n))
        else:
            cols.append(M.to_device(np.ascontiguousarray(np.broadcast_to(host[i], full)).reshape(-1)))
    caller = values[on_device.index(True)]
    return cols, full, caller


def _constant(value, n):
    """Make a device column of ``n`` copies of ``value`` (filled by a kernel, nothing copied)."""
    d = M.device_empty(n, np.asarray(value).dtype)
    blocks, tpb = M.launch_shape(n)
    load("_goodput_kernels").fill_kernel[blocks, tpb](d, value)
    return d


def like_caller(result, caller, shape):
    """Reshape ``result`` (numba device array, 1-D) to ``shape`` in the caller's array type."""
    if tuple(shape) != tuple(result.shape):
        result = result.reshape(tuple(shape))
    module = type(caller).__module__.split(".")[0]
    if module in ("cupy", "torch"):
        try:
            lib = importlib.import_module(module)
        except ImportError:
            return result
        return lib.asarray(result) if module == "cupy" else lib.as_tensor(result, device="cuda")
    return result


def any_device(values) -> bool:
    """Whether any of ``values`` is a device array."""
    return any(is_device_array(v) for v in values)
