"""Applications whose truth is the cost model's oracle: jobs and GPU types without traces.

:class:`OracleApplication` answers the simulator's questions (:class:`~fastsched.sim.traces.Application`)
from a :class:`~fastsched.catalog.ModelSpec` and a :class:`~fastsched.catalog.GpuType`: step and
sync times from :func:`fastsched.catalog.step_time`, the per-GPU batch range from the GPU's
memory, and statistical efficiency from a gradient-noise model (McCandlish et al. 2018): the
noise scale ``B_noise`` grows geometrically from the model's start to its end value over the
epochs, reported as ``grad_sqr = 1`` and ``grad_var = B_noise / init_batch_size`` (so the
simulator's gain at total batch ``B`` is ``(1 + B_noise/B0) / (1 + B_noise/B)``). Every
policy uses it unchanged; :func:`oracle_applications` builds the per-GPU-type form the typed
clusters use, and :func:`write_profile` writes the same numbers as a trace folder in the Sia
layout (``placements-<type>.csv``, ``scalability-<type>.csv``, ``validation-<B>.csv``) that
``--traces`` reads.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from fastsched._atomic import atomic_open, check_output
from fastsched.catalog import gpus as gcat
from fastsched.catalog.models import ModelSpec, check_model, model_spec
from fastsched.catalog.oracle import (
    DEFAULT_EFFICIENCY,
    Calibration,
    calibrate,
    calibrate_floors,
    max_local_bsz,
    step_time,
)
from fastsched.goodput import GradParams
from fastsched.sim.hetero import HeteroApplication
from fastsched.sim.traces import Application, normalize_placement

__all__ = [
    "OracleApplication",
    "oracle_applications",
    "write_profile",
    "calibrate_from_traces",
    "calibrate_floors_from_traces",
]


class OracleApplication(Application):
    """An application modelled by the throughput oracle and a gradient-noise model.

    Parameters
    ----------
    model : str or ModelSpec
        A catalogued name (:func:`fastsched.catalog.model_spec`) or a spec.
    gpu : str or GpuType
        GPU type (name or alias).
    efficiency : float, optional
        The type's efficiency (default :data:`fastsched.catalog.DEFAULT_EFFICIENCY`).
    noise_scale : (float, float), optional
        Gradient-noise scale at the start and end of training (default: the model's).
    max_epochs : int, optional
    fixed_batch : bool, optional
        Keep the total batch at ``init_batch_size`` (scale GPUs, not batch; default: the
        model's).
    overlap : float, optional
        Share of the backward pass that hides the all-reduce (default
        :data:`fastsched.catalog.oracle.OVERLAP`, 0 as in the measured 2021 stack; 1 for
        PyTorch DDP's bucketed overlap).
    floor : float, optional
        The machine's fixed host seconds per step (``floor_s`` of
        :func:`fastsched.catalog.step_time`; default 0).
    catalog : dict, optional
        GPU catalogue (see :func:`fastsched.catalog.with_types`).

    Examples
    --------
    >>> app = OracleApplication("cifar10", "h100")
    >>> app.name, app.init_batch_size, app.min_local_bsz <= 128 <= app.max_local_bsz
    ('cifar10', 128, True)
    >>> one, eight = app.throughput((1,), 128), app.throughput((8,), 128)
    >>> one[1], eight[0] > one[0]
    (0.0, True)
    >>> app.grad_stats(128, 0)[1] < app.grad_stats(128, 99)[1]  # the noise scale grows
    True
    """

    def __init__(self, model, gpu, *, efficiency=None, noise_scale=None, max_epochs=None, fixed_batch=None,
                 overlap=None, floor=None, catalog=None):  # fmt: skip
        m = model if isinstance(model, ModelSpec) else model_spec(model)
        if noise_scale is not None:
            m = m._replace(noise_scale=tuple(noise_scale))
        if max_epochs is not None:
            m = m._replace(max_epochs=max_epochs)
        if fixed_batch is not None:
            m = m._replace(fixed_batch=bool(fixed_batch))
        self.model = check_model(m)
        self.gpu = gpu if isinstance(gpu, gcat.GpuType) else gcat.gpu_type(gpu, catalog)
        self.efficiency = DEFAULT_EFFICIENCY if efficiency is None else float(efficiency)
        self.overlap = overlap
        self.floor = floor
        self.name = m.name
        self.gpu_type = self.gpu.trace_name
        self.init_batch_size = m.init_batch_size
        self.max_batch_size = m.max_batch_size
        self.max_epochs = m.max_epochs
        self.fixed_batch_size = m.init_batch_size if m.fixed_batch else None
        cap = max_local_bsz(m, self.gpu)
        if cap < 1:
            if m.transformer is None:
                raise ValueError(f"{m.name} does not fit one {self.gpu.name} (memory_gib={self.gpu.memory_gib:g})")
            cap = m.init_batch_size  # hybrid parallel: the strategy search places the batch
        self.max_local_bsz = int(min(cap, m.max_batch_size))
        self.min_local_bsz = int(min(m.min_local_bsz, self.max_local_bsz))
        self._memo: dict = {}
        # Step time must not fail for a model priced by the search: check once here.
        step_time(m, self.gpu, (1,) if m.transformer is None else (self.gpu.gpus_per_node,), self.min_local_bsz,
                  efficiency=self.efficiency, floor_s=floor)  # fmt: skip

    def throughput(self, placement, local_bsz):
        """Return ``(step_time, sync_time)`` seconds of ``placement`` at ``local_bsz`` per GPU."""
        key = (tuple(placement), local_bsz)
        out = self._memo.get(key)
        if out is None:
            p = normalize_placement(placement)
            if not p:
                raise ValueError("throughput of an empty placement")
            out = self._memo[key] = self._priced(p, local_bsz)
        return out

    def _priced(self, p, local_bsz):
        try:
            return tuple(step_time(self.model, self.gpu, p, local_bsz, efficiency=self.efficiency,
                                   overlap=self.overlap, floor_s=self.floor))  # fmt: skip
        except ValueError:
            if self.model.transformer is None:
                raise
        # No plan of these GPUs holds the model (it would run out of memory). Policies still ask
        # (Sia's bootstrap prices one GPU): answer with the smallest multiple of the placement
        # that fits, run time-sliced on these GPUs, so no such placement looks faster per GPU
        # than a real one.
        for k in (2, 4, 8, 16, 32, 64):
            try:
                step, sync = step_time(self.model, self.gpu, tuple(c * k for c in p), local_bsz / k,
                                       efficiency=self.efficiency, overlap=self.overlap,
                                       floor_s=self.floor)  # fmt: skip
            except ValueError:
                continue
            return step * k, sync * k
        raise ValueError(f"{self.name}: no plan on up to 64 x {p} GPUs of {self.gpu.name} holds the model")

    def noise_scale(self, epoch) -> float:
        """Gradient-noise scale (samples) during ``epoch``: geometric from start to end.

        Examples
        --------
        >>> app = OracleApplication("imagenet", "v100")
        >>> app.noise_scale(0), round(app.noise_scale(89))
        (1000.0, 30000)
        """
        start, end = self.model.noise_scale
        f = min(max(epoch, 0), self.max_epochs - 1) / max(self.max_epochs - 1, 1)
        return float(start * (end / start) ** f)

    def grad_params(self, epoch) -> GradParams:
        """Return the gradient-noise model's :class:`~fastsched.goodput.GradParams` during ``epoch``.

        ``sqr = 1`` (the scale is arbitrary) and ``var = noise_scale(epoch) / init_batch_size``:
        the variance of a gradient estimate at the initial batch relative to its squared norm.

        Examples
        --------
        >>> OracleApplication("cifar10", "t4").grad_params(0)
        GradParams(sqr=1.0, var=0.78125)
        """
        return GradParams(1.0, self.noise_scale(epoch) / self.init_batch_size)

    def grad_stats(self, batch_size, epoch):
        """``(grad_sqr, grad_var)`` of :meth:`grad_params` (independent of the batch size)."""
        return tuple(self.grad_params(epoch))

    def progress(self, epoch):
        """Progress (steps at the initial batch size) to finish ``epoch`` epochs."""
        return epoch * self.model.samples_per_epoch / self.init_batch_size

    def iteration(self, batch_size, epoch):
        """Optimizer steps after epoch ``epoch`` (0-based) at ``batch_size``."""
        return math.ceil((epoch + 1) * self.model.samples_per_epoch / batch_size)


def oracle_applications(models, gpu_types, *, efficiencies=None, overlap=None, floors=None, catalog=None) -> dict:
    """Per-GPU-type oracle applications for a typed cluster: ``{name: HeteroApplication}``.

    Parameters
    ----------
    models : iterable of str or ModelSpec
    gpu_types : iterable of str
        The cluster's types (as in its spec: trace names such as ``aws`` or ``h100``).
    efficiencies : dict, optional
        ``{type: efficiency}`` (e.g. from :func:`calibrate_from_traces`).
    overlap : float, optional
        As :class:`OracleApplication`'s.
    floors : dict, optional
        ``{type: floor seconds}`` (e.g. from :func:`calibrate_floors_from_traces`).

    Examples
    --------
    >>> apps = oracle_applications(["cifar10"], ["aws", "h100"])
    >>> h = apps["cifar10"]
    >>> h.types, h.throughput_ratio("h100", "aws") > 1
    (('aws', 'h100'), True)
    """
    efficiencies, floors = efficiencies or {}, floors or {}
    out = {}
    for model in models:
        m = model if isinstance(model, ModelSpec) else model_spec(model)
        apps = {}
        for t in gpu_types:
            g = gcat.gpu_type(t, catalog)
            keys = (t, g.trace_name, g.name)  # as given, then as a calibration or a catalogue names it
            eff = next((efficiencies[k] for k in keys if k in efficiencies), None)
            floor = next((floors[k] for k in keys if k in floors), None)
            apps[t] = OracleApplication(m, g, efficiency=eff, overlap=overlap, floor=floor)
        out[m.name] = HeteroApplication(apps)
    return out


def _read_rows(path: Path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = []
        for r in reader:
            p = tuple(int(c) for c in r["placement"].strip())
            rows.append((p, float(r["local_bsz"]), float(r["step_time"]), float(r["sync_time"])))
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return rows


def calibrate_from_traces(app_dir, gpu_types, *, model=None, catalog=None) -> dict:
    """Fit one efficiency per GPU type from an application's measured ``placements-<type>.csv``.

    Parameters
    ----------
    app_dir : str or path
        The application's trace folder (its name is the catalogued model unless ``model``).
    gpu_types : iterable of str
        Types to calibrate; a type without a measured file keeps the default (not in the result).

    Returns
    -------
    dict
        ``{trace name: efficiency}``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "cifar10"
    >>> write_profile("cifar10", ["t4"], d.parent, efficiencies={"aws": 0.25})  # doctest: +ELLIPSIS
    [...]
    >>> round(calibrate_from_traces(d, ["t4"])["aws"], 2)
    0.25
    """
    app_dir = Path(app_dir)
    if not app_dir.is_dir():
        raise FileNotFoundError(f"calibration trace folder not found: {app_dir}")
    m = model_spec(app_dir.name if model is None else model) if not isinstance(model, ModelSpec) else model
    out = {}
    for t in gpu_types:
        name = gcat.trace_name(t, catalog)
        path = app_dir / f"placements-{name}.csv"
        if not path.is_file():
            continue
        rows = [(p, b, st) for p, b, st, _ in _read_rows(path)]
        out[name] = calibrate(m, gcat.gpu_type(t, catalog), rows)
    return out


def calibrate_floors_from_traces(app_dir, gpu_types, *, model=None, efficiency=None, catalog=None) -> Calibration:
    """Fit one per-step floor per GPU type and one shared efficiency from measured ``placements-<type>.csv``.

    The other per-type number: :func:`fastsched.catalog.calibrate_floors` on the measured rows
    of each type (a type without a file is left out), keyed by trace name.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "cifar10"
    >>> _ = write_profile("cifar10", ["t4", "v100"], d.parent, efficiencies={"aws": 0.5, "azure": 0.5},
    ...                   floors={"azure": 0.08})
    >>> c = calibrate_floors_from_traces(d, ["t4", "v100"])
    >>> round(c.efficiencies["aws"], 2), round(c.floors["aws"], 3), round(c.floors["azure"], 3)
    (0.5, 0.0, 0.08)
    """
    app_dir = Path(app_dir)
    if not app_dir.is_dir():
        raise FileNotFoundError(f"calibration trace folder not found: {app_dir}")
    m = model_spec(app_dir.name if model is None else model) if not isinstance(model, ModelSpec) else model
    rows, types = {}, {}
    for t in gpu_types:
        name = gcat.trace_name(t, catalog)
        path = app_dir / f"placements-{name}.csv"
        if path.is_file():
            rows[name] = [(p, b, st) for p, b, st, _ in _read_rows(path)]
            types[name] = gcat.gpu_type(t, catalog)
    if not rows:
        raise ValueError(f"{app_dir}: no placements-<type>.csv of {list(gpu_types)}")
    c = calibrate_floors(m, {types[n]: r for n, r in rows.items()}, efficiency=efficiency)
    return Calibration({n: c.efficiencies[types[n]] for n in rows}, {n: c.floors[types[n]] for n in rows})


def _batch_grid(lo, hi, n=10):
    return sorted({int(round(x)) for x in np.geomspace(lo, hi, n)} | {lo, hi})


def _validation_batches(m) -> list:
    b, out = m.init_batch_size, []
    while True:
        out.append(b)
        if b * 2 > m.max_batch_size or m.fixed_batch:
            return out
        b *= 2


def write_profile(
    model,
    gpu_types,
    output,
    *,
    efficiencies=None,
    overlap=None,
    floors=None,
    catalog=None,
    max_nodes=16,
    force=False,
    inputs=(),
) -> list:
    """Write ``output/<model>/`` in the Sia traces' layout from the oracle; return the files.

    ``placements-<type>.csv``: one to four nodes with the same GPU count each (every count up
    to the type's GPUs per node) over a geometric grid of per-GPU batches;
    ``scalability-<type>.csv``: 1 to ``max_nodes`` full, half and single-GPU nodes;
    ``validation-<B>.csv``: the gradient-noise model at total batches ``B = B0 2^k``.
    ``efficiencies``, ``overlap`` and ``floors`` are as :func:`oracle_applications`'s.

    Every file follows the commands' output policy (:func:`fastsched._atomic.check_output`),
    checked for all of them before the first is written: an existing file is replaced only with
    ``force=True`` (the command's ``--force``), a file of ``inputs`` (the calibration traces,
    the GPU-types file) or of an input folder never, and each file appears whole or not at all
    (written beside its name, then renamed).

    Examples
    --------
    >>> import tempfile
    >>> files = write_profile("ncf", ["t4", "h100"], tempfile.mkdtemp())
    >>> sorted(f.name for f in files)[:4]
    ['placements-aws.csv', 'placements-h100.csv', 'scalability-aws.csv', 'scalability-h100.csv']
    """
    m = model if isinstance(model, ModelSpec) else model_spec(model)
    efficiencies, floors = efficiencies or {}, floors or {}
    folder = Path(output) / m.name
    names = [gcat.trace_name(t, catalog) for t in gpu_types]
    planned = [f"{kind}-{n}.csv" for n in names for kind in ("placements", "scalability")]
    planned += [f"validation-{b}.csv" for b in _validation_batches(m)]
    folder.mkdir(parents=True, exist_ok=True)
    for file_name in planned:
        check_output(folder / file_name, inputs=inputs, force=force, what="--output")
    written = []
    first = None
    for t, name in zip(gpu_types, names, strict=True):
        g = gcat.gpu_type(t, catalog)
        app = OracleApplication(
            m,
            g,
            efficiency=efficiencies.get(name, efficiencies.get(g.name)),
            overlap=overlap,
            floor=floors.get(name, floors.get(g.name)),
        )
        first = first or app
        hybrid = m.transformer is not None and max_local_bsz(m, g) < 1
        if hybrid:  # strategy search per point: powers of two, placements that fit no plan skipped
            grid = np.array([2**i for i in range(7) if 2**i <= app.max_local_bsz], dtype=np.float64)
        else:
            grid = np.array(_batch_grid(app.min_local_bsz, app.max_local_bsz), dtype=np.float64)

        def points(p, grid=grid, g=g, app=app, hybrid=hybrid):
            if not hybrid:
                return zip(grid, *step_time(m, g, p, grid, efficiency=app.efficiency, overlap=overlap,
                                            floor_s=app.floor), strict=True)  # fmt: skip
            out = []
            for b in grid:
                try:
                    out.append((b, *step_time(m, g, p, b, efficiency=app.efficiency, overlap=overlap,
                                              floor_s=app.floor)))  # fmt: skip
                except ValueError:  # no plan of these GPUs fits the model, or divides its batch
                    pass
            return out

        gpn = g.gpus_per_node
        rows = []
        for k in range(1, 5):
            for c in range(1, min(gpn, 9) + 1):  # one digit per node in the placement id
                p = (c,) * k
                pid = "".join(map(str, p))
                rows += [(pid, int(b), s, y) for b, s, y in points(p)]
        if not rows:
            raise ValueError(f"{m.name} fits no placement of up to 4 nodes of {g.name}")
        path = folder / f"placements-{name}.csv"
        _write_csv(path, ("placement", "local_bsz", "step_time", "sync_time"), rows)
        written.append(path)
        rows = []
        for nodes in sorted({1, 2, 4, 8, max_nodes}):
            for per in sorted({1, max(gpn // 2, 1), gpn}):
                rows += [(nodes, nodes * per, int(b), s, y) for b, s, y in points((per,) * nodes)]
        path = folder / f"scalability-{name}.csv"
        _write_csv(path, ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"), rows)
        written.append(path)
    if first is None:
        raise ValueError("gpu_types is empty")
    for b in _validation_batches(m):
        rows = []
        for e in range(m.max_epochs):
            rows.append((first.progress(e + 1), first.iteration(b, e), 0.0, *first.grad_stats(b, e)))
        path = folder / f"validation-{b}.csv"
        _write_csv(path, ("progress", "iteration", "metric", "grad_sqr", "grad_var"), rows)
        written.append(path)
    return written


def _write_csv(path, header, rows):
    for r in rows:  # extreme models or GPU types can overflow the oracle's times: refuse, never write inf
        bad = [
            h for h, x in zip(header, r, strict=True) if isinstance(x, (float, np.floating)) and not 0 <= x < math.inf
        ]
        if bad:
            raise ValueError(f"{path.name}: the oracle gives {bad[0]} = {r[header.index(bad[0])]!r} (not finite)")
    with atomic_open(path, "w") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([repr(float(x)) if isinstance(x, (float, np.floating)) else x for x in r])
