"""An adaptive job's batch choice: the same answer, bit for bit, as ``GoodputFunction.optimize``.

The job keeps its goodput model as the kernels take it and builds a whole
:class:`~fastsched.goodput.GoodputFunction` only when asked for one; the reference here is
the function built from the job's fit and gradient statistics, asked the question the
simulator asks (``optimize(..., accumulation=True)`` with the application's limits).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.goodput import GoodputFunction, PerfParams
from fastsched.sim.engine.job import Job
from fastsched.sim.truth.traces import Application


class LimitsApp(Application):
    """An application with the given limits (only they matter to the batch choice)."""

    name = "limits"
    max_epochs = 10

    def __init__(self, init, max_bsz, lo, hi):
        self.init_batch_size, self.max_batch_size = init, max_bsz
        self.min_local_bsz, self.max_local_bsz = lo, hi


def _reference(perf, grad, app, nodes, replicas):
    fn = GoodputFunction(perf, grad, app.init_batch_size)
    _, atomic, accum = fn.optimize(
        nodes, replicas, app.max_batch_size, (app.min_local_bsz, app.max_local_bsz), accumulation=True
    )
    return int(atomic), int(accum)


def _job_with(app, perf, grad):
    job = Job("j", app, 0)
    job.profile[(1, 1, 1)] = (1.0, 0.5)  # a profile, so the job asks its fit (set below)
    job._perf_params, job._perf_dirty, job.grad_params = perf, False, grad
    return job


positive = st.floats(1e-6, 10.0)
perf_params = st.builds(PerfParams, positive, positive, positive, positive, positive, positive, st.floats(1.0, 10.0))
grads = st.tuples(st.floats(0.0, 10.0), st.floats(0.0, 10.0))
apps = st.builds(
    LimitsApp,
    st.integers(1, 256),
    st.integers(256, 8192),
    st.sampled_from([0, 1, 8, 32]),
    st.sampled_from([0, 64, 256, 1024]),
)


@settings(max_examples=60, deadline=None)
@given(app=apps, perf=perf_params, grads=st.lists(grads, min_size=1, max_size=4), shape=st.integers(0, 5))
def test_batch_choice_matches_goodput_function(app, perf, grads, shape):
    nodes = 1 + shape // 2
    placement = (1 + shape,) * nodes
    job = _job_with(app, perf, grads[0])
    for grad in grads:  # new gradient statistics, the fit unchanged (the common case)
        job.grad_params = grad
        job.update_local_bsz(placement)
        atomic, accum = _reference(perf, grad, app, nodes, sum(placement))
        count = sum(placement) * (accum + 1)
        assert (job.atomic_bsz, job.accum_steps) == (min(atomic, int(app.max_batch_size / count)), accum)
        fn = job.goodput_fn()  # built from the very same inputs
        assert (fn.perf_params, fn.grad_params, fn.init_batch_size) == (perf, grad, app.init_batch_size)


def test_invalid_gradient_statistics_still_raise_naming_the_field():
    app = LimitsApp(32, 1024, 8, 256)
    perf = PerfParams(0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.2)
    job = _job_with(app, perf, (1.0, 1.0))
    job.update_local_bsz((2,))
    for bad, field in (((math.nan, 1.0), "grad_params.sqr"), ((1.0, -1.0), "grad_params.var")):
        job.grad_params = bad
        with pytest.raises(ValueError, match=field):
            job.update_local_bsz((2,))


def test_invalid_limits_still_raise():
    app = LimitsApp(64, 32, 8, 256)  # the initial batch size above the maximum
    job = _job_with(app, PerfParams(0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.2), (1.0, 1.0))
    with pytest.raises(ValueError, match="init_batch_size"):
        job.update_local_bsz((2,))


@settings(max_examples=40, deadline=None)
@given(
    perf=st.lists(st.sampled_from([0.1, 2, -1.0, math.nan, math.inf, True, 11.0, "1"]), min_size=7, max_size=7),
    grad=st.tuples(st.sampled_from([0.5, -1.0, math.nan]), st.sampled_from([0.5, False])),
    init=st.sampled_from([32, 0, -1.0, math.inf, 2.0**60]),
)
def test_the_job_model_raises_what_goodput_function_raises(perf, grad, init):
    app = LimitsApp(32, 1024, 8, 256)
    app.init_batch_size = init
    try:
        GoodputFunction(tuple(perf), grad, init)
        want = None
    except (TypeError, ValueError) as exc:
        want = (type(exc), str(exc))
    job = _job_with(app, tuple(perf), grad)
    try:
        job._current_model()
        got = None
    except (TypeError, ValueError) as exc:
        got = (type(exc), str(exc))
    assert got == want


def test_the_search_bounds_are_kept_by_the_job_and_shared_by_its_models():
    app = LimitsApp(32, 1024, 8, 256)
    perf = PerfParams(0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.2)
    job = _job_with(app, perf, (1.0, 1.0))
    job.update_local_bsz((2,))
    first = job._model
    want = GoodputFunction(perf, (1.0, 1.0), 32).kernel_params_for(1024, (8, 256), accumulation=True)[4:7]
    assert list(first.bounds.values()) == [tuple(want)]
    app.max_local_bsz = 128  # limits that change (a typed application's, with the GPU type)
    job.grad_params = (2.0, 1.0)
    job.update_local_bsz((2,))
    assert job._model is not first and job._model.bounds is first.bounds and len(first.bounds) == 2
    assert first.fn is None and job._model.fn is None  # no GoodputFunction needed for the bounds
    other = _job_with(app, perf, (1.0, 1.0))
    other.update_local_bsz((2,))
    assert other._model.bounds is not first.bounds  # each job owns its memo


def test_jobs_with_the_same_observations_share_their_fit():
    from fastsched.goodput import fit_perf_params
    from fastsched.sim.truth.builtin import builtin_applications

    app = builtin_applications()["cifar10"]
    fits: dict = {}
    a, b, c = (Job(name, app, 0, fits=fits) for name in "abc")
    alone = Job("alone", app, 0)  # no shared dict: its own fit, equal in value
    for job, sync in ((a, 0.01), (b, 0.01), (c, 0.02), (alone, 0.01)):
        job.observe(1, 1, 128, 0.1, sync, 1.0, 2.0)
        job.observe(1, 2, 128, 0.12, sync, 1.0, 2.0)
    assert a.perf_params is b.perf_params  # one fit for both histories
    assert c.perf_params != a.perf_params  # the measured times are part of the key
    want = fit_perf_params([1, 1], [1, 2], [128, 128], [0.1 - 0.01, 0.12 - 0.01], [0.1, 0.12])
    assert tuple(a.perf_params) == tuple(want)
    a.observe(2, 4, 128, 0.2, 0.05, 1.0, 2.0)  # a refit, warm-started from the last fit
    first = a.perf_params
    b.observe(2, 4, 128, 0.2, 0.05, 1.0, 2.0)
    assert b.perf_params is first
    assert alone.perf_params == want
    with pytest.raises(TypeError, match="fits must be a dict"):
        Job("x", app, 0, fits=[])


def _stepped(job_cls=Job, **kwargs):
    from fastsched.sim.truth.builtin import builtin_applications

    app = builtin_applications()["cifar10"]
    jobs = [job_cls(name, app, 0, **kwargs) for name in ("a", "b")]
    for job in jobs:
        job.reallocate([2])
        job.step(900)  # epochs crossed: new gradient statistics, batch choices
    return jobs


def test_jobs_given_one_models_dict_share_models_and_choose_the_same_batches():
    shared = {}
    a, b = _stepped(models=shared)
    alone, _ = _stepped()
    assert a._model is b._model and a._models is shared  # b reached the model a built
    assert len(a._model.choices) > 0
    assert (a.atomic_bsz, a.accum_steps, a.progress, a.epoch) == (b.atomic_bsz, b.accum_steps, b.progress, b.epoch)
    assert (alone.atomic_bsz, alone.accum_steps, alone.progress) == (a.atomic_bsz, a.accum_steps, a.progress)
    assert alone._model is not a._model and alone._models is None  # no table by default


def test_a_shared_model_is_found_only_for_the_same_input_types():
    app = LimitsApp(32, 1024, 8, 256)
    perf = PerfParams(0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.2)
    shared = {}
    first = Job("a", app, 0, models=shared)
    first.profile[(1, 1, 1)] = (1.0, 0.5)
    first._perf_params, first._perf_dirty, first.grad_params = perf, False, (1.0, 1.0)
    first.update_local_bsz((2,))
    bad = Job("b", app, 0, models=shared)
    bad.profile[(1, 1, 1)] = (1.0, 0.5)
    bad._perf_params, bad._perf_dirty, bad.grad_params = perf, False, (True, 1.0)  # equal to (1.0, 1.0)
    with pytest.raises(TypeError, match="grad_params.sqr"):
        bad.update_local_bsz((2,))


def test_models_must_be_a_dict():
    with pytest.raises(TypeError, match="models"):
        Job("a", LimitsApp(32, 1024, 8, 256), 0, models=[])


@settings(max_examples=60, deadline=None)
@given(perf_params, grads, st.sampled_from([1, 32, 100.0, 4096]), st.integers(1, 4), st.integers(0, 12))
def test_the_models_goodput_function_is_the_one_its_inputs_build(perf, grad, init, nodes, extra):
    """The job's GoodputFunction (built from its model's checked inputs) answers as a fresh one."""
    app = LimitsApp(init, 8192, 8, 1024)
    fn = _job_with(app, perf, grad).goodput_fn()
    fresh = GoodputFunction(perf, grad, init)
    assert fn.perf_params == fresh.perf_params and fn.grad_params == fresh.grad_params
    assert fn.init_batch_size == fresh.init_batch_size and type(fn.init_batch_size) is type(init)
    assert all(
        (a == b).all() if hasattr(a, "all") else a == b
        for a, b in zip(fn.kernel_params, fresh.kernel_params, strict=True)
    )
    replicas = nodes + extra
    assert fn.optimize(nodes, replicas, 8192, (8, 1024), True) == fresh.optimize(nodes, replicas, 8192, (8, 1024), True)
    accum = 4096 // (64 * replicas)  # a total batch of at least the largest initial batch
    assert fn.evaluate(nodes, replicas, 64, accum) == fresh.evaluate(nodes, replicas, 64, accum)
