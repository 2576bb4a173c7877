"""Per-GPU-type goodput: applications with one profile per GPU type, jobs with one PerfParams per type.

Statistical efficiency does not depend on the hardware, so a :class:`HeteroJob` keeps one
gradient estimate (``grad_params``) and, per GPU type it has run on, its own observed profile
and fitted :class:`~fastsched.goodput.PerfParams`. Before a job has run on a type its goodput
there is estimated from a type it has run on, scaled by the ratio of the two types' one-GPU
throughputs at their largest per-GPU batch size (Sia's bootstrap, :func:`estimate_goodput`).

The true behaviour comes from :class:`HeteroApplication`: one
:class:`~fastsched.sim.traces.Application` per GPU type (the Sia traces:
``placements-<type>.csv``, ``scalability-<type>.csv``, shared ``validation-<B>.csv``).
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched.goodput import GoodputFunction
from fastsched.sim.job import RESCALE_DELAY, Job
from fastsched.sim.traces import PUBLISHED_OVERRIDES, Application, TraceApplication, normalize_placement

__all__ = [
    "HeteroApplication",
    "HeteroJob",
    "SIA_OVERRIDES",
    "CATEGORIES",
    "MIGRATE_DELAY",
    "SIA_RESTART_DELAYS",
    "SIA_SLOWDOWNS",
    "estimate_goodput",
    "fixed_batch_config",
    "goodput_source",
    "GoodputSource",
    "load_hetero_applications",
    "one_gpu_throughput",
    "fixed_batch_throughput",
]

#: Seconds a job pauses after moving to another GPU type when its application has no
#: measured restart time.
MIGRATE_DELAY = 45

#: Checkpoint-restore seconds per (re)allocation measured per application in the Sia study
#: (used for restarts within a type and moves between types alike; others: 30 s).
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


def one_gpu_throughput(app) -> float:
    """Return samples per second of one GPU at the application's largest per-GPU batch size.

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> one_gpu_throughput(app) > 0
    True
    """
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
        r = sum(int(c) for c in str(pid))
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
    >>> from fastsched.sim.builtin import builtin_applications
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
        self.min_local_bsz = base.min_local_bsz
        self.max_local_bsz = base.max_local_bsz
        self._xput1 = {t: one_gpu_throughput(a) for t, a in apps.items()}
        self._limits = {t: _batch_limits(a) for t, a in apps.items()}
        self._cap_memo: dict = {}

    def throughput(self, placement, local_bsz):
        """Throughput on the first GPU type (type-agnostic callers, e.g. Optimus's oracle).

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
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
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> HeteroApplication({"slow": app, "fast": app}).is_modelled((1,), 64)
        False
        """
        return self.base.is_modelled(placement, local_bsz)

    def grad_stats(self, batch_size, epoch):
        """Gradient statistics (hardware-independent).

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
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
        >>> from fastsched.sim.builtin import builtin_applications
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
        >>> from fastsched.sim.builtin import builtin_applications
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
        >>> from fastsched.sim.builtin import builtin_applications
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
        >>> from fastsched.sim.builtin import builtin_applications
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
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.one_gpu_throughput("fast") > 0, h.one_gpu_throughput("fast") == h.one_gpu_throughput("slow")
        (True, True)
        """
        return self._xput1[gpu_type]

    def throughput_ratio(self, gpu_type, other) -> float:
        """``one_gpu_throughput(gpu_type) / one_gpu_throughput(other)`` (the bootstrap factor)."""
        return self._xput1[gpu_type] / self._xput1[other]

    def max_local_bsz_at(self, gpu_type, placement) -> int:
        """Largest per-GPU batch size measured for ``placement`` (GPUs per node) on ``gpu_type``.

        The placement's own measurements if it was measured, else the largest batch among the
        measurements with at least as many nodes and GPUs (beyond all of them: the largest batch
        measured at the largest GPU count up to this one); never above the largest measured
        with the same GPU count (Sia's memory rule). An int is one node of that many GPUs.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> h.max_local_bsz_at("fast", 1), h.max_local_bsz_at("fast", (2, 2)), app.max_local_bsz
        (1024, 1024, 1024)
        """
        if isinstance(placement, (int, np.integer)):
            placement = (int(placement),)
        placement = normalize_placement(placement)
        key = (gpu_type, placement)
        out = self._cap_memo.get(key)
        if out is None:
            out = self._cap_memo[key] = self._max_local_bsz_at(gpu_type, placement)
        return out

    def _max_local_bsz_at(self, gpu_type, placement):
        app = self.apps[gpu_type]
        by_pid, by_rep, pts = self._limits[gpu_type]
        cap = int(app.max_local_bsz)
        if not placement:
            return cap
        nodes, reps = len(placement), sum(placement)
        pid = int("".join(map(str, placement))) if max(placement) < 10 else None
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
                raise FileNotFoundError(
                    f"trace file not found: {path} (application {name!r} has no profile of GPU type {t!r})"
                )
            extra = SIA_TYPE_OVERRIDES.get((name, t), {}) if published else {}
            apps[t] = TraceApplication(folder, name, gpu_type=t, **{**kwargs, **extra})
        out[name] = HeteroApplication(apps)
    return out


_SLOTS = ("profile", "_perf_params", "_perf_dirty", "_speedup_cache")


def _slot_property(field):
    def get(self):
        return self._tstate[self._slot_key()][field]

    def set_(self, value):
        self._tstate.setdefault(self._slot_key(), _fresh_slot())[field] = value
        if field == "profile":
            self._obs_version += 1

    return property(get, set_)


def _fresh_slot():
    return {"profile": {}, "_perf_params": None, "_perf_dirty": False, "_speedup_cache": None}


class HeteroJob(Job):
    """A simulated job on a cluster of several GPU types.

    Same mechanics as :class:`~fastsched.sim.job.Job` on the GPU type it currently runs on
    (:attr:`gpu_type`); the observed profile, the fitted PerfParams and the speedup function
    are kept per type, the gradient statistics once.

    Parameters
    ----------
    name : str
    application : HeteroApplication
    submission_time : int
    unaware : bool
        Heterogeneity-unaware (Pollux in Sia's comparison): one merged profile and one
        PerfParams for all types.
    category : {"adaptive", "scale-gpus", "rigid"}, optional
        The workload's category (``None``: adaptive).
    migrate_delay : int
        Pause after moving to another GPU type (45 s); within a type ``rescale_delay``.
    slowdown : float
        The true goodput is divided by this (>= 1; the Sia study's calibration to real runs,
        :data:`SIA_SLOWDOWNS`); observed step times are not affected.
    restart_on_move : bool
        ``True`` (default, as :class:`~fastsched.sim.job.Job`): any change of nodes restarts
        the job. ``False`` (the Sia study's simulator): moving to other nodes of the same type
        with the same GPUs per node keeps it running; a new shape, a new type or resuming after
        a suspension restarts it.
    **kwargs
        As for :class:`~fastsched.sim.job.Job` (``target_num_replicas``,
        ``target_batch_size``, ``rescale_delay``).

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> job = HeteroJob("j", HeteroApplication({"slow": app, "fast": app}), 0)
    >>> job.set_gpu_type("fast")
    >>> job.reallocate([2])
    >>> job.step(600)
    >>> sorted(job.profiles_by_type()), job.max_profiled_replicas_on("fast"), job.max_profiled_replicas_on("slow")
    (['fast'], 2, 0)
    >>> job.gpu_seconds_by_type["fast"] == job.attained_service
    True
    """

    profile = _slot_property("profile")
    _perf_params = _slot_property("_perf_params")
    _perf_dirty = _slot_property("_perf_dirty")
    _speedup_cache = _slot_property("_speedup_cache")

    def __init__(
        self,
        name,
        application,
        submission_time,
        *,
        unaware=False,
        category=None,
        migrate_delay=MIGRATE_DELAY,
        rescale_delay=RESCALE_DELAY,
        slowdown=1.0,
        restart_on_move=True,
        **kwargs,
    ):
        if not isinstance(application, HeteroApplication):
            raise TypeError(f"application must be a HeteroApplication, got {type(application).__name__}")
        if category is not None and category not in CATEGORIES:
            raise ValueError(f"job {name}: category must be one of {list(CATEGORIES)}, got {category!r}")
        if not (isinstance(slowdown, (int, float)) and slowdown >= 1.0):
            raise ValueError(f"job {name}: slowdown must be a number >= 1, got {slowdown!r}")
        self.slowdown = float(slowdown)
        self.restart_on_move = bool(restart_on_move)
        self._happ = application
        self.unaware = bool(unaware)
        self.gpu_type = None
        self._tstate: dict = {}
        self._obs_version = 0
        self.category = category or "adaptive"
        self.migrate_delay = migrate_delay
        self.num_migrations = 0
        self.gpu_seconds_by_type = {}
        self._pending_migration = False
        super().__init__(name, application, submission_time, rescale_delay=rescale_delay, **kwargs)

    # -- the current type ------------------------------------------------------------------
    def _slot_key(self):
        return "merged" if self.unaware else self.gpu_type

    @property
    def application(self):
        """The current GPU type's model (the multi-type model before the first allocation)."""
        t = self.gpu_type
        return self._happ if t is None else self._happ.apps[t]

    @application.setter
    def application(self, value):
        if value is not self._happ:
            raise AttributeError("a HeteroJob's application is fixed at construction")

    @property
    def hetero_application(self) -> HeteroApplication:
        """The multi-type application model."""
        return self._happ

    def set_gpu_type(self, gpu_type):
        """Move the job to ``gpu_type`` (call before :meth:`reallocate`); a change counts a migration.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.gpu_type, job.application is h
        (None, True)
        >>> job.set_gpu_type("fast")
        >>> job.gpu_type, job.application is app
        ('fast', True)
        """
        if gpu_type not in self._happ.apps:
            raise ValueError(f"job {self.name}: no profile of GPU type {gpu_type!r}; known: {list(self._happ.types)}")
        if gpu_type != self.gpu_type:
            if self.gpu_type is not None:
                self.num_migrations += 1
                self._pending_migration = True
            self.gpu_type = gpu_type
            self._tstate.setdefault(self._slot_key(), _fresh_slot())

    @contextlib.contextmanager
    def _on(self, gpu_type):
        saved = self.gpu_type
        self.gpu_type = gpu_type
        self._tstate.setdefault(self._slot_key(), _fresh_slot())
        try:
            yield
        finally:
            self.gpu_type = saved

    # -- per-type queries ------------------------------------------------------------------
    def profiles_by_type(self) -> dict:
        """``{GPU type: observed profile}`` of the types with observations (``merged`` if unaware).

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> job.observe(1, 1, 64, 0.1, 0.0, 1.0, 2.0)
        >>> job.profiles_by_type()
        {'fast': {(1, 1, 64): (0.1, 0.0)}}
        """
        return {k: v["profile"] for k, v in self._tstate.items() if k is not None and v["profile"]}

    def has_run(self) -> bool:
        """Whether the job has any observation yet.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.has_run()
        False
        >>> job.set_gpu_type("fast")
        >>> job.observe(1, 1, 64, 0.1, 0.0, 1.0, 2.0)
        >>> job.has_run()
        True
        """
        return any(v["profile"] for v in self._tstate.values())

    @property
    def observation_version(self) -> tuple:
        """A key that changes whenever any per-type profile gains an observation or a type is added.

        Policies cache what depends only on the observations (fits, replica bounds) under it.
        """
        return (self._obs_version, len(self._tstate))

    def observe(self, num_nodes, num_replicas, atomic_bsz, step_time, sync_time, grad_sqr, grad_var):
        """As :meth:`Job.observe`, counting new observations in :attr:`observation_version`.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> before = job.observation_version
        >>> job.observe(1, 1, 64, 0.1, 0.0, 1.0, 2.0)
        >>> job.observation_version != before, job.max_profiled_replicas_on("fast")
        (True, 1)
        """
        before = len(self.profile)
        super().observe(num_nodes, num_replicas, atomic_bsz, step_time, sync_time, grad_sqr, grad_var)
        if len(self.profile) != before:
            self._obs_version += 1

    def max_profiled_replicas_on(self, gpu_type) -> int:
        """Largest replica count observed on ``gpu_type`` (0 if never run there).

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> job.observe(1, 2, 64, 0.1, 0.0, 1.0, 2.0)
        >>> job.max_profiled_replicas_on("fast"), job.max_profiled_replicas_on("slow")
        (2, 0)
        """
        with self._on(gpu_type):
            return self.max_profiled_replicas

    def perf_params_on(self, gpu_type):
        """PerfParams fitted on ``gpu_type``'s observations (``None`` without any).

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> job.reallocate([2])
        >>> job.step(600)
        >>> type(job.perf_params_on("fast")).__name__, job.perf_params_on("slow")
        ('PerfParams', None)
        """
        with self._on(gpu_type):
            return self.perf_params if self.profile else None

    def speedup_fn_on(self, gpu_type):
        """Speedup function on ``gpu_type`` from its own fit (``None`` if never run there).

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> job.reallocate([2])
        >>> job.step(600)
        >>> type(job.speedup_fn_on("fast")).__name__, job.speedup_fn_on("slow")
        ('SpeedupFunction', None)
        """
        with self._on(gpu_type):
            return self.speedup_fn()

    # -- mechanics -------------------------------------------------------------------------
    def update_local_bsz(self, placement):
        """As :meth:`Job.update_local_bsz`, then cap the per-GPU batch at the type's memory limit.

        A fixed batch size (``target_batch_size``) is split into accumulation steps against
        the placement's memory limit on the job's type, so the job keeps its batch size
        (the study's simulator); capping the per-GPU batch alone would shrink it.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0, target_batch_size=256)
        >>> job.set_gpu_type("fast")
        >>> job.update_local_bsz((2,))
        >>> job.atomic_bsz, job.accum_steps
        (128, 0)
        """
        if self.gpu_type is None or self.target_batch_size is None or not any(placement):
            super().update_local_bsz(placement)
            if self.gpu_type is None:
                return
        else:
            app = self.application
            cap = self._happ.max_local_bsz_at(self.gpu_type, placement)
            self.atomic_bsz, self.accum_steps = fixed_batch_config(
                app, sum(filter(None, placement)), self.target_batch_size, min(int(app.max_local_bsz), cap)
            )
        cap = self._happ.max_local_bsz_at(self.gpu_type, placement)
        if self.atomic_bsz > cap:
            self.atomic_bsz = cap

    def reallocate(self, placement):
        """As :meth:`Job.reallocate`; a move to another GPU type pauses ``migrate_delay`` seconds.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> job.reallocate([2])
        >>> job.set_gpu_type("slow")  # a migration: the next reallocation pauses migrate_delay
        >>> job.reallocate([2])
        >>> job.num_restarts, job.rescale_time == job.migrate_delay
        (1, True)

        Without ``restart_on_move`` a move to other nodes of the same shape does not restart:

        >>> job = HeteroJob("k", h, 0, restart_on_move=False)
        >>> job.set_gpu_type("fast")
        >>> job.reallocate([2])
        >>> job.reallocate([2])
        >>> job.num_restarts
        0
        """
        if (
            not self.restart_on_move
            and placement
            and not self._pending_migration
            and tuple(placement) == tuple(self.placement)
        ):
            return
        super().reallocate(placement)
        if placement and self._pending_migration:
            self.rescale_time = self.migrate_delay
        self._pending_migration = False

    def step(self, seconds, interference=0.0):
        """As :meth:`Job.step` (goodput also divided by :attr:`slowdown`), counting GPU-seconds per type.

        Examples
        --------
        >>> from fastsched.sim.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> job.reallocate([2])
        >>> job.step(600)
        >>> job.current_time, job.gpu_seconds_by_type
        (600, {'fast': 1200})
        """
        before = self.attained_service
        if self.slowdown != 1.0:  # the goodput factor (1 - interference) absorbs the slowdown
            interference = 1.0 - (1.0 - interference) / self.slowdown
        super().step(seconds, interference)
        if self.gpu_type is not None and self.attained_service != before:
            t = self.gpu_type
            self.gpu_seconds_by_type[t] = self.gpu_seconds_by_type.get(t, 0) + (self.attained_service - before)


def estimate_goodput(job, gpu_type, num_nodes, num_replicas, gpus_per_node):
    """Goodput of ``job`` on ``gpu_type`` for arrays of configurations, bootstrapped if unseen.

    From the job's own fit on ``gpu_type`` when it has run there (the best goodput over batch
    sizes up to the application's maximum, or its fixed batch size); otherwise from its fit on
    another type it has run on (the first in the application's type order), at the same
    replica count laid out on that type's nodes, times the ratio of the two types' one-GPU
    throughputs. ``None`` if the job has never run.

    Parameters
    ----------
    job : HeteroJob
    gpu_type : str
    num_nodes, num_replicas : numpy.ndarray of int
        Configurations on ``gpu_type``.
    gpus_per_node : dict of str -> int
        GPUs per node of each type (to lay replicas out on the source type).

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.sim.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> job = HeteroJob("j", HeteroApplication({"a": app, "b": app}), 0)
    >>> estimate_goodput(job, "b", np.array([1]), np.array([1]), {"a": 4, "b": 4}) is None
    True
    >>> job.set_gpu_type("a"); job.reallocate([1]); job.step(300)
    >>> ga = estimate_goodput(job, "a", np.array([1]), np.array([1]), {"a": 4, "b": 4})
    >>> gb = estimate_goodput(job, "b", np.array([1]), np.array([1]), {"a": 4, "b": 4})
    >>> bool(np.allclose(ga, gb))  # same throughput on both types: ratio 1
    True
    """
    src = goodput_source(job, gpu_type)
    if src is None:
        return None
    nodes = np.asarray(num_nodes, dtype=np.int64)
    reps = np.asarray(num_replicas, dtype=np.int64)
    if src.gpu_type not in (None, gpu_type):
        nodes = np.minimum(np.maximum(np.ceil(reps / gpus_per_node[src.gpu_type]).astype(np.int64), 1), reps)
    fn = GoodputFunction(src.perf, (src.grad_sqr, src.grad_var), src.init_batch_size)
    goodput, _, _ = fn.optimize(
        nodes, reps, max_batch_size=src.bounds[0], atomic_bsz_range=src.bounds[1:], accumulation=True
    )
    return np.asarray(goodput, dtype=np.float64) * src.ratio


class GoodputSource(NamedTuple):
    """The fitted model behind a job's goodput on a GPU type (see :func:`goodput_source`).

    Attributes
    ----------
    perf : PerfParams
        Fitted on ``gpu_type``'s observations.
    grad_sqr, grad_var : float
        The job's gradient statistics (hardware-independent).
    init_batch_size : float
    bounds : tuple of float
        ``(max batch size, min per-GPU batch, max per-GPU batch)`` on ``gpu_type``.
    gpu_type : str or None
        The type whose fit is used (``None``: the merged fit of an unaware job).
    ratio : float
        Bootstrap factor (1 for the job's own fit on the asked type).

    Examples
    --------
    A job that has only run on type ``a`` draws on its ``a`` fit for type ``b``:

    >>> from fastsched.sim.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> job = HeteroJob("j", HeteroApplication({"a": app, "b": app}), 0)
    >>> job.set_gpu_type("a"); job.reallocate([1]); job.step(300)
    >>> src = goodput_source(job, "b")
    >>> src.gpu_type, src.ratio
    ('a', 1.0)
    """

    perf: tuple
    grad_sqr: float
    grad_var: float
    init_batch_size: float
    bounds: tuple
    gpu_type: str | None
    ratio: float


def goodput_source(job, gpu_type, fits=None):
    """Where ``job``'s goodput on ``gpu_type`` comes from, as a :class:`GoodputSource`.

    The job's own fit on ``gpu_type`` if it has run there, else its fit on the first other
    type (in the application's order) it has run on with the bootstrap ratio of one-GPU
    throughputs; an unaware job's merged fit. ``None`` if the job has never run. ``fits`` (a
    dict) memoises the per-type models across calls for the same job within one round.

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> job = HeteroJob("j", HeteroApplication({"a": builtin_applications()["cifar10"]}), 0)
    >>> goodput_source(job, "a") is None
    True
    >>> job.set_gpu_type("a"); job.reallocate([1]); job.step(300)
    >>> src = goodput_source(job, "a")
    >>> src.gpu_type, src.ratio
    ('a', 1.0)
    """
    if job.unaware:
        order = [None]
    else:
        order = [gpu_type] + [t for t in job.hetero_application.types if t != gpu_type]
    fits = {} if fits is None else fits
    for src in order:
        hit = fits.get(src)
        if hit is None:
            ctx = job._on(src) if src is not None else contextlib.nullcontext()
            with ctx:
                if not job.profile:
                    fits[src] = False
                    continue
                app = job.application
                max_bsz = app.max_batch_size if job.target_batch_size is None else job.target_batch_size
                sqr, var = job.grad_params
                hit = fits[src] = (
                    tuple(job.perf_params),
                    float(sqr),
                    float(var),
                    float(app.init_batch_size),
                    (float(max_bsz), float(app.min_local_bsz), float(app.max_local_bsz)),
                )
        if hit is False:
            continue
        ratio = 1.0 if src in (None, gpu_type) else job.hetero_application.throughput_ratio(gpu_type, src)
        return GoodputSource(*hit, src, ratio)
    return None


def fixed_batch_config(app, num_replicas, batch_size, max_local_bsz) -> tuple:
    """Per-GPU batch and accumulation steps of a fixed total ``batch_size`` on ``num_replicas`` GPUs.

    The per-GPU share is split into ``accum + 1`` passes of at most ``max_local_bsz`` (the
    placement's memory limit); a single GPU above the application's initial batch size always
    accumulates at least once; the per-GPU batch never takes the total above the application's
    maximum (the simulator's rules for a fixed batch size, :meth:`Job.update_local_bsz`).

    Returns
    -------
    tuple of int
        ``(atomic_bsz, accum_steps)``.

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> fixed_batch_config(app, 2, 1024, 256)
    (256, 1)
    """
    local_bsz = math.ceil(batch_size / num_replicas - 1e-8)
    accum = math.ceil(local_bsz / max_local_bsz - 1e-8) - 1
    if num_replicas == 1 and batch_size > app.init_batch_size:
        accum = max(1, accum)
    atomic = math.ceil(local_bsz / (accum + 1) - 1e-8)
    atomic = min(atomic, int(app.max_batch_size / (num_replicas * (accum + 1))))
    return int(atomic), int(accum)


def fixed_batch_throughput(app, placement, batch_size, max_local_bsz=None) -> float:
    """Optimizer steps per second of ``app`` on ``placement`` at total ``batch_size`` (0 if unmeasurable).

    The per-GPU batch and accumulation steps follow the simulator's rules for a fixed batch
    size (:meth:`Job.update_local_bsz`).

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> fixed_batch_throughput(app, (1,), 128) > fixed_batch_throughput(app, (1,), 1024)
    True
    """
    placement = tuple(int(p) for p in placement if p)
    num_replicas = sum(placement)
    hi = app.max_local_bsz if max_local_bsz is None else min(app.max_local_bsz, max_local_bsz)
    atomic, accum = fixed_batch_config(app, num_replicas, batch_size, hi)
    atomic = max(min(atomic, hi), 1)
    try:
        step, sync = app.throughput(placement, atomic)
    except ValueError:
        return 0.0
    total = step + (step - sync) * accum
    return 1.0 / total if total > 0 and math.isfinite(total) else 0.0


def resolve_hetero_applications(traces, applications, spec, app_names) -> dict:
    """Multi-type application models for a typed cluster: ready ones, or loaded from ``traces``.

    Raises
    ------
    ValueError
        No traces given, or a ready model lacking one of the cluster's GPU types.

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> from fastsched.sim.cluster_spec import parse_cluster
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
        for name, app in applications.items():
            if not isinstance(app, HeteroApplication):
                raise TypeError(f"applications[{name!r}] must be a HeteroApplication on a cluster of GPU types")
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


def make_hetero_jobs(
    wjobs, apps, policy, spec, cap_replicas=False, restart_delays=None, slowdowns=None, restart_on_move=True
) -> list:
    """:class:`HeteroJob` objects for workload rows under ``policy`` on ``spec``.

    ``restart_delays`` (e.g. :data:`SIA_RESTART_DELAYS`, the ``sia`` presets') gives each
    application's pause after any reallocation; applications not listed pause 30 s within a
    type and :data:`MIGRATE_DELAY` across types. ``slowdowns`` (e.g. :data:`SIA_SLOWDOWNS`)
    divides each application's true goodput (default: none). ``restart_on_move=False`` (the
    Sia study's simulator) lets a job move to other nodes of the same shape without a restart.

    Raises
    ------
    ValueError
        A bad category, or a job that must run on its requested GPU count when no GPU type
        has that many GPUs (unless ``cap_replicas``, which lowers such requests to the
        largest type's GPU count).

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
    >>> from fastsched.sim.cluster_spec import parse_cluster
    >>> from fastsched.sim.policies import make_policy
    >>> from fastsched.sim.workload import WorkloadJob
    >>> spec = parse_cluster("1xa:4")
    >>> apps = {"cifar10": HeteroApplication({"a": builtin_applications()["cifar10"]})}
    >>> pol = make_policy("gavel")
    >>> pol.bind_cluster(spec, 360)
    >>> big = [WorkloadJob("j", 0, "cifar10", 8, 512)]
    >>> make_hetero_jobs(big, apps, pol, spec)
    Traceback (most recent call last):
    ...
    ValueError: job(s) ['j'] request more GPUs than the largest GPU type has (4); ...
    >>> make_hetero_jobs(big, apps, pol, spec, cap_replicas=True)[0].target_num_replicas
    4
    """
    largest = spec.max_gpus_per_type()
    too_big = [w.name for w in wjobs if policy.uses_requested_gpus(w) and w.num_replicas > largest]
    if too_big and not cap_replicas:
        raise ValueError(
            f"job(s) {too_big[:5]} request more GPUs than the largest GPU type has ({largest}); "
            "a job never spans two types (cap_replicas=True / --cap-replicas lowers such requests)"
        )
    jobs = []
    for w in wjobs:
        if w.num_replicas > largest and cap_replicas:
            w = type(w)(**{**w.__dict__, "num_replicas": largest})
        app = apps[w.application]
        delay = (restart_delays or {}).get(w.application)
        delays = {} if delay is None else {"rescale_delay": delay, "migrate_delay": delay}
        delays["slowdown"] = (slowdowns or {}).get(w.application, 1.0)
        delays["restart_on_move"] = restart_on_move
        jobs.append(
            HeteroJob(
                w.name,
                app,
                w.time,
                unaware=policy.heterogeneity_unaware,
                category=getattr(w, "category", None),
                **delays,
                **policy.job_kwargs(w, app),
            )
        )
    return jobs
