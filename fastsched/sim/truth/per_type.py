"""The truth of a cluster of several GPU types: applications measured per type, and their loaders.

A :class:`HeteroApplication` holds one :class:`~fastsched.sim.truth.traces.Application` per GPU
type (the Sia traces: ``placements-<type>.csv``, ``scalability-<type>.csv``, shared
``validation-<B>.csv``): statistical behaviour is hardware-independent, throughput and the
per-GPU batch limits are per type. The study's constants (restart delays, slowdowns, per-type
overrides) live here too: they are what a job truly experiences. What a job observes and how
it runs is :mod:`fastsched.sim.engine.hetero_job` (the job state); what a policy estimates from the
observations is :mod:`fastsched.sim.policies._belief`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from fastsched.sim.truth._rules import fixed_batch_config, id_placement, placement_id
from fastsched.sim.truth.traces import PUBLISHED_OVERRIDES, Application, TraceApplication, normalize_placement
from fastsched.sim.truth.traces import load_applications as load_plain_applications

__all__ = [
    "HeteroApplication",
    "SIA_OVERRIDES",
    "SIA_TYPE_OVERRIDES",
    "CATEGORIES",
    "MIGRATE_DELAY",
    "SIA_RESTART_DELAYS",
    "SIA_SLOWDOWNS",
    "load_hetero_applications",
    "load_applications",
    "resolve_hetero_applications",
    "one_gpu_throughput",
    "ONE_GPU_RULES",
    "fixed_batch_throughput",
]


#: Seconds a job pauses after moving to another GPU type when its application has no
#: measured restart time.
MIGRATE_DELAY = 45

#: Checkpoint-restore seconds per (re)allocation measured per application in the Sia study
#: (used for restarts within a type and moves between types alike; others: 30 s). The
#: simulator's truth: what a restart costs a job. Sia's scheduler plans with its own belief,
#: :data:`fastsched.sim.policies.sia.RESTART_PENALTIES`, which differs (cifar10 30 s, yolov3 45 s),
#: as in the study's code.
SIA_RESTART_DELAYS = {"cifar10": 50, "deepspeech2": 25, "bert": 120, "yolov3": 80, "imagenet": 250, "ncf": 15}

#: Slowdown of real training runs over the trace-based model, fitted per application by the Sia
#: authors against their testbed: a job's true goodput is divided by it (others: 1).
SIA_SLOWDOWNS = {"cifar10": 1.8, "imagenet": 1.2, "yolov3": 1.2, "bert": 1.2, "deepspeech2": 1.2, "ncf": 1.5}

#: Per-(application, GPU type) settings of the Sia traces: deepspeech2's per-GPU batch on the
#: 2080 Ti is limited to 57 (memory), below the largest batch in its profile.
SIA_TYPE_OVERRIDES = {("deepspeech2", "rtx"): {"max_local_bsz": 57}}

#: Job categories of the Sia workloads: batch size and GPU count adaptive; GPU count only; neither.
CATEGORIES = ("adaptive", "scale-gpus", "rigid")

#: Settings of the Sia study per application: epochs to completion (as in the Pollux study);
#: NCF runs rigid on one GPU at batch 32768. Unlike the Pollux study, no per-GPU batch cap for
#: yolov3: each GPU type's own measured range is its memory limit.
SIA_OVERRIDES = {
    name: ({"max_epochs": o["max_epochs"]} if name != "ncf" else dict(o)) for name, o in PUBLISHED_OVERRIDES.items()
}


#: Rules for a type's one-GPU throughput in Sia's bootstrap (see :func:`one_gpu_throughput`).
ONE_GPU_RULES = ("largest-batch", "independent-maxima")


def one_gpu_throughput(app, rule="largest-batch") -> float:
    """Return samples per second of one GPU of ``app``, by ``rule``.

    ``"largest-batch"``: at the application's largest per-GPU batch size, with the step time
    there. ``"independent-maxima"``: as the Sia study's code takes it, the largest measured
    one-GPU batch over the largest measured one-GPU step time, each the maximum over all
    one-GPU rows on its own (not one row's throughput where the step time is not monotone in
    the batch size); an application without measured one-GPU rows uses ``"largest-batch"``.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> one_gpu_throughput(app) > 0
    True
    >>> one_gpu_throughput(app, "independent-maxima") > 0
    True
    """
    if rule not in ONE_GPU_RULES:
        raise ValueError(f"rule must be one of {list(ONE_GPU_RULES)}, got {rule!r}")
    rows = getattr(app, "_by_placement", {}).get(1) if rule == "independent-maxima" else None
    if rows is not None:
        batches, steps, _ = rows
        return float(np.max(batches)) / float(np.max(steps))
    bsz = app.max_local_bsz
    step, _ = app.throughput((1,), bsz)
    return float(bsz) / float(step)


def _batch_limits(app):
    """Measured per-GPU batch limits of a trace application (Sia's memory rule), if known.

    Returns ``(by placement id, by replica count, (nodes, replicas, batch) points)``.
    """
    by_pid: dict = {}
    by_rep: dict = {}
    for pid, (x, _, _) in getattr(app, "_by_placement", {}).items():
        r = sum(id_placement(pid))
        by_pid[pid] = int(x[-1])
        by_rep[r] = max(by_rep.get(r, 0), int(x[-1]))
    pts = getattr(app, "_nd_points", None)
    return by_pid, by_rep, (np.zeros((0, 3)) if pts is None else np.asarray(pts))


class HeteroApplication(Application):
    """One application measured on several GPU types.

    Statistical behaviour (``grad_stats``, ``progress``, epochs, batch-size limits) comes from
    the first type's model (the validation traces are shared); throughput and the per-GPU
    batch-size range are per type.

    Parameters
    ----------
    apps : dict of str -> Application
        One model per GPU type, all of the same application.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> h = HeteroApplication({"slow": app, "fast": app})
    >>> h.types, h.throughput_ratio("fast", "slow")
    (('slow', 'fast'), 1.0)
    """

    def __init__(self, apps):
        if not isinstance(apps, dict) or not apps:
            raise ValueError("apps must be a non-empty dict of GPU type -> Application")
        for t, a in apps.items():
            if not isinstance(a, Application):
                raise TypeError(f"apps[{t!r}] must be an Application, got {type(a).__name__}")
        self.apps = dict(apps)
        self.types = tuple(apps)
        base = self.base = apps[self.types[0]]
        self.name = base.name
        self.init_batch_size = base.init_batch_size
        self.max_batch_size = base.max_batch_size
        self.max_epochs = base.max_epochs
        self.fixed_batch_size = base.fixed_batch_size
        self.max_replicas = base.max_replicas
        # A job must fit on whichever type it is placed: the most any type needs.
        self.min_replicas = max(int(a.min_replicas) for a in apps.values())
        self.min_local_bsz = base.min_local_bsz
        self.max_local_bsz = base.max_local_bsz
        # One-GPU rates per rule of ONE_GPU_RULES: the default's now, any other on first use.
        self._xput1 = {"largest-batch": {t: one_gpu_throughput(a) for t, a in apps.items()}}
        self._limits = {t: _batch_limits(a) for t, a in apps.items()}
        self._cap_memo: dict = {}

    def throughput(self, placement, local_bsz):
        """Throughput on the first GPU type (type-agnostic callers, e.g. Optimus's oracle).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.throughput((1,), 64) == app.throughput((1,), 64)
        True
        """
        return self.base.throughput(placement, local_bsz)

    def is_modelled(self, placement, local_bsz) -> bool:
        """Whether :meth:`throughput` is modelled (first GPU type; per type: ``apps[t].is_modelled``).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> HeteroApplication({"slow": app, "fast": app}).is_modelled((1,), 64)
        False
        """
        return self.base.is_modelled(placement, local_bsz)

    def grad_stats(self, batch_size, epoch):
        """Gradient statistics (hardware-independent).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.grad_stats(128, 0) == app.grad_stats(128, 0)
        True
        """
        return self.base.grad_stats(batch_size, epoch)

    def progress(self, epoch):
        """Progress needed to finish ``epoch`` epochs.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.progress(1) == app.progress(1)
        True
        """
        return self.base.progress(epoch)

    def iteration(self, batch_size, epoch):
        """Optimizer steps after ``epoch`` epochs.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.iteration(128, 1) == app.iteration(128, 1)
        True
        """
        return self.base.iteration(batch_size, epoch)

    def best_metric(self, batch_size, epoch):
        """Best validation metric before ``epoch``.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.best_metric(128, 1) == app.best_metric(128, 1)
        True
        """
        return self.base.best_metric(batch_size, epoch)

    def completion_epoch(self, batch_size) -> int:
        """Index of the last epoch.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.completion_epoch(128), app.max_epochs
        (99, 100)
        """
        return self.base.completion_epoch(batch_size)

    def one_gpu_throughput(self, gpu_type) -> float:
        """Return samples per second of one GPU of ``gpu_type`` at its largest per-GPU batch size.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.one_gpu_throughput("fast") > 0, h.one_gpu_throughput("fast") == h.one_gpu_throughput("slow")
        (True, True)
        """
        return self._xput1["largest-batch"][gpu_type]

    def throughput_ratio(self, gpu_type, other, rule="largest-batch") -> float:
        """``one_gpu_throughput(gpu_type) / one_gpu_throughput(other)`` by ``rule`` (the bootstrap factor).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> HeteroApplication({"slow": app, "fast": app}).throughput_ratio("fast", "slow", "independent-maxima")
        1.0
        """
        rates = self._xput1.get(rule)
        if rates is None:
            rates = self._xput1[rule] = {t: one_gpu_throughput(a, rule) for t, a in self.apps.items()}
        return rates[gpu_type] / rates[other]

    def max_local_bsz_at(self, gpu_type, placement) -> int:
        """Largest per-GPU batch size measured for ``placement`` (GPUs per node) on ``gpu_type``.

        The placement's own measurements if it was measured, else the largest batch among the
        measurements with at least as many nodes and GPUs (beyond all of them: the largest batch
        measured at the largest GPU count up to this one); never above the largest measured
        with the same GPU count (Sia's memory rule). An int is one node of that many GPUs.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.max_local_bsz_at("fast", 1), h.max_local_bsz_at("fast", (2, 2)), app.max_local_bsz
        (1024, 1024, 1024)
        """
        if isinstance(placement, (int, np.integer)):
            placement = (int(placement),)
        key = (gpu_type, tuple(placement))  # as given: the simulator asks the same tuples again
        out = self._cap_memo.get(key)
        if out is None:
            out = self._cap_memo[key] = self._max_local_bsz_at(gpu_type, normalize_placement(placement))
        return out

    def _max_local_bsz_at(self, gpu_type, placement):
        app = self.apps[gpu_type]
        by_pid, by_rep, pts = self._limits[gpu_type]
        cap = int(app.max_local_bsz)
        if not placement:
            return cap
        nodes, reps = len(placement), sum(placement)
        pid = placement_id(placement)
        if pid in by_pid:
            cap = min(cap, by_pid[pid])
        elif pts.shape[0]:
            ok = (pts[:, 0] >= nodes) & (pts[:, 1] >= reps)
            if ok.any():
                cap = min(cap, int(pts[ok, 2].max()))
            elif (pts[:, 1] <= reps).any():
                # Beyond every measured point: the cap at the largest measured GPU count (it never grows with GPUs).
                rmax = pts[pts[:, 1] <= reps, 1].max()
                cap = min(cap, int(pts[pts[:, 1] == rmax, 2].max()))
        if reps in by_rep:
            cap = min(cap, by_rep[reps])
        return max(cap, int(app.min_local_bsz))


def load_hetero_applications(traces_dir, gpu_types, names=None, *, published=True) -> dict:
    """Load :class:`HeteroApplication` models from a folder in the Sia traces' layout.

    Parameters
    ----------
    traces_dir : str or path
        Folder of application folders, each with ``placements-<type>.csv`` and
        ``scalability-<type>.csv`` per GPU type and shared ``validation-<B>.csv``.
    gpu_types : sequence of str
        GPU types needed (the cluster's).
    names : iterable of str, optional
        Applications to load (default: every folder holding a profile of the first type).
    published : bool
        Apply :data:`SIA_OVERRIDES` for known applications.

    Raises
    ------
    FileNotFoundError
        A missing folder, or an application lacking one type's profile (the message names
        the missing file).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> load_hetero_applications(root, ["aws"])
    Traceback (most recent call last):
    ...
    FileNotFoundError: ...: no application folder with placements-aws.csv
    """
    traces_dir = Path(traces_dir)
    if not traces_dir.is_dir():
        raise FileNotFoundError(f"traces folder not found: {traces_dir}")
    gpu_types = list(gpu_types)
    if names is None:
        names = [p.name for p in sorted(traces_dir.iterdir()) if (p / f"placements-{gpu_types[0]}.csv").is_file()]
        if not names:
            raise FileNotFoundError(f"{traces_dir}: no application folder with placements-{gpu_types[0]}.csv")
    out = {}
    for name in names:
        folder = traces_dir / name
        if not folder.is_dir():
            raise FileNotFoundError(f"{traces_dir}: no folder for application {name!r}")
        kwargs = dict(SIA_OVERRIDES.get(name, {})) if published else {}
        apps = {}
        for t in gpu_types:
            path = folder / f"placements-{t}.csv"
            if not path.is_file():
                # Which types it has says what to do: a cluster of those, or a profile of the type added
                # (fastsched profile ... --types-only); a job is never run on a type it has no profile of.
                has = sorted(p.name[len("placements-") : -len(".csv")] for p in folder.glob("placements-?*.csv"))
                raise FileNotFoundError(
                    f"trace file not found: {path} (application {name!r} has no profile of GPU type {t!r}; "
                    f"its types: {has})"
                )
            extra = SIA_TYPE_OVERRIDES.get((name, t), {}) if published else {}
            apps[t] = TraceApplication(folder, name, gpu_type=t, **{**kwargs, **extra})
        out[name] = HeteroApplication(apps)
    return out


def _types_of(folder: Path) -> list:
    return sorted(p.name[len("placements-") : -len(".csv")] for p in folder.glob("placements-?*.csv"))


def load_applications(traces_dir, *, published=True) -> dict:
    """Load every application of a traces folder, in whichever layout it is (``fastsched.sim.load_applications``).

    * Application folders with a ``placements.csv`` (the Pollux layout, or the Sia layout, whose
      unsuffixed files are one type's): :class:`~fastsched.sim.truth.traces.TraceApplication`
      each, as :func:`fastsched.sim.truth.traces.load_applications` reads them.
    * Folders with per-GPU-type files only, ``placements-<type>.csv`` (what ``fastsched
      profile`` writes): a :class:`HeteroApplication` each, of every type it has a profile of,
      ready for ``simulate(applications=..., cluster=...)``.

    Raises
    ------
    FileNotFoundError
        A missing folder, or one without any application folder of either layout.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> load_applications(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: ...: no application folders (with placements.csv, or placements-<type>.csv ...) found
    """
    root = Path(traces_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"traces folder not found: {root}")
    folders = [p for p in sorted(root.iterdir()) if p.is_dir()]
    if any((p / "placements.csv").is_file() for p in folders):
        return load_plain_applications(root, published=published)
    typed = {p.name: _types_of(p) for p in folders if _types_of(p)}
    if not typed:
        raise FileNotFoundError(
            f"{root}: no application folders (with placements.csv, or placements-<type>.csv as fastsched profile "
            "writes) found"
        )
    out = {}
    for name, types in typed.items():
        out.update(load_hetero_applications(root, types, [name], published=published))
    return out


def fixed_batch_throughput(app, placement, batch_size, max_local_bsz=None) -> float:
    """Optimizer steps per second of ``app`` on ``placement`` at total ``batch_size``.

    0 where the batch cannot give each of the placement's GPUs a sample within the
    application's limits (the job cannot run there).

    The per-GPU batch and accumulation steps follow the simulator's rule for a fixed batch
    size (:func:`fastsched.sim.truth._rules.fixed_batch_config`).

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> fixed_batch_throughput(app, (1,), 128) > fixed_batch_throughput(app, (1,), 1024)
    True
    """
    placement = tuple(int(p) for p in placement if p)
    num_replicas = sum(placement)
    hi = app.max_local_bsz if max_local_bsz is None else min(app.max_local_bsz, max_local_bsz)
    try:
        atomic, accum = fixed_batch_config(app, num_replicas, batch_size, hi)
    except ValueError:  # more GPUs than the batch can use: the job cannot run there
        return 0.0
    atomic = max(min(atomic, hi), 1)
    # Applications price every non-empty placement (one too small for the model time-sliced,
    # see Application.min_replicas), so an error here is a real one, not "cannot run".
    step, sync = app.throughput(placement, atomic)
    total = step + (step - sync) * accum
    return 1.0 / total if total > 0 and math.isfinite(total) else 0.0


def _by_trace_name(app, name):
    """``app`` with its types keyed by trace name (``t4`` -> ``aws``), as a cluster spec keys them.

    :func:`~fastsched.sim.inputs.cluster_spec.parse_cluster` reads ``1xt4`` as the type ``aws`` (its
    traces' suffix); models keyed by another name of the same type (``oracle_applications(...,
    ["t4"])``) are the same models. Names the catalogue does not know stay as written. A type
    named twice (``t4`` and ``aws``) must carry one model: two different ones are refused,
    since either choice would silently drop the other.
    """
    from fastsched.catalog import gpus as gcat

    def key(t):
        try:
            return gcat.trace_name(t)
        except (TypeError, ValueError):
            return t

    keyed: dict = {}
    for t in app.types:
        k, model = key(t), app.apps[t]
        if k in keyed and keyed[k][1] is not model:
            raise ValueError(
                f"application {name!r}: GPU types {keyed[k][0]!r} and {t!r} are one type ({k!r}) "
                "with two different models; give it one"
            )
        keyed.setdefault(k, (t, model))
    return HeteroApplication({k: model for k, (_, model) in keyed.items()})


def resolve_hetero_applications(traces, applications, spec, app_names) -> dict:
    """Multi-type application models for a typed cluster: ready ones, or loaded from ``traces``.

    Raises
    ------
    ValueError
        No traces given, or a ready model lacking one of the cluster's GPU types.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> apps = {"cifar10": HeteroApplication({"a": builtin_applications()["cifar10"]})}
    >>> list(resolve_hetero_applications(None, apps, parse_cluster("1xa:4"), ["cifar10"]))
    ['cifar10']
    >>> resolve_hetero_applications(None, apps, parse_cluster("1xb:4"), ["cifar10"])
    Traceback (most recent call last):
    ...
    ValueError: application 'cifar10' has no profile of GPU type(s) ['b']; its types: ['a']
    """
    types = list(spec.types)
    if applications is not None:
        if not isinstance(applications, dict):
            raise TypeError("applications must be a dict of name -> HeteroApplication")
        applications = dict(applications)
        used = set(app_names)
        for name, app in applications.items():
            if not isinstance(app, HeteroApplication):
                raise TypeError(f"applications[{name!r}] must be a HeteroApplication on a cluster of GPU types")
            if name not in used:
                continue  # no job runs it (a folder of profiles may hold models of other types)
            if any(t not in app.apps for t in types):
                app = applications[name] = _by_trace_name(app, name)
            missing = [t for t in types if t not in app.apps]
            if missing:
                raise ValueError(
                    f"application {name!r} has no profile of GPU type(s) {missing}; its types: {list(app.types)}"
                )
        return applications
    if traces is None:
        raise ValueError(
            f"a cluster of GPU types ({spec}) needs per-type traces: pass traces= (a folder in the Sia layout, "
            "placements-<type>.csv per application)"
        )
    return load_hetero_applications(traces, types, sorted(set(app_names)))
