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
  epoch, interpolated linearly between the two measured batch sizes around it (a folder with
  one ``validation-<B>.csv``, as ``fastsched profile`` writes for a fixed-batch model, gives
  its statistics at every batch size);
* :meth:`~TraceApplication.progress`: statistical progress needed to finish an epoch;
* :meth:`~TraceApplication.iteration`: optimizer steps after an epoch (Optimus's oracle).

Every file is checked once, at load (:mod:`fastsched.sim.truth._trace_files` reads them; a
:class:`ValueError` names the file, line and column).

Every answer is memoised: the simulator asks the same questions many times.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from fastsched.sim.truth._interp import LinearInterpolator, barycentric_transforms, triangulate
from fastsched.sim.truth._rules import placement_id
from fastsched.sim.truth._trace_files import read_min_replicas, read_trace_folder, write_example_application

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
    min_replicas : int
        Fewest GPUs one job can run on (``1``; more for a model whose memory needs several,
        e.g. :attr:`fastsched.sim.truth.oracle.OracleApplication.min_replicas`). Policies that
        choose GPU counts give such a job none or at least this many.

    Examples
    --------
    The simulator's applications implement this interface, e.g. the builtin profiles (NCF keeps
    its batch size and runs on one GPU):

    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["ncf"]
    >>> isinstance(app, Application), app.fixed_batch_size, app.max_replicas
    (True, 32768, 1)
    >>> app.min_local_bsz <= app.init_batch_size <= app.max_batch_size
    True
    """

    fixed_batch_size = None
    max_replicas = None
    min_replicas = 1

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
        >>> from fastsched.sim.truth.builtin import builtin_applications
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
        tables = read_trace_folder(trace_dir, gpu_type)
        self.gpu_type = gpu_type
        self._bsz, self._valid = tables.bsz, tables.valid
        self._by_placement = tables.by_placement
        self._nd_points, self._nd_values, self._rows = tables.nd_points, tables.nd_values, tables.rows
        self._nd_interp = None
        self._model = None
        local = tables.local_bsz
        self.init_batch_size = int(init_batch_size or self._bsz[0])
        self.max_batch_size = int(max_batch_size or self._bsz[-1])
        self.min_local_bsz = int(min_local_bsz or min(local))
        self.max_local_bsz = int(max_local_bsz or max(local))
        nrows = min(len(v["progress"]) for v in self._valid.values())
        self.max_epochs = int(max_epochs or nrows)
        self.fixed_batch_size = fixed_batch_size
        self.max_replicas = max_replicas
        self.min_replicas = read_min_replicas(trace_dir, gpu_type)
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
        if len(self._bsz) == 1:
            # One validated batch (a fixed-batch profile): nothing to interpolate between, so its
            # statistics stand for every batch, as for the rounded batches a fixed batch runs at.
            return self._bsz[0], self._bsz[0]
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
            if len(self._bsz) == 1 and batch_size != self._bsz[0]:  # the same samples in steps of batch_size
                out = out * self._bsz[0] / batch_size
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
        (:mod:`fastsched.sim.truth._throughput_model`, see :meth:`is_modelled`).

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
        fastsched.sim.truth._throughput_model.ThroughputParams

        Examples
        --------
        >>> import tempfile
        >>> toy = TraceApplication(write_example_application(tempfile.mkdtemp()))
        >>> 1.0 <= toy.throughput_model().gamma <= 10.0
        True
        """
        if self._model is None:
            from fastsched.sim.truth._throughput_model import fit_throughput_model

            rows = self._rows
            self._model = fit_throughput_model(*rows[:, :5].T, max_per_node=rows[:, 5])
        return self._model

    def _throughput(self, placement, local_bsz):
        """``(step, sync, modelled)``: the traces' answer where they have one, else the model's."""
        if not placement:
            raise ValueError("throughput of an empty placement")
        if not (isinstance(local_bsz, (int, float, np.integer, np.floating)) and local_bsz > 0):
            raise ValueError(f"{self.name}: local_bsz must be a positive number, got {local_bsz!r}")
        pid = placement_id(placement)
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
                answer = self._nd_interp((num_nodes, sum(placement), local_bsz))
                if answer is not None and math.isfinite(answer[0]) and math.isfinite(answer[1]):
                    return answer[0], answer[1], False
        from fastsched.sim.truth._throughput_model import predict_throughput

        step, sync = predict_throughput(
            self.throughput_model(), len(placement), sum(placement), local_bsz, max_per_node=max(placement)
        )
        return float(step), float(sync), True


def _nd_interpolator(points, values):
    """Linear interpolation of ``values`` over Qhull's triangulation of ``points`` (scipy's ``LinearNDInterpolator``).

    ``None`` if the points span less than three dimensions (no triangulation exists). The
    answers are those of ``scipy.interpolate.LinearNDInterpolator`` on the same
    triangulation and transforms (:mod:`fastsched.sim.truth._interp`), without importing
    ``scipy.interpolate``.
    """
    geometry = _geometry(points)
    return None if geometry is None else LinearInterpolator(geometry[0], values, transforms=geometry[1])


#: Triangulations and their barycentric transforms by the points' bytes (see :func:`_geometry`).
_GEOMETRY: dict = {}
#: The most kept: a study loads a few dozen (application, type) point sets, the same in every run.
GEOMETRY_CACHE_SIZE = 256


def _geometry(points):
    """``(triangulation, transforms)`` of ``points`` (``None``: flat), kept in memory by the points' bytes.

    The points are an application's measured layouts (nodes, GPUs, batch): the same in every run
    on a trace folder and in every draw of a profile (a draw moves step times, not layouts), while
    :func:`~fastsched.sim.truth._interp.triangulate` reads its file cache (and locates numba's
    cache folder) on every call. Both are functions of the points alone (the file cache is
    keyed the same way), so an entry answers only for identical bytes and shape; its arrays
    are read-only, so no caller can change what the next one gets.
    """
    points = np.ascontiguousarray(points, dtype=np.float64)
    key = (points.shape, points.tobytes())
    if key in _GEOMETRY:
        return _GEOMETRY[key]
    tri = triangulate(points)
    if tri is None:
        geometry = None
    else:
        tri = tri._replace(
            **{f: _frozen(getattr(tri, f)) for f in tri._fields if isinstance(getattr(tri, f), np.ndarray)}
        )
        geometry = (tri, _frozen(barycentric_transforms(tri.points, tri.simplices)))
    if len(_GEOMETRY) >= GEOMETRY_CACHE_SIZE:
        _GEOMETRY.pop(next(iter(_GEOMETRY)))  # the oldest first
    _GEOMETRY[key] = geometry
    return geometry


def _frozen(a):
    a = np.array(a)  # a copy: the caller's array stays writable
    a.setflags(write=False)
    return a


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
