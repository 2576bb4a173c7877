"""The job state as arrays: the round kernel against the reference loop, and the attributes' values and types."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.engine._state import NONE, ODD, StateTable, step_jobs
from fastsched.sim.engine.hetero_job import HeteroApplication, HeteroJob
from fastsched.sim.engine.job import Job
from fastsched.sim.truth.builtin import builtin_applications
from fastsched.sim.truth.traces import Application, TraceApplication, write_example_application

_APPS = builtin_applications()


class _Reference:
    """Steps with the plain-Python loop only, never a kernel (neither the job's nor the round's)."""

    _round_kernel = False

    def _step_fixed(self, app, seconds, gpus, interference):
        return False


class RefJob(_Reference, Job):
    pass


class RefHetero(_Reference, HeteroJob):
    pass


class Wrapped(Application):
    """An application's answers, with some of them changed (to reach the kernel's fallbacks)."""

    def __init__(self, app, *, modelled_spread=False, completion=None, no_last_progress=False):
        self._app, self._spread, self._completion, self._no_last = app, modelled_spread, completion, no_last_progress
        for k in ("name", "init_batch_size", "max_batch_size", "min_local_bsz", "max_local_bsz", "max_epochs"):
            setattr(self, k, getattr(app, k))

    def throughput(self, placement, local_bsz):
        return self._app.throughput(placement, local_bsz)

    def is_modelled(self, placement, local_bsz):
        return len(placement) > 1 if self._spread else self._app.is_modelled(placement, local_bsz)

    def grad_stats(self, batch_size, epoch):
        return self._app.grad_stats(batch_size, epoch)

    def progress(self, epoch):
        if self._no_last and epoch >= self.max_epochs:  # the epoch tables cannot be built
            raise IndexError(epoch)
        return self._app.progress(epoch)

    def completion_epoch(self, batch_size):
        if self._completion is not None:
            return self._completion
        return self._app.completion_epoch(batch_size)

    def iteration(self, batch_size, epoch):
        return self._app.iteration(batch_size, epoch)


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    toy = TraceApplication(write_example_application(tmp_path_factory.mktemp("toy")))
    cifar = _APPS["cifar10"]
    return {
        "cifar10": cifar,
        "bert": _APPS["bert"],
        "toy": toy,  # six-node placements answered by its throughput model
        "spread": Wrapped(cifar, modelled_spread=True),
        "quick": Wrapped(cifar, completion=3),  # completes within a few rounds
        "no_tables": Wrapped(cifar, completion=2, no_last_progress=True),  # the reference loop runs
        "past_max": Wrapped(_APPS["yolov3"], completion=10**6),  # runs past max_epochs: both raise
    }


_STATE = (
    "progress",
    "epoch",
    "current_time",
    "attained_service",
    "modelled_service",
    "rescale_time",
    "completion_time",
    "best_metric",
    "profile",
    "grad_params",
    "num_restarts",
    "atomic_bsz",
    "accum_steps",
    "batch_size",
    "placement",
)


def _state(job):
    out = {k: getattr(job, k) for k in _STATE}
    out["profile"] = dict(out["profile"])  # a snapshot: the live dict keeps changing
    out["types"] = {k: type(v).__name__ for k, v in out.items()}
    if isinstance(job, HeteroJob):
        out["gpu_seconds_by_type"] = job.gpu_seconds_by_type
    return out


_placements = st.sampled_from([[1], [2], [4], [1, 1], [2, 2], [4, 4, 4], [3, 1], [2, 2, 2, 2, 2, 2], []])
_job = st.tuples(
    st.sampled_from(["cifar10", "bert", "toy", "spread", "quick", "no_tables", "past_max"]),
    st.one_of(st.none(), st.floats(0.0, 1.0)),  # None: adaptive; else where the fixed batch lies
    st.sampled_from([0, 30, 45]),  # re-scale delay
    st.sampled_from([None, 1.0, 1.7]),  # None: a plain Job; else a HeteroJob of that slowdown
)
_round = st.tuples(
    st.lists(st.tuples(st.one_of(st.none(), _placements), st.sampled_from([None, "a", "b"])), min_size=5, max_size=5),
    st.integers(0, 2000),
    st.lists(st.sampled_from([0.0, 0.0, 0.25, 0.5, 1.0]), min_size=5, max_size=5),
)


def _make(cls_plain, cls_hetero, apps, spec, i):
    name, frac, delay, slowdown = spec
    app = apps[name]
    batch = None if frac is None else int(app.init_batch_size + frac * (app.max_batch_size - app.init_batch_size))
    if slowdown is None:
        return cls_plain(f"j{i}", app, 0, target_batch_size=batch, rescale_delay=delay)
    happ = HeteroApplication({"a": app, "b": app})
    return cls_hetero(
        f"j{i}", happ, 0, target_batch_size=batch, rescale_delay=delay, migrate_delay=delay + 5, slowdown=slowdown
    )


def _run(jobs, rounds, each=True):
    """Rounds as a cluster runs them (reallocations, then one step of the held jobs); the states after each.

    ``each=False``: the states after the last round only (what the round kernel marks to compute
    when read is then read only after several rounds and reallocations).
    """
    table = StateTable(len(jobs))
    for i, job in enumerate(jobs):
        job._bind(table, i)
    out, now = [], 0
    for changes, seconds, interference in rounds:
        try:
            for job, (placement, gpu_type) in zip(jobs, changes, strict=False):
                if job.completion_time is not None or placement is None:
                    continue
                if isinstance(job, HeteroJob) and placement:
                    job.set_gpu_type(gpu_type or job.gpu_type or "a")
                job.current_time = now
                job.reallocate(placement)
            held = [i for i, job in enumerate(jobs) if job.placement and job.completion_time is None]
            slow = {job.name: x for job, x in zip(jobs, interference, strict=False) if x}
            done = step_jobs(jobs, table, held, seconds, now, slow)
        except (RuntimeError, ValueError, OverflowError) as exc:  # both paths refuse the same cases
            # Only the refusal is compared: within a round the kernel's jobs step after the others.
            return [*out, ("raised", type(exc).__name__, str(exc))]
        now += seconds
        out.append((done, [_state(job) for job in jobs]) if each else done)
    return out if each else (out, [_state(job) for job in jobs])


@settings(max_examples=80, deadline=None)
@given(
    specs=st.lists(_job, min_size=1, max_size=5),
    first=st.lists(_placements, min_size=5, max_size=5),
    rounds=st.lists(_round, min_size=1, max_size=12),
    each=st.booleans(),
)
def test_round_kernel_equals_reference(apps, specs, first, rounds, each):
    # The jobs' first allocation is non-empty, so most examples train; the kernel's jobs and the
    # reference's see the same rounds: completions mid-round, epoch crossings, interference,
    # re-scale and migration delays, a slowdown, and the cases handed to the reference loop.
    rounds = [([(p or [1], "a") for p in first], 60, [0.0] * 5), *rounds]
    fast = [_make(Job, HeteroJob, apps, spec, i) for i, spec in enumerate(specs)]
    ref = [_make(RefJob, RefHetero, apps, spec, i) for i, spec in enumerate(specs)]
    assert _run(fast, rounds, each) == _run(ref, rounds, each)


def test_round_kernel_steps_fixed_jobs_and_flags_the_rest(apps, monkeypatch):
    # Fixed jobs are stepped by the round kernel, not by their own step; a row holding a value
    # that is not an int (here a float attained service) is left to the job's own step.

    jobs = [Job(f"j{i}", apps["quick"], 0, target_batch_size=256) for i in range(3)]
    ref = [RefJob(f"j{i}", apps["quick"], 0, target_batch_size=256) for i in range(3)]
    stepped = []
    step = Job.step
    monkeypatch.setattr(Job, "step", lambda self, *a: stepped.append(self.name) or step(self, *a))
    for group in (jobs, ref):
        table = StateTable(3)
        for i, job in enumerate(group):
            job._bind(table, i)
            job.reallocate([2])
        group[1].attained_service = 0.5
        done, now = [], 0
        while len(done) < 3:
            done += step_jobs(group, table, [i for i in range(3) if i not in done], 600, now)
            now += 600
        if group is jobs:
            assert stepped and set(stepped) == {"j1"}
    assert [_state(job) for job in jobs] == [_state(job) for job in ref]
    assert type(jobs[1].attained_service) is float and all(type(j.attained_service) is int for j in jobs[::2])


def test_attributes_keep_their_values_and_types():
    job = Job("a", _APPS["cifar10"], 0, target_batch_size=256)
    assert (job.completion_time, job.num_restarts, job.current_time, job.progress) == (None, None, 0, 0.0)
    assert job._s.completion[job._r] == NONE
    for value in (7, 2.5, np.int64(3), True, None):
        job.current_time = value
        assert job.current_time is value or (job.current_time == value and type(job.current_time) is type(value))
    job.current_time = 9
    assert job._s.clock[job._r] == 9 and job.current_time == 9  # the odd value kept before is not read again
    job.num_restarts = 2**70  # beyond the column: kept on the job
    assert job.num_restarts == 2**70 and job._s.restarts[job._r] == ODD
    job.reallocate([2, 1])
    assert job.placement == (2, 1) and int(job._s.gpus[job._r]) == 3
    assert job.batch_size == int(job._s.batch[job._r]) == job.atomic_bsz * (job.accum_steps + 1) * 3 > 0
    job.atomic_bsz = np.int64(5)  # an odd per-GPU batch: the total is computed from the attributes
    assert job.batch_size == 5 * (job.accum_steps + 1) * 3 and job._s.batch[job._r] == ODD


def test_bind_moves_the_row():
    job = Job("a", _APPS["cifar10"], 0, target_batch_size=128)
    job.reallocate([2])
    job.step(90)
    before = _state(job)
    table = StateTable(3)
    job._bind(table, 2)
    assert _state(job) == before and table.state.clock[2] == 90 and table.inputs.kind[2] == 1
    job.step(60)
    assert table.state.clock[2] == 150


class Sink:
    def __init__(self):
        self.records = []

    def write(self, text):
        self.records.append(json.loads(text))


def test_cluster_matches_reference_jobs_and_logs_plain_python():
    from fastsched.sim.engine.cluster import Cluster
    from fastsched.sim.policies import make_policy

    app = _APPS["cifar10"]
    runs = []
    for cls in (Job, RefJob):
        jobs = [
            cls("a", app, 0, target_num_replicas=2, target_batch_size=128),
            cls("b", app, 30, target_num_replicas=4, target_batch_size=512),
        ]
        sink = Sink()
        cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=1, gpus_per_node=4, interference=0.3, log=sink)
        while not cluster.all_complete():
            cluster.step(60)
        runs.append(([_state(job) for job in jobs], sink.records))
        for job in jobs:
            for k in (
                "current_time",
                "attained_service",
                "modelled_service",
                "completion_time",
                "num_restarts",
                "epoch",
            ):
                assert type(getattr(job, k)) is int, k
            assert type(job.progress) is float
    assert runs[0] == runs[1]


def test_kernel_reads_the_blocks_in_the_columns_order():
    # The blocks hold the columns in these orders (advance_round takes its indices from them).
    from fastsched.sim.engine import _state

    assert _state._STATE_INTS[:8] == (
        "epoch",
        "clock",
        "attained",
        "modelled",
        "rescale",
        "completion",
        "restarts",
        "gpus",
    )
    assert _state._INPUT_INTS == (
        "kind",
        "ready",
        "modelled",
        "gain_at",
        "prog_at",
        "completion_epoch",
        "max_epochs",
        "observed",
        "grad_epoch",
        "metric_epoch",
    )
    assert _state._INPUT_FLOATS == ("total_time", "slowdown")
    table = StateTable(3)
    table.state.clock[1] = 7
    table.inputs.slowdown[2] = 2.0
    assert table.blocks[0][1, 1] == 7 and table.blocks[2][1, 2] == 2.0  # the columns are views of the blocks
