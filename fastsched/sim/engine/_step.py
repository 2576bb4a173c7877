"""The training loop of a job whose batch configuration is fixed within a step, as a numba kernel.

A job with a fixed total batch size (Tiresias, Gavel, Optimus and the queue baselines) keeps
its per-GPU batch, accumulation steps and so its true step time for a whole scheduling
interval; only the statistical gain changes, epoch by epoch. :func:`advance_fixed` runs the
simulator's epoch loop (:meth:`fastsched.sim.engine.job.Job.step`) for such a job on per-epoch
tables, and :func:`epoch_tables` builds those tables from the application's answers (shared
by every job of one application and batch size). The plain-Python loop in ``Job.step`` is
the reference the tests compare against.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from fastsched._jit import jit

__all__ = ["advance_fixed", "epoch_tables", "slowed", "FixedStepping", "OK", "PAST_MAX_EPOCHS", "NOT_FINITE"]

#: Status codes of :func:`advance_fixed`: the step ran; the job reached ``max_epochs``
#: without completing (the reference raises); an epoch crossing was not a finite time.
OK, PAST_MAX_EPOCHS, NOT_FINITE = 0, 1, 2


def slowed(interference, slowdown):
    """Return the interference that, in ``1 - interference``, also divides the goodput by ``slowdown``.

    The one definition of the slowdown rule (:class:`~fastsched.sim.engine.hetero_job.HeteroJob`'s
    slower GPU types): the Python step and the round kernel (through :func:`_slowed`) use it.

    Examples
    --------
    >>> slowed(0.0, 2.0), slowed(0.5, 1.0)
    (0.5, 0.5)
    """
    return 1.0 - (1.0 - interference) / slowdown


_slowed = jit(inline="always")(slowed)


@jit(inline="always")
def _train(seconds, progress, epoch, now, attained, msvc, gpus, modelled, total_time, slow, gain, prog, ga, pa, ce, me):
    """Run the training loop of :func:`advance_fixed` on tables at offsets ``ga`` (gain), ``pa`` (prog).

    Compiled into its callers: :func:`advance_fixed` (a lone job, offsets 0) and
    :func:`~fastsched.sim.engine._state.advance_round` (a cluster's rows, their tables concatenated).
    """
    completion = -1
    last = -1
    while seconds > 0 and completion < 0:
        if epoch >= me:
            return progress, epoch, now, attained, msvc, completion, last, 1
        last = epoch
        goodput = gain[ga + epoch] / total_time * (1.0 - slow)
        next_progress = prog[pa + epoch + 1]
        if progress + goodput * seconds < next_progress:
            progress += goodput * seconds
            now += seconds
            attained += seconds * gpus
            if modelled:
                msvc += seconds * gpus
            seconds = 0
        else:
            span = (next_progress - progress) / goodput
            if not (math.isfinite(span) and np.rint(span) <= seconds):
                return progress, epoch, now, attained, msvc, completion, last, 2
            delta = np.int64(np.rint(span))
            epoch += 1
            if epoch > ce:
                completion = now + delta
            progress = next_progress
            now += delta
            attained += delta * gpus
            if modelled:
                msvc += delta * gpus
            seconds -= delta
    now += seconds
    return progress, epoch, now, attained, msvc, completion, last, 0


@jit
def advance_fixed(
    seconds,
    progress,
    epoch,
    current_time,
    attained,
    modelled_service,
    gpus,
    modelled,
    total_time,
    interference,
    gain,
    prog,
    completion_epoch,
    max_epochs,
):
    """Train ``seconds`` (after the re-scale delay) at a fixed configuration.

    Same arithmetic as the reference loop: per epoch the goodput is ``gain[epoch] /
    total_time * (1 - interference)``; an epoch crossing is rounded to whole seconds (half to
    even, as Python's ``round``); the job completes when its epoch count exceeds
    ``completion_epoch``; time left after completion only advances the clock.

    Returns
    -------
    tuple
        ``(progress, epoch, current_time, attained, modelled_service, completion, last_epoch,
        status)``: ``completion`` is -1 while the job runs, ``last_epoch`` the epoch of the
        last training iteration (-1 if none), ``status`` :data:`OK` or a reason to hand the
        step to the reference (whose state the kernel never touched).
    """
    return _train(
        seconds,
        progress,
        epoch,
        current_time,
        attained,
        modelled_service,
        gpus,
        modelled,
        total_time,
        interference,
        gain,
        prog,
        0,
        0,
        completion_epoch,
        max_epochs,
    )


# Per application (weakly held) and total batch size: the tables of epoch_tables.
_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def epoch_tables(app, batch_size) -> tuple[np.ndarray, np.ndarray]:
    """Per-epoch statistical gain at ``batch_size`` and the progress needed to finish each epoch.

    ``gain[e]`` is ``(var + sqr) / (var / scale + sqr)`` of the application's gradient
    statistics in epoch ``e`` (``scale = batch_size / init_batch_size``), for ``e <
    max_epochs``; ``prog[e] = app.progress(e)`` for ``e <= max_epochs``.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> gain, prog = epoch_tables(app, app.init_batch_size)
    >>> len(gain) == app.max_epochs, len(prog) == app.max_epochs + 1, float(gain[0]), float(prog[0])
    (True, True, 1.0, 0.0)
    """
    try:
        per_app = _TABLES.get(app)
    except TypeError:  # an unhashable or not weakly referable application: no sharing
        per_app = None
    out = None if per_app is None else per_app.get(batch_size)
    if out is None:
        n = int(app.max_epochs)
        stats = np.array([app.grad_stats(batch_size, e) for e in range(n)], dtype=np.float64).reshape(n, 2)
        sqr, var = stats[:, 0], stats[:, 1]
        scale = batch_size / app.init_batch_size
        gain = (var + sqr) / (var / scale + sqr)
        prog = np.array([app.progress(e) for e in range(n + 1)], dtype=np.float64)
        out = (gain, prog)
        try:
            _TABLES.setdefault(app, {})[batch_size] = out
        except TypeError:
            pass
    return out


class FixedStepping:
    """A job's side of the fixed-configuration kernels (mixed into :class:`~fastsched.sim.engine.job.Job`).

    :meth:`_prepare_fixed` fills the job's row of kernel inputs (see
    :class:`fastsched.sim.engine._state.FixedInputs`) for its current configuration; :meth:`_step_fixed`
    runs one step of a job alone on :func:`advance_fixed`; :meth:`_trained` makes the
    observation of a configuration the round kernel trained first.
    """

    def _prepare_fixed(self) -> bool:
        """Fill the job's kernel inputs for its current fixed configuration (its row of ``inputs``).

        Returns ``False`` (the row marked for the reference loop) where the application cannot
        give the epoch tables. A configuration seen last time is kept with its observed flag.
        """
        app, inputs, r = self.application, self._t.inputs, self._r
        atomic, accum = self.atomic_bsz, self.accum_steps
        # The profile observed into is part of the key: a HeteroJob keeps one per GPU type.
        key = (app, self._placement, atomic, accum, id(self.profile))
        fast = self._fast
        if fast is None or fast[0] != key:
            placement = tuple(filter(None, self._placement))
            num_replicas = sum(placement)
            batch_size = num_replicas * atomic * (accum + 1)
            step_time, sync_time = app.throughput(placement, atomic)
            modelled = bool(app.is_modelled(placement, atomic))
            accum_time = step_time - sync_time
            total_time = step_time + accum_time * accum
            try:
                gain, prog = epoch_tables(app, batch_size)
            except (ValueError, IndexError, KeyError):
                inputs.ready[r] = -1
                return False
            obs = (len(placement), num_replicas, atomic, step_time, sync_time)
            completion_epoch = int(app.completion_epoch(batch_size))
            fast = (key, batch_size, float(total_time), modelled, gain, prog, completion_epoch, obs)
            self._settle()  # what the kernel marked belongs to the configuration replaced
            self._fast = fast
            inputs.observed[r] = 0
        _, batch_size, total_time, modelled, gain, prog, completion_epoch, _ = fast
        inputs.gain_at[r], inputs.prog_at[r] = self._t.tables.offsets(app, batch_size)
        inputs.total_time[r], inputs.modelled[r] = total_time, modelled
        inputs.completion_epoch[r], inputs.max_epochs[r] = completion_epoch, int(app.max_epochs)
        inputs.ready[r] = 1
        return True

    def _trained(self, last):
        """After the round kernel trained a configuration not yet observed, up to epoch ``last``: observe it."""
        _, batch_size, *_, obs = fast = self._fast
        self.observe(*obs, *fast[0][0].grad_stats(batch_size, last))
        self._t.inputs.observed[self._r] = 1

    def _step_fixed(self, app, seconds, gpus, interference) -> bool:
        """Run the training part of :meth:`step` on the kernel (a fixed batch configuration).

        Returns ``False``, having changed nothing, where the reference loop must run instead
        (a clock or service that is not a whole number, tables the application cannot give,
        or a case the reference raises on).
        """
        if not (type(seconds) is int and type(self.current_time) is int and type(self.attained_service) is int):
            return False
        if type(self.modelled_service) is not int or self.completion_time is not None:
            return False
        if not self._prepare_fixed():  # checks the configuration as it is now
            return False
        _, batch_size, total_time, modelled, gain, prog, completion_epoch, obs = self._fast
        progress, epoch, now, attained, msvc, completion, last, status = advance_fixed(
            seconds,
            float(self.progress),
            int(self.epoch),
            self.current_time,
            self.attained_service,
            self.modelled_service,
            int(gpus),
            modelled,
            total_time,
            float(interference),
            gain,
            prog,
            completion_epoch,
            int(app.max_epochs),
        )
        if status != OK:
            return False
        if last >= 0:
            if self._t.inputs.observed[self._r]:  # the key is in the profile: only the gradient statistics change
                self.grad_params = app.grad_stats(batch_size, last)
            else:
                self._trained(last)
        self.progress = float(progress)
        if epoch != self.epoch:
            self.epoch = int(epoch)
            self._best_metric_at = (app, batch_size, self.epoch)  # logging only: computed when read
            self._t.inputs.metric_epoch[self._r] = -1
        if completion >= 0:
            self.completion_time = int(completion)
        self.current_time = int(now)
        self.attained_service = int(attained)
        self.modelled_service = int(msvc)
        return True
