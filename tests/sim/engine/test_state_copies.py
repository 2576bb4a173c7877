"""The job state as arrays: copies, pickles, subclasses and jobs given to a second cluster."""

from __future__ import annotations

import copy
import pickle

import pytest

from fastsched.sim.engine._state import StateTable
from fastsched.sim.engine.cluster import Cluster
from fastsched.sim.engine.job import Job
from fastsched.sim.policies import make_policy
from fastsched.sim.truth.builtin import builtin_applications

_APPS = builtin_applications()

_FIELDS = (
    "progress",
    "epoch",
    "current_time",
    "attained_service",
    "modelled_service",
    "rescale_time",
    "completion_time",
    "num_restarts",
    "placement",
    "atomic_bsz",
    "accum_steps",
    "batch_size",
    "grad_params",
    "best_metric",
    "profile",
)


def _state(job):
    return tuple(repr(getattr(job, k)) for k in _FIELDS)


def _jobs(adaptive, cls=Job):
    app, other = _APPS["cifar10"], _APPS["ncf"]
    if adaptive:
        return [cls("a", app, 0), cls("b", other, 40), cls("c", app, 100)]
    return [
        cls("a", app, 0, target_num_replicas=2, target_batch_size=128),
        cls("b", other, 40, target_num_replicas=4, target_batch_size=512),
        cls("c", app, 100, target_num_replicas=2, target_batch_size=256),
    ]


def _finish(cluster):
    while not cluster.all_complete():
        cluster.step(60)
    return [_state(job) for job in cluster.jobs], cluster.times, cluster.used_gpus


@pytest.mark.parametrize("policy, adaptive", [("tiresias", False), ("pollux", True)])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_cluster_continues_as_the_original(policy, adaptive, how):
    cluster = Cluster(_jobs(adaptive), make_policy(policy), num_nodes=2, gpus_per_node=4)
    for _ in range(5 if adaptive else 25):
        cluster.step(60)
    assert not cluster.all_complete()
    twin = copy.deepcopy(cluster) if how == "deepcopy" else pickle.loads(pickle.dumps(cluster))
    assert [_state(job) for job in twin.jobs] == [_state(job) for job in cluster.jobs]
    # The copy's columns are views of its own blocks (the kernel writes those).
    assert twin._table.state.clock.base is twin._table.blocks[0]
    assert all(job._t is twin._table and job._s is twin._table.state for job in twin.jobs)
    expected = _finish(cluster)
    assert _finish(twin) == expected
    # And a fresh run from the start gives the same as both.
    assert _finish(Cluster(_jobs(adaptive), make_policy(policy), num_nodes=2, gpus_per_node=4)) == expected


def test_epoch_tables_are_rekeyed_on_unpickling():
    app = _APPS["cifar10"]
    table = StateTable(1)
    at = table.tables.offsets(app, 256)
    app2, table2 = pickle.loads(pickle.dumps((app, table)))
    assert table2.tables.offsets(app2, 256) == at
    assert len(table2.tables.gain) == len(table.tables.gain)  # found, not appended again


class Halved(Job):
    """A job whose step trains at half the throughput (its own override of step)."""

    def step(self, seconds, interference=0.0):
        super().step(seconds, 1.0 - (1.0 - interference) * 0.5)


def _run_fixed(cls):
    jobs = [cls("a", _APPS["cifar10"], 0, target_num_replicas=2, target_batch_size=128)]
    cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
    while not cluster.all_complete():
        cluster.step(60)
    return jobs[0]


def _alone(interference):
    job = Job("a", _APPS["cifar10"], 0, target_num_replicas=2, target_batch_size=128)
    job.reallocate([2])
    while job.completion_time is None:
        job.step(60, interference)
    return job


def test_a_subclass_step_is_called_in_a_cluster():
    assert Job._round_kernel and not Halved._round_kernel
    plain, halved = _run_fixed(Job), _run_fixed(Halved)
    assert halved.completion_time > plain.completion_time
    # The same as the job stepped alone with the halved goodput, round by round.
    alone = _alone(0.5)
    # (The cluster allocates it at its first round's end: its clock is one round later.)
    for k in ("progress", "epoch", "attained_service", "modelled_service", "num_restarts"):
        assert getattr(alone, k) == getattr(halved, k), k
    assert halved.completion_time - alone.completion_time == plain.completion_time - _alone(0.0).completion_time


class SmallBatches(Job):
    """An adaptive job whose batch choice is capped by its own update_local_bsz."""

    def update_local_bsz(self, placement):
        atomic, accum = self._choose_local_bsz(placement)
        self._set_batch_config(min(atomic, 64), 0)


def test_an_overridden_update_local_bsz_is_used_while_training():
    assert not SmallBatches._round_kernel
    jobs = [SmallBatches("a", _APPS["cifar10"], 0)]
    cluster = Cluster(jobs, make_policy("pollux"), num_nodes=1, gpus_per_node=4)
    seen = set()
    while not cluster.all_complete():
        cluster.step(60)
        seen.add((jobs[0].atomic_bsz, jobs[0].accum_steps))
    assert all(a <= 64 and c == 0 for a, c in seen)
    assert all(k[2] <= 64 for k in jobs[0].profile)  # every configuration trained was its choice


def test_a_subclass_declaring_kernel_compatibility_keeps_the_kernel():
    class Declared(Job):
        _round_kernel = True

        def update_local_bsz(self, placement):
            self._choose_local_bsz(placement)

    class Below(Declared):
        pass

    class Overrides(Declared):
        def _loop(self, *args):
            return super()._loop(*args)

    assert Declared._round_kernel and Below._round_kernel and not Overrides._round_kernel


def test_a_job_joins_one_cluster():
    jobs = _jobs(False)
    first = Cluster(jobs, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
    with pytest.raises(ValueError, match="job a already belongs to a cluster"):
        Cluster(jobs, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
    with pytest.raises(ValueError, match="job b is given twice"):
        Cluster([_jobs(False)[1]] * 2, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
    assert all(job._t is first._table for job in jobs)  # the refusals took no row
    # Copies are free to join another cluster, and do not change the first one's jobs.
    for make in (copy.copy, copy.deepcopy):
        copies = [make(job) for job in jobs]
        second = Cluster(copies, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
        assert _finish(second) == _finish(copy.deepcopy(first))
        assert all(job.current_time == 0 for job in jobs)


def test_a_copied_job_has_its_own_row():
    job = Job("a", _APPS["cifar10"], 0, target_batch_size=128)
    job.reallocate([2])
    job.step(600)
    job.current_time = 600.5  # a value the row marks: the copy keeps its own
    for make in (copy.copy, copy.deepcopy):
        twin, before = make(job), _state(job)
        assert _state(twin) == before and twin._t is not job._t
        twin.step(600)
        twin.current_time = 7.5
        assert _state(job) == before and twin.progress > job.progress
        job2 = make(job)
        job2.step(600)
        job.step(600)
        assert _state(job2) == _state(job)


class RefJob(Job):
    """Steps with the plain-Python loop only (the reference)."""

    _round_kernel = False

    def _step_fixed(self, app, seconds, gpus, interference):
        return False


def _changed_mid_run(cls, change):
    app = _APPS["cifar10"]
    jobs = [
        cls("a", app, 0, target_num_replicas=2, target_batch_size=128),
        cls("b", app, 0, target_num_replicas=2, target_batch_size=256),
    ]
    cluster = Cluster(jobs, make_policy("tiresias"), num_nodes=1, gpus_per_node=4)
    for _ in range(10):
        cluster.step(60)
    change(jobs[0])
    for _ in range(30):
        cluster.step(60)
    return [_state(job) for job in jobs]


@pytest.mark.parametrize(
    "change",
    [
        lambda job: setattr(job, "target_batch_size", None),
        lambda job: setattr(job, "application", _APPS["imagenet"]),
        lambda job: setattr(job, "slowdown", 3.0),
    ],
    ids=["adaptive", "application", "slowdown"],
)
def test_attributes_changed_mid_run_follow_the_reference(change):
    fast, ref = _changed_mid_run(Job, change), _changed_mid_run(RefJob, change)
    assert fast == ref
    assert fast != _changed_mid_run(Job, lambda job: None)  # the change made a difference


def test_slowdown_is_checked():
    job = Job("a", _APPS["cifar10"], 0)
    for bad in (0.5, float("nan"), "2", None):
        with pytest.raises(ValueError, match="job a: slowdown must be a number >= 1"):
            job.slowdown = bad
    job.slowdown = 2
    assert job.slowdown == 2.0
