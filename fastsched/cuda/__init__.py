"""Optional CUDA target (numba-cuda) for large candidate grids.

Everything here degrades gracefully: importing :mod:`fastsched.cuda` never needs numba-cuda
or a GPU, :func:`is_available` never raises, and ``backend="auto"`` falls back to the CPU
kernels. The CUDA kernels live in :mod:`fastsched.cuda._kernels` (imported lazily); each is a
twin of a CPU kernel and agrees with it to 1e-12 relative, argmax ties included.

Backends
--------
``"cpu"``
    The numba CPU kernels (always available).
``"cuda"``
    The CUDA kernels; raises :class:`CudaUnavailableError` (a ``RuntimeError``) when no usable
    GPU (or the simulator) is present.
``"auto"``
    CUDA when :func:`is_available` and the work size is at least :data:`AUTO_THRESHOLD`
    candidates, else CPU. Below the threshold the host-device transfers and the launch
    (tens of microseconds) cost more than the CPU kernel. The threshold is read from the
    environment variable ``FASTSCHED_CUDA_THRESHOLD`` at import and can be changed at run
    time by assigning ``fastsched.cuda.AUTO_THRESHOLD``.

Batched entry points (inputs are already validated flat/contiguous arrays, as the CPU kernels
take them; numpy arrays or numba device arrays):

* :func:`elementwise` -- goodput or throughput of configurations (:func:`checked_elementwise`:
  the same behind the CPU validation scan, a drop-in for ``_kernels.elementwise``);
* :func:`optimize_keys` -- the 50-point batch-size grid search with argmax per configuration,
  same signature and semantics as ``fastsched.goodput._kernels.optimize_keys_kernel``;
* :func:`fill_table` -- the lazy speedup-table fill of one job (``fill_table_kernel``'s twin);
* :func:`speedup_tables` -- speedup tables of many jobs in one launch;
* :func:`evaluate_population` -- GA fitness scoring (``_genetic.evaluate_population``'s twin).

Residency and transfers
-----------------------
Pass device arrays (from :func:`to_device` or :data:`device_cache`) to keep data on the GPU
across calls; outputs can be device arrays too (``keep_on_device=True``), e.g. a speedup table
filled on the device and then read by the fitness kernel without a round trip. Every
host<->device copy made here is counted in :func:`transfer_stats`.
"""

from __future__ import annotations

import collections
import importlib
import importlib.util
import os
import threading

import numpy as np

__all__ = [
    "AUTO_THRESHOLD",
    "CudaUnavailableError",
    "checked_elementwise",
    "DeviceCache",
    "device_cache",
    "elementwise",
    "evaluate_population",
    "fill_table",
    "is_available",
    "optimize_keys",
    "reset_transfer_stats",
    "resolve_backend",
    "speedup_tables",
    "to_device",
    "to_host",
    "transfer_stats",
    "unavailable_reason",
]

BACKENDS = ("cpu", "cuda", "auto")

_DEFAULT_THRESHOLD = 100_000


def _threshold_from_env() -> int:
    raw = os.environ.get("FASTSCHED_CUDA_THRESHOLD")
    if raw is None:
        return _DEFAULT_THRESHOLD
    try:
        value = int(float(raw))
    except ValueError:
        return _DEFAULT_THRESHOLD  # a bad environment value must not break import
    return max(value, 0)


#: Smallest work size (candidates: configurations, keys, table cells or population rows)
#: for which ``backend="auto"`` picks CUDA. Default 100 000 (env ``FASTSCHED_CUDA_THRESHOLD``).
AUTO_THRESHOLD: int = _threshold_from_env()

#: Threads per block of every launch (a multiple of the warp size on hardware; tests lower it).
THREADS_PER_BLOCK: int = 256

#: Upper bound on blocks per launch; kernels use grid-stride loops, so bigger inputs still fit.
MAX_BLOCKS: int = 65_536


class CudaUnavailableError(RuntimeError):
    """``backend="cuda"`` was requested but no usable GPU (or simulator) is present."""


# --------------------------------------------------------------------------------------
# Availability
# --------------------------------------------------------------------------------------
_avail_lock = threading.Lock()
_avail: tuple[bool, str] | None = None


def _probe() -> tuple[bool, str]:
    # Each step may fail differently: numba-cuda missing (ImportError), a broken or absent
    # driver (CudaSupportError, OSError, ...), or anything odd a vendor stack throws.
    # numba < 0.69 still ships a deprecated built-in ``numba.cuda`` that shadows nothing when
    # numba-cuda is absent; we support only the NVIDIA-maintained package, so look for it first.
    try:
        found = importlib.util.find_spec("numba_cuda") is not None
    except (ImportError, ValueError):  # ValueError: a None entry in sys.modules
        found = False
    if not found:
        return False, "numba-cuda is not installed; pip install 'fastsched[cuda]'"
    try:
        from numba import cuda
    except Exception as exc:  # noqa: BLE001 - availability must never raise
        return False, f"numba-cuda is not installed ({type(exc).__name__}: {exc}); pip install 'fastsched[cuda]'"
    try:
        if not hasattr(cuda, "is_available"):
            return False, "numba.cuda has no is_available(): numba-cuda missing or too old"
        if not cuda.is_available():
            return False, "numba-cuda found no usable CUDA GPU or driver"
        importlib.import_module("fastsched.cuda._kernels")  # decorators only; compiles nothing yet
    except Exception as exc:  # noqa: BLE001
        return False, f"CUDA initialisation failed ({type(exc).__name__}: {exc})"
    return True, "simulator (NUMBA_ENABLE_CUDASIM=1)" if _is_simulator() else "CUDA GPU"


def _is_simulator() -> bool:
    try:
        from numba import config

        return bool(getattr(config, "ENABLE_CUDASIM", 0))
    except Exception:  # noqa: BLE001
        return False


def is_available(refresh: bool = False) -> bool:
    """Whether the CUDA kernels can run here (a GPU with a working driver, or the simulator).

    Never raises. The probe runs once per process (driver initialisation is not free); pass
    ``refresh=True`` to probe again.
    """
    global _avail
    with _avail_lock:
        if _avail is None or refresh:
            try:
                _avail = _probe()
            except BaseException as exc:  # noqa: BLE001 - e.g. a SystemExit from a vendor hook
                _avail = (False, f"CUDA probe failed ({type(exc).__name__}: {exc})")
        return _avail[0]


def unavailable_reason() -> str:
    """Why :func:`is_available` is False (or what it found when it is True)."""
    is_available()
    return _avail[1]


def resolve_backend(backend: str, size: int) -> str:
    """Map a ``backend`` option to ``"cpu"`` or ``"cuda"`` for a job of ``size`` candidates.

    Parameters
    ----------
    backend : {"cpu", "cuda", "auto"}
        The user's choice.
    size : int
        Work size in candidates (configurations, keys, table cells or population rows).

    Returns
    -------
    str
        ``"cpu"`` or ``"cuda"``.

    Raises
    ------
    ValueError
        On an unknown backend.
    CudaUnavailableError
        For ``"cuda"`` when :func:`is_available` is False (the message says why).
    """
    if backend == "cpu":
        return "cpu"
    if backend == "cuda":
        if not is_available():
            raise CudaUnavailableError(f"backend='cuda' requested but CUDA is unavailable: {unavailable_reason()}")
        return "cuda"
    if backend == "auto":
        return "cuda" if int(size) >= AUTO_THRESHOLD and is_available() else "cpu"
    raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}")


def _load_kernels():
    if not is_available():
        raise CudaUnavailableError(f"CUDA is unavailable: {unavailable_reason()}")
    return importlib.import_module("fastsched.cuda._kernels")


def _cuda():
    _load_kernels()
    from numba import cuda

    return cuda


# --------------------------------------------------------------------------------------
# Transfers
# --------------------------------------------------------------------------------------
_stats_lock = threading.Lock()
_stats = {"h2d_count": 0, "h2d_bytes": 0, "d2h_count": 0, "d2h_bytes": 0}


def _count(kind: str, nbytes: int) -> None:
    with _stats_lock:
        _stats[f"{kind}_count"] += 1
        _stats[f"{kind}_bytes"] += int(nbytes)


def transfer_stats() -> dict:
    """Host-to-device and device-to-host copies made by this module: counts and bytes."""
    with _stats_lock:
        return dict(_stats)


def reset_transfer_stats() -> None:
    """Zero the counters of :func:`transfer_stats`."""
    with _stats_lock:
        for k in _stats:
            _stats[k] = 0


def _is_device(x) -> bool:
    if x is None or isinstance(x, (np.ndarray, np.generic)):
        return False
    # numba device arrays (and the simulator's fakes, which lack the CUDA array interface)
    # have copy_to_host; other producers (CuPy, torch) expose __cuda_array_interface__.
    if hasattr(x, "copy_to_host"):
        return True
    try:
        from numba import cuda

        return bool(cuda.is_cuda_array(x))
    except Exception:  # noqa: BLE001
        return False


def to_device(x, stream=0):
    """Device copy of a host array (counted); a device array is returned as is."""
    cuda = _cuda()
    if _is_device(x):
        return x
    arr = np.ascontiguousarray(x)
    _count("h2d", arr.nbytes)
    return cuda.to_device(arr, stream=stream)


def to_host(x, out=None):
    """Host copy of a device array (counted) into ``out`` when given; host arrays pass through."""
    if not _is_device(x):
        if out is not None and out is not x:
            out[...] = x
            return out
        return x
    _count("d2h", x.nbytes)
    if out is None:
        return x.copy_to_host()
    if out.flags.c_contiguous:
        x.copy_to_host(out)
        return out
    out[...] = x.copy_to_host()
    return out


def _device_empty(shape, dtype):
    return _cuda().device_array(shape, dtype=dtype)


def _launch_shape(n: int, threads_per_block: int | None) -> tuple[int, int]:
    tpb = int(threads_per_block or THREADS_PER_BLOCK)
    blocks = max(1, min(MAX_BLOCKS, (int(n) + tpb - 1) // tpb))
    return blocks, tpb


class DeviceCache:
    """A small LRU of device arrays keyed by the caller, for data reused across calls.

    ``get(key, host, version)`` returns the device copy of ``host`` stored under ``key``,
    uploading it (one counted transfer) only when the key is new or its ``version``, shape or
    dtype changed. The caller owns the meaning of ``version`` (e.g. a scheduling round, or a
    table's fill count): in-place changes to ``host`` are *not* detected otherwise, because
    hashing the host array would cost about as much as the transfer it saves.

    Parameters
    ----------
    max_bytes : int
        Device memory the cache may hold; least recently used entries are dropped beyond it.
    """

    def __init__(self, max_bytes: int = 1 << 30):
        self.max_bytes = int(max_bytes)
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key, host, version=None):
        """Device copy of ``host`` cached under ``key`` (see the class docstring)."""
        arr = np.asarray(host)
        sig = (version, arr.shape, arr.dtype.str)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] == sig:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit[1]
        dev = to_device(arr)
        with self._lock:
            self.misses += 1
            self._entries[key] = (sig, dev)
            self._entries.move_to_end(key)
            total = sum(e[1].nbytes for e in self._entries.values())
            while total > self.max_bytes and len(self._entries) > 1:
                _, (_, old) = self._entries.popitem(last=False)
                total -= old.nbytes
        return dev

    def clear(self) -> None:
        """Drop every entry (frees the device memory once no caller holds the arrays)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


#: Process-wide cache used by the ``cache_key`` options of the entry points.
device_cache = DeviceCache()


def _dev(x, cache_key=None, version=None):
    """Device view of ``x``: as is when already on the device, cached when keyed, else copied."""
    if _is_device(x):
        return x
    if cache_key is not None:
        return device_cache.get(cache_key, x, version)
    return to_device(x)


def _dev_f64(x):
    """Device float64 copy of small parameters (``perf``); device arrays pass through."""
    return x if _is_device(x) else to_device(np.ascontiguousarray(x, dtype=np.float64))


def _out(host_or_dev, shape, dtype):
    """(device buffer, host target or None): a device output is written in place."""
    if host_or_dev is not None and _is_device(host_or_dev):
        return host_or_dev, None
    return _device_empty(shape, dtype), host_or_dev


# --------------------------------------------------------------------------------------
# Goodput entry points
# --------------------------------------------------------------------------------------
def elementwise(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    nodes,
    replicas,
    atomic_bsz,
    accum_steps,
    with_efficiency=True,
    out=None,
    *,
    keep_on_device=False,
    threads_per_block=None,
):
    """Goodput (or throughput) of flat, already validated configurations on the GPU.

    Parameters
    ----------
    perf : float64[7]
        ``GoodputFunction._perf``.
    grad_sqr, grad_var, init_bsz : float
        Gradient statistics and initial batch size (``GoodputFunction._sqr/_var/_init``).
    nodes, replicas, atomic_bsz, accum_steps : 1-D arrays of equal length
        All int64 or all float64, host or device; validate them first (the CPU face's
        ``_scan_inputs`` does) -- the kernel does no checks.
    with_efficiency : bool
        Goodput when True, throughput when False.
    out : float64[n], optional
        Host or device output; allocated when None.
    keep_on_device : bool
        Return the device array instead of copying it back.

    Returns
    -------
    numpy.ndarray or DeviceNDArray
        float64[n].
    """
    K = _load_kernels()
    n = int(np.shape(replicas)[0])
    args = [_dev(a) for a in (nodes, replicas, atomic_bsz, accum_steps)]
    d_out, host_out = _out(out, (n,), np.float64)
    d_perf = _dev_f64(perf)
    blocks, tpb = _launch_shape(n, threads_per_block)
    K.elementwise_kernel[blocks, tpb](
        d_perf, float(grad_sqr), float(grad_var), float(init_bsz), *args, bool(with_efficiency), d_out
    )
    if keep_on_device or host_out is None and _is_device(out):
        return d_out
    return to_host(d_out, host_out)


def checked_elementwise(perf, grad_sqr, grad_var, init_bsz, nodes, replicas, atomic_bsz, accum_steps, with_eff, out):
    """Drop-in for ``fastsched.goodput._kernels.elementwise`` that computes on the GPU.

    Same arguments and status codes: the inputs are validated by the CPU scan (one parallel
    pass, so error messages stay identical), then :func:`elementwise` fills the host ``out``.
    Returns ``K.OK`` or the CPU's error code (``out`` is then untouched).
    """
    from fastsched._jit import parallel_region
    from fastsched.goodput import _kernels as CPU

    with parallel_region():
        status = CPU._scan_inputs(nodes, replicas, atomic_bsz, accum_steps, init_bsz, with_eff)[0]
    if status != CPU.OK:
        return status
    elementwise(perf, grad_sqr, grad_var, init_bsz, nodes, replicas, atomic_bsz, accum_steps, with_eff, out)
    return CPU.OK if np.isfinite(out).all() else CPU.OVERFLOW


def optimize_keys(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    multi_node,
    num_replicas,
    max_bsz,
    min_atomic,
    max_atomic,
    accumulation,
    out_goodput=None,
    out_atomic=None,
    out_accum=None,
    *,
    keep_on_device=False,
    threads_per_block=None,
):
    """Batch-size grid search per ``(multi_node, num_replicas)`` key on the GPU.

    Same arguments and results as ``fastsched.goodput._kernels.optimize_keys_kernel``:
    ``multi_node`` bool[n], ``num_replicas`` int64[n] (host or device), scalars as the CPU
    kernel takes them, and outputs float64/int64/int64[n] (host arrays are filled in place,
    device arrays written in place; missing ones are allocated).

    Returns
    -------
    (goodput, atomic_bsz, accum_steps)
        Host arrays, or device arrays with ``keep_on_device=True``.
    """
    K = _load_kernels()
    n = int(np.shape(num_replicas)[0])
    d_multi = _dev(multi_node)
    d_rep = _dev(num_replicas)
    dg, hg = _out(out_goodput, (n,), np.float64)
    da, ha = _out(out_atomic, (n,), np.int64)
    ds, hs = _out(out_accum, (n,), np.int64)
    d_perf = _dev_f64(perf)
    blocks, tpb = _launch_shape(n, threads_per_block)
    K.optimize_keys_kernel[blocks, tpb](
        d_perf,
        float(grad_sqr),
        float(grad_var),
        float(init_bsz),
        d_multi,
        d_rep,
        float(max_bsz),
        float(min_atomic),
        float(max_atomic),
        bool(accumulation),
        dg,
        da,
        ds,
    )
    if keep_on_device:
        return dg, da, ds
    return (
        dg if hg is None and _is_device(out_goodput) else to_host(dg, hg),
        da if ha is None and _is_device(out_atomic) else to_host(da, ha),
        ds if hs is None and _is_device(out_accum) else to_host(ds, hs),
    )


def fill_table(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    max_bsz,
    min_atomic,
    max_atomic,
    accumulation,
    base_goodput,
    table,
    filled,
    want_multi,
    want_rep,
    *,
    threads_per_block=None,
):
    """Fill ``table[m, r]`` for wanted keys not yet ``filled`` (``fill_table_kernel``'s twin).

    ``table`` float64[2, R] and ``filled`` bool[2, R] are updated in place (host arrays are
    copied to the device and back; pass device arrays to keep them resident).
    """
    K = _load_kernels()
    n = int(np.shape(want_rep)[0])
    d_table = _dev(table)
    d_filled = _dev(filled)
    d_perf = _dev_f64(perf)
    blocks, tpb = _launch_shape(n, threads_per_block)
    K.fill_table_kernel[blocks, tpb](
        d_perf,
        float(grad_sqr),
        float(grad_var),
        float(init_bsz),
        float(max_bsz),
        float(min_atomic),
        float(max_atomic),
        bool(accumulation),
        float(base_goodput),
        d_table,
        d_filled,
        _dev(want_multi),
        _dev(want_rep),
    )
    if d_table is not table:
        to_host(d_table, table)
    if d_filled is not filled:
        to_host(d_filled, filled)


def speedup_tables(speedup_fns, max_replicas: int, *, keep_on_device=False, threads_per_block=None):
    """Speedup tables of many jobs, one launch: ``float64[J, 2, max_replicas + 1]``.

    ``out[j, 0, r]`` / ``out[j, 1, r]`` equal ``speedup_fns[j].table(max_replicas)[0/1, r]``
    (single node / more than one node), ``out[:, :, 0] == 0``.

    Parameters
    ----------
    speedup_fns : sequence of SpeedupFunction
        Each backed by a fastsched GoodputFunction (``is_tabulated``).
    max_replicas : int
        Largest replica count to tabulate.
    keep_on_device : bool
        Return the device array (e.g. to feed :func:`evaluate_population` without a copy).
    """
    K = _load_kernels()
    njobs = len(speedup_fns)
    rmax = int(max_replicas)
    if rmax < 0:
        raise ValueError(f"max_replicas must be >= 0, got {rmax}")
    perf = np.empty((njobs, 7), dtype=np.float64)
    sqr = np.empty(njobs)
    var = np.empty(njobs)
    init = np.empty(njobs)
    max_bsz = np.empty(njobs)
    lo = np.empty(njobs)
    hi = np.empty(njobs)
    acc = np.empty(njobs, dtype=np.bool_)
    base = np.empty(njobs)
    for j, fn in enumerate(speedup_fns):
        if not getattr(fn, "is_tabulated", False):
            raise TypeError(f"speedup_fns[{j}] is not backed by a fastsched GoodputFunction")
        g = fn.goodput_fn
        perf[j] = g._perf
        sqr[j], var[j], init[j] = g._sqr, g._var, g._init
        max_bsz[j], lo[j], hi[j] = fn._bounds
        acc[j] = bool(fn._accumulation)
        base[j] = fn.base_goodput
    params = [to_device(a) for a in (perf, sqr, var, init, max_bsz, lo, hi, acc, base)]
    d_out = _device_empty((njobs, 2, rmax + 1), np.float64)
    blocks, tpb = _launch_shape(max(1, njobs * 2 * (rmax + 1)), threads_per_block)
    if njobs:
        K.speedup_tables_kernel[blocks, tpb](*params, d_out)
    return d_out if keep_on_device else to_host(d_out)


# --------------------------------------------------------------------------------------
# Genetic search: fitness
# --------------------------------------------------------------------------------------
def evaluate_population(
    off,
    node,
    cnt,
    table,
    scale,
    base_off,
    base_node,
    base_cnt,
    penalty,
    mode,
    p,
    obj=None,
    size=None,
    *,
    rows=None,
    cache_key=None,
    version=None,
    keep_on_device=False,
    threads_per_block=None,
):
    """Fitness of a population on the GPU (``_genetic.evaluate_population``'s twin).

    Parameters
    ----------
    off : int64[P, J + 1]; node, cnt : int32[P, W]
        The sparse CSR population (see :mod:`fastsched.policy._genetic`); host or device.
    table : float64[J, K + 1, Rmax + 1]; scale : float64[J]
        Speedup tables and objective scale of the round.
    base_off : int64[J + 1]; base_node, base_cnt : int32[B]
        The base allocation (restart penalty reference).
    penalty, mode, p : float, int, float
        Restart penalty, fairness mode (``SUM``/``POWER``/``GEOMETRIC``) and its exponent.
    obj : float64[n], size : int64[n], optional
        Outputs (host or device), ``n = P`` or ``len(rows)``.
    rows : int64[n], optional
        Score only these rows (``obj[t]`` is row ``rows[t]``).
    cache_key, version : hashable, optional
        Keep the round constants (table, scale, base_*) resident on the device under
        ``cache_key``; re-uploaded when ``version`` changes (pass e.g. the round number).

    Returns
    -------
    (obj, size)
        Host arrays, or device arrays with ``keep_on_device=True``.
    """
    K = _load_kernels()
    consts = []
    for name, a in (("table", table), ("scale", scale), ("base_off", base_off), ("base_node", base_node)):
        consts.append(_dev(a, None if cache_key is None else (cache_key, name), version))
    consts.append(_dev(base_cnt, None if cache_key is None else (cache_key, "base_cnt"), version))
    d_off, d_node, d_cnt = _dev(off), _dev(node), _dev(cnt)
    n = int(np.shape(off)[0] if rows is None else np.shape(rows)[0])
    d_obj, h_obj = _out(obj, (n,), np.float64)
    d_size, h_size = _out(size, (n,), np.int64)
    blocks, tpb = _launch_shape(max(n, 1), threads_per_block)
    scalars = (float(penalty), int(mode), float(p))
    if n:
        if rows is None:
            K.evaluate_population_kernel[blocks, tpb](d_off, d_node, d_cnt, *consts, *scalars, d_obj, d_size)
        else:
            K.evaluate_rows_kernel[blocks, tpb](d_off, d_node, d_cnt, _dev(rows), *consts, *scalars, d_obj, d_size)
    if keep_on_device:
        return d_obj, d_size
    return (
        d_obj if h_obj is None and _is_device(obj) else to_host(d_obj, h_obj),
        d_size if h_size is None and _is_device(size) else to_host(d_size, h_size),
    )
