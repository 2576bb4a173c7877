"""Oracle profiles as trace folders in the Sia layout, and calibration from measured traces.

What ``fastsched profile`` needs, with numpy only (no simulator, no numba): one model on one
GPU type as the oracle prices it (:func:`oracle_type`, :func:`priced`), the gradient-noise
model's statistics (:func:`noise_scale`, :func:`grad_stats`), :func:`write_profile` (the
folder ``--traces`` reads) and the calibrations from measured ``placements-<type>.csv``
(:func:`calibrate_from_traces`, :func:`calibrate_floors_from_traces`).
:class:`fastsched.sim.oracle.OracleApplication` answers the simulator from the same functions.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched._atomic import atomic_open, check_output
from fastsched.catalog import gpus as gcat
from fastsched.catalog._profile_info import PROFILE_INFO, _type_info, _write_info, read_profile_info
from fastsched.catalog.models import ModelSpec, check_model, model_spec
from fastsched.catalog.oracle import (
    Calibration,
    StepAdjust,
    _check_adjust,
    _check_eff,
    _check_floor,
    _check_overlap,
    _searched,
    calibrate,
    calibrate_floors,
    max_local_bsz,
    step_time,
)

__all__ = [
    "OracleType",
    "oracle_type",
    "priced",
    "min_gpus",
    "noise_scale",
    "grad_stats",
    "progress",
    "iteration",
    "write_profile",
    "calibrate_from_traces",
    "calibrate_floors_from_traces",
    "PROFILE_INFO",
    "read_profile_info",
]


class OracleType(NamedTuple):
    """One model on one GPU type as the oracle prices it (see :func:`oracle_type`).

    ``efficiency`` is ``None`` where none was given: the oracle's default pricing
    (:func:`~fastsched.catalog.oracle.flat_efficiency`).

    Examples
    --------
    >>> t = oracle_type("cifar10", "t4")
    >>> t.gpu.name, t.min_local_bsz <= 128 <= t.max_local_bsz, t.floor, t.adjust, t.efficiency
    ('t4', True, None, None, None)
    """

    model: ModelSpec
    gpu: gcat.GpuType
    efficiency: float | None
    overlap: float | None
    floor: float | None
    min_local_bsz: int
    max_local_bsz: int
    adjust: StepAdjust | None = None


def _kw(t: OracleType) -> dict:
    return {"efficiency": t.efficiency, "overlap": t.overlap, "floor_s": t.floor, "adjust": t.adjust}


def oracle_type(model, gpu, *, efficiency=None, overlap=None, floor=None, adjust=None, catalog=None) -> OracleType:
    """Check ``model`` on ``gpu`` and fix its per-GPU batch range (the GPU's memory, the model's batches).

    Raises
    ------
    ValueError
        A model that fits no GPU of the type (data parallel), or that no plan of up to 64 of
        the type's nodes prices.

    Examples
    --------
    >>> oracle_type("gpt-13b", "h100").max_local_bsz  # the strategy search places the batch
    1024
    >>> min_gpus(oracle_type("llama-70b", "h100"), 1024)  # more than one node of 8 holds it
    16
    """
    m = check_model(model if isinstance(model, ModelSpec) else model_spec(model))
    g = gpu if isinstance(gpu, gcat.GpuType) else gcat.gpu_type(gpu, catalog)
    # The settings are checked here, by name: a decoder's failed first pricing below would
    # otherwise be reported as "no plan holds the model", and overlap is priced only on a
    # distributed placement, rounds into a simulation.
    eff = None if efficiency is None else _check_eff("efficiency", efficiency, 4.0)
    if overlap is not None:
        _check_overlap(overlap)
    if floor is not None:
        _check_floor(floor)
    adjust = _check_adjust(adjust)
    cap = max_local_bsz(m, g)
    if cap < 1:
        if m.transformer is None:
            raise ValueError(f"{m.name} does not fit one {g.name} (memory_gib={g.memory_gib:g})")
        cap = m.init_batch_size  # hybrid parallel: the strategy search places the batch
    hi = int(min(cap, m.max_batch_size))
    lo = int(min(m.min_local_bsz, hi))
    t = OracleType(m, g, eff, overlap, floor, lo, hi, adjust)
    # Step time must not fail for a model priced by the search: check once here.
    try:
        step_time(m, g, (1,) if m.transformer is None else (g.gpus_per_node,), lo, efficiency=eff, floor_s=floor,
                  adjust=adjust)  # fmt: skip
    except ValueError:
        if m.transformer is None:
            raise
        # A decoder larger than one node: priced() runs it on the fewest whole nodes that hold it.
        priced(t, (g.gpus_per_node,), hi)
    return t


def priced(t: OracleType, placement, local_bsz) -> tuple:
    """``(step, sync)`` seconds of ``placement`` (GPUs per node, none empty) at ``local_bsz`` per GPU.

    A placement too small for the model is still priced, as the simulator's
    :class:`~fastsched.sim.traces.Application` interface asks (``min_replicas`` tells policies
    not to choose it): a decoder that no plan of these GPUs holds (it would run out of memory)
    is priced on the smallest power-of-two multiple of the placement that holds the same total
    batch, run time-sliced on these GPUs. Policies still ask (Sia's bootstrap prices one GPU,
    at any per-GPU batch), and no such placement looks faster per GPU than a real one.

    Raises
    ------
    ValueError
        A data-parallel model below one sample per GPU, or a decoder that no multiple up to
        the type's 64 nodes' worth of GPUs holds (:func:`oracle_type` refuses such a model).

    Examples
    --------
    >>> t = oracle_type("gpt-6.7b", "h100")
    >>> one, two = priced(t, (1,), 4), priced(t, (2,), 2)
    >>> one[0] == 2 * two[0]  # one GPU does two GPUs' work time-sliced
    True
    >>> priced(t, (1,), 1)[0] == 2 * priced(t, (2,), 0.5)[0]  # two GPUs share the one sequence
    True
    """
    kw = _kw(t)
    try:
        return tuple(step_time(t.model, t.gpu, placement, local_bsz, **kw))
    except ValueError:
        if t.model.transformer is None:
            raise
    k = 2
    while k <= 64 * max(int(t.gpu.gpus_per_node), 1):
        try:
            step, sync = step_time(t.model, t.gpu, tuple(c * k for c in placement), local_bsz / k, **kw)
        except ValueError:
            k *= 2
            continue
        return step * k, sync * k
    raise ValueError(
        f"{t.model.name}: no plan on up to {k // 2} x {tuple(placement)} GPUs of {t.gpu.name} holds the model"
    )


def min_gpus(t: OracleType, batch_size) -> int:
    """Fewest GPUs of ``t``'s type (a power of two, whole nodes beyond one) that hold the model.

    ``batch_size`` is the job's total batch, split evenly over the GPUs. A model that trains
    data-parallel needs one GPU; a decoder needs as many as the smallest plan that fits in
    their memory (:func:`priced` runs smaller placements time-sliced, as if on this many).

    Examples
    --------
    >>> min_gpus(oracle_type("cifar10", "t4"), 128)
    1
    >>> small, big = oracle_type("gpt-1.3b", "a100-80gb"), oracle_type("gpt-13b", "a100-80gb")
    >>> min_gpus(small, 512) <= min_gpus(big, 512)
    True
    """
    if t.model.transformer is None:
        return 1
    per_node = max(int(t.gpu.gpus_per_node), 1)
    kw = _kw(t)
    n = 1
    while n <= 64 * per_node:
        placement = (n,) if n <= per_node else (per_node,) * (n // per_node) + ((n % per_node,) if n % per_node else ())
        try:
            step_time(t.model, t.gpu, placement, batch_size / n, **kw)
            return n
        except ValueError:
            n *= 2
    raise ValueError(f"{t.model.name}: no plan on up to {64 * per_node} GPUs of {t.gpu.name} holds the model")


def noise_scale(m: ModelSpec, epoch) -> float:
    """Gradient-noise scale (samples) during ``epoch``: geometric from the model's start to end value.

    Examples
    --------
    >>> noise_scale(model_spec("imagenet"), 0), round(noise_scale(model_spec("imagenet"), 89))
    (1000.0, 10000)
    """
    start, end = m.noise_scale
    f = min(max(epoch, 0), m.max_epochs - 1) / max(m.max_epochs - 1, 1)
    return float(start * (end / start) ** f)


def grad_stats(m: ModelSpec, epoch) -> tuple:
    """``(grad_sqr, grad_var)`` during ``epoch``: ``(1, noise_scale / init_batch_size)``, any batch.

    Examples
    --------
    >>> grad_stats(model_spec("cifar10"), 0)
    (1.0, 7.8125)
    """
    return 1.0, noise_scale(m, epoch) / m.init_batch_size


def progress(m: ModelSpec, epoch) -> float:
    """Progress (steps at the initial batch size) to finish ``epoch`` epochs.

    Examples
    --------
    >>> progress(model_spec("cifar10"), 2)
    781.25
    """
    return epoch * m.samples_per_epoch / m.init_batch_size


def iteration(m: ModelSpec, batch_size, epoch) -> int:
    """Optimizer steps after epoch ``epoch`` (0-based) at ``batch_size``.

    Examples
    --------
    >>> iteration(model_spec("cifar10"), 1000, 0)
    50
    """
    return math.ceil((epoch + 1) * m.samples_per_epoch / batch_size)


_COLUMNS = ("placement", "local_bsz", "step_time", "sync_time")


def _read_rows(path: Path):
    """``(placement, local_bsz, step_time, sync_time)`` rows of a measured ``placements-<type>.csv``."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in _COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; a placements file has {list(_COLUMNS)}")
        rows = []
        for line, r in enumerate(reader, start=2):
            text = (r["placement"] or "").strip()
            if not text.isdigit() or not any(int(c) for c in text):
                raise ValueError(
                    f"{path}, line {line}, column placement: expected GPUs per node as digits, got {text!r}"
                )
            values = []
            for col in _COLUMNS[1:]:
                try:
                    x = float(r[col])
                except (TypeError, ValueError):
                    x = math.nan
                if not (0 <= x < math.inf) or (x == 0 and col != "sync_time"):
                    raise ValueError(f"{path}, line {line}, column {col}: expected a positive number, got {r[col]!r}")
                values.append(x)
            rows.append((tuple(int(c) for c in text), *values))
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return rows


def _calibration_model(app_dir: Path, model) -> ModelSpec:
    if not app_dir.is_dir():
        raise FileNotFoundError(f"calibration trace folder not found: {app_dir}")
    if isinstance(model, ModelSpec):
        return model
    try:
        return model_spec(app_dir.name if model is None else model)
    except ValueError as exc:
        if model is not None:
            raise
        raise ValueError(f"calibration trace folder {app_dir}: its name is the application, {exc}") from None


def _measured_files(app_dir: Path, gpu_types, catalog):
    """``(trace name, GpuType, path)`` of each of ``gpu_types`` with a measured ``placements-<type>.csv`` in ``app_dir``."""
    for t in gpu_types:
        name = gcat.trace_name(t, catalog)
        path = app_dir / f"placements-{name}.csv"
        if path.is_file():
            yield name, gcat.gpu_type(t, catalog), path


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
    m = _calibration_model(app_dir, model)
    return {
        name: calibrate(m, g, [(p, b, st) for p, b, st, _ in _read_rows(path)])
        for name, g, path in _measured_files(app_dir, gpu_types, catalog)
    }


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
    m = _calibration_model(app_dir, model)
    rows, types = {}, {}
    for name, g, path in _measured_files(app_dir, gpu_types, catalog):
        rows[name] = [(p, b, st) for p, b, st, _ in _read_rows(path)]
        types[name] = g
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
    statistics=True,
    bootstraps=None,
) -> list:
    """Write ``output/<model>/`` in the Sia traces' layout from the oracle; return the files.

    ``placements-<type>.csv``: one to four nodes with the same GPU count each (every count up
    to the type's GPUs per node) over a geometric grid of per-GPU batches (a decoder no plan
    of those holds: its fewest whole nodes that do, and twice as many);
    ``scalability-<type>.csv``: 1 to ``max_nodes`` full, half and single-GPU nodes;
    ``min-replicas-<type>.csv``, only for a model that needs several GPUs of the type: that
    count (:func:`min_gpus` at the initial batch; the simulator's trace reader takes it);
    ``validation-<B>.csv``: the gradient-noise model at total batches ``B = B0 2^k`` (one, ``B0``,
    for a fixed-batch model).
    ``efficiencies``, ``overlap`` and ``floors`` are as :func:`oracle_applications`'s;
    ``bootstraps`` (``{type: Bootstrap}``, :func:`fastsched.catalog.bootstrap.bootstrap_from_traces`)
    prices each type it holds from its bootstrap profile (its floor and :class:`StepAdjust`).
    :data:`PROFILE_INFO` (``profile.json``) records how each type was priced (``datasheet``,
    ``calibrated`` or ``bootstrap``), its host share and whether it is low-confidence (the host
    rivals the GPU, :data:`~fastsched.catalog.oracle.HOST_BOUND_RATIO`); types already recorded
    there by an earlier call are kept.

    Every file follows the commands' output policy (:func:`fastsched._atomic.check_output`),
    checked for all of them before the first is written: an existing file is replaced only with
    ``force=True`` (the command's ``--force``), a file of ``inputs`` (the calibration traces,
    the GPU-types file) or of an input folder never, and each file appears whole or not at all
    (written beside its name, then renamed).

    ``statistics=False`` (the command's ``--types-only``) writes the GPU types' files only and
    keeps the folder's ``validation-<B>.csv``: it adds types, e.g. a GPU of one's own, to an
    application measured on others, whose measured statistics every type then shares.

    Examples
    --------
    >>> import tempfile
    >>> files = write_profile("ncf", ["t4", "h100"], tempfile.mkdtemp())
    >>> sorted(f.name for f in files)[:4]
    ['placements-aws.csv', 'placements-h100.csv', 'scalability-aws.csv', 'scalability-h100.csv']
    """
    m = model if isinstance(model, ModelSpec) else model_spec(model)
    efficiencies, floors, bootstraps = efficiencies or {}, floors or {}, bootstraps or {}
    folder = Path(output) / m.name
    names = [gcat.trace_name(t, catalog) for t in gpu_types]
    planned = [f"{kind}-{n}.csv" for n in names for kind in ("placements", "scalability")]
    stats = [f"validation-{b}.csv" for b in _validation_batches(m)]
    if not statistics and not any(folder.glob("validation-*.csv")):
        raise ValueError(
            f"--types-only (statistics=False) adds GPU types to a profile and keeps its statistics, but {folder} "
            "holds no validation-<B>.csv; leave it out to write them"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for file_name in planned:
        check_output(folder / file_name, inputs=inputs, force=force, what="--output")
    for file_name in stats if statistics else ():
        check_output(folder / file_name, inputs=inputs, force=True, what="--output")  # inputs: never, even forced
        if not force and (folder / file_name).exists():
            # Not only "use --force": the statistics are shared by every type profiled here (measured
            # ones too), and replacing them changes those types' jobs as well.
            raise ValueError(
                f"--output {folder / file_name} already exists: {folder} holds the application's statistics "
                "(validation-<B>.csv), which every GPU type's profile there shares; use --types-only to add "
                "GPU types and keep them, or --force to replace them"
            )
    planned += stats if statistics else []
    files = []  # (path, header, rows): every type is priced and checked before the first file is written
    first = None
    info = {}
    for t, name in zip(gpu_types, names, strict=True):
        g = gcat.gpu_type(t, catalog)
        mode, eff, floor, adjust, bs = _type_settings(name, g, efficiencies, floors, bootstraps)
        app = oracle_type(m, g, efficiency=eff, overlap=overlap, floor=floor, adjust=adjust)
        info[name] = _type_info(app, mode, bs)
        first = first or app
        files += _type_files(m, g, app, folder / f"placements-{name}.csv", folder / f"scalability-{name}.csv",
                             overlap, max_nodes)  # fmt: skip
    if first is None:
        raise ValueError("gpu_types is empty")
    for b in _validation_batches(m) if statistics else ():
        rows = []
        for e in range(m.max_epochs):
            rows.append((progress(first.model, e + 1), iteration(first.model, b, e), 0.0, *grad_stats(first.model, e)))
        files.append(
            (folder / f"validation-{b}.csv", ("progress", "iteration", "metric", "grad_sqr", "grad_var"), rows)
        )
    for path, header, rows in files:
        _check_rows(path, header, rows)
        if path.name not in planned:
            check_output(path, inputs=inputs, force=force, what="--output")
    info_path = folder / PROFILE_INFO
    check_output(info_path, inputs=inputs, force=True, what="--output")  # a record: merged, never an input
    for path, header, rows in files:
        _write_csv(path, header, rows)
    _write_info(info_path, m, info)
    return [path for path, _, _ in files]


def _type_settings(name, g, efficiencies, floors, bootstraps) -> tuple:
    """``(mode, efficiency, floor, adjust, bootstrap)`` of type ``g`` (trace name ``name``) as :func:`write_profile` prices it.

    A bootstrap of the type gives all of it; else the efficiency and floor given for the type
    (``None``: the oracle's defaults). Each dict is looked up by trace name, then catalogue name.
    """
    bs = bootstraps.get(name, bootstraps.get(g.name))
    if bs is not None:
        return "bootstrap", bs.efficiency, bs.floor_s, bs.adjust, bs
    eff = efficiencies.get(name, efficiencies.get(g.name))
    return ("calibrated" if eff is not None else "datasheet"), eff, floors.get(name, floors.get(g.name)), None, None


def _type_files(m, g, app, placements_path, scalability_path, overlap, max_nodes):
    """Price ``m`` on GPU type ``g``: the placements and scalability files as ``(path, header, rows)``."""
    hybrid = _searched(m, g)
    if hybrid:  # strategy search per point: powers of two, placements that fit no plan skipped
        grid = np.array([2**i for i in range(7) if 2**i <= app.max_local_bsz], dtype=np.float64)
    else:
        grid = np.array(_batch_grid(app.min_local_bsz, app.max_local_bsz), dtype=np.float64)

    def points(p):
        if not hybrid:
            return zip(grid, *step_time(m, g, p, grid, efficiency=app.efficiency, overlap=overlap,
                                        floor_s=app.floor, adjust=app.adjust), strict=True)  # fmt: skip
        out = []
        for b in grid:
            try:
                out.append((b, *step_time(m, g, p, b, efficiency=app.efficiency, overlap=overlap,
                                          floor_s=app.floor, adjust=app.adjust)))  # fmt: skip
            except ValueError:  # no plan of these GPUs fits the model, or divides its batch
                pass
        return out

    gpn = g.gpus_per_node
    widths = range(1, min(gpn, 9) + 1)  # one digit per node in the placement id

    def placement_rows(node_counts):
        return [("".join(map(str, (c,) * k)), int(b), s, y) for k in node_counts for c in widths
                for b, s, y in points((c,) * k)]  # fmt: skip

    def scalability_rows(node_counts):
        return [(nodes, nodes * per, int(b), s, y) for nodes in node_counts
                for per in sorted({1, max(gpn // 2, 1), gpn}) for b, s, y in points((per,) * nodes)]  # fmt: skip

    # The fewest GPUs the model really runs on, as OracleApplication.min_replicas states it.
    need = min_gpus(app, m.init_batch_size) if m.transformer is not None else 1
    rows = placement_rows(range(1, 5))
    scal = scalability_rows(sorted({1, 2, 4, 8, max_nodes}))
    if hybrid and not (rows and scal):
        # A decoder that no plan of the usual node counts holds: its fewest whole nodes, and twice as many.
        nodes = -(-need // gpn)
        rows = rows or placement_rows((nodes, 2 * nodes))
        scal = scal or scalability_rows((nodes, 2 * nodes))
    if not rows:
        raise ValueError(f"{m.name} fits no placement of up to 4 nodes of {g.name}")
    out = [
        (placements_path, ("placement", "local_bsz", "step_time", "sync_time"), rows),
        (scalability_path, ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"), scal),
    ]
    if need > 1:
        name = placements_path.name.removeprefix("placements-")
        out.append((placements_path.with_name(f"min-replicas-{name}"), ("min_replicas",), [(need,)]))
    return out


def _check_rows(path, header, rows):
    for r in rows:  # extreme models or GPU types can overflow the oracle's times: refuse, never write inf
        bad = [
            h for h, x in zip(header, r, strict=True) if isinstance(x, (float, np.floating)) and not 0 <= x < math.inf
        ]
        if bad:
            raise ValueError(f"{path.name}: the oracle gives {bad[0]} = {r[header.index(bad[0])]!r} (not finite)")


def _write_csv(path, header, rows):
    with atomic_open(path, "w") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([repr(float(x)) if isinstance(x, (float, np.floating)) else x for x in r])
