"""The simulator's true remaining work of a job at its fixed batch size (the oracle baselines read).

Remaining optimizer steps = the progress left in the current epoch and every later one (the
application's epoch boundaries, :func:`fastsched.sim.truth._rules.epoch_work`) divided by the
statistical gain per step of the job's batch size in that epoch (the same formula as the
isolated runs, :func:`fastsched.sim.truth._rules.gain_row`). Divided by a type's steps per second
and multiplied by the job's slowdown this is the true remaining training time there (epoch
crossings are not rounded to whole seconds and restart pauses are not counted).
"""

from __future__ import annotations

import numpy as np

from fastsched.sim.truth._rules import epoch_work, gain_row

__all__ = ["remaining_steps", "total_steps"]


def _steps_table(job):
    """Return the cached per-epoch table: progress marks, gains and steps of later epochs."""
    cache = job.__dict__.get("_oracle_steps")
    batch = job.target_batch_size
    if cache is None or cache[0] != batch:
        app = getattr(job, "hetero_application", None) or job.application
        last = int(app.completion_epoch(batch))
        work = epoch_work(app, last)
        gain = gain_row(app, batch, work.shape[0])
        per_epoch = work / gain
        after = np.concatenate([np.cumsum(per_epoch[::-1])[::-1][1:], [0.0]])  # steps of epochs e+1 ..
        marks = np.concatenate([[0.0], np.cumsum(work)])
        cache = (batch, marks, after, gain, float(per_epoch.sum()))
        job.__dict__["_oracle_steps"] = cache
    return cache


def remaining_steps(job) -> float:
    """Return the true optimizer steps left to a job with a fixed batch size (``target_batch_size``).

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> job = Job("a", builtin_applications()["cifar10"], 0, target_num_replicas=1, target_batch_size=128)
    >>> before = remaining_steps(job)
    >>> abs(before - total_steps(job)) < 1e-6 * before
    True
    >>> job.reallocate([1])
    >>> job.step(600)
    >>> 0 < remaining_steps(job) < before
    True
    """
    if job.target_batch_size is None:
        raise ValueError(f"job {job.name!r}: the oracle needs a fixed batch size (target_batch_size)")
    _, marks, after, gain, _ = _steps_table(job)
    e = int(job.epoch)
    if e >= gain.shape[0]:
        return 0.0
    return float(max(marks[e + 1] - job.progress, 0.0) / gain[e] + after[e])


def total_steps(job) -> float:
    """Return the true optimizer steps of the whole job at its fixed batch size.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> total_steps(Job("a", builtin_applications()["cifar10"], 0, target_batch_size=128)) > 0
    True
    """
    return _steps_table(job)[4]
