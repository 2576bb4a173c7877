"""Application models read from measured traces (the Pollux artifact's trace format).

A trace folder ``<app>/`` holds ``placements.csv``, ``scalability.csv`` and one
``validation-<B>.csv`` per measured total batch size ``B`` (see the NOTICE of the traces for
what each column means). :class:`TraceApplication` answers the questions the simulator asks:

* :meth:`~TraceApplication.throughput`: true (step time, sync time) of a placement and
  per-GPU batch size, interpolated linearly along the batch size for a measured layout, or
  linearly over a Delaunay triangulation of (nodes, replicas, batch) within the measured
  hull; anywhere else from a throughput model fitted on the measured rows
  (:meth:`~TraceApplication.is_modelled` tells which);
* :meth:`~TraceApplication.grad_stats`: gradient statistics of a total batch size during an
  epoch, interpolated linearly between the two measured batch sizes around it;
* :meth:`~TraceApplication.progress`: statistical progress needed to finish an epoch;
* :meth:`~TraceApplication.iteration`: optimizer steps after an epoch (Optimus's oracle).

Every file is checked once, at load (a :class:`ValueError` names the file, line and column):
numbers finite; step times in (0, :data:`MAX_STEP_TIME`]; ``0 <= sync_time <= step_time``;
positive batch sizes; placements of digits 1-9; ``num_replicas >= num_nodes >= 1``;
progress positive and increasing, iterations not decreasing, ``grad_sqr >= 0``,
``grad_var > 0``; validation files named ``validation-<B>.csv`` with ``B`` a whole number.

Every answer is memoised: the simulator asks the same questions many times.
"""

from __future__ import annotations

import csv
import math
import os
import re
from pathlib import Path

import numpy as np

from fastsched.sim._interp import barycentric_transforms

__all__ = [
    "write_example_application",
    "Application",
    "TraceApplication",
    "PUBLISHED_OVERRIDES",
    "load_application",
    "load_applications",
    "normalize_placement",
]

#: Per-application settings of the published simulator study (OSDI'21 artifact):
#: epochs to completion, and yolov3's per-GPU batch-size cap.
PUBLISHED_OVERRIDES = {
    "bert": {"max_epochs": 2},
    "cifar10": {"max_epochs": 100},
    "ncf": {"max_epochs": 10, "fixed_batch_size": 32768, "max_replicas": 1},
    "imagenet": {"max_epochs": 90},
    "deepspeech2": {"max_epochs": 80},
    "yolov3": {"max_epochs": 50, "max_local_bsz": 8},
}


def normalize_placement(placement) -> tuple[int, ...]:
    """Drop empty nodes and rotate to the lexicographically smallest rotation.

    Parameters
    ----------
    placement : sequence of int
        GPUs used on each node.

    Returns
    -------
    tuple of int
        The canonical form under which layouts are measured, e.g. ``(4, 0, 2) -> (2, 4)``.

    Examples
    --------
    >>> normalize_placement([4, 0, 2]), normalize_placement((1, 3, 2)), normalize_placement([0, 0])
    ((2, 4), (1, 3, 2), ())
    """
    p = tuple(int(x) for x in placement if x)
    if not p:
        return p
    return min(p[i:] + p[:i] for i in range(len(p)))


class Application:
    """Interface of an application model used by the simulator.

    Attributes
    ----------
    name : str
    init_batch_size, max_batch_size : int
        Total batch size of statistical efficiency 1, and the largest allowed.
    min_local_bsz, max_local_bsz : int
        Per-GPU (atomic) batch-size range.
    max_epochs : int
        A job completes when it finishes this many epochs.
    fixed_batch_size : int or None
        Total batch size an adaptive scheduler must keep (``None``: free to adapt).
    max_replicas : int or None
        Most GPUs one job may use (``None``: no application limit).

    Examples
    --------
    The simulator's applications implement this interface, e.g. the builtin profiles (NCF keeps
    its batch size and runs on one GPU):

    >>> from fastsched.sim.builtin import builtin_applications
    >>> app = builtin_applications()["ncf"]
    >>> isinstance(app, Application), app.fixed_batch_size, app.max_replicas
    (True, 32768, 1)
    >>> app.min_local_bsz <= app.init_batch_size <= app.max_batch_size
    True
    """

    fixed_batch_size = None
    max_replicas = None

    name: str
    init_batch_size: int
    max_batch_size: int
    min_local_bsz: int
    max_local_bsz: int
    max_epochs: int

    def throughput(self, placement, local_bsz):  # pragma: no cover - interface
        """Return ``(step_time, sync_time)`` in seconds of one optimizer step."""
        raise NotImplementedError

    def grad_stats(self, batch_size, epoch):  # pragma: no cover - interface
        """Return ``(grad_sqr, grad_var)`` during ``epoch`` at total ``batch_size``."""
        raise NotImplementedError

    def progress(self, epoch):  # pragma: no cover - interface
        """Cumulative statistical progress needed to finish ``epoch`` epochs."""
        raise NotImplementedError

    def iteration(self, batch_size, epoch):  # pragma: no cover - interface
        """Optimizer steps taken after ``epoch`` epochs at ``batch_size``."""
        raise NotImplementedError

    def best_metric(self, batch_size, epoch):
        """Best validation metric before ``epoch`` (logging only); ``None`` if unknown."""
        return None

    def is_modelled(self, placement, local_bsz) -> bool:
        """Whether :meth:`throughput` is a model's estimate rather than measured (here never).

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> builtin_applications()["cifar10"].is_modelled((2, 2), 64)
        False
        """
        return False

    def completion_epoch(self, batch_size) -> int:
        """Index of the last epoch: a job completes when its epoch count exceeds it."""
        return self.max_epochs - 1

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.name!r}, init_batch_size={self.init_batch_size}, "
            f"max_batch_size={self.max_batch_size}, local_bsz=[{self.min_local_bsz}, "
            f"{self.max_local_bsz}], max_epochs={self.max_epochs})"
        )


#: Longest plausible seconds per optimizer step in a trace: anything longer is no measurement
#: (a step of 1e308 s silently stalls every job).
MAX_STEP_TIME = 86400.0


def _read_csv(path: Path, required: tuple[str, ...]) -> dict[str, list[float]]:
    """Read a numeric CSV into columns, checking that ``required`` columns exist and hold finite numbers.

    The data rows' line numbers are returned under the key ``"_line"``.
    """
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            try:
                header = [h.strip() for h in next(reader)]
            except StopIteration:
                raise ValueError(f"{path}: empty file") from None
            missing = [c for c in required if c not in header]
            if missing:
                raise ValueError(f"{path}: missing column(s) {missing}; found {header}")
            idx = [header.index(c) for c in required]
            cols: dict[str, list[float]] = {c: [] for c in (*required, "_line")}
            for lineno, row in enumerate(reader, start=2):
                if not row:
                    continue
                for c, i in zip(required, idx, strict=True):
                    try:
                        v = float(row[i])
                    except (ValueError, IndexError):
                        raise ValueError(f"{path}:{lineno}: malformed row {row!r}") from None
                    if not math.isfinite(v):
                        raise ValueError(f"{path}:{lineno}: column {c!r} must be a finite number, got {row[i]!r}")
                    cols[c].append(v)
                cols["_line"].append(lineno)
    except FileNotFoundError:
        raise FileNotFoundError(f"trace file not found: {path}") from None
    if not cols[required[0]]:
        raise ValueError(f"{path}: no data rows")
    return cols


def _reject(path, cols, column, bad, rule):
    """Raise naming the first row where ``bad`` (one bool per row) holds."""
    for i, b in enumerate(bad):
        if b:
            raise ValueError(f"{path}:{cols['_line'][i]}: column {column!r} must be {rule}, got {cols[column][i]!r}")


def _validate_throughput(path, cols):
    """Step times finite, positive and plausible; ``0 <= sync_time <= step_time``; sane batch and layout."""
    st, sy = cols["step_time"], cols["sync_time"]
    _reject(path, cols, "step_time", [not (0 < x <= MAX_STEP_TIME) for x in st], f"in (0, {MAX_STEP_TIME:g}] s")
    _reject(path, cols, "sync_time", [not (0 <= y <= x) for x, y in zip(st, sy, strict=True)], "in [0, step_time]")
    _reject(path, cols, "local_bsz", [not x > 0 for x in cols["local_bsz"]], "positive")
    if "placement" in cols:
        # One digit 1-9 per node: the GPUs used on it.
        _reject(
            path,
            cols,
            "placement",
            [not (p >= 1 and p == int(p) and "0" not in str(int(p))) for p in cols["placement"]],
            "digits 1-9, one per node",
        )
    else:
        n, r = cols["num_nodes"], cols["num_replicas"]
        _reject(path, cols, "num_nodes", [not (x >= 1 and x == int(x)) for x in n], "a whole number >= 1")
        _reject(
            path,
            cols,
            "num_replicas",
            [not (y >= x and y == int(y)) for x, y in zip(n, r, strict=True)],
            "a whole number >= num_nodes",
        )


def _validate_curve(path, cols):
    """Progress strictly increasing and positive, iterations not decreasing, gradient statistics usable."""
    prog, it = cols["progress"], cols["iteration"]
    _reject(
        path,
        cols,
        "progress",
        [x <= (prog[i - 1] if i else 0.0) for i, x in enumerate(prog)],
        "positive and increasing",
    )
    _reject(
        path,
        cols,
        "iteration",
        [x < (it[i - 1] if i else 0.0) for i, x in enumerate(it)],
        "non-negative and not decreasing",
    )
    # A zero variance (and a zero squared gradient beside it) leaves the gain 0 / 0.
    _reject(path, cols, "grad_sqr", [x < 0 for x in cols["grad_sqr"]], "non-negative")
    _reject(path, cols, "grad_var", [x <= 0 for x in cols["grad_var"]], "positive")


#: Validation curve files: ``validation-<total batch size>.csv``.
_VALIDATION_NAME = re.compile(r"validation-([1-9][0-9]*)\.csv")


class TraceApplication(Application):
    r"""An application whose true behaviour comes from measured traces.

    Parameters
    ----------
    trace_dir : str or path
        Folder with ``placements.csv``, ``scalability.csv`` and ``validation-<B>.csv``.
    name : str, optional
        Defaults to the folder's name.
    init_batch_size, max_batch_size, min_local_bsz, max_local_bsz, max_epochs : int, optional
        Overrides; by default the smallest/largest validated batch size, the smallest/largest
        measured per-GPU batch size, and the shortest validation file.
    fixed_batch_size, max_replicas : int, optional
        See :class:`Application`.
    gpu_type : str, optional
        Read the GPU type's profile ``placements-<gpu_type>.csv`` / ``scalability-<gpu_type>.csv``
        (the Sia traces' layout) instead of ``placements.csv`` / ``scalability.csv``.

    Raises
    ------
    FileNotFoundError
        A missing folder or file.
    ValueError
        A malformed file, naming the file, line and column (see the module docstring for
        what is checked).

    Examples
    --------
    >>> import tempfile
    >>> app = write_example_application(tempfile.mkdtemp())
    >>> toy = TraceApplication(app)
    >>> toy.name, toy.init_batch_size, toy.max_batch_size, toy.max_epochs
    ('toy', 4, 8, 3)
    >>> toy.throughput((2,), 4), toy.throughput((1, 1), 8)
    ((1.5, 0.5), (3.0, 1.0))
    """

    def __init__(
        self,
        trace_dir,
        name=None,
        *,
        init_batch_size=None,
        max_batch_size=None,
        min_local_bsz=None,
        max_local_bsz=None,
        max_epochs=None,
        fixed_batch_size=None,
        max_replicas=None,
        gpu_type=None,
    ):
        trace_dir = Path(trace_dir)
        if not trace_dir.is_dir():
            raise FileNotFoundError(f"trace folder not found: {trace_dir}")
        self.name = name or trace_dir.name
        self.trace_dir = trace_dir
        # Validation curves, sorted by batch size.
        vfiles = {}
        for path in sorted(trace_dir.glob("validation-*.csv")):
            m = _VALIDATION_NAME.fullmatch(path.name)
            if m is None:
                raise ValueError(f"{path}: expected a name validation-<batch size>.csv (a whole number >= 1)")
            bsz = int(m.group(1))
            if bsz in vfiles:
                raise ValueError(f"{path}: batch size {bsz} already read from {vfiles[bsz]}")
            vfiles[bsz] = path
        if not vfiles:
            raise FileNotFoundError(f"{trace_dir}: no validation-<B>.csv files")
        vcols = ("progress", "iteration", "metric", "grad_sqr", "grad_var")
        self._bsz = sorted(vfiles)
        self._valid = {b: _read_csv(vfiles[b], vcols) for b in self._bsz}
        for b in self._bsz:
            _validate_curve(vfiles[b], self._valid[b])
        # Placement traces.
        # Per-GPU-type profiles (the Sia layout) are placements-<type>.csv / scalability-<type>.csv.
        self.gpu_type = gpu_type
        suffix = f"-{gpu_type}" if gpu_type else ""
        ppath, spath = trace_dir / f"placements{suffix}.csv", trace_dir / f"scalability{suffix}.csv"
        pcols = _read_csv(ppath, ("placement", "local_bsz", "step_time", "sync_time"))
        scols = _read_csv(spath, ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"))
        _validate_throughput(ppath, pcols)
        _validate_throughput(spath, scols)
        self._by_placement: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        groups: dict[int, list[tuple[float, float, float]]] = {}
        triples: dict[tuple[int, int, float], list[tuple[float, float]]] = {}
        for p, a, st, sy in zip(
            pcols["placement"], pcols["local_bsz"], pcols["step_time"], pcols["sync_time"], strict=True
        ):
            pid = int(p)
            digits = str(pid)
            groups.setdefault(pid, []).append((a, st, sy))
            triples.setdefault((len(digits), sum(map(int, digits)), a), []).append((st, sy))
        for pid, rows in groups.items():
            order = sorted(range(len(rows)), key=lambda i: rows[i][0])  # stable, like a mergesort
            arr = np.array([rows[i] for i in order], dtype=np.float64)
            self._by_placement[pid] = (arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy())
        # 3-D interpolation points: per-triple means (sorted by key), then the scalability rows.
        pts, vals = [], []
        for key in sorted(triples):
            rows = triples[key]
            s0 = s1 = 0.0
            for st, sy in rows:
                s0 += st
                s1 += sy
            pts.append(key)
            vals.append((s0 / len(rows), s1 / len(rows)))
        for row in zip(
            *(scols[c] for c in ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time")), strict=True
        ):
            pts.append(row[:3])
            vals.append(row[3:])
        self._nd_points = np.array(pts, dtype=np.float64)
        self._nd_values = np.array(vals, dtype=np.float64)
        self._nd_interp = None
        self._model = None
        # Every measured row as (nodes, GPUs, batch, step, sync, GPUs on the fullest node): what
        # the model is fitted on. The scalability rows do not say how GPUs were spread: evenly.
        prow = [(len(d), sum(map(int, d)), max(map(int, d))) for d in (str(int(p)) for p in pcols["placement"])]
        srow = [(n, r, math.ceil(r / n)) for n, r in zip(scols["num_nodes"], scols["num_replicas"], strict=True)]
        self._rows = np.array(
            [
                *(
                    (n, r, b, st, sy, k)
                    for (n, r, k), b, st, sy in zip(
                        prow, pcols["local_bsz"], pcols["step_time"], pcols["sync_time"], strict=True
                    )
                ),
                *(
                    (n, r, b, st, sy, k)
                    for (n, r, k), b, st, sy in zip(
                        srow, scols["local_bsz"], scols["step_time"], scols["sync_time"], strict=True
                    )
                ),
            ],
            dtype=np.float64,
        )
        local = pcols["local_bsz"]
        self.init_batch_size = int(init_batch_size or self._bsz[0])
        self.max_batch_size = int(max_batch_size or self._bsz[-1])
        self.min_local_bsz = int(min_local_bsz or min(local))
        self.max_local_bsz = int(max_local_bsz or max(local))
        nrows = min(len(v["progress"]) for v in self._valid.values())
        self.max_epochs = int(max_epochs or nrows)
        self.fixed_batch_size = fixed_batch_size
        self.max_replicas = max_replicas
        if self.max_epochs > nrows:
            raise ValueError(
                f"{self.name}: max_epochs={self.max_epochs} but the validation files have only {nrows} rows"
            )
        if self.max_batch_size < self.min_local_bsz:
            raise ValueError(f"{self.name}: max_batch_size < min_local_bsz")
        first = self._valid[self._bsz[0]]["metric"]
        self._metric_increases = first[0] < first[-1]
        self._memo_tp: dict = {}
        self._modelled: set = set()  # keys of _memo_tp answered by the model
        self._memo_gs: dict = {}
        self._memo_prog: dict = {}
        self._memo_it: dict = {}

    # -- batch-size interpolation ----------------------------------------------------------
    def _bounds(self, batch_size):
        lower = upper = None
        for b in self._bsz:
            if b <= batch_size:
                lower = b
            if b >= batch_size:
                upper = b
                break
        if lower is None or upper is None:
            raise ValueError(
                f"{self.name}: batch size {batch_size} is outside the validated range [{self._bsz[0]}, {self._bsz[-1]}]"
            )
        return lower, upper

    def _interp_b(self, batch_size, column, row):
        lo, hi = self._bounds(batch_size)
        lv = self._valid[lo][column][row]
        if lo == hi:
            return lv
        hv = self._valid[hi][column][row]
        return ((batch_size - lo) * hv + (hi - batch_size) * lv) / (hi - lo)

    def grad_stats(self, batch_size, epoch):
        r"""Gradient ``(sqr, var)`` during ``epoch`` (0-based) at total ``batch_size``.

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> toy.grad_stats(4, 0), toy.grad_stats(8, 1), toy.grad_stats(6, 0)  # 6: interpolated
        ((1.0, 1.0), (3.0, 6.0), (2.0, 3.0))
        """
        key = (batch_size, epoch)
        out = self._memo_gs.get(key)
        if out is None:
            out = (self._interp_b(batch_size, "grad_sqr", epoch), self._interp_b(batch_size, "grad_var", epoch))
            self._memo_gs[key] = out
        return out

    def progress(self, epoch):
        r"""Progress needed to finish ``epoch`` epochs: the minimum over batch sizes.

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> toy.progress(1), toy.progress(2)
        (10.0, 18.0)
        """
        out = self._memo_prog.get(epoch)
        if out is None:
            out = 0.0 if epoch == 0 else min(v["progress"][epoch - 1] for v in self._valid.values())
            self._memo_prog[epoch] = out
        return out

    def iteration(self, batch_size, epoch):
        r"""Optimizer steps after finishing epoch ``epoch`` (row ``epoch``) at ``batch_size``.

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> toy.iteration(4, 1), toy.iteration(8, 1)
        (20.0, 12.0)
        """
        key = (batch_size, epoch)
        out = self._memo_it.get(key)
        if out is None:
            out = self._interp_b(batch_size, "iteration", epoch)
            self._memo_it[key] = out
        return out

    def best_metric(self, batch_size, epoch):
        r"""Best validation metric over epochs ``[0, epoch)``, interpolated in batch size.

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> toy.best_metric(4, 0), toy.best_metric(4, 2), toy.best_metric(8, 2)
        (None, 0.6, 0.65)
        """
        if epoch == 0:
            return None
        lo, hi = self._bounds(batch_size)
        best = max if self._metric_increases else min
        lv = best(self._valid[lo]["metric"][:epoch])
        if lo == hi:
            return lv
        hv = best(self._valid[hi]["metric"][:epoch])
        return ((batch_size - lo) * hv + (hi - batch_size) * lv) / (hi - lo)

    # -- throughput ------------------------------------------------------------------------
    def throughput(self, placement, local_bsz):
        r"""Return the true ``(step_time, sync_time)`` of ``placement`` at per-GPU batch ``local_bsz``.

        Measured placements are interpolated linearly along the batch size, other points
        within the measured (nodes, GPUs, batch) hull over its Delaunay triangulation; any
        other point (a larger cluster than the profiled one, a batch beyond the measured
        range) is answered by the throughput model fitted on this application's rows
        (:mod:`fastsched.sim._throughput_model`, see :meth:`is_modelled`).

        Parameters
        ----------
        placement : sequence of int
            GPUs used on each node (zeros allowed).
        local_bsz : int or float
            Per-GPU micro-batch size.

        Raises
        ------
        ValueError
            If the placement is empty or the batch size is not positive.

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> toy.throughput((1,), 4), toy.throughput((2,), 8), toy.throughput((1,), 6)
        ((1.0, 0.0), (2.5, 0.5), (1.5, 0.0))
        >>> step, sync = toy.throughput((2, 2, 2, 2, 2, 2), 8)  # 6 nodes: beyond the traces
        >>> 0 <= sync < step
        True
        """
        key = (tuple(placement), local_bsz)
        out = self._memo_tp.get(key)
        if out is None:
            step, sync, modelled = self._throughput(normalize_placement(placement), local_bsz)
            out = self._memo_tp[key] = (step, sync)
            if modelled:
                self._modelled.add(key)
        return out

    def is_modelled(self, placement, local_bsz) -> bool:
        r"""Whether :meth:`throughput` answers from the fitted model rather than the traces.

        ``False`` where the measured rows answer (a measured placement within its measured
        batch range, or a point interpolated within the measured hull), ``True`` elsewhere.

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> toy.is_modelled((1, 2), 6), toy.is_modelled((2, 2, 2, 2, 2, 2), 8), toy.is_modelled((1,), 16)
        (False, True, True)
        """
        self.throughput(placement, local_bsz)
        return (tuple(placement), local_bsz) in self._modelled

    def throughput_model(self):
        """Return the throughput model fitted on all measured rows (fitted once, on first use).

        Returns
        -------
        fastsched.sim._throughput_model.ThroughputParams

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> 1.0 <= toy.throughput_model().gamma <= 10.0
        True
        """
        if self._model is None:
            from fastsched.sim._throughput_model import fit_throughput_model

            rows = self._rows
            self._model = fit_throughput_model(*rows[:, :5].T, max_per_node=rows[:, 5])
        return self._model

    def _throughput(self, placement, local_bsz):
        """``(step, sync, modelled)``: the traces' answer where they have one, else the model's."""
        if not placement:
            raise ValueError("throughput of an empty placement")
        if not (isinstance(local_bsz, (int, float, np.integer, np.floating)) and local_bsz > 0):
            raise ValueError(f"{self.name}: local_bsz must be a positive number, got {local_bsz!r}")
        pid = int("".join(map(str, placement))) if max(placement) < 10 else None
        rows = self._by_placement.get(pid) if pid is not None else None
        if rows is not None:
            x, st, sy = rows
            if x[0] <= local_bsz <= x[-1]:
                if x.shape[0] == 1:
                    return float(st[0]), float(sy[0]), False
                # Linear interpolation with scipy.interpolate.interp1d's arithmetic.
                i = int(np.searchsorted(x, local_bsz, side="left"))
                i = min(max(i, 1), x.shape[0] - 1)
                lo, hi = i - 1, i
                dx = local_bsz - x[lo]
                span = x[hi] - x[lo]
                step = (st[hi] - st[lo]) / span * dx + st[lo]
                sync = (sy[hi] - sy[lo]) / span * dx + sy[lo]
                return float(step), float(sync), False
        else:
            if self._nd_interp is None:
                self._nd_interp = _nd_interpolator(self._nd_points, self._nd_values) or False
            if self._nd_interp is not False:
                num_nodes = min(len(placement), 16)
                step, sync = self._nd_interp([num_nodes, sum(placement), local_bsz])[0]
                if math.isfinite(step) and math.isfinite(sync):
                    return float(step), float(sync), False
        from fastsched.sim._throughput_model import predict_throughput

        step, sync = predict_throughput(
            self.throughput_model(), len(placement), sum(placement), local_bsz, max_per_node=max(placement)
        )
        return float(step), float(sync), True


def _nd_interpolator(points, values):
    """Build scipy's ``LinearNDInterpolator`` on Qhull's triangulation, with our barycentric transforms.

    ``None`` if the points span less than three dimensions (no triangulation exists).

    scipy would compute the transforms on the first query with one LAPACK call per simplex
    (seconds for the larger traces; rounding that depends on the BLAS build). The same
    transforms from :func:`fastsched.sim._interp.barycentric_transforms` make that instant
    and machine-independent; point location and interpolation stay scipy's.
    """
    # Deferred: scipy.spatial/interpolate cost ~0.3 s to import, and only unmeasured
    # placements need them.
    from scipy.interpolate import LinearNDInterpolator
    from scipy.spatial import Delaunay, QhullError

    try:
        tri = Delaunay(points)
    except QhullError:  # flat point set (e.g. one node measured): nothing to interpolate in
        return None
    transforms = barycentric_transforms(tri.points, np.ascontiguousarray(tri.simplices, dtype=np.int64))
    if getattr(tri, "_transform", "missing") is None:  # scipy's lazy cache slot
        tri._transform = transforms
    return LinearNDInterpolator(tri, values)


def load_application(trace_dir, *, published=True, **overrides) -> TraceApplication:
    r"""Load one :class:`TraceApplication` from a trace folder.

    Parameters
    ----------
    trace_dir : str or path
        The application's trace folder; its name is the application name.
    published : bool
        Apply the published study's settings for known applications
        (:data:`PUBLISHED_OVERRIDES`).
    **overrides
        Keyword overrides passed to :class:`TraceApplication`.

    Examples
    --------
    >>> import tempfile
    >>> app = write_example_application(tempfile.mkdtemp())
    >>> toy = load_application(app, max_epochs=2)
    >>> toy.name, toy.max_epochs
    ('toy', 2)
    """
    name = Path(trace_dir).name
    kwargs = dict(PUBLISHED_OVERRIDES.get(name, {})) if published else {}
    kwargs.update(overrides)
    return TraceApplication(trace_dir, name, **kwargs)


def load_applications(traces_dir, *, published=True) -> dict[str, TraceApplication]:
    """Load every application folder under ``traces_dir`` (keyed by folder name).

    Raises
    ------
    FileNotFoundError
        If ``traces_dir`` does not exist or holds no application folder.

    Examples
    --------
    A folder of application folders, each as read by :func:`load_application` (see there
    for a toy one):

    >>> import tempfile
    >>> load_applications(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: ...: no application folders (with placements.csv) found
    """
    traces_dir = Path(traces_dir)
    if not traces_dir.is_dir():
        raise FileNotFoundError(f"traces folder not found: {traces_dir}")
    apps = {}
    for sub in sorted(traces_dir.iterdir()):
        if sub.is_dir() and (sub / "placements.csv").exists():
            apps[sub.name] = load_application(sub, published=published)
    if not apps:
        raise FileNotFoundError(f"{traces_dir}: no application folders (with placements.csv) found")
    return apps


def default_traces_dir() -> Path | None:
    """``$FASTSCHED_TRACES`` if set, else ``None`` (the builtin profiles are used)."""
    env = os.environ.get("FASTSCHED_TRACES")
    return Path(env) if env else None


# A made-up two-node application in the traces layout: the data behind the examples of this
# module (and of fastsched.sim.derive), written once instead of in every docstring.
_EXAMPLE_FILES = {
    "placements.csv": "placement,local_bsz,step_time,sync_time\n1,4,1.0,0.0\n1,8,2.0,0.0\n2,4,1.5,0.5\n"
    "2,8,2.5,0.5\n11,4,2.0,1.0\n11,8,3.0,1.0\n12,4,2.5,1.5\n12,8,3.5,1.5\n",
    "scalability.csv": "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
    "4,8,4,4.0,3.0\n4,8,8,5.0,3.0\n4,4,4,3.0,2.0\n4,4,8,4.0,2.0\n",
    "validation-4.csv": "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,1\n20,20,0.6,1,2\n30,30,0.7,1,3\n",
    "validation-8.csv": "progress,iteration,metric,grad_sqr,grad_var\n12,6,0.4,3,5\n18,12,0.65,3,6\n33,18,0.8,3,7\n",
}


def write_example_application(parent, name="toy") -> Path:
    """Write a tiny made-up application in the traces layout and return its folder.

    Two nodes, per-GPU batch sizes 4 and 8, three validated epochs: enough for
    :class:`TraceApplication` and :func:`load_application` to work on, for examples and tests
    that must not depend on the published traces.

    Parameters
    ----------
    parent : str or path
        Existing folder to create ``parent/name`` in.
    name : str
        The application's folder name (its name).

    Returns
    -------
    pathlib.Path
        ``parent/name``.

    Examples
    --------
    >>> import tempfile
    >>> app = write_example_application(tempfile.mkdtemp())
    >>> app.name, sorted(p.name for p in app.iterdir())
    ('toy', ['placements.csv', 'scalability.csv', 'validation-4.csv', 'validation-8.csv'])
    """
    folder = Path(parent) / name
    folder.mkdir()
    for file, text in _EXAMPLE_FILES.items():
        (folder / file).write_text(text)
    return folder
