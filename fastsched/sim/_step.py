"""The training loop of a job whose batch configuration is fixed within a step, as a numba kernel.

A job with a fixed total batch size (Tiresias, Gavel, Optimus and the queue baselines) keeps
its per-GPU batch, accumulation steps and so its true step time for a whole scheduling
interval; only the statistical gain changes, epoch by epoch. :func:`advance_fixed` runs the
simulator's epoch loop (:meth:`fastsched.sim.job.Job.step`) for such a job on per-epoch
tables, and :func:`epoch_tables` builds those tables from the application's answers (shared
by every job of one application and batch size). The plain-Python loop in ``Job.step`` is
the reference the tests compare against.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from fastsched._jit import jit

__all__ = ["advance_fixed", "epoch_tables", "OK", "PAST_MAX_EPOCHS", "NOT_FINITE"]

#: Status codes of :func:`advance_fixed`: the step ran; the job reached ``max_epochs``
#: without completing (the reference raises); an epoch crossing was not a finite time.
OK, PAST_MAX_EPOCHS, NOT_FINITE = 0, 1, 2


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
    completion = -1
    last = -1
    while seconds > 0 and completion < 0:
        if epoch >= max_epochs:
            return progress, epoch, current_time, attained, modelled_service, completion, last, 1
        last = epoch
        goodput = gain[epoch] / total_time * (1.0 - interference)
        next_progress = prog[epoch + 1]
        if progress + goodput * seconds < next_progress:
            progress += goodput * seconds
            current_time += seconds
            attained += seconds * gpus
            if modelled:
                modelled_service += seconds * gpus
            seconds = 0
        else:
            span = (next_progress - progress) / goodput
            if not (math.isfinite(span) and np.rint(span) <= seconds):
                return progress, epoch, current_time, attained, modelled_service, completion, last, 2
            delta = np.int64(np.rint(span))
            epoch += 1
            if epoch > completion_epoch:
                completion = current_time + delta
            progress = next_progress
            current_time += delta
            attained += delta * gpus
            if modelled:
                modelled_service += delta * gpus
            seconds -= delta
    current_time += seconds
    return progress, epoch, current_time, attained, modelled_service, completion, last, 0


# Per application (weakly held) and total batch size: the tables of epoch_tables.
_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def epoch_tables(app, batch_size) -> tuple[np.ndarray, np.ndarray]:
    """Per-epoch statistical gain at ``batch_size`` and the progress needed to finish each epoch.

    ``gain[e]`` is ``(var + sqr) / (var / scale + sqr)`` of the application's gradient
    statistics in epoch ``e`` (``scale = batch_size / init_batch_size``), for ``e <
    max_epochs``; ``prog[e] = app.progress(e)`` for ``e <= max_epochs``.

    Examples
    --------
    >>> from fastsched.sim.builtin import builtin_applications
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
