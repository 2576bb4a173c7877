"""The fixed-configuration step kernel against the reference loop of ``Job.step``, on random jobs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.engine._step import epoch_tables
from fastsched.sim.engine.job import Job
from fastsched.sim.truth.builtin import builtin_applications
from fastsched.sim.truth.traces import Application, TraceApplication, write_example_application


class ReferenceJob(Job):
    """Steps with the plain-Python loop only."""

    def _step_fixed(self, app, seconds, gpus, interference):
        return False


_APPS = builtin_applications()


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    # A traces application: six-node placements are answered by its throughput model.
    return TraceApplication(write_example_application(tmp_path_factory.mktemp("toy")))


_STATE = (
    "progress",
    "epoch",
    "current_time",
    "attained_service",
    "modelled_service",
    "completion_time",
    "best_metric",
    "profile",
    "grad_params",
    "num_restarts",
    "atomic_bsz",
    "accum_steps",
)


def _state(job):
    return {k: getattr(job, k) for k in _STATE}


def _run(job, schedule):
    out = []
    for placement, seconds, interference in schedule:
        try:
            if placement is not None:  # refused where the GPUs outnumber the largest batch
                job.reallocate(placement)
            job.step(seconds, interference)
        except (RuntimeError, ValueError) as exc:  # both paths refuse the same cases
            out.append(("raised", str(exc)))
            break
        out.append(_state(job))
    return out


_placements = st.sampled_from([[1], [2], [4], [1, 1], [2, 2], [4, 4, 4], [3, 1], [2, 2, 2, 2, 2, 2], []])
_schedule = st.lists(
    st.tuples(
        st.one_of(st.none(), _placements),
        st.integers(0, 4000),
        st.sampled_from([0.0, 0.0, 0.25, 0.5]),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["cifar10", "imagenet", "bert", "yolov3", "deepspeech2", "toy"]),
    frac=st.floats(0.0, 1.0),
    delay=st.sampled_from([0, 30, 45]),
    first=_placements,
    schedule=_schedule,
)
def test_kernel_step_equals_reference(toy, name, frac, delay, first, schedule):
    app = toy if name == "toy" else _APPS[name]
    # Any fixed total batch size between the initial and the largest one.
    batch = int(app.init_batch_size + frac * (app.max_batch_size - app.init_batch_size))
    fast = Job("j", app, 0, target_batch_size=batch, rescale_delay=delay)
    ref = ReferenceJob("j", app, 0, target_batch_size=batch, rescale_delay=delay)
    schedule = [(first, 60, 0.0), *schedule]
    assert _run(fast, schedule) == _run(ref, schedule)


class SpreadModelled(Application):
    """cifar10's profile, its multi-node points reported as modelled."""

    def __init__(self):
        self._app = _APPS["cifar10"]
        for k in ("name", "init_batch_size", "max_batch_size", "min_local_bsz", "max_local_bsz", "max_epochs"):
            setattr(self, k, getattr(self._app, k))

    def throughput(self, placement, local_bsz):
        return self._app.throughput(placement, local_bsz)

    def is_modelled(self, placement, local_bsz):
        return len(placement) > 1

    def grad_stats(self, batch_size, epoch):
        return self._app.grad_stats(batch_size, epoch)

    def progress(self, epoch):
        return self._app.progress(epoch)

    def iteration(self, batch_size, epoch):
        return self._app.iteration(batch_size, epoch)


def test_kernel_runs_and_reaches_completion():
    # The fast path is taken (never the reference) and finishes the job exactly as the reference.
    calls = []

    class Counting(Job):
        def _step_fixed(self, *args):
            done = super()._step_fixed(*args)
            calls.append(done)
            return done

    app = SpreadModelled()
    fast, ref = Counting("j", app, 0, target_batch_size=512), ReferenceJob("j", app, 0, target_batch_size=512)
    for job in (fast, ref):
        job.reallocate([2, 2])
        while job.completion_time is None:
            job.step(611)
    assert calls and all(calls)
    assert _state(fast) == _state(ref)
    assert fast.modelled_service == fast.attained_service - 2 * 2 * fast.rescale_delay > 0


def test_epoch_tables_are_the_applications_answers():
    app = _APPS["cifar10"]
    batch = 2 * app.init_batch_size
    gain, prog = epoch_tables(app, batch)
    assert epoch_tables(app, batch)[0] is gain  # shared by the jobs of one application and batch
    for e in (0, 7, app.max_epochs - 1):
        sqr, var = app.grad_stats(batch, e)
        assert gain[e] == (var + sqr) / (var / (batch / app.init_batch_size) + sqr)
    assert np.array_equal(prog, [app.progress(e) for e in range(app.max_epochs + 1)])
