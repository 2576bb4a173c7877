"""Jobs that reach the same goodput model share one speedup function, whose table is the model's own."""

from __future__ import annotations

import numpy as np

from fastsched.goodput import SpeedupFunction
from fastsched.sim.engine.job import Job
from fastsched.sim.truth.builtin import builtin_applications


def _twins(models, fits):
    app = builtin_applications()["cifar10"]
    jobs = [Job(name, app, 0, models=models, fits=fits) for name in ("a", "b")]
    for job in jobs:
        job.reallocate([2])
        job.step(300)
    return jobs


def test_jobs_with_the_same_model_share_one_speedup_function_and_its_values():
    a, b = _twins({}, {})
    assert a._current_model() is b._current_model()
    fa, fb = a.speedup_fn(), b.speedup_fn()
    assert fa is fb
    app = a.application
    fresh = SpeedupFunction(
        a.goodput_fn(), app.max_batch_size, (app.min_local_bsz, app.max_local_bsz), accumulation=True
    )
    assert np.array_equal(fa.table(16), fresh.table(16))
    # Without a shared dict each job has its own, with the same values.
    c, d = _twins(None, None)
    assert c.speedup_fn() is not d.speedup_fn()
    assert np.array_equal(c.speedup_fn().table(16), fa.table(16))


def test_a_new_model_gets_a_new_speedup_function():
    a, _ = _twins({}, {})
    before = a.speedup_fn()
    a.reallocate([4])
    a.step(600)  # new observations and gradient statistics: another model
    assert a.speedup_fn() is not before
    assert a.speedup_fn().goodput_fn is a.goodput_fn()
