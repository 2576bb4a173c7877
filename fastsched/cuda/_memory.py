"""Host/device transfers (counted), device-array caches, launch shapes and pinned staging.

Every host<->device copy made by :mod:`fastsched.cuda` goes through :func:`to_device` /
:func:`to_host` (or the staging buffers) and is counted in :func:`transfer_stats`, so tests and
benchmarks can assert how many copies a call made.
"""

from __future__ import annotations

import collections
import threading

import numpy as np

from fastsched._device import is_device_array
from fastsched._validate import check_int_scalar
from fastsched.cuda._probe import cuda_api
from fastsched.goodput._types import GoodputParams

__all__ = [
    "DeviceCache",
    "StagingBuffers",
    "device_cache",
    "launch_shape",
    "reset_transfer_stats",
    "set_threads_per_block",
    "to_device",
    "to_host",
    "transfer_stats",
]

#: Threads per block of every launch (a multiple of the warp size on hardware; tests lower it).
THREADS_PER_BLOCK: int = 256

#: Upper bound on blocks per launch; kernels use grid-stride loops, so bigger inputs still fit.
MAX_BLOCKS: int = 65_536

_stats_lock = threading.Lock()
_stats = {"h2d_count": 0, "h2d_bytes": 0, "d2h_count": 0, "d2h_bytes": 0}


def count(kind: str, nbytes: int) -> None:
    """Record one copy of ``nbytes`` in direction ``kind`` (``"h2d"`` or ``"d2h"``)."""
    with _stats_lock:
        _stats[f"{kind}_count"] += 1
        _stats[f"{kind}_bytes"] += int(nbytes)


def transfer_stats() -> dict:
    """Host-to-device and device-to-host copies made by :mod:`fastsched.cuda`: counts and bytes.

    Examples
    --------
    >>> from fastsched.cuda import transfer_stats
    >>> sorted(transfer_stats())
    ['d2h_bytes', 'd2h_count', 'h2d_bytes', 'h2d_count']
    """
    with _stats_lock:
        return dict(_stats)


def reset_transfer_stats() -> None:
    """Zero the counters of :func:`transfer_stats`.

    Examples
    --------
    >>> from fastsched.cuda import reset_transfer_stats, transfer_stats
    >>> reset_transfer_stats()
    >>> transfer_stats()["h2d_count"]
    0
    """
    with _stats_lock:
        for k in _stats:
            _stats[k] = 0


def set_threads_per_block(n: int) -> int:
    """Set the threads per block of every launch; returns the previous value.

    Examples
    --------
    >>> from fastsched.cuda import set_threads_per_block
    >>> old = set_threads_per_block(128)
    >>> set_threads_per_block(old)
    128
    """
    global THREADS_PER_BLOCK
    old = THREADS_PER_BLOCK
    THREADS_PER_BLOCK = _check_threads(n)
    return old


#: CUDA's most threads in one block (every compute capability numba-cuda supports).
MAX_THREADS_PER_BLOCK = 1024


def _check_threads(n) -> int:
    # 0 divided by zero at the next launch, a negative count or one over the device's limit
    # failed inside the driver; a string raised int()'s message naming nothing.
    return check_int_scalar("threads_per_block", n, low=1, high=MAX_THREADS_PER_BLOCK)


def launch_shape(n: int, threads_per_block: int | None = None) -> tuple[int, int]:
    """``(blocks, threads_per_block)`` covering ``n`` items (grid-stride kernels).

    Examples
    --------
    >>> launch_shape(1000, 128)
    (8, 128)
    >>> launch_shape(10, 0)
    Traceback (most recent call last):
    ...
    ValueError: threads_per_block must be >= 1, got 0
    """
    tpb = THREADS_PER_BLOCK if threads_per_block is None else _check_threads(threads_per_block)
    blocks = max(1, min(MAX_BLOCKS, (int(n) + tpb - 1) // tpb))
    return blocks, tpb


def to_device(x, stream=0):
    """Device copy of a host array (counted); a device array is returned as is.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.cuda import to_device, to_host
    >>> d = to_device(np.arange(4.0))  # doctest: +SKIP
    >>> to_host(d).tolist()  # doctest: +SKIP
    [0.0, 1.0, 2.0, 3.0]
    """
    cuda = cuda_api()
    if is_device_array(x):
        return x
    arr = np.ascontiguousarray(x)
    count("h2d", arr.nbytes)
    return cuda.to_device(arr, stream=stream)


def to_host(x, out=None):
    """Host copy of a device array (counted) into ``out`` when given; host arrays pass through.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.cuda import to_host
    >>> x = np.arange(3.0)
    >>> to_host(x) is x  # a host array passes through, nothing copied
    True
    >>> out = np.zeros(3)
    >>> to_host(x, out=out) is out, out.tolist()
    (True, [0.0, 1.0, 2.0])
    """
    if not is_device_array(x):
        if out is not None and out is not x:
            out[...] = x
            return out
        return x
    count("d2h", x.nbytes)
    if out is None:
        return x.copy_to_host()
    if out.flags.c_contiguous:
        x.copy_to_host(out)
        return out
    out[...] = x.copy_to_host()
    return out


def device_empty(shape, dtype):
    """Uninitialised device array."""
    return cuda_api().device_array(shape, dtype=dtype)


def dev(x, cache_key=None, version=None):
    """Device view of ``x``: as is when already on the device, cached when keyed, else copied."""
    if is_device_array(x):
        return x
    if cache_key is not None:
        return device_cache.get(cache_key, x, version)
    return to_device(x)


def device_params(params):
    """``params`` (a :class:`~fastsched.goodput.GoodputParams`) with its arrays on the device.

    One model: ``perf`` as a device float64[7], the other fields as Python floats and a bool (the
    types every launch passes, so each kernel compiles once). ``J`` models: every field a device
    array.

    Examples
    --------
    >>> from fastsched.goodput import GoodputFunction
    >>> p = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32).kernel_params
    >>> device_params(p).perf.shape  # doctest: +SKIP
    (7,)
    """

    def on_device(a, dtype=None):
        return a if is_device_array(a) else to_device(np.ascontiguousarray(a, dtype=dtype))

    if not is_device_array(params.grad_sqr) and np.ndim(params.grad_sqr) == 0:
        return GoodputParams(
            on_device(params.perf, np.float64), *(float(v) for v in params[1:7]), bool(params.accumulation)
        )
    return GoodputParams(*(on_device(a) for a in params))


def out_pair(host_or_dev, shape, dtype):
    """(device buffer, host target or None): a device output is written in place."""
    if host_or_dev is not None and is_device_array(host_or_dev):
        return host_or_dev, None
    return device_empty(shape, dtype), host_or_dev


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

    Examples
    --------
    >>> from fastsched.cuda import DeviceCache
    >>> cache = DeviceCache(max_bytes=1 << 20)
    >>> len(cache)
    0
    """

    def __init__(self, max_bytes: int = 1 << 30):
        self.max_bytes = int(max_bytes)
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key, host, version=None):
        """Device copy of ``host`` cached under ``key`` (see the class docstring).

        Examples
        --------
        >>> import numpy as np
        >>> cache = DeviceCache(max_bytes=1 << 20)
        >>> table = np.ones(8)
        >>> a = cache.get("table", table, version=1)  # doctest: +SKIP
        >>> cache.get("table", table, version=1) is a, cache.hits, cache.misses  # doctest: +SKIP
        (True, 1, 1)
        """
        arr = np.asarray(host)
        sig = (version, arr.shape, arr.dtype.str)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] == sig:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit[1]
        d = to_device(arr)
        with self._lock:
            self.misses += 1
            self._entries[key] = (sig, d)
            self._entries.move_to_end(key)
            total = sum(e[1].nbytes for e in self._entries.values())
            while total > self.max_bytes and len(self._entries) > 1:
                _, (_, old) = self._entries.popitem(last=False)
                total -= old.nbytes
        return d

    def clear(self) -> None:
        """Drop every entry (frees the device memory once no caller holds the arrays).

        Examples
        --------
        >>> cache = DeviceCache(max_bytes=1 << 20)
        >>> cache.clear()
        >>> len(cache), cache.hits, cache.misses
        (0, 0, 0)
        """
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


#: Process-wide cache used by the ``cache_key`` options of the entry points.
device_cache = DeviceCache()


class StagingBuffers:
    """Reusable pinned host buffers and device buffers for streaming large host inputs in chunks.

    A chunked launch copies chunk ``k + 1`` host->pinned->device on one stream while chunk
    ``k`` computes on another, so copies overlap kernels; pinned memory also copies at full
    PCIe bandwidth (pageable copies go through a driver bounce buffer). Buffers are allocated
    once per (slot, dtype) at ``chunk`` elements and reused by every later call of the process.

    Parameters
    ----------
    chunk : int
        Elements per chunk.

    Examples
    --------
    >>> from fastsched.cuda import StagingBuffers
    >>> StagingBuffers(chunk=1 << 20).chunk
    1048576
    """

    def __init__(self, chunk: int = 1 << 22):
        self.chunk = int(chunk)
        self._lock = threading.Lock()
        #: Held by a streamed call for its whole duration: the buffers are shared.
        self.in_use = threading.Lock()
        self._host: dict = {}
        self._dev: dict = {}

    def host(self, slot, dtype):
        """Pinned host buffer ``slot`` of ``dtype`` (``chunk`` elements).

        Examples
        --------
        >>> import numpy as np
        >>> bufs = StagingBuffers(chunk=1024)
        >>> h = bufs.host(0, np.float64)  # doctest: +SKIP
        >>> h.shape, bufs.host(0, np.float64) is h  # doctest: +SKIP
        ((1024,), True)
        """
        key = (slot, np.dtype(dtype).str)
        with self._lock:
            buf = self._host.get(key)
            if buf is None:
                buf = cuda_api().pinned_array(self.chunk, dtype=dtype)
                self._host[key] = buf
            return buf

    def device(self, slot, dtype):
        """Device buffer ``slot`` of ``dtype`` (``chunk`` elements).

        Examples
        --------
        >>> import numpy as np
        >>> bufs = StagingBuffers(chunk=1024)
        >>> d = bufs.device(0, np.float32)  # doctest: +SKIP
        >>> d.shape, bufs.device(0, np.float32) is d  # doctest: +SKIP
        ((1024,), True)
        """
        key = (slot, np.dtype(dtype).str)
        with self._lock:
            buf = self._dev.get(key)
            if buf is None:
                buf = device_empty(self.chunk, dtype)
                self._dev[key] = buf
            return buf


#: Process-wide staging buffers of the chunked host paths.
staging = StagingBuffers()

#: Host inputs at least this long (elements) are streamed in chunks through ``staging``.
STREAM_MIN = 1 << 20


def stream_chunks(inputs, outputs, launch, chunk=None):
    """Run ``launch`` over host arrays chunk by chunk, copies overlapping kernels.

    Parameters
    ----------
    inputs, outputs : sequences of 1-D host arrays of equal length
        Read and filled in place.
    launch : callable
        ``launch(stream, d_inputs, d_outputs, offset)`` enqueues the kernel of one chunk
        (device views of ``len(chunk)`` elements) on ``stream``.
    chunk : int, optional
        Elements per chunk (default: the staging buffers' size).

    Two streams alternate: while chunk ``k`` computes, chunk ``k + 1`` is packed into pinned
    memory by the host and copied up, and chunk ``k - 1`` copies down. A slot's buffers are
    reused only after its previous chunk's results reached ``outputs``.
    """
    bufs = staging if chunk is None or int(chunk) == staging.chunk else StagingBuffers(int(chunk))
    with bufs.in_use:  # one streamed call at a time per set of buffers (threads share them)
        _ChunkStream(bufs, outputs).run(inputs, launch)


class _ChunkStream:
    """Two streams, two buffer slots; a slot is reused only after its last chunk drained."""

    def __init__(self, bufs, outputs):
        cuda = cuda_api()
        self.bufs = bufs
        self.outputs = outputs
        self.streams = [cuda.stream(), cuda.stream()]
        self.pending = [None, None]  # (start, m) of the chunk last launched on each slot

    def drain(self, slot):
        if self.pending[slot] is None:
            return
        start, m = self.pending[slot]
        self.streams[slot].synchronize()
        for c, out in enumerate(self.outputs):
            out[start : start + m] = self.bufs.host((slot, "out", c), out.dtype)[:m]
        self.pending[slot] = None

    def run(self, inputs, launch):
        bufs, size = self.bufs, self.bufs.chunk
        for k, start in enumerate(range(0, int(inputs[0].shape[0]), size)):
            slot = k % 2
            self.drain(slot)
            m = min(size, int(inputs[0].shape[0]) - start)
            stream = self.streams[slot]
            d_in = []
            for c, arr in enumerate(inputs):
                pinned = bufs.host((slot, "in", c), arr.dtype)
                pinned[:m] = arr[start : start + m]
                d = bufs.device((slot, "in", c), arr.dtype)[:m]
                d.copy_to_device(pinned[:m], stream=stream)
                count("h2d", m * arr.dtype.itemsize)
                d_in.append(d)
            d_out = [bufs.device((slot, "out", c), out.dtype)[:m] for c, out in enumerate(self.outputs)]
            launch(stream, d_in, d_out, start)
            for c, out in enumerate(self.outputs):
                d_out[c].copy_to_host(bufs.host((slot, "out", c), out.dtype)[:m], stream=stream)
                count("d2h", m * out.dtype.itemsize)
            self.pending[slot] = (start, m)
        self.drain(0)
        self.drain(1)
