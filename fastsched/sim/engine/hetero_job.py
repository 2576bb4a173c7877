"""The job state on a cluster of several GPU types: one profile and one fit per type it ran on.

Statistical efficiency does not depend on the hardware, so a :class:`HeteroJob` keeps one
gradient estimate (``grad_params``) and, per GPU type it has run on, its own observed profile
and fitted :class:`~fastsched.goodput.PerfParams`; it runs on the truth of
:mod:`fastsched.sim.truth.per_type`. What a policy estimates for a type the job has not run on
is :mod:`fastsched.sim.policies._belief` (a layer above: the engine never imports it). The
truth's names are re-exported here.
"""

from __future__ import annotations

from fastsched.sim.engine.job import RESCALE_DELAY, Job, _max_replicas
from fastsched.sim.truth._rules import fixed_batch_config
from fastsched.sim.truth.per_type import (
    CATEGORIES,
    MIGRATE_DELAY,
    SIA_OVERRIDES,
    SIA_RESTART_DELAYS,
    SIA_SLOWDOWNS,
    SIA_TYPE_OVERRIDES,
    HeteroApplication,
    fixed_batch_throughput,
    load_hetero_applications,
    one_gpu_throughput,
    resolve_hetero_applications,
)

__all__ = [
    "HeteroApplication",
    "HeteroJob",
    "SIA_OVERRIDES",
    "SIA_TYPE_OVERRIDES",
    "CATEGORIES",
    "MIGRATE_DELAY",
    "SIA_RESTART_DELAYS",
    "SIA_SLOWDOWNS",
    "fixed_batch_config",
    "load_hetero_applications",
    "make_hetero_jobs",
    "one_gpu_throughput",
    "fixed_batch_throughput",
    "resolve_hetero_applications",
]

_SLOTS = ("profile", "_perf_params", "_perf_dirty", "_speedup_cache")


def _slot_property(field):
    def get(self):  # HeteroJob._slot_key_of inlined: read several times in every step of every job
        return self._tstate["merged" if self.unaware else self.gpu_type][field]

    def set_(self, value):
        self._slot_on(self.gpu_type)[field] = value
        if field == "profile":
            self._obs_version += 1

    return property(get, set_)


def _fresh_slot():
    return {"profile": {}, "_perf_params": None, "_perf_dirty": False, "_speedup_cache": None}


class _OnType:
    """:meth:`HeteroJob._on`: a plain class, as policies enter it for every type of every job they plan."""

    __slots__ = ("job", "gpu_type", "saved")

    def __init__(self, job, gpu_type):
        self.job, self.gpu_type = job, gpu_type

    def __enter__(self):
        self.saved = self.job.gpu_type
        self.job.gpu_type = self.gpu_type
        self.job._slot_on(self.gpu_type)

    def __exit__(self, *exc):
        self.job.gpu_type = self.saved


class HeteroJob(Job):
    """A simulated job on a cluster of several GPU types.

    Same mechanics as :class:`~fastsched.sim.engine.job.Job` on the GPU type it currently runs on
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
        ``True`` (default, as :class:`~fastsched.sim.engine.job.Job`): any change of nodes restarts
        the job. ``False`` (the Sia study's simulator): moving to other nodes of the same type
        with the same GPUs per node keeps it running; a new shape, a new type or resuming after
        a suspension restarts it.
    **kwargs
        As for :class:`~fastsched.sim.engine.job.Job` (``target_num_replicas``,
        ``target_batch_size``, ``rescale_delay``).

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> job = HeteroJob("j", HeteroApplication({"slow": app, "fast": app}), 0)
    >>> job.set_gpu_type("fast")
    >>> job.reallocate([2])
    >>> job.step(600)
    >>> sorted(job.profiles_by_type()), job.max_profiled_replicas_on("fast"), job.max_profiled_replicas_on("slow")
    (['fast'], 2, 0)
    >>> job.gpu_seconds_by_type["fast"] == job.attained_service
    True

    The true goodput is divided by :attr:`slowdown`; GPU-seconds are counted per type:

    >>> job = HeteroJob("k", HeteroApplication({"slow": app, "fast": app}), 0, slowdown=2.0)
    >>> job.set_gpu_type("fast")
    >>> job.reallocate([2])
    >>> job.step(600)
    >>> job.current_time, job.gpu_seconds_by_type
    (600, {'fast': 1200})
    """

    profile = _slot_property("profile")
    _perf_params = _slot_property("_perf_params")
    _perf_dirty = _slot_property("_perf_dirty")
    # Its batch choice (a memory cap: _choose_fixed, _adaptive_chooser) is what the round kernel steps.
    _round_kernel = True
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
        self.restart_on_move = bool(restart_on_move)
        self._happ = application
        self.unaware = bool(unaware)
        self.gpu_type = None
        self._tstate: dict = {}
        self._obs_version = 0
        self.category = category or "adaptive"
        self.migrate_delay = migrate_delay
        self.num_migrations = 0
        # GPU-seconds by type: the closed stretches on a type, and the open one (its type and
        # the attained service at its start); see gpu_seconds_by_type.
        self._gs_done: dict = {}
        self._gs_type = None
        self._gs_start = 0
        self._pending_migration = False
        super().__init__(name, application, submission_time, rescale_delay=rescale_delay, **kwargs)
        self.slowdown = float(slowdown)  # kept in the job's row (the round kernel reads it)

    @property
    def gpu_seconds_by_type(self) -> dict:
        """``{GPU type: GPU-seconds held there}`` (types in the order they first held GPUs).

        Kept as stretches between changes of type, so that stepping the job (in a cluster's
        round kernel too) only counts its attained service. Read only: each read builds a new
        dict (writing to it changes nothing), and assigning the attribute raises
        ``AttributeError``; the counts follow ``attained_service`` and :meth:`set_gpu_type`.
        """
        out = dict(self._gs_done)
        t = self._gs_type
        if t is not None:
            delta = self.attained_service - self._gs_start
            if delta:
                out[t] = out.get(t, 0) + delta
        return out

    def _close_stretch(self, gpu_type):
        """Count the GPU-seconds on the type left, and open a stretch on ``gpu_type``."""
        attained = self.attained_service
        t = self._gs_type
        if t is not None and attained != self._gs_start:
            self._gs_done[t] = self._gs_done.get(t, 0) + (attained - self._gs_start)
        self._gs_type, self._gs_start = gpu_type, attained

    # -- the current type ------------------------------------------------------------------
    def _slot_key_of(self, gpu_type):
        """Key of ``gpu_type``'s state: one merged state for a heterogeneity-unaware policy."""
        return "merged" if self.unaware else gpu_type

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
        >>> from fastsched.sim.truth.builtin import builtin_applications
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
            self._close_stretch(gpu_type)
            self.gpu_type = gpu_type
            self._slot_on(gpu_type)
            self._t.inputs.ready[self._r] = 0  # another application: the kernel inputs change

    def _on(self, gpu_type):
        """Return a context in which the job's per-type state is ``gpu_type``'s (created if new)."""
        return _OnType(self, gpu_type)

    def _slot_on(self, gpu_type) -> dict:
        """``gpu_type``'s state (created if new), as :meth:`_on` would make current, without switching."""
        key = self._slot_key_of(gpu_type)
        slot = self._tstate.get(key)
        if slot is None:
            slot = self._tstate[key] = _fresh_slot()
        return slot

    # -- per-type queries ------------------------------------------------------------------
    def profiles_by_type(self) -> dict:
        """``{GPU type: observed profile}`` of the types with observations (``merged`` if unaware).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
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
        >>> from fastsched.sim.truth.builtin import builtin_applications
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
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> before = job.observation_version
        >>> job.observe(1, 1, 64, 0.1, 0.0, 1.0, 2.0)
        >>> job.observation_version != before, job.max_profiled_replicas_on("fast")
        (True, 1)
        """
        # Job.observe on the current type's state, read once: every iteration of every
        # adaptive job's step observes.
        self.grad_params = (grad_sqr, grad_var)
        slot = self._slot_on(self.gpu_type)
        profile = slot["profile"]
        key = (num_nodes, num_replicas, atomic_bsz)
        if key in profile:
            return
        profile[key] = (step_time, sync_time)
        slot["_perf_dirty"] = True
        self._obs_version += 1

    def max_profiled_replicas_on(self, gpu_type) -> int:
        """Largest replica count observed on ``gpu_type`` (0 if never run there).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0)
        >>> job.set_gpu_type("fast")
        >>> job.observe(1, 2, 64, 0.1, 0.0, 1.0, 2.0)
        >>> job.max_profiled_replicas_on("fast"), job.max_profiled_replicas_on("slow")
        (2, 0)
        """
        return _max_replicas(self._slot_on(gpu_type)["profile"])

    def perf_params_on(self, gpu_type):
        """PerfParams fitted on ``gpu_type``'s observations (``None`` without any).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
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
        >>> from fastsched.sim.truth.builtin import builtin_applications
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
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> app = builtin_applications()["cifar10"]
        >>> h = HeteroApplication({"slow": app, "fast": app})
        >>> job = HeteroJob("j", h, 0, target_batch_size=256)
        >>> job.set_gpu_type("fast")
        >>> job.update_local_bsz((2,))
        >>> job.atomic_bsz, job.accum_steps
        (128, 0)
        """
        self._choose_local_bsz(placement)

    def _choose_fixed(self, placement) -> tuple:
        """As :meth:`Job._choose_fixed`, a target batch split against the type's memory limit, then capped by it."""
        if self.gpu_type is None:
            return super()._choose_fixed(placement)
        if self.target_batch_size is None or not any(placement):
            atomic, accum = super()._choose_fixed(placement)
        else:
            app = self.application
            cap = self._happ.max_local_bsz_at(self.gpu_type, placement)
            atomic, accum = self._fixed_config(
                app, sum(filter(None, placement)), self.target_batch_size, min(int(app.max_local_bsz), cap)
            )
            self._set_batch_config(atomic, accum)
        return self._capped(self._happ.max_local_bsz_at(self.gpu_type, placement), atomic, accum)

    def _adaptive_chooser(self, placement):
        """As :meth:`Job._adaptive_chooser`, the choice capped at the type's memory limit for ``placement``."""
        choose = super()._adaptive_chooser(placement)
        if self.gpu_type is None:
            return choose
        cap = None

        def capped():
            nonlocal cap
            atomic, accum = choose()
            if cap is None:  # found once, after the first choice (whose errors come first)
                cap = self._happ.max_local_bsz_at(self.gpu_type, placement)
            return self._capped(cap, atomic, accum)

        return capped

    def _capped(self, cap, atomic, accum) -> tuple:
        """Lower the per-GPU batch just set to ``cap`` (the type's memory limit) if above; return the configuration."""
        if atomic > cap:
            atomic = cap
            self._set_batch_config(atomic, accum)
        return atomic, accum

    def reallocate(self, placement):
        """As :meth:`Job.reallocate`; a move to another GPU type pauses ``migrate_delay`` seconds.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
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
            and tuple(placement) == tuple(self._placement)
        ):
            return
        super().reallocate(placement)
        if placement and self._pending_migration:
            self.rescale_time = self.migrate_delay
        self._pending_migration = False


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
        largest type's GPU count) or when that count is below its application's
        ``min_replicas``.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> from fastsched.sim.policies import make_policy
    >>> from fastsched.sim.inputs.workload import WorkloadJob
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
    for w in wjobs:
        need = apps[w.application].min_replicas if w.application in apps else 1
        if policy.uses_requested_gpus(w) and w.num_replicas < need:
            raise ValueError(
                f"job {w.name!r} requests {w.num_replicas} GPU(s), fewer than its model runs on "
                f"({w.application} needs {need} for its memory), under a policy that runs the requested count"
            )
    jobs = []
    models: dict = {}  # the jobs' goodput models and fits, shared (see Job)
    fits: dict = {}
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
                models=models,
                fits=fits,
            )
        )
    return jobs
