"""The cluster refuses a policy's bad allocations in any round, also once only changes are checked."""

from __future__ import annotations

import pytest

from fastsched.sim.engine.cluster import Cluster
from fastsched.sim.engine.hetero_job import HeteroApplication, HeteroJob
from fastsched.sim.engine.job import Job
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.truth.builtin import builtin_applications


class Scripted(SimPolicy):
    """Answers round ``r`` with ``answers[r]`` (the last one after that)."""

    name = "scripted"

    def __init__(self, answers):
        self.answers = answers
        self.calls = 0

    def optimize(self, now, jobs, nodes, allocations):
        out = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        return {k: list(v) for k, v in out.items()}


def _typed(answers):
    app = builtin_applications()["cifar10"]
    happ = HeteroApplication({"a": app, "b": app})
    jobs = [HeteroJob(n, happ, 0, target_num_replicas=2, target_batch_size=128) for n in "xyz"]
    return Cluster(jobs, Scripted(answers), 0, spec=parse_cluster("2xa:2,1xb:2"))


def _plain(answers):
    app = builtin_applications()["cifar10"]
    jobs = [Job(n, app, 0, target_num_replicas=2, target_batch_size=128) for n in "xyz"]
    return Cluster(jobs, Scripted(answers), 2, gpus_per_node=2)


GOOD = {"x": [0, 0], "y": [1, 1]}


@pytest.mark.parametrize("make", [_typed, _plain])
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({**GOOD, "z": [1]}, "over-allocated node 1"),  # node 1 already full with y
        ({"x": [0, 0], "y": [0, 1]}, "over-allocated node 0"),  # a kept job and a moved one
        ({**GOOD, "w": [2]}, "unknown job 'w'"),
    ],
)
def test_bad_allocation_after_good_rounds(make, bad, message):
    cluster = make([GOOD, GOOD, bad])
    cluster.step(60)
    cluster.step(60)
    with pytest.raises(RuntimeError, match=message):
        cluster.step(60)


def test_typed_cluster_refuses_two_types_and_unknown_nodes():
    cluster = _typed([GOOD, {"x": [0], "y": [1, 1], "z": [0, 2]}])
    cluster.step(60)
    with pytest.raises(RuntimeError, match="two GPU types"):
        cluster.step(60)
    cluster = _typed([GOOD, {**GOOD, "z": [7]}])
    cluster.step(60)
    with pytest.raises(RuntimeError, match="over-allocated node 7"):
        cluster.step(60)


def test_released_gpus_are_free_again():
    # y leaves node 1, z takes it in the same round; then x leaves and z grows onto node 0.
    cluster = _typed([GOOD, {"x": [0, 0], "z": [1, 1]}, {"z": [0, 0, 1, 1]}])
    for _ in range(3):
        cluster.step(60)
    assert cluster.allocations == {"z": [0, 0, 1, 1]}
