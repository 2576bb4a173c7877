"""``PerfParams``, ``GradParams`` and ``GoodputFunction``: a drop-in for ``adaptdl.goodput``.

Goodput = throughput x statistical efficiency (Pollux, OSDI'21):

* throughput of ``num_replicas`` replicas on ``num_nodes`` nodes, each processing
  ``atomic_bsz`` samples per micro-step with ``accum_steps`` extra accumulation steps::

      accum_time   = alpha_c + beta_c * atomic_bsz
      network_time = alpha + beta * max(num_replicas - 2, 1e-8)     (inter- or intra-node link)
      optim_time   = (accum_time**gamma + network_time**gamma) ** (1/gamma)
      throughput   = num_replicas * atomic_bsz * (accum_steps + 1)
                     / (accum_steps * accum_time + optim_time)

* efficiency of a total batch size ``B`` relative to ``init_batch_size`` ``B0`` with gradient
  statistics ``sqr``/``var``: ``(var + sqr) / (var * B0/B + sqr) * B0/B``.

This module is the thin typed face: it validates and converts arguments once, then calls
the kernels in :mod:`fastsched.goodput._kernels`.
"""

from __future__ import annotations

import collections
import numbers

import numpy as np

from fastsched import _backend as B
from fastsched import _validate as V
from fastsched._jit import parallel_region
from fastsched.goodput import _kernels as gk
from fastsched.goodput._formulas import MAX_BATCH
from fastsched.goodput._types import GoodputParams

__all__ = ["PerfParams", "GradParams", "GoodputFunction"]

PerfParams = collections.namedtuple(
    "PerfParams", ["alpha_c", "beta_c", "alpha_n", "beta_n", "alpha_r", "beta_r", "gamma"]
)
PerfParams.__doc__ = """Throughput-model parameters.

alpha_c, beta_c : compute time per micro-step is ``alpha_c + beta_c * atomic_bsz``.
alpha_n, beta_n : inter-node all-reduce latency and per-replica retrogression.
alpha_r, beta_r : intra-node all-reduce latency and per-replica retrogression.
gamma : overlap between compute and communication, in [1, 10] (1 = none, 10 ~ perfect).

Examples
--------
>>> from fastsched import PerfParams
>>> perf = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
>>> perf.alpha_c + perf.beta_c * 64   # seconds per micro-step of 64 samples
0.48452
"""

GradParams = collections.namedtuple("GradParams", ["sqr", "var"])
GradParams.__doc__ = """Gradient statistics: squared gradient norm ``sqr`` and variance ``var``.

Examples
--------
>>> from fastsched import GradParams
>>> GradParams(sqr=0.00136, var=0.000502)
GradParams(sqr=0.00136, var=0.000502)
"""

# Entries kept by each per-instance memo before it is cleared (bounded state).
_MEMO_SIZE = 4096


# (name, low, high) of each perf parameter's check, in PerfParams order.
_PERF_CHECKS = tuple(
    (f"perf_params.{name}", 1.0 if name == "gamma" else 0.0, 10.0 if name == "gamma" else None)
    for name in PerfParams._fields
)


def _check_perf_params(perf_params) -> np.ndarray:
    """Return the parameters as a new float64[7] (or raise naming the field).

    Examples
    --------
    >>> _check_perf_params((0.5, 0.25, 0, 0, 0, 0, 2)).tolist()
    [0.5, 0.25, 0.0, 0.0, 0.0, 0.0, 2.0]
    """
    if not isinstance(perf_params, tuple):  # PerfParams included
        try:
            perf_params = tuple(perf_params)
        except TypeError:
            raise TypeError(
                f"perf_params must be a PerfParams or a sequence of 7 numbers, got {type(perf_params).__name__}"
            ) from None
    if len(perf_params) != 7:
        raise ValueError(f"perf_params must have 7 entries, got {len(perf_params)}")
    check = V.check_finite_scalar
    return np.array(
        # Positional arguments: this runs at every refit of a simulated job.
        [check(name, v, low, high) for (name, low, high), v in zip(_PERF_CHECKS, perf_params, strict=True)],
        dtype=np.float64,
    )


def _check_grad_params(grad_params) -> tuple[float, float]:
    """Return ``(sqr, var)`` as finite non-negative floats (or raise naming the field).

    Examples
    --------
    >>> _check_grad_params((0.5, 4))
    (0.5, 4.0)
    """
    try:
        values = grad_params if type(grad_params) is tuple else tuple(grad_params)
    except TypeError:
        raise TypeError(
            f"grad_params must be a GradParams or a pair of numbers, got {type(grad_params).__name__}"
        ) from None
    if len(values) != 2:
        raise ValueError(f"grad_params must have 2 entries (sqr, var), got {len(values)}")
    # Positional arguments: this runs at every epoch crossing of a simulated job.
    check = V.check_finite_scalar
    return check("grad_params.sqr", values[0], 0.0), check("grad_params.var", values[1], 0.0)


def _search_bounds(init, init_batch_size, max_batch_size, atomic_bsz_range) -> tuple[float, float, float]:
    """``(max_bsz, min_atomic, max_atomic)`` of the batch-size search, checked (or raise naming the field).

    ``init`` is the checked ``init_batch_size`` (as a float); the original is named in errors.
    Depends on nothing else of a model, so a simulated job reuses it across its fits.

    Examples
    --------
    >>> _search_bounds(32.0, 32, 512, (None, 64))
    (512.0, 1.0, 64.0)
    """
    if max_batch_size is None:
        max_bsz = init
    else:
        max_bsz = V.check_finite_scalar("max_batch_size", max_batch_size, low=0.0, low_open=True, high=MAX_BATCH)
    if init > max_bsz:
        raise ValueError(f"init_batch_size ({init_batch_size}) must be <= max_batch_size ({max_batch_size})")
    if atomic_bsz_range is None:
        lo = hi = None
    else:
        try:
            lo, hi = atomic_bsz_range
        except (TypeError, ValueError):
            raise TypeError("atomic_bsz_range must be a pair (min, max); either may be None") from None
    # AdaptDL treats a falsy bound (None or 0) as "unbounded".
    bound = {"low": 0.0, "low_open": True, "high": MAX_BATCH}
    min_atomic = 1.0 if not lo else V.check_finite_scalar("atomic_bsz_range[0]", lo, **bound)
    max_atomic = max_bsz if not hi else V.check_finite_scalar("atomic_bsz_range[1]", hi, **bound)
    if lo and hi and min_atomic > max_atomic:
        raise ValueError(f"atomic_bsz_range has min ({min_atomic:g}) > max ({max_atomic:g})")
    # An implicit max (max_batch_size) below the min is not an error: as in AdaptDL, no
    # batch size is then valid and the grid search reports goodput 0.
    return max_bsz, min_atomic, max_atomic


_ELEMENTWISE_ERRORS = {
    gk.BAD_NODES: "num_nodes must be finite and 1 <= num_nodes <= num_replicas",
    gk.BAD_REPLICAS: "num_replicas must be finite and >= 1",
    gk.BAD_ATOMIC: "atomic_bsz must be finite and > 0",
    gk.BAD_ACCUM: "accum_steps must be finite and >= 0",
    gk.OVERFLOW: "inputs are too large: the throughput model overflows float64 (check atomic_bsz and the parameters)",
    gk.BAD_BATCH: "total batch size num_replicas * atomic_bsz * (accum_steps + 1) must be >= init_batch_size ({init})",
}


def _is_plain_scalar(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


class GoodputFunction:
    """Goodput model of one training job (AdaptDL's ``GoodputFunction``).

    Parameters
    ----------
    perf_params : PerfParams or sequence of 7 floats
        Throughput-model parameters; all finite and non-negative, ``gamma`` in [1, 10].
    grad_params : GradParams or (sqr, var)
        Gradient statistics, finite and non-negative.
    init_batch_size : int
        The batch size the job was tuned for (efficiency 1); positive, at most 2**53.

    Notes
    -----
    Instances are immutable after construction and safe to share between threads.

    Examples
    --------
    >>> from fastsched import GoodputFunction, GradParams, PerfParams
    >>> perf = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
    >>> fn = GoodputFunction(perf, GradParams(sqr=0.00136, var=0.000502), init_batch_size=128)
    >>> round(fn.evaluate(1, 4, 64, 0), 2)   # 1 node, 4 replicas of 64 samples, no accumulation
    299.15
    >>> fn.optimize(1, 4, max_batch_size=1280, atomic_bsz_range=(64, 256))[1:]   # best atomic_bsz, accum_steps
    (64, 0)
    """

    __slots__ = (
        "_perf_params",
        "_grad_params",
        "_init_batch_size",
        "_perf",
        "_sqr",
        "_var",
        "_init",
        "_bounds_cache",
        "_scalar_memo",
        "_kernel_params",
    )

    def __init__(self, perf_params, grad_params, init_batch_size):
        perf = _check_perf_params(perf_params)
        sqr, var = _check_grad_params(grad_params)
        init = V.check_finite_scalar("init_batch_size", init_batch_size, low=0.0, low_open=True, high=MAX_BATCH)
        self._set_checked(perf, sqr, var, init, init_batch_size)

    @classmethod
    def _from_checked(cls, perf, sqr, var, init, init_batch_size) -> GoodputFunction:
        """Build it from what the constructor's checks make of its arguments (a caller that ran them)."""
        fn = cls.__new__(cls)
        fn._set_checked(perf, sqr, var, init, init_batch_size)
        return fn

    def _set_checked(self, perf, sqr, var, init, init_batch_size) -> None:
        self._perf, self._sqr, self._var, self._init, self._init_batch_size = perf, sqr, var, init, init_batch_size
        self._perf_params, self._grad_params = PerfParams(*(float(v) for v in perf)), GradParams(sqr, var)
        perf.flags.writeable = False
        # The default grid search (what _grid_bounds(None, None) gives), no accumulation.
        self._kernel_params = GoodputParams(perf, sqr, var, init, init, 1.0, init, False)
        # Small bounded memos for the scalar path of optimize() (a scheduler's decision loop
        # asks the same few questions every round); keys hold only validated arguments.
        self._bounds_cache, self._scalar_memo = {}, {}

    # -- read-only views -------------------------------------------------------------------
    @property
    def perf_params(self) -> PerfParams:
        """The throughput-model parameters."""
        return self._perf_params

    @property
    def grad_params(self) -> GradParams:
        """The gradient statistics."""
        return self._grad_params

    @property
    def init_batch_size(self):
        """The initial (reference) total batch size."""
        return self._init_batch_size

    @property
    def kernel_params(self) -> GoodputParams:
        """The model as the kernels take it, with the default grid search (see :meth:`kernel_params_for`).

        For launchers on other targets (e.g. :mod:`fastsched.cuda`); see
        :class:`~fastsched.goodput.GoodputParams`.

        Examples
        --------
        >>> from fastsched.goodput import GoodputFunction
        >>> p = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32).kernel_params
        >>> p.perf.shape, p.init_bsz, p.max_bsz, p.accumulation
        ((7,), 32.0, 32.0, False)
        """
        return self._kernel_params

    def kernel_params_for(self, max_batch_size=None, atomic_bsz_range=None, accumulation=False) -> GoodputParams:
        """Return the model with the validated grid search of :meth:`optimize` for these arguments.

        Parameters
        ----------
        max_batch_size, atomic_bsz_range, accumulation
            As for :meth:`optimize`.

        Returns
        -------
        GoodputParams
            The model's fields, the bounds ``(max_bsz, min_atomic, max_atomic)`` as floats and
            ``accumulation`` as a bool.

        Examples
        --------
        >>> from fastsched.goodput import GoodputFunction
        >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
        >>> g.kernel_params_for(512, (None, 64))[4:]
        (512.0, 1.0, 64.0, False)
        """
        return GoodputParams(
            *self._kernel_params[:4], *self._grid_bounds(max_batch_size, atomic_bsz_range), bool(accumulation)
        )

    def __repr__(self) -> str:
        return f"GoodputFunction({self._perf_params!r}, {self._grad_params!r}, {self._init_batch_size!r})"

    def __reduce__(self):
        return (GoodputFunction, (self._perf_params, self._grad_params, self._init_batch_size))

    # -- elementwise model -----------------------------------------------------------------
    def __call__(self, num_nodes, num_replicas, atomic_bsz, accum_steps, backend="auto"):
        """Alias of :meth:`evaluate`."""
        return self.evaluate(num_nodes, num_replicas, atomic_bsz, accum_steps, backend=backend)

    def _elementwise(self, num_nodes, num_replicas, atomic_bsz, accum_steps, with_efficiency, backend="auto"):
        """Shared body of evaluate/throughput: convert, broadcast, run the fused kernel."""
        names = ("num_nodes", "num_replicas", "atomic_bsz", "accum_steps")
        raw = (num_nodes, num_replicas, atomic_bsz, accum_steps)
        if B.any_device(num_nodes, num_replicas, atomic_bsz, accum_steps):
            B.resolve_backend("cuda" if backend == "auto" else backend, 0, "evaluate")
            if backend == "cpu":
                raise TypeError("backend='cpu' cannot take device arrays; copy them to the host first")
            result, status = B.cuda_launchers().evaluate_device(self._kernel_params, raw, with_efficiency)
            if status != gk.OK:
                raise ValueError(_ELEMENTWISE_ERRORS[status].format(init=self._init_batch_size))
            return result
        arrays = [V.real_array(name, value) for name, value in zip(names, raw, strict=True)]
        shapes = [a.shape for a in arrays]
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(
                f"num_nodes, num_replicas, atomic_bsz and accum_steps have shapes {shapes} that do not broadcast"
            ) from None
        # All-integer input stays int64 (no conversion copies); anything else becomes float64.
        dtype = np.int64 if all(a.dtype.kind in "iu" for a in arrays) else np.float64
        flat = [
            np.ascontiguousarray(a if a.shape == shape else np.broadcast_to(a, shape), dtype=dtype).reshape(-1)
            for a in arrays
        ]
        out = np.empty(flat[0].shape[0], dtype=np.float64)
        # Same signature and status codes on both backends (the CUDA one validates on the device).
        on_gpu = B.resolve_backend(backend, out.shape[0], "evaluate") == "cuda"
        kernel = B.cuda_launchers().checked_elementwise if on_gpu else gk.elementwise
        with parallel_region():
            status = kernel(self._kernel_params, *flat, with_efficiency, out)
        if status != gk.OK:
            raise ValueError(_ELEMENTWISE_ERRORS[status].format(init=self._init_batch_size))
        return float(out[0]) if len(shape) == 0 else out.reshape(shape)

    def evaluate(self, num_nodes, num_replicas, atomic_bsz, accum_steps, backend="auto"):
        """Goodput (useful samples per second) of the given configurations.

        Parameters
        ----------
        num_nodes, num_replicas : int or array_like
            Nodes used and replicas placed (``1 <= num_nodes <= num_replicas``).
        atomic_bsz : int or array_like
            Per-replica micro-batch size (positive).
        accum_steps : int or array_like
            Gradient-accumulation steps per optimizer step (>= 0).
        backend : {"auto", "cpu", "cuda"}
            Where to compute; ``"auto"`` uses CUDA only for at least
            ``fastsched._backend.auto_threshold("evaluate")`` configurations on a machine with
            a GPU (never, by default: transfers cost more than the CPU kernel). Device arrays
            (CuPy, PyTorch CUDA tensors, numba device arrays; equal shapes, any real dtype)
            always run on the GPU and give a device array of the caller's type.

        Returns
        -------
        float or numpy.ndarray
            A Python float for scalar input, else an array of the broadcast shape.

        Raises
        ------
        ValueError
            On NaN/inf/out-of-range input, non-broadcasting shapes, or a total batch size
            ``num_replicas * atomic_bsz * (accum_steps + 1)`` below ``init_batch_size``.
        TypeError
            On non-numeric input.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsched import GoodputFunction, GradParams, PerfParams
        >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
        ...                      GradParams(0.00136, 0.000502), 128)
        >>> round(fn.evaluate(1, 4, 64, 0), 2)
        299.15
        >>> np.round(fn.evaluate([1, 2], [4, 8], 64, [0, 1]), 2)   # arrays broadcast
        array([299.15, 165.97])
        >>> fn.evaluate(1, 4, 16, 0)   # 4 x 16 samples is below the initial batch size
        Traceback (most recent call last):
            ...
        ValueError: total batch size num_replicas * atomic_bsz * (accum_steps + 1) must be >= init_batch_size (128)
        """
        return self._elementwise(num_nodes, num_replicas, atomic_bsz, accum_steps, True, backend)

    def throughput(self, num_nodes, num_replicas, atomic_bsz, accum_steps, backend="auto"):
        """Return the samples processed per second, ignoring statistical efficiency.

        Same parameters and shape rules as :meth:`evaluate` (no batch-size floor).

        Examples
        --------
        >>> from fastsched import GoodputFunction, GradParams, PerfParams
        >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
        ...                      GradParams(0.00136, 0.000502), 128)
        >>> round(fn.throughput(1, 4, 64, 0), 2)
        517.64
        """
        return self._elementwise(num_nodes, num_replicas, atomic_bsz, accum_steps, False, backend)

    def efficiency(self, batch_size):
        """Statistical efficiency of total batch size(s) ``batch_size`` (> 0).

        1 at ``init_batch_size``, decreasing in the batch size (above 1 below the initial
        batch). A float for scalar input, else an array of the input's shape.

        Examples
        --------
        >>> from fastsched import GoodputFunction, GradParams, PerfParams
        >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
        ...                      GradParams(0.00136, 0.000502), 128)
        >>> fn.efficiency(128)
        1.0
        >>> fn.efficiency([64, 128, 256]).round(3)
        array([1.575, 1.   , 0.578])
        """
        if _is_plain_scalar(batch_size):
            b = V.check_finite_scalar("batch_size", batch_size, low=0.0, low_open=True)
            out = np.array([gk.efficiency(self._sqr, self._var, self._init, b)])
            shape = None
        else:
            arr = V.as_float_array("batch_size", batch_size, low=0.0, low_open=True)
            out = np.empty(arr.size, dtype=np.float64)
            shape = arr.shape
            with parallel_region():
                kernel = gk.sized(gk.efficiency_kernel, out.shape[0], gk.SERIAL_MAX_ELEMENTS)
                kernel(self._kernel_params, np.ascontiguousarray(arr).reshape(-1), out)
        if not np.isfinite(out).all():
            raise ValueError("batch_size is too small: efficiency overflows float64")
        return float(out[0]) if not shape else out.reshape(shape)

    # -- batch-size optimisation -----------------------------------------------------------
    def _grid_bounds(self, max_batch_size, atomic_bsz_range):
        try:
            key = (max_batch_size, None if atomic_bsz_range is None else tuple(atomic_bsz_range))
            hit = self._bounds_cache.get(key)
        except TypeError:  # unhashable or not a sequence: validate the slow way
            key, hit = None, None
        if hit is not None:
            return hit
        bounds = _search_bounds(self._init, self._init_batch_size, max_batch_size, atomic_bsz_range)
        if key is not None:
            if len(self._bounds_cache) >= _MEMO_SIZE:
                self._bounds_cache.clear()
            self._bounds_cache[key] = bounds
        return bounds

    def optimize(
        self,
        num_nodes,
        num_replicas,
        max_batch_size=None,
        atomic_bsz_range=None,
        accumulation=False,
        backend="auto",
    ):
        """Best goodput over total batch sizes for each (num_nodes, num_replicas).

        Searches 50 geometrically spaced total batch sizes between
        ``max(init_batch_size, min_atomic_bsz * num_replicas)`` and ``max_batch_size``
        (AdaptDL's grid and rules, including at least one accumulation step for a single
        replica above the initial batch size when ``accumulation`` is on).

        Parameters
        ----------
        num_nodes, num_replicas : int or array_like of int
            ``1 <= num_nodes <= num_replicas``; broadcast against each other.
        max_batch_size : float, optional
            Largest total batch size, at most 2**53 (batch sizes are exact sample counts);
            defaults to ``init_batch_size``.
        atomic_bsz_range : (min, max), optional
            Bounds on the per-replica micro-batch (at most 2**53); ``None``/0 entries mean
            unbounded.
        accumulation : bool
            Whether gradient accumulation may be used.
        backend : {"auto", "cpu", "cuda"}
            Where to run the grid search; ``"auto"`` uses CUDA only for at least
            ``fastsched._backend.auto_threshold("optimize")`` distinct (multi-node, replicas)
            keys on a machine with a GPU. Scalar queries always run on the CPU. Device arrays
            always run on the GPU (every configuration searched, no key de-duplication) and
            give device arrays of the caller's type.

        Returns
        -------
        goodput, atomic_bsz, accum_steps
            Python scalars for scalar input, else arrays of the broadcast shape
            (float64, int64, int64). Configurations with no valid batch size get goodput 0.

        Examples
        --------
        >>> import numpy as np
        >>> from fastsched import GoodputFunction, GradParams, PerfParams
        >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
        ...                      GradParams(0.00136, 0.000502), 128)
        >>> goodput, atomic_bsz, accum_steps = fn.optimize(
        ...     2, 8, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True)
        >>> round(goodput, 2), atomic_bsz, accum_steps
        (305.72, 64, 0)
        >>> goodput, atomic_bsz, _ = fn.optimize(np.array([1, 1, 2]), np.array([1, 4, 8]), 1280, (64, 256))
        >>> atomic_bsz
        array([128,  64,  64])
        """
        max_bsz, min_atomic, max_atomic = self._grid_bounds(max_batch_size, atomic_bsz_range)
        accumulation = bool(accumulation)
        if _is_plain_scalar(num_nodes) and _is_plain_scalar(num_replicas):
            if backend != "auto":
                B.resolve_backend(backend, 1)  # validates the option ("cuda" without a GPU raises)
            # Scalar fast path: no array conversion, one serial kernel call, memoised on the
            # validated (multi-node, replicas, bounds) key since the result depends on nothing else.
            n = V.check_int_scalar("num_nodes", num_nodes, low=1)
            r = V.check_int_scalar("num_replicas", num_replicas, low=1)
            if n > r:
                raise ValueError(f"num_nodes ({n}) must be <= num_replicas ({r})")
            key = (n > 1, r, max_bsz, min_atomic, max_atomic, accumulation)
            hit = self._scalar_memo.get(key)
            if hit is not None:
                return hit
            result = gk.best_config(
                self._perf,
                self._sqr,
                self._var,
                self._init,
                n > 1,
                r,
                max_bsz,
                min_atomic,
                max_atomic,
                accumulation,
            )
            if len(self._scalar_memo) >= _MEMO_SIZE:
                self._scalar_memo.clear()
            self._scalar_memo[key] = result
            return result
        if B.any_device(num_nodes, num_replicas):
            B.resolve_backend("cuda" if backend == "auto" else backend, 0, "optimize")
            if backend == "cpu":
                raise TypeError("backend='cpu' cannot take device arrays; copy them to the host first")
            params = GoodputParams(*self._kernel_params[:4], max_bsz, min_atomic, max_atomic, accumulation)
            result = B.cuda_launchers().optimize_device(params, num_nodes, num_replicas)
            if isinstance(result, str):
                raise ValueError(result)
            return result
        nodes = V.as_int_array("num_nodes", num_nodes, low=1)
        replicas = V.as_int_array("num_replicas", num_replicas, low=1)
        try:
            shape = np.broadcast_shapes(nodes.shape, replicas.shape)
        except ValueError:
            raise ValueError(
                f"num_nodes and num_replicas have shapes {nodes.shape} and {replicas.shape} that do not broadcast"
            ) from None
        nodes = np.ascontiguousarray(np.broadcast_to(nodes, shape)).reshape(-1)
        replicas = np.ascontiguousarray(np.broadcast_to(replicas, shape)).reshape(-1)
        if np.any(nodes > replicas):
            raise ValueError("num_nodes must be <= num_replicas")
        params = GoodputParams(*self._kernel_params[:4], max_bsz, min_atomic, max_atomic, accumulation)
        goodput, atomic, accum = self._optimize_flat(nodes, replicas, params, backend)
        if len(shape) == 0:
            return float(goodput[0]), int(atomic[0]), int(accum[0])
        return goodput.reshape(shape), atomic.reshape(shape), accum.reshape(shape)

    def _optimize_flat(self, nodes, replicas, params, backend="cpu"):
        """Grid search of ``params`` over validated flat int64 arrays; solves each distinct key once."""
        size = nodes.shape[0]
        max_rep = int(replicas.max())
        # On the GPU every configuration is searched directly when keys repeat little (at most
        # 2 * (max_rep + 1) distinct keys against `size` configurations): the host-side
        # de-duplication pass would then cost more than it saves on the device.
        # (The auto threshold counts distinct keys, of which there are at most 2 * (max_rep + 1).)
        on_gpu = B.resolve_backend(backend, min(size, 2 * (max_rep + 1)), "optimize") == "cuda"
        if on_gpu and 2 * (max_rep + 1) > size // 2:
            search = B.cuda_launchers().optimize_keys
            kg = np.empty(size, dtype=np.float64)
            ka = np.empty(size, dtype=np.int64)
            ks = np.empty(size, dtype=np.int64)
            search(params, nodes > 1, replicas, kg, ka, ks)
            return kg, ka, ks
        if max_rep <= 4 * size + 64:
            key_of, key_multi, key_rep = gk.dedupe_keys(nodes, replicas, max_rep)
        else:  # huge, sparse replica values: a direct-address table would be wasteful
            key_of = None
            key_multi, key_rep = nodes > 1, replicas
        nk = key_rep.shape[0]
        kg = np.empty(nk, dtype=np.float64)
        ka = np.empty(nk, dtype=np.int64)
        ks = np.empty(nk, dtype=np.int64)
        # Same signature on both backends; the GPU pays off only for many distinct keys.
        on_gpu = B.resolve_backend(backend, nk, "optimize") == "cuda"
        if on_gpu:
            search = B.cuda_launchers().optimize_keys
        else:
            search = gk.sized(gk.optimize_keys_kernel, nk, gk.SERIAL_MAX_KEYS)
        with parallel_region():
            search(params, key_multi, key_rep, kg, ka, ks)
            if key_of is None:
                return kg, ka, ks
            goodput = np.empty(size, dtype=np.float64)
            atomic = np.empty(size, dtype=np.int64)
            accum = np.empty(size, dtype=np.int64)
            gk.sized(gk.gather_kernel, size, gk.SERIAL_MAX_ELEMENTS)(key_of, kg, ka, ks, goodput, atomic, accum)
        return goodput, atomic, accum
