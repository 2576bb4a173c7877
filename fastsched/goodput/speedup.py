"""``SpeedupFunction``: goodput of a placement relative to one replica on one node.

Drop-in for ``adaptdl_sched.policy.speedup.SpeedupFunction``. Two paths:

* ``goodput_fn`` is a fastsched :class:`~fastsched.goodput.GoodputFunction`: the speedup
  depends on ``num_nodes`` only through ``num_nodes > 1``, so values live in a table
  ``[2, R]`` indexed by (multi-node, replicas), filled lazily by the grid-search kernel for
  exactly the keys asked for. There is no replica cliff (AdaptDL memoises only below 32).
  :meth:`SpeedupFunction.table` exposes it to other kernels (the genetic search reads it).
* any other object with AdaptDL's ``optimize`` signature (e.g. a ``Mock`` in AdaptDL's own
  tests): AdaptDL's behaviour, memoising over ``(num_nodes, num_replicas) < mem_size``.
"""

from __future__ import annotations

import threading

import numpy as np

from fastsched import _backend as B
from fastsched import _validate as V
from fastsched._jit import parallel_region
from fastsched.goodput import _kernels as gk
from fastsched.goodput._types import TABLE_MAX_REPLICAS, GoodputParams
from fastsched.goodput.batch import ModelBatch
from fastsched.goodput.model import GoodputFunction

__all__ = ["SpeedupFunction", "speedup_tables", "TABLE_MAX_REPLICAS"]

_HOST = frozenset([np.ndarray, int, float])


_LOOKUP_ERRORS = {
    gk.BAD_NODES: "num_nodes must satisfy 0 <= num_nodes <= num_replicas",
    gk.BAD_REPLICAS: "num_replicas must be >= 0",
    gk.ZERO_MISMATCH: "num_nodes must be 0 exactly when num_replicas is 0",
}


def _grown(state, width: int) -> tuple:
    """``(table, filled)`` of ``state``, copied into arrays at least twice as wide when narrower than ``width``."""
    table, filled = state
    if width <= table.shape[1]:
        return table, filled
    cap = max(width, 2 * table.shape[1])
    new_table = np.zeros((2, cap), dtype=np.float64)
    new_filled = np.zeros((2, cap), dtype=np.bool_)
    new_table[:, : table.shape[1]] = table
    new_filled[:, : filled.shape[1]] = filled
    return new_table, new_filled


def _covered(filled: np.ndarray) -> int:
    """Largest ``m`` with both rows of ``filled[:, : m + 1]`` set (the range a table answers at once)."""
    both = filled[0] & filled[1]
    return both.shape[0] - 1 if both.all() else int(np.argmin(both)) - 1


class SpeedupFunction:
    """Speedup of ``(num_nodes, num_replicas)`` over ``(1, 1)`` at the best batch size.

    Parameters
    ----------
    goodput_fn : GoodputFunction or object with ``optimize``
        The job's goodput model.
    max_batch_size : float, optional
        Largest total batch size the job accepts (default: its initial batch size).
    atomic_bsz_range : (min, max), optional
        Per-replica micro-batch bounds.
    accumulation : bool
        Whether gradient accumulation is allowed.
    mem_size : int
        Memo size for a generic ``goodput_fn`` (AdaptDL's semantics); the fast path has no
        such limit.
    backend : {"auto", "cpu", "cuda"}
        Where table fills run; ``"auto"`` uses CUDA for fills of at least
        ``fastsched._backend.auto_threshold("speedup")`` keys on a machine with a GPU.
        Calls with device arrays (CuPy, PyTorch CUDA tensors, numba device arrays) run on the
        GPU against a device copy of the table and return device arrays of the caller's type.

    Notes
    -----
    ``speedup(0, 0) == 0``. Calls are thread-safe: concurrent fills write identical values.

    Examples
    --------
    >>> from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction
    >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
    ...                      GradParams(0.00136, 0.000502), 128)
    >>> speedup = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    >>> float(speedup(1, 1)), round(float(speedup(2, 8)), 3)
    (1.0, 2.025)
    >>> speedup([1, 2, 4], [4, 8, 16]).round(3)
    array([1.982, 2.025, 1.968])
    >>> round(speedup.base_goodput, 2)   # goodput of one replica on one node
    150.94
    """

    def __init__(
        self,
        goodput_fn,
        max_batch_size=None,
        atomic_bsz_range=None,
        accumulation=False,
        mem_size=32,
        backend="auto",
    ):
        # Validate the option now ("cuda" without a GPU raises here, not mid-round).
        B.resolve_backend(backend, 0, "speedup")
        self._backend = backend
        if not hasattr(goodput_fn, "optimize"):
            raise TypeError("goodput_fn must have an optimize(num_nodes, num_replicas, ...) method")
        self._goodput_fn = goodput_fn
        self._max_batch_size = max_batch_size
        self._atomic_bsz_range = atomic_bsz_range
        self._accumulation = accumulation
        self._mem_size = V.check_int_scalar("mem_size", mem_size, low=1)
        self._lock = threading.Lock()
        self._fast = isinstance(goodput_fn, GoodputFunction)
        base, _, _ = goodput_fn.optimize(
            num_nodes=1,
            num_replicas=1,
            max_batch_size=max_batch_size,
            atomic_bsz_range=atomic_bsz_range,
            accumulation=accumulation,
        )
        self._base_goodput = base
        if self._fast:
            if not base > 0.0:
                raise ValueError(
                    "goodput at (1 node, 1 replica) is 0: no batch size is valid for one replica "
                    f"with atomic_bsz_range={atomic_bsz_range!r}, max_batch_size={max_batch_size!r}"
                )
            self._params = goodput_fn.kernel_params_for(max_batch_size, atomic_bsz_range, accumulation)
            table = np.zeros((2, 65), dtype=np.float64)
            filled = np.zeros((2, 65), dtype=np.bool_)
            filled[:, 0] = True  # zero replicas: speedup 0
            self._state, self._full = (table, filled), 0  # (_set_state's, known here)
        else:
            self._mem_speedup = -np.ones((self._mem_size, self._mem_size))
            self._mem_speedup[0, 0] = 0.0

    @property
    def goodput_fn(self):
        """The underlying goodput model."""
        return self._goodput_fn

    @property
    def base_goodput(self) -> float:
        """Best goodput at one node, one replica (the speedup denominator)."""
        return float(self._base_goodput)

    @property
    def kernel_params(self) -> GoodputParams | None:
        """The model and grid search of the table fills (:class:`~fastsched.goodput.GoodputParams`).

        ``None`` when not tabulated. For launchers on other targets (e.g. :mod:`fastsched.cuda`).

        Examples
        --------
        >>> from fastsched.goodput import GoodputFunction, SpeedupFunction
        >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
        >>> SpeedupFunction(g, max_batch_size=256, backend="cpu").kernel_params[4:]
        (256.0, 1.0, 256.0, False)
        """
        return self._params if self._fast else None

    @property
    def is_tabulated(self) -> bool:
        """True when backed by a fastsched GoodputFunction (table fast path)."""
        return self._fast

    def __reduce__(self):
        return (
            SpeedupFunction,
            (
                self._goodput_fn,
                self._max_batch_size,
                self._atomic_bsz_range,
                self._accumulation,
                self._mem_size,
                self._backend,
            ),
        )

    # -- fast path -------------------------------------------------------------------------
    def _set_state(self, table: np.ndarray, filled: np.ndarray) -> None:
        # (table, filled) live in one tuple so readers never see a mismatched pair; _full, the
        # range they cover, is written after it, so a reader that trusts _full finds the
        # cells there (the policy asks every job's table every round: one comparison).
        self._state = (table, filled)
        self._full = _covered(filled)

    def _ensure(self, want_multi: np.ndarray, want_rep: np.ndarray, max_rep: int):
        """Make sure the table holds every wanted key; return ``(table, filled)``."""
        with self._lock:
            table, filled = _grown(self._state, max_rep + 1)
            # Same signature on both backends (the CUDA twin copies the table in and out).
            on_gpu = B.resolve_backend(self._backend, want_rep.shape[0], "speedup") == "cuda"
            if on_gpu:
                fill = B.cuda_launchers().fill_table
            else:
                fill = gk.sized(gk.fill_table_kernel, want_rep.shape[0], gk.SERIAL_MAX_KEYS)
            with parallel_region():
                fill(self._params, float(self._base_goodput), table, filled, want_multi, want_rep)
            self._set_state(table, filled)
        return table, filled

    def _covers(self, max_replicas: int) -> bool:
        """Whether the table holds every cell of ``0..max_replicas`` (one comparison, see _set_state)."""
        return max_replicas <= self._full

    def _store(self, values: np.ndarray) -> None:
        """Write a complete ``[2, R + 1]`` range computed elsewhere (same formulas, same bits)."""
        width = values.shape[1]
        with self._lock:
            table, filled = _grown(self._state, width)
            table[:, :width] = values
            filled[:, :width] = True
            self._set_state(table, filled)

    def _store_cells(self, max_rep: int, multi: np.ndarray, rep: np.ndarray, values: np.ndarray) -> None:
        """Write cells computed elsewhere (same formulas, same bits), growing the table to ``max_rep``."""
        with self._lock:
            table, filled = _grown(self._state, max_rep + 1)
            rows = multi.astype(np.int64)
            table[rows, rep] = values
            filled[rows, rep] = True
            self._set_state(table, filled)

    @staticmethod
    def fill_tables(speedup_fns, max_replicas: int, backend="auto") -> int:
        """Complete many jobs' tables up to ``max_replicas`` in one GPU launch, when that pays.

        For the tabulated functions among ``speedup_fns`` whose table does not yet cover
        ``0..max_replicas`` (and whose own ``backend`` is not ``"cpu"``), one
        :class:`~fastsched.goodput.batch.ModelBatch` launch computes every missing table when
        ``backend`` resolves to CUDA for that many cells
        (``fastsched._backend.auto_threshold("speedup")``). Otherwise nothing is done: on the
        CPU each function keeps filling lazily, on first use, exactly as before.

        Parameters
        ----------
        speedup_fns : iterable of SpeedupFunction
            Functions to complete (others are ignored).
        max_replicas : int
            Largest replica count to cover.
        backend : {"auto", "cpu", "cuda"}
            ``"cpu"`` makes this a no-op.

        Returns
        -------
        int
            How many functions were filled.

        Examples
        --------
        >>> from fastsched.goodput import GoodputFunction, SpeedupFunction
        >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
        >>> SpeedupFunction.fill_tables([SpeedupFunction(g, 512)], 16, backend="cpu")
        0
        """
        rmax = V.check_int_scalar("max_replicas", max_replicas, low=0, high=TABLE_MAX_REPLICAS)
        fns = list(speedup_fns)
        # Cheap exits first: this runs every scheduling round.
        if backend == "cpu" or B.resolve_backend(backend, len(fns) * 2 * (rmax + 1), "speedup") != "cuda":
            return 0
        seen = set()
        todo = []
        for fn in fns:
            if not isinstance(fn, SpeedupFunction) or not fn._fast or fn._backend == "cpu" or id(fn) in seen:
                continue
            seen.add(id(fn))
            if not fn._covers(rmax):
                todo.append(fn)
        if not todo:
            return 0
        base = np.array([fn._base_goodput for fn in todo], dtype=np.float64)
        tables = ModelBatch.from_speedup_functions(todo).speedup_tables(rmax, backend="cuda", base=base)
        for fn, values in zip(todo, tables, strict=True):
            fn._store(values)
        return len(todo)

    @staticmethod
    def fill_ranges(speedup_fns, max_replicas) -> int:
        """Fill, on the CPU in one (parallel) launch, what each function's :meth:`table` would fill on the CPU.

        For each tabulated function ``speedup_fns[i]`` whose own fills run on the CPU (its
        ``backend`` resolves to ``"cpu"`` for a table of ``max_replicas[i]`` replicas), the cells
        of ``0..max_replicas[i]`` not yet in its table are computed together, as
        :meth:`table` would compute them one function at a time (the same arithmetic, so the
        same values to the bit). A round asks for thousands of small tables: one launch over
        all their cells uses every core and pays the launch once. Other functions, and ranges
        already covered, are left alone.

        Parameters
        ----------
        speedup_fns : sequence of SpeedupFunction
            Functions to complete (others, and repeats, are ignored).
        max_replicas : sequence of int
            Largest replica count to cover, one per function.

        Returns
        -------
        int
            How many functions had cells filled.

        Examples
        --------
        >>> from fastsched.goodput import GoodputFunction, SpeedupFunction
        >>> g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
        >>> fns = [SpeedupFunction(g, 512), SpeedupFunction(g, 256)]
        >>> SpeedupFunction.fill_ranges(fns, [8, 4]), SpeedupFunction.fill_ranges(fns, [8, 4])
        (2, 0)
        >>> fresh = SpeedupFunction(g, 512)
        >>> bool((fresh.table(8) == fns[0].table(8)).all())
        True
        """
        fns = list(speedup_fns)
        ranges = [V.check_int_scalar("max_replicas", m, low=0, high=TABLE_MAX_REPLICAS) for m in max_replicas]
        if len(ranges) != len(fns):
            raise ValueError(f"max_replicas must have one entry per function ({len(fns)}), got {len(ranges)}")
        todo, cells = [], []
        seen = set()
        for fn, m in zip(fns, ranges, strict=True):
            if not isinstance(fn, SpeedupFunction) or not fn._fast or id(fn) in seen:
                continue
            seen.add(id(fn))
            if fn._covers(m):
                continue
            # Where table(m) itself would fill (its request has 2 (m + 1) keys).
            if fn._backend != "cpu" and B.resolve_backend(fn._backend, 2 * (m + 1), "speedup") != "cpu":
                continue
            filled = fn._state[1]
            missing = np.ones((2, m + 1), dtype=np.bool_)
            width = min(m + 1, filled.shape[1])
            missing[:, :width] = ~filled[:, :width]
            todo.append((fn, m))
            cells.append(np.flatnonzero(missing.ravel()))
        if not todo:
            return 0
        counts = np.array([c.shape[0] for c in cells], dtype=np.int64)
        flat = np.concatenate(cells)
        widths = np.repeat(np.array([m + 1 for _, m in todo], dtype=np.int64), counts)
        fn_of = np.repeat(np.arange(len(todo), dtype=np.int64), counts)
        multi = flat >= widths
        rep = flat - np.where(multi, widths, 0)
        # The functions' own validated models and grids, stacked (as the GPU path stacks them).
        params = ModelBatch.from_speedup_functions([fn for fn, _ in todo]).kernel_params
        base = np.array([float(fn._base_goodput) for fn, _ in todo], dtype=np.float64)
        out = np.empty(flat.shape[0], dtype=np.float64)
        with parallel_region():
            gk.sized(gk.fill_cells_kernel, out.shape[0], gk.SERIAL_MAX_KEYS)(params, base, fn_of, multi, rep, out)
        split = np.cumsum(counts)[:-1]
        parts = zip(np.split(multi, split), np.split(rep, split), np.split(out, split), strict=True)
        for (fn, m), (fn_multi, fn_rep, values) in zip(todo, parts, strict=True):
            fn._store_cells(m, fn_multi, fn_rep, values)
        return len(todo)

    def table(self, max_replicas: int) -> np.ndarray:
        """Speedup table covering replicas ``0..max_replicas``.

        Returns a read-only float64 array ``T`` of shape ``(2, max_replicas + 1)`` (or wider):
        ``T[0, r]`` is the speedup of ``r`` replicas on one node, ``T[1, r]`` of ``r`` replicas
        spread over more than one node; ``T[:, 0] == 0``. Only for a fastsched goodput model.

        Examples
        --------
        >>> from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction
        >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
        ...                      GradParams(0.00136, 0.000502), 128)
        >>> SpeedupFunction(fn, 1280, (64, 256)).table(4).round(3)
        array([[0.   , 1.   , 1.728, 1.892, 1.982],
               [0.   , 0.985, 1.703, 1.855, 1.935]])
        """
        if not self._fast:
            raise TypeError("table() needs a fastsched GoodputFunction; call the function instead")
        max_replicas = V.check_int_scalar("max_replicas", max_replicas, low=0, high=TABLE_MAX_REPLICAS)
        # The policy asks every round for every job: answer from the table when it already
        # covers the range, without a parallel launch.
        if not self._covers(max_replicas):
            reps = np.arange(max_replicas + 1, dtype=np.int64)
            multi = np.repeat(np.array([False, True]), max_replicas + 1)
            self._ensure(multi, np.concatenate([reps, reps]), max_replicas)
        view = self._state[0][:, : max_replicas + 1]
        view.flags.writeable = False
        return view

    # -- call ------------------------------------------------------------------------------
    def __call__(self, num_nodes, num_replicas):
        """Speedup of the given placements (scalar or broadcast arrays).

        Requires ``0 <= num_nodes <= num_replicas`` and ``num_nodes == 0`` exactly when
        ``num_replicas == 0``. Returns a float for scalar input, else an array.

        Examples
        --------
        >>> from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction
        >>> fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
        ...                      GradParams(0.00136, 0.000502), 128)
        >>> speedup = SpeedupFunction(fn, 1280, (64, 256))
        >>> speedup([0, 1, 1], [0, 1, 4]).round(3)
        array([0.   , 1.   , 1.982])
        """
        # NumPy arrays and Python numbers (the common calls) skip the device check entirely.
        if (
            self._fast
            and not (type(num_nodes) in _HOST and type(num_replicas) in _HOST)
            and B.any_device(num_nodes, num_replicas)
        ):
            B.resolve_backend("cuda" if self._backend == "auto" else self._backend, 0, "speedup")
            if self._backend == "cpu":
                raise TypeError("backend='cpu' cannot take device arrays; copy them to the host first")
            result = B.cuda_launchers().speedup_device(self.table, num_nodes, num_replicas)
            if isinstance(result, str):
                raise ValueError(result)
            if isinstance(result, int):
                raise ValueError(_LOOKUP_ERRORS[result])
            return result
        nodes = V.as_int_array("num_nodes", num_nodes)
        replicas = V.as_int_array("num_replicas", num_replicas)
        shape = nodes.shape
        if replicas.shape != shape:
            try:
                shape = np.broadcast_shapes(nodes.shape, replicas.shape)
            except ValueError:
                raise ValueError(
                    f"num_nodes and num_replicas have shapes {nodes.shape} and {replicas.shape} that do not broadcast"
                ) from None
            nodes = np.broadcast_to(nodes, shape)
            replicas = np.broadcast_to(replicas, shape)
        nodes = np.ascontiguousarray(nodes).reshape(-1)
        replicas = np.ascontiguousarray(replicas).reshape(-1)
        out = np.empty(nodes.shape[0], dtype=np.float64)
        if self._fast:
            table, filled = self._state  # one read: the pair is swapped atomically on growth
            status = gk.checked_lookup(table, filled, nodes, replicas, out)
            if status == gk.MISSING:
                max_rep = int(replicas.max())
                if max_rep > TABLE_MAX_REPLICAS:
                    # Beyond any real cluster: solve directly instead of growing the table.
                    return self._call_untabulated(nodes, replicas, shape)
                _, key_multi, key_rep = gk.dedupe_keys(nodes, replicas, max_rep)
                table, filled = self._ensure(key_multi, key_rep, max_rep)
                status = gk.checked_lookup(table, filled, nodes, replicas, out)
            if status != gk.OK:
                raise ValueError(_LOOKUP_ERRORS[status])
        else:
            status = gk.check_pairs(nodes, replicas)
            if status != gk.OK:
                raise ValueError(_LOOKUP_ERRORS[status])
            out = self._call_generic(nodes, replicas)
        return float(out[0]) if len(shape) == 0 else out.reshape(shape)

    def _call_untabulated(self, nodes, replicas, shape):
        out = np.zeros(nodes.shape[0], dtype=np.float64)
        live = replicas > 0
        if live.any():
            goodput, _, _ = self._goodput_fn._optimize_flat(
                np.ascontiguousarray(nodes[live]), np.ascontiguousarray(replicas[live]), self._params, self._backend
            )
            out[live] = goodput / self._base_goodput
        return float(out[0]) if len(shape) == 0 else out.reshape(shape)

    def _call_generic(self, nodes, replicas):
        # AdaptDL's algorithm, kept for arbitrary goodput models (it is what their tests pin).
        speedup = -np.ones(nodes.shape[0])
        mem = self._mem_speedup
        idx = (replicas < self._mem_size) & (nodes < self._mem_size)
        speedup[idx] = mem[nodes[idx], replicas[idx]]
        missing = speedup < 0
        if np.count_nonzero(missing) > 0:
            (mn, mr), inverse = np.unique(np.stack([nodes[missing], replicas[missing]]), axis=1, return_inverse=True)
            goodput, _, _ = self._goodput_fn.optimize(
                mn,
                mr,
                max_batch_size=self._max_batch_size,
                atomic_bsz_range=self._atomic_bsz_range,
                accumulation=self._accumulation,
            )
            goodput = np.asarray(goodput, dtype=np.float64).reshape(-1)
            values = goodput / self._base_goodput
            keep = (mr < self._mem_size) & (mn < self._mem_size)
            mem[mn[keep], mr[keep]] = values[keep]
            speedup[missing] = values[np.asarray(inverse).reshape(-1)]
        if not np.all(speedup >= 0):
            raise ValueError("goodput_fn.optimize returned a negative or NaN goodput")
        return speedup


def speedup_tables(speedup_fns, max_replicas: int, *, keep_on_device=False, threads_per_block=None):
    """Speedup tables of many jobs, one CUDA launch: ``float64[J, 2, max_replicas + 1]``.

    ``out[j, 0, r]`` / ``out[j, 1, r]`` equal ``speedup_fns[j].table(max_replicas)[0/1, r]``
    (single node / more than one node), ``out[:, :, 0] == 0``. For models not wrapped in
    SpeedupFunctions use :class:`fastsched.goodput.batch.ModelBatch`.

    Parameters
    ----------
    speedup_fns : sequence of SpeedupFunction
        Each backed by a fastsched GoodputFunction (``is_tabulated``).
    max_replicas : int
        Largest replica count to tabulate.
    keep_on_device : bool
        Return the device array (e.g. to feed the fitness kernel without a copy).
    threads_per_block : int, optional
        CUDA block size (default: :func:`fastsched.cuda.set_threads_per_block`'s).

    Raises
    ------
    fastsched.cuda.CudaUnavailableError
        Without a usable GPU (or the simulator).

    Examples
    --------
    The launch needs a CUDA GPU (the lines marked ``+SKIP``); the CPU path gives the same values:

    >>> import numpy as np
    >>> from fastsched import GoodputFunction
    >>> fn = GoodputFunction([0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14], (0.00136, 0.000502), 128)
    >>> from fastsched import SpeedupFunction
    >>> speedup = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    >>> want = speedup.table(8)  # the CPU path: [single node, several nodes] x replicas 0..8
    >>> want.shape, want[0, :5].round(3)
    ((2, 9), array([0.   , 1.   , 1.728, 1.892, 1.982]))
    >>> tables = speedup_tables([speedup, speedup], 8)  # doctest: +SKIP
    >>> tables.shape, bool(np.allclose(tables[1], want))  # doctest: +SKIP
    ((2, 2, 9), True)
    """
    rmax = int(max_replicas)
    if rmax < 0:
        raise ValueError(f"max_replicas must be >= 0, got {rmax}")
    for j, fn in enumerate(speedup_fns):
        if not getattr(fn, "is_tabulated", False):
            raise TypeError(f"speedup_fns[{j}] is not backed by a fastsched GoodputFunction")
    batch = ModelBatch.from_speedup_functions(speedup_fns)
    base = np.array([fn.base_goodput for fn in speedup_fns], dtype=np.float64)
    return B.cuda_launchers().batch_tables(
        batch.kernel_params, base, rmax, keep_on_device=keep_on_device, threads_per_block=threads_per_block
    )
