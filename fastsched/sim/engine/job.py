"""One simulated training job: true progress from its application model, observed profile.

Semantics follow the published Pollux simulator (``Job.step``, ``Job.reallocate``,
``update_local_bsz``): integer clocks, a 30 s re-scale delay after every reallocation, epoch
crossings rounded to whole seconds, a noise-free profile refitted on every new
``(nodes, replicas, atomic batch)`` key, and batch-size re-optimisation between epochs.
"""

from __future__ import annotations

from fastsched._memo import remember
from fastsched.goodput import GoodputFunction, SpeedupFunction
from fastsched.sim.engine._model import _CHOICES_KEPT, _FITS_KEPT, _MODELS_KEPT, _choice_key, _fitted, _Model
from fastsched.sim.engine._state import NONE, Stateful
from fastsched.sim.engine._step import FixedStepping, slowed
from fastsched.sim.truth._rules import fixed_batch_config

__all__ = ["Job", "RESCALE_DELAY"]

#: Seconds a job pauses after every (re)allocation.
RESCALE_DELAY = 30


def _max_replicas(profile) -> int:
    """Largest replica count among a profile's ``(nodes, replicas, atomic_bsz)`` keys (0 if empty)."""
    return max((k[1] for k in profile), default=0)


class Job(Stateful, FixedStepping):
    """State of one job in the simulation.

    Parameters
    ----------
    name : str
    application : Application
        True behaviour of the job (see :mod:`fastsched.sim.truth.traces`).
    submission_time : int
        Seconds from the simulation start.
    target_num_replicas : int, optional
        Fixed GPU count (Tiresias).
    target_batch_size : int, optional
        Fixed total batch size; ``None`` lets the goodput model choose (Pollux).
    rescale_delay : int
        Seconds of pause after every allocation change (30 in the published study).
    models : dict, optional
        Goodput models by their inputs (fit, gradient statistics, initial batch size), shared
        by the jobs given the same dict: jobs of one application given the same allocations
        reach the same models, and a model keeps its batch choices. Default: none kept
        beyond the job's current one.
    fits : dict, optional
        Fitted perf params by their observations and warm start, shared by the jobs given
        the same dict: a job never repeats its own history, but jobs of one application
        given the same allocations make the same observations (most refits of a Sia or
        Pollux study repeat another job's). Default: every refit is computed.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> job = Job("a", builtin_applications()["cifar10"], 0, target_num_replicas=1, target_batch_size=128)
    >>> job.reallocate([1])  # one GPU on one node
    >>> job.step(60)
    >>> job.placement, job.batch_size, job.current_time, job.num_restarts
    ((1,), 128, 60, 0)
    """

    #: The methods a cluster's round kernel stands in for: a subclass defining one of them (and
    #: not ``_round_kernel`` itself) is stepped by its own :meth:`step`, and its adaptive batch
    #: choice goes through its :meth:`update_local_bsz` (see :meth:`__init_subclass__`); else
    #: the reference loop makes that choice by :meth:`_adaptive_chooser`.
    _KERNEL_METHODS = ("step", "_step_fixed", "_loop", "update_local_bsz", "_choose_local_bsz")

    def __init_subclass__(cls, **kwargs):
        """Mark a subclass that changes how a job trains: the round kernel would skip its override.

        A class whose own body sets ``_round_kernel = True`` (as :class:`~fastsched.sim.engine.hetero_job.HeteroJob`)
        declares its overrides the kernel's arithmetic.
        """
        super().__init_subclass__(**kwargs)
        if "_round_kernel" in vars(cls):
            return
        for name in Job._KERNEL_METHODS:
            owner = next(k for k in cls.__mro__ if name in vars(k))
            if owner not in (Job, FixedStepping) and not vars(owner).get("_round_kernel", False):
                cls._round_kernel = False
                return

    def __init__(
        self,
        name,
        application,
        submission_time,
        target_num_replicas=None,
        target_batch_size=None,
        rescale_delay=RESCALE_DELAY,
        models=None,
        fits=None,
    ):
        for field, value in (("models", models), ("fits", fits)):
            if value is not None and type(value) is not dict:
                raise TypeError(f"{field} must be a dict, got {type(value).__name__}")
        Stateful.__init__(self)
        self.name = name
        self.application = application
        self.submission_time = submission_time
        self.target_num_replicas = target_num_replicas
        self.target_batch_size = target_batch_size
        self.rescale_delay = rescale_delay
        # progress, epoch, current_time, attained_service, modelled_service (GPU-seconds
        # trained at points the application answers from its throughput model rather than
        # measured rows, see Application.is_modelled), rescale_time, completion_time,
        # num_restarts, placement, atomic_bsz, accum_steps: the job's row (see Stateful).
        self.profile: dict[tuple[int, int, int], tuple[float, float]] = {}
        self._perf_params = None
        self._perf_dirty = False
        self._grad_params = None
        self._best_metric_at = None
        self.best_metric = None
        self._speedup_cache = None
        self._model = None
        self._models = models
        self._fits = fits

    @property
    def application(self):
        """The job's true behaviour; set another and the next step trains on its answers."""
        return self._application

    @application.setter
    def application(self, value):
        self._application = value
        self._t.inputs.ready[self._r] = 0  # the round kernel's inputs are the old application's

    @property
    def target_batch_size(self):
        """Fixed total batch size, or ``None`` (the goodput model chooses)."""
        return self._target_batch_size

    @target_batch_size.setter
    def target_batch_size(self, value):
        self._target_batch_size = value
        self._set_kind()  # a fixed batch is the round kernel's; an adaptive one steps itself

    @property
    def grad_params(self):
        """Gradient statistics ``(sqr, var)`` last observed (``None`` before)."""
        if self._fast is not None and self._t.inputs.grad_epoch.item(self._r) >= 0:  # marked by a round kernel
            self._settle()
        return self._grad_params

    @grad_params.setter
    def grad_params(self, value):
        self._grad_params = value
        if self._fast is not None:  # only a kernel-stepped job has a mark to clear
            self._t.inputs.grad_epoch[self._r] = -1

    @property
    def best_metric(self):
        """Best validation metric so far (the application's :meth:`~Application.best_metric`; logging only)."""
        if self._t.inputs.metric_epoch.item(self._r) >= 0:  # marked by a cluster's round kernel
            self._settle()
        at = self._best_metric_at
        if at is not None:
            self._best_metric, self._best_metric_at = at[0].best_metric(at[1], at[2]), None
        return self._best_metric

    @best_metric.setter
    def best_metric(self, value):
        self._best_metric, self._best_metric_at = value, None
        self._t.inputs.metric_epoch[self._r] = -1

    # -- observed model --------------------------------------------------------------------
    @property
    def max_profiled_replicas(self) -> int:
        """Largest replica count the job has run with (0 if it never ran)."""
        # Asked for every job in every round. A profile only gains keys, so the answer holds
        # while the profile (a typed job has one per GPU type) keeps its length.
        profile = self.profile
        memo = self.__dict__.get("_max_profiled")
        if memo is None or memo[0] is not profile or memo[1] != len(profile):
            memo = self._max_profiled = (profile, len(profile), _max_replicas(profile))
        return memo[2]

    @property
    def perf_params(self):
        """PerfParams fitted on the profile (refitted lazily after a new observation)."""
        if self._perf_dirty:
            observations, previous = tuple(self.profile.items()), self._perf_params
            if self._fits is None:
                self._perf_params = _fitted(observations, previous)
            else:  # jobs that made exactly the same observations, in the same order, share the fit
                make = lambda: _fitted(observations, previous)  # noqa: E731
                self._perf_params = remember(self._fits, (observations, previous), make, _FITS_KEPT)
            self._perf_dirty = False
        return self._perf_params

    def observe(self, num_nodes, num_replicas, atomic_bsz, step_time, sync_time, grad_sqr, grad_var):
        """Record what the job's agent measures; a new key triggers a refit (lazily).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> job = Job("a", builtin_applications()["cifar10"], 0)
        >>> job.observe(1, 1, 128, 0.1, 0.0, 1.0, 2.0)  # nodes, replicas, atomic bsz, times, grads
        >>> job.profile, job.grad_params, job.max_profiled_replicas
        ({(1, 1, 128): (0.1, 0.0)}, (1.0, 2.0), 1)
        """
        self.grad_params = (grad_sqr, grad_var)
        key = (num_nodes, num_replicas, atomic_bsz)
        if key in self.profile:
            return
        self.profile[key] = (step_time, sync_time)
        self._perf_dirty = True

    def goodput_fn(self) -> GoodputFunction:
        """Return the job's current fitted goodput model (needs a profile).

        Cached while the fitted parameters and gradient statistics are unchanged: the
        simulator asks at every epoch crossing, and building one validates its inputs.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> job = Job("a", builtin_applications()["cifar10"], 0)
        >>> job.reallocate([2])
        >>> job.step(60)
        >>> fn = job.goodput_fn()
        >>> type(fn).__name__, fn is job.goodput_fn()
        ('GoodputFunction', True)
        """
        return self._current_model().goodput_fn()

    def _current_model(self) -> _Model:
        """Return the model of the current fit and gradient statistics (another one when either changed).

        With a ``models`` dict (see :class:`Job`) models are kept there by their exact inputs
        (types included: ``1 == True``, but only one of them passes the checks), so the jobs
        given that dict share them.
        """
        key = (self.perf_params, self.grad_params)
        model = self._model
        if model is None or model.key != key:
            init = self.application.init_batch_size
            shared, grads = self._models, key[1]
            if shared is None or type(grads) is not tuple:
                model = self._model = _Model(key, init, model)
                return model
            exact = (key, init, (type(init), *map(type, key[0]), *map(type, grads)))
            model = self._model = remember(shared, exact, lambda: _Model(key, init, model), _MODELS_KEPT)
        return model

    def speedup_fn(self):
        """Return a SpeedupFunction of the fitted model, or ``None`` if the job never ran.

        Cached while the fitted parameters and gradient statistics are unchanged.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> job = Job("a", builtin_applications()["cifar10"], 0)
        >>> job.speedup_fn() is None  # never ran
        True
        >>> job.reallocate([2])
        >>> job.step(60)
        >>> speedup = job.speedup_fn()
        >>> float(speedup(1, 1)), 1.0 < float(speedup(1, 2)) < 2.0
        (1.0, True)
        """
        if not self.profile:
            return None
        perf = self.perf_params
        key = (perf, self.grad_params)
        cache = self._speedup_cache
        if cache is not None and cache[0] == key:
            return cache[1]
        app = self.application
        model = self._current_model()
        limits = (app.max_batch_size, app.min_local_bsz, app.max_local_bsz)
        fn = remember(
            model.speedups,
            (limits, tuple(map(type, limits))),  # 1 == True, but only one of them is a valid limit
            lambda: SpeedupFunction(model.goodput_fn(), limits[0], limits[1:], accumulation=True),
            _CHOICES_KEPT,
        )
        self._speedup_cache = (key, fn)
        return fn

    # -- batch configuration ---------------------------------------------------------------
    def update_local_bsz(self, placement):
        """Choose the atomic batch size and accumulation steps for ``placement``.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> job = Job("a", builtin_applications()["cifar10"], 0, target_batch_size=256)
        >>> job.update_local_bsz((2,))
        >>> job.atomic_bsz, job.accum_steps
        (128, 0)
        """
        self._choose_local_bsz(placement)

    def _choose_local_bsz(self, placement) -> tuple:
        """:meth:`update_local_bsz`, returning the ``(atomic_bsz, accum_steps)`` it set."""
        if self.target_batch_size is None and self.profile:
            return self._adaptive_chooser(placement)()
        return self._choose_fixed(placement)

    def _choose_fixed(self, placement) -> tuple:
        """:meth:`_choose_local_bsz` of a fixed batch: the target, or the initial one before any observation."""
        app = self.application
        num_replicas = sum(filter(None, placement))
        batch_size = self.target_batch_size
        if batch_size is None:
            batch_size = max(app.init_batch_size, app.min_local_bsz * num_replicas)
        atomic, accum = self._fixed_config(app, num_replicas, batch_size, app.max_local_bsz)
        return self._set_within_max(app.max_batch_size, num_replicas, atomic, accum)

    def _adaptive_chooser(self, placement):
        """Return ``choose()``, the :meth:`_choose_local_bsz` of ``placement`` by the goodput model.

        For an adaptive job with observations. What a step does not change (the application
        and its limits, the placement's node and replica counts, the choice's memo key) is
        found once: :meth:`_loop` chooses after every iteration, on a new fit or new gradient
        statistics (a new model) each time. ``choose`` is valid while the job's application
        and target batch size stay as they are (within a step).
        """
        app = self.application
        placement = tuple(filter(None, placement))
        num_nodes, num_replicas = len(placement), sum(placement)
        max_batch_size = app.max_batch_size
        plain = type(num_nodes) is int and type(num_replicas) is int and 1 <= num_nodes <= num_replicas
        key = _choice_key(app, num_nodes, num_replicas) if plain else None

        def choose():
            model = self._current_model()
            # The application's limits are part of the key: a heterogeneity-unaware job keeps one
            # model across GPU types whose limits differ.
            choice = None if key is None else model.choices.get(key)
            if choice is None:
                choice = model.best_config(app, num_nodes, num_replicas, key)
            return self._set_within_max(max_batch_size, num_replicas, *choice)

        return choose

    def _set_within_max(self, max_batch_size, num_replicas, atomic, accum) -> tuple:
        """Set ``(atomic, accum)``, the per-GPU batch lowered to keep the total within ``max_batch_size``; return it."""
        atomic = min(atomic, int(max_batch_size / (num_replicas * (accum + 1))))
        self._set_batch_config(atomic, accum)
        return atomic, accum

    def _fixed_config(self, app, num_replicas, batch_size, max_local_bsz):
        """:func:`~fastsched.sim.truth._rules.fixed_batch_config`, its refusal naming the job."""
        try:
            return fixed_batch_config(app, num_replicas, batch_size, max_local_bsz)
        except ValueError as exc:
            raise ValueError(f"job {self.name}: {exc}") from None

    # -- time ------------------------------------------------------------------------------
    def step(self, seconds, interference=0.0):
        """Advance the job's clock by ``seconds``, training if it holds GPUs.

        Parameters
        ----------
        seconds : int
            Length of the interval.
        interference : float
            Slowdown in [0, 1) multiplying the true goodput by ``1 - interference``.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> job = Job("a", builtin_applications()["cifar10"], 0)
        >>> job.reallocate([2])
        >>> job.step(60)
        >>> job.current_time, job.epoch, len(job.profile) > 0
        (60, 1, True)
        """
        s, r = self._s, self._r
        slowdown = self._t.inputs.slowdown.item(r)
        if slowdown != 1.0:  # the goodput factor (1 - interference) absorbs the slowdown
            interference = slowed(interference, slowdown)
        if not self._placement:
            self.current_time += seconds
            return
        app = self.application
        gpus = sum(self._placement)
        if self._odd is None and type(seconds) is int and type(gpus) is int:
            # Plain ints in the row and in the step (the simulator's case): read and written directly.
            rescale = s.rescale.item(r)
            delay = min(rescale, seconds)
            s.clock[r] = s.clock.item(r) + delay
            s.attained[r] = s.attained.item(r) + delay * gpus
            s.rescale[r] = rescale - delay
        else:
            delay = min(self.rescale_time, seconds)
            self.current_time += delay
            self.attained_service += delay * gpus
            self.rescale_time -= delay
        seconds -= delay
        if self.target_batch_size is not None and seconds > 0 and self._step_fixed(app, seconds, gpus, interference):
            return
        self._loop(app, seconds, gpus, interference)

    def _loop(self, app, seconds, gpus, interference):
        """Run the training part of :meth:`step` in plain Python: the reference of the kernels.

        Runs on local copies of the job's row, written back once (also when it raises).
        """
        # The placement is fixed within a step; the (memoised) true throughput changes only
        # with the per-GPU batch, which only an adaptive job re-chooses between epochs.
        placement = tuple(filter(None, self._placement))
        num_nodes, num_replicas = len(placement), sum(placement)
        adaptive = self.target_batch_size is None
        s, r = self._s, self._r
        plain = self._odd is None and type(seconds) is int and type(gpus) is int  # see step
        if plain:
            progress, epoch, now = s.progress.item(r), s.epoch.item(r), s.clock.item(r)
            attained, msvc, completion = s.attained.item(r), s.modelled.item(r), s.completion.item(r)
            completion = None if completion == NONE else completion
            atomic, accum = s.atomic.item(r), s.accum.item(r)
        else:
            progress, epoch, now = self.progress, self.epoch, self.current_time
            attained, msvc, completion = self.attained_service, self.modelled_service, self.completion_time
            atomic, accum = self.atomic_bsz, self.accum_steps
        point_bsz = None
        crossed = False
        choose = None  # _adaptive_chooser's for this step's placement, found at the first iteration's end
        try:
            while seconds > 0 and completion is None:
                if epoch >= app.max_epochs:
                    raise RuntimeError(f"job {self.name}: epoch {epoch} >= max_epochs {app.max_epochs}")
                batch_size = num_replicas * atomic * (accum + 1)
                scale = batch_size / app.init_batch_size
                if atomic != point_bsz:
                    point_bsz = atomic
                    step_time, sync_time = app.throughput(placement, point_bsz)
                    modelled = app.is_modelled(placement, point_bsz)
                accum_time = step_time - sync_time
                grad_sqr, grad_var = app.grad_stats(batch_size, epoch)
                gain = (grad_var + grad_sqr) / (grad_var / scale + grad_sqr)
                self.observe(num_nodes, num_replicas, atomic, step_time, sync_time, grad_sqr, grad_var)
                total_time = step_time + accum_time * accum
                goodput = gain / total_time * (1.0 - interference)
                next_progress = app.progress(epoch + 1)
                if progress + goodput * seconds < next_progress:
                    progress += goodput * seconds
                    now += seconds
                    attained += seconds * gpus
                    if modelled:
                        msvc += seconds * gpus
                    seconds = 0
                else:
                    epoch += 1
                    delta = round(float((next_progress - progress) / goodput))
                    if delta > seconds:  # pragma: no cover - guarded by the branch above
                        raise RuntimeError(f"job {self.name}: epoch crossing beyond the interval")
                    if epoch > app.completion_epoch(batch_size):
                        completion = now + delta
                    progress = next_progress
                    self._best_metric_at = (app, batch_size, epoch)  # logging only: computed when read
                    crossed = True
                    now += delta
                    attained += delta * gpus
                    if modelled:
                        msvc += delta * gpus
                    seconds -= delta
                if adaptive:  # a fixed batch's split depends on the placement only
                    if not self._round_kernel:  # a subclass's update_local_bsz may choose otherwise
                        self.update_local_bsz(self._placement)
                        atomic, accum = self.atomic_bsz, self.accum_steps
                    else:  # _choose_local_bsz's, the profile not empty after the observation above
                        if choose is None:
                            choose = self._adaptive_chooser(self._placement)
                        atomic, accum = choose()
            now += seconds
        finally:
            if plain:
                s.progress[r], s.epoch[r], s.clock[r] = progress, epoch, now
                s.attained[r], s.modelled[r] = attained, msvc
                if completion is not None:
                    s.completion[r] = completion
            else:
                self.progress, self.epoch, self.current_time = progress, epoch, now
                self.attained_service, self.modelled_service, self.completion_time = attained, msvc, completion
            if crossed:  # newer than an epoch a round kernel marked
                self._t.inputs.metric_epoch[self._r] = -1

    def reallocate(self, placement):
        """Apply a new placement (GPUs per node); empty means de-allocate.

        A non-empty placement recomputes the batch configuration, starts the re-scale delay
        and counts a restart (the first allocation counts 0).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> job = Job("a", builtin_applications()["cifar10"], 0)
        >>> job.reallocate([2])
        >>> job.placement, job.batch_size, job.rescale_time, job.num_restarts
        ((2,), 128, 30, 0)
        >>> job.reallocate([2, 2])
        >>> job.num_restarts
        1
        >>> job.reallocate([])
        >>> job.placement, job.batch_size
        ((), 0)
        """
        if placement:
            self.placement = tuple(placement)
            self._set_kind()
            self.update_local_bsz(self._placement)
            self.rescale_time = self.rescale_delay
            restarts = self.num_restarts
            self.num_restarts = 0 if restarts is None else restarts + 1
        else:
            self.placement = ()
            self._set_batch_config(0, self.accum_steps)
