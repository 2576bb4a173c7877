"""Many goodput models in one call: ``ModelBatch``.

A scheduler's batch is many jobs, each with its own goodput model (and, on a heterogeneous
cluster, one model per job and GPU type). :class:`ModelBatch` holds J models as arrays
(PerfParams rows, GradParams rows, initial and maximum batch sizes, micro-batch bounds,
accumulation flags) and evaluates them in one kernel launch on either backend:

* :meth:`ModelBatch.speedup_tables` -- every model's speedup table ``[J, 2, R + 1]``
  (what ``SpeedupFunction.table`` gives for each model, in one launch);
* :meth:`ModelBatch.optimize` -- the batch-size grid search of configuration ``i`` under
  model ``model[i]``;
* :meth:`ModelBatch.optimize_matrix` -- every model at every configuration, ``[J, n]`` (a
  job x GPU-type x configuration matrix, with the job and type axes flattened into models);
* :meth:`ModelBatch.evaluate` / :meth:`ModelBatch.throughput` -- elementwise, model per row.

Each model's numbers are bit-identical on the CPU to the same model in a
:class:`~fastsched.goodput.GoodputFunction` (same scalar formulas).
"""

from __future__ import annotations

import numpy as np

from fastsched import _backend as B
from fastsched import _validate as V
from fastsched._jit import parallel_region
from fastsched.goodput import _batch_kernels as bk
from fastsched.goodput._formulas import MAX_BATCH
from fastsched.goodput._kernels import SERIAL_MAX_ELEMENTS, SERIAL_MAX_KEYS, sized
from fastsched.goodput._types import GoodputParams
from fastsched.goodput.model import PerfParams

__all__ = ["ModelBatch"]


def _column(name, value, count, *, low=None, low_open=False, default=None):
    if value is None:
        return np.array(default, dtype=np.float64)
    # Batch sizes only: at most MAX_BATCH, so the grid search's int64 results cannot overflow.
    arr = V.as_float_array(name, value, low=low, low_open=low_open, high=MAX_BATCH)
    arr = np.broadcast_to(arr, (count,)) if arr.ndim == 0 else arr
    if arr.shape != (count,):
        raise ValueError(f"{name} must be a scalar or have {count} entries (one per model), got shape {arr.shape}")
    return np.array(arr, dtype=np.float64)


def _frozen(*arrays):
    for a in arrays:
        a.flags.writeable = False
    return arrays


class ModelBatch:
    """J goodput models evaluated together (one kernel launch per call).

    Parameters
    ----------
    perf_params : array_like, shape (J, 7)
        One PerfParams row per model (finite, non-negative, gamma in [1, 10]).
    grad_params : array_like, shape (J, 2)
        One (sqr, var) row per model (finite, non-negative).
    init_batch_size : array_like, shape (J,) or scalar
        Initial batch size per model (positive, at most 2**53).
    max_batch_size : array_like, shape (J,) or scalar, optional
        Largest total batch size per model (>= its initial batch size, at most 2**53); default:
        the initial one.
    atomic_bsz_range : array_like, shape (J, 2) or (2,), optional
        Per-replica micro-batch bounds per model; 0 or NaN means unbounded (AdaptDL's ``None``).
    accumulation : bool or array_like of bool, shape (J,)
        Whether gradient accumulation is allowed, per model.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.goodput import GoodputFunction
    >>> from fastsched.goodput.batch import ModelBatch
    >>> perf = [[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], [0.05, 0.02, 0.3, 0.02, 0.02, 0.002, 1.5]]
    >>> batch = ModelBatch(perf, [[0.5, 4.0], [0.1, 1.0]], [32, 64], max_batch_size=[512, 1024])
    >>> tables = batch.speedup_tables(8, backend="cpu")
    >>> tables.shape
    (2, 2, 9)
    >>> g, a, s = batch.optimize([0, 1, 1], [1, 1, 2], [1, 4, 8], backend="cpu")
    >>> bool(g[0] == GoodputFunction(perf[0], (0.5, 4.0), 32).optimize(1, 1, 512)[0])
    True
    """

    def __init__(
        self, perf_params, grad_params, init_batch_size, max_batch_size=None, atomic_bsz_range=None, accumulation=False
    ):
        perf = V.as_float_array("perf_params", perf_params)
        if perf.ndim != 2 or perf.shape[1] != 7 or perf.shape[0] == 0:
            raise ValueError(f"perf_params must have shape (J, 7) with J >= 1, got {perf.shape}")
        count = perf.shape[0]
        for i, name in enumerate(PerfParams._fields):
            col = perf[:, i]
            low, high = (1.0, 10.0) if name == "gamma" else (0.0, None)
            bad = np.flatnonzero((col < low) | (col > high if high is not None else False))
            if bad.size:
                bound = f">= {low}" if high is None else f"in [{low}, {high}]"
                raise ValueError(f"perf_params[{bad[0]}].{name} must be {bound}, got {col[bad[0]]!r}")
        grad = V.as_float_array("grad_params", grad_params, low=0.0)
        if grad.shape != (count, 2):
            raise ValueError(f"grad_params must have shape ({count}, 2), got {grad.shape}")
        init = _column("init_batch_size", init_batch_size, count, low=0.0, low_open=True)
        max_bsz = (
            init.copy()
            if max_batch_size is None
            else _column("max_batch_size", max_batch_size, count, low=0.0, low_open=True)
        )
        bad = np.flatnonzero(init > max_bsz)
        if bad.size:
            j = bad[0]
            raise ValueError(f"init_batch_size[{j}] ({init[j]:g}) must be <= max_batch_size[{j}] ({max_bsz[j]:g})")
        lo = np.ones(count)
        hi = max_bsz.copy()
        if atomic_bsz_range is not None:
            rng = np.asarray(atomic_bsz_range, dtype=np.float64)
            rng = np.broadcast_to(rng, (count, 2)) if rng.shape == (2,) else rng
            if rng.shape != (count, 2):
                raise ValueError(f"atomic_bsz_range must have shape (2,) or ({count}, 2), got {rng.shape}")
            if np.any(np.isinf(rng)) or np.any(rng < 0):
                raise ValueError("atomic_bsz_range entries must be finite and >= 0 (0 or NaN: unbounded)")
            if np.any(rng > MAX_BATCH):
                raise ValueError(f"atomic_bsz_range entries must be <= {MAX_BATCH:.0f} (2**53), got {rng.max()!r}")
            given_lo = np.nan_to_num(rng[:, 0]) > 0
            given_hi = np.nan_to_num(rng[:, 1]) > 0
            lo = np.where(given_lo, np.nan_to_num(rng[:, 0]), 1.0)
            hi = np.where(given_hi, np.nan_to_num(rng[:, 1]), max_bsz)
            bad = np.flatnonzero(given_lo & given_hi & (lo > hi))
            if bad.size:
                raise ValueError(f"atomic_bsz_range[{bad[0]}] has min ({lo[bad[0]]:g}) > max ({hi[bad[0]]:g})")
        acc = np.asarray(accumulation)
        if acc.dtype != np.bool_:
            raise TypeError(f"accumulation must be a bool or an array of bools, got dtype {acc.dtype}")
        acc = np.array(np.broadcast_to(acc, (count,)))
        self._params = GoodputParams(
            *_frozen(
                np.ascontiguousarray(perf, dtype=np.float64),
                grad[:, 0].copy(),
                grad[:, 1].copy(),
                init,
                max_bsz,
                lo,
                hi,
                acc,
            )
        )

    @classmethod
    def from_speedup_functions(cls, speedup_fns):
        """Return the models (and grid settings) behind tabulated SpeedupFunctions, in order.

        Examples
        --------
        >>> from fastsched.goodput import GoodputFunction, SpeedupFunction
        >>> from fastsched.goodput.batch import ModelBatch
        >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
        >>> len(ModelBatch.from_speedup_functions([SpeedupFunction(g, 256, backend="cpu")]))
        1
        """
        rows = []
        for j, fn in enumerate(speedup_fns):
            p = getattr(fn, "kernel_params", None)
            if not isinstance(p, GoodputParams):
                raise TypeError(f"speedup_fns[{j}] is not backed by a fastsched GoodputFunction")
            rows.append(p)
        if not rows:
            raise ValueError("speedup_fns must not be empty")
        return cls(
            [p.perf for p in rows],
            [(p.grad_sqr, p.grad_var) for p in rows],
            [p.init_bsz for p in rows],
            [p.max_bsz for p in rows],
            [(p.min_atomic, p.max_atomic) for p in rows],
            np.array([p.accumulation for p in rows], dtype=np.bool_),
        )

    def __len__(self) -> int:
        return int(self._params.perf.shape[0])

    @property
    def kernel_params(self) -> GoodputParams:
        """The validated model arrays (read-only), for launchers on other targets.

        A :class:`~fastsched.goodput.GoodputParams` of J models: ``perf`` float64[J, 7];
        ``grad_sqr``, ``grad_var``, ``init_bsz``, ``max_bsz``, ``min_atomic``, ``max_atomic``
        float64[J]; ``accumulation`` bool[J].

        Examples
        --------
        >>> from fastsched.goodput.batch import ModelBatch
        >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]], [[0.5, 4.0]], [32])
        >>> b.kernel_params.perf.shape, b.kernel_params.max_bsz
        ((1, 7), array([32.]))
        """
        return self._params

    def _backend(self, backend, size):
        on_gpu = B.resolve_backend(backend, size, "batch") == "cuda"
        return B.cuda_launchers() if on_gpu else None

    def base_goodput(self) -> np.ndarray:
        """Best goodput of every model at one node, one replica (the speedup denominators).

        Examples
        --------
        >>> from fastsched.goodput.batch import ModelBatch
        >>> ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]], [[0.5, 4.0]], [32]).base_goodput().shape
        (1,)
        """
        out = np.empty(len(self))
        with parallel_region():
            sized(bk.base_kernel, len(self), SERIAL_MAX_KEYS)(self._params, out)
        return out

    def speedup_tables(self, max_replicas: int, backend="auto", base=None) -> np.ndarray:
        """Every model's speedup table, ``float64[J, 2, max_replicas + 1]``.

        ``out[j, 0, r]`` is the speedup of ``r`` replicas on one node, ``out[j, 1, r]`` on more
        than one node, relative to model ``j``'s best goodput at one replica (as
        ``SpeedupFunction.table``); ``out[:, :, 0] == 0``. ``base`` (float64[J], optional)
        replaces those denominators.

        Raises
        ------
        ValueError
            When some model has goodput 0 at one replica (no valid batch size).

        Examples
        --------
        >>> from fastsched.goodput.batch import ModelBatch
        >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]], [[0.5, 4.0]], [32], 512)
        >>> float(b.speedup_tables(4, backend="cpu")[0, 0, 1])
        1.0
        """
        rmax = V.check_int_scalar("max_replicas", max_replicas, low=0, high=1 << 20)
        if base is None:
            base = self.base_goodput()
        else:
            base = V.as_float_array("base", base)
            if base.shape != (len(self),):
                raise ValueError(f"base must have {len(self)} entries (one per model), got shape {base.shape}")
        bad = np.flatnonzero(~(base > 0.0))
        if bad.size:
            raise ValueError(f"model {bad[0]} has goodput 0 at one replica: no batch size is valid for it")
        gpu = self._backend(backend, len(self) * 2 * (rmax + 1))
        if gpu is not None:
            return gpu.batch_tables(self._params, base, rmax)
        out = np.empty((len(self), 2, rmax + 1))
        with parallel_region():
            sized(bk.tables_kernel, out.size, SERIAL_MAX_KEYS)(self._params, base, out)
        return out

    def _model_index(self, model, shape):
        idx = V.as_int_array("model", model, low=0, high=len(self) - 1)
        return np.ascontiguousarray(np.broadcast_to(idx, shape)).reshape(-1)

    def optimize(self, model, num_nodes, num_replicas, backend="auto"):
        """Best goodput over batch sizes of configuration ``i`` under model ``model[i]``.

        Parameters
        ----------
        model : array_like of int
            Model index per configuration, ``0 <= model < J``.
        num_nodes, num_replicas : array_like of int
            ``1 <= num_nodes <= num_replicas``; broadcast with ``model``.
        backend : {"auto", "cpu", "cuda"}
            ``"auto"`` uses CUDA from ``fastsched._backend.auto_threshold("batch")`` configurations.

        Returns
        -------
        goodput, atomic_bsz, accum_steps : numpy.ndarray
            float64, int64, int64 of the broadcast shape.

        Examples
        --------
        >>> from fastsched.goodput.batch import ModelBatch
        >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]] * 2, [[0.5, 4.0]] * 2, [32, 64], 512)
        >>> g, a, s = b.optimize([0, 1], 1, 4, backend="cpu")
        >>> g.shape, a.dtype.name
        ((2,), 'int64')
        """
        nodes = V.as_int_array("num_nodes", num_nodes, low=1)
        reps = V.as_int_array("num_replicas", num_replicas, low=1)
        idx = V.as_int_array("model", model)
        try:
            shape = np.broadcast_shapes(idx.shape, nodes.shape, reps.shape)
        except ValueError:
            raise ValueError(
                f"model, num_nodes and num_replicas have shapes {[idx.shape, nodes.shape, reps.shape]} that do not broadcast"
            ) from None
        idx = self._model_index(idx, shape)
        nodes = np.ascontiguousarray(np.broadcast_to(nodes, shape)).reshape(-1)
        reps = np.ascontiguousarray(np.broadcast_to(reps, shape)).reshape(-1)
        if np.any(nodes > reps):
            raise ValueError("num_nodes must be <= num_replicas")
        multi = nodes > 1
        gpu = self._backend(backend, reps.shape[0])
        if gpu is not None:
            g, a, s = gpu.batch_optimize(self._params, idx, multi, reps)
        else:
            g, a, s = np.empty(reps.shape[0]), np.empty(reps.shape[0], np.int64), np.empty(reps.shape[0], np.int64)
            with parallel_region():
                sized(bk.optimize_kernel, reps.shape[0], SERIAL_MAX_KEYS)(self._params, idx, multi, reps, g, a, s)
        return g.reshape(shape), a.reshape(shape), s.reshape(shape)

    def optimize_matrix(self, num_nodes, num_replicas, backend="auto"):
        """Best goodput of every model at every configuration: three ``[J, n]`` arrays.

        Flatten a job x GPU-type axis into models to get a job x type x configuration matrix.

        Examples
        --------
        >>> from fastsched.goodput.batch import ModelBatch
        >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]] * 3, [[0.5, 4.0]] * 3, 32, 512)
        >>> b.optimize_matrix([1, 1, 2, 2], [1, 2, 4, 8], backend="cpu")[0].shape
        (3, 4)
        """
        nodes = V.as_int_array("num_nodes", num_nodes, low=1).reshape(-1)
        reps = V.as_int_array("num_replicas", num_replicas, low=1).reshape(-1)
        if nodes.shape != reps.shape:
            raise ValueError(f"num_nodes and num_replicas must have equal lengths, got {nodes.shape} and {reps.shape}")
        if np.any(nodes > reps):
            raise ValueError("num_nodes must be <= num_replicas")
        multi = nodes > 1
        reps = np.ascontiguousarray(reps)
        gpu = self._backend(backend, len(self) * reps.shape[0])
        if gpu is not None:
            return gpu.batch_matrix(self._params, multi, reps)
        shape = (len(self), reps.shape[0])
        g, a, s = np.empty(shape), np.empty(shape, np.int64), np.empty(shape, np.int64)
        with parallel_region():
            sized(bk.matrix_kernel, g.size, SERIAL_MAX_KEYS)(self._params, multi, reps, g, a, s)
        return g, a, s

    def _elementwise(self, model, num_nodes, num_replicas, atomic_bsz, accum_steps, with_eff, backend):
        names = ("model", "num_nodes", "num_replicas", "atomic_bsz", "accum_steps")
        raw = (model, num_nodes, num_replicas, atomic_bsz, accum_steps)
        arrays = [V.real_array(n, v) for n, v in zip(names, raw, strict=True)]
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            raise ValueError(
                f"{', '.join(names)} have shapes {[a.shape for a in arrays]} that do not broadcast"
            ) from None
        idx = self._model_index(model, shape)
        flat = [np.ascontiguousarray(np.broadcast_to(a, shape), dtype=np.float64).reshape(-1) for a in arrays[1:]]
        nodes, reps, atomic, accum = flat
        ok_r = (reps >= 1) & np.isfinite(reps)
        checks = [
            (~ok_r, "num_replicas must be finite and >= 1"),
            (ok_r & ~((nodes >= 1) & (nodes <= reps)), "num_nodes must be finite and 1 <= num_nodes <= num_replicas"),
            (~((atomic > 0) & np.isfinite(atomic)), "atomic_bsz must be finite and > 0"),
            (~((accum >= 0) & np.isfinite(accum)), "accum_steps must be finite and >= 0"),
        ]
        if with_eff:
            checks.append(
                (
                    reps * atomic * (accum + 1.0) < self._params.init_bsz[idx],
                    "total batch size below the model's init_batch_size",
                )
            )
        for bad, msg in checks:
            if np.any(bad):
                raise ValueError(f"{msg} (configuration {int(np.flatnonzero(bad)[0])})")
        gpu = self._backend(backend, reps.shape[0])
        if gpu is not None:
            out = gpu.batch_elementwise(self._params, idx, nodes, reps, atomic, accum, with_eff)
        else:
            out = np.empty(reps.shape[0])
            with parallel_region():
                kernel = sized(bk.elementwise_kernel, out.shape[0], SERIAL_MAX_ELEMENTS)
                kernel(self._params, idx, nodes, reps, atomic, accum, with_eff, out)
        if not np.all(np.isfinite(out)):
            raise ValueError(
                "inputs are too large: the throughput model overflows float64 (check atomic_bsz and the parameters)"
            )
        return out.reshape(shape)

    def evaluate(self, model, num_nodes, num_replicas, atomic_bsz, accum_steps, backend="auto"):
        """Goodput of configuration ``i`` under model ``model[i]`` (arrays broadcast together).

        Examples
        --------
        >>> from fastsched.goodput import GoodputFunction
        >>> from fastsched.goodput.batch import ModelBatch
        >>> perf = [0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]
        >>> b = ModelBatch([perf], [[0.5, 4.0]], [32])
        >>> bool(b.evaluate(0, 1, 2, 16, 0, backend="cpu")[()] == GoodputFunction(perf, (0.5, 4.0), 32).evaluate(1, 2, 16, 0))
        True
        """
        return self._elementwise(model, num_nodes, num_replicas, atomic_bsz, accum_steps, True, backend)

    def throughput(self, model, num_nodes, num_replicas, atomic_bsz, accum_steps, backend="auto"):
        """Throughput of configuration ``i`` under model ``model[i]`` (no batch-size floor).

        Examples
        --------
        >>> from fastsched.goodput.batch import ModelBatch
        >>> b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]], [[0.5, 4.0]], [32])
        >>> b.throughput([0, 0], 1, [1, 2], 16, 0, backend="cpu").shape
        (2,)
        """
        return self._elementwise(model, num_nodes, num_replicas, atomic_bsz, accum_steps, False, backend)
