"""Bad inputs: clear errors naming the field, or a documented skip."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy, exact_optimize

GPU = "nvidia.com/gpu"


def linear(n, r):
    return r


def cluster(num_nodes=2, gpus=2):
    nodes = {i: NodeInfo({GPU: gpus, "pods": 32}, False) for i in range(num_nodes)}
    return nodes, NodeInfo({GPU: gpus, "pods": 32}, True)


def jobs_with(fn=linear, n=2, **kw):
    return {i: JobInfo({GPU: 1, "pods": 1}, fn, i, 0, 4, **kw) for i in range(n)}


def test_unknown_node_in_base_allocations():
    nodes, tmpl = cluster()
    with pytest.raises(ValueError, match="unknown node 'ghost'"):
        PolluxPolicy(seed=0).optimize(jobs_with(), nodes, {0: ["ghost"]}, tmpl)
    with pytest.raises(ValueError, match="unknown node"):
        exact_optimize(jobs_with(), nodes, {0: [0, "ghost"]}, tmpl)


def test_unknown_job_in_base_allocations_is_ignored():
    nodes, tmpl = cluster()
    allocs, _ = PolluxPolicy(seed=0, generations=3).optimize(jobs_with(), nodes, {"gone": [0]}, tmpl)
    assert set(allocs) == {0, 1}


def test_resource_no_node_has():
    nodes, tmpl = cluster()
    jobs = {0: JobInfo({GPU: 1, "tpu": 1}, linear, 0, 0, 2)}
    with pytest.raises(ValueError, match="'tpu'"):
        PolluxPolicy(seed=0).optimize(jobs, nodes, {}, tmpl)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: JobInfo({GPU: -1}, linear, 0, 0, 1), "resources"),
        (lambda: NodeInfo({GPU: -2}, False), "resources"),
        (lambda: JobInfo({GPU: 1}, linear, 0, 3, 2), "max_replicas"),
        (lambda: JobInfo({GPU: 1}, linear, 0, 0, 0), "max_replicas"),
        (lambda: JobInfo({GPU: 1}, linear, 0, -1, 2), "min_replicas"),
        (lambda: JobInfo({GPU: 1.5}, linear, 0, 0, 2), "resources"),
    ],
)
def test_invalid_infos(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_invalid_types():
    with pytest.raises(TypeError, match="speedup_fn"):
        JobInfo({GPU: 1}, "not callable", 0, 0, 1)
    with pytest.raises(TypeError, match="resources"):
        NodeInfo([1, 2], False)
    nodes, tmpl = cluster()
    with pytest.raises(TypeError, match="jobs"):
        PolluxPolicy().optimize([1], nodes, {}, tmpl)
    with pytest.raises(TypeError, match="base_allocations"):
        PolluxPolicy().optimize(jobs_with(), nodes, {0: "0"}, tmpl)


def test_duck_typed_job_checked():
    class Job:
        resources = {GPU: 1}
        speedup_fn = staticmethod(linear)
        creation_timestamp = 0
        min_replicas = 5
        max_replicas = 2
        preemptible = True

    nodes, tmpl = cluster()
    with pytest.raises(ValueError, match="min_replicas"):
        PolluxPolicy().optimize({0: Job()}, nodes, {}, tmpl)


@pytest.mark.parametrize(
    "fn, match",
    [
        (lambda n, r: np.where(r > 2, np.nan, r), "NaN"),
        (lambda n, r: -np.asarray(r, dtype=float), "negative"),
        (lambda n, r: np.full(np.shape(r), np.inf), "NaN or inf"),
    ],
)
def test_bad_speedup_values(fn, match):
    nodes, tmpl = cluster()
    with pytest.raises(ValueError, match=match):
        PolluxPolicy(seed=0).optimize(jobs_with(fn), nodes, {}, tmpl)


def test_scalar_only_speedup_fn():
    def scalar(n, r):
        if not isinstance(r, int):
            raise TypeError("scalars only")
        return float(r) ** 0.5

    nodes, tmpl = cluster()
    allocs, _ = PolluxPolicy(seed=0, generations=5).optimize(jobs_with(scalar), nodes, {}, tmpl)
    assert sum(map(len, allocs.values())) >= 2


def test_policy_options_validated():
    with pytest.raises(ValueError, match="pop_size"):
        PolluxPolicy(pop_size=1)
    with pytest.raises(ValueError, match="restart_penalty"):
        PolluxPolicy(restart_penalty=2.0)
    with pytest.raises(ValueError, match="max_util"):
        PolluxPolicy(min_util=0.7, max_util=0.5)
    with pytest.raises(ValueError, match="seed"):
        PolluxPolicy(seed=-1)


def test_empty_inputs():
    nodes, tmpl = cluster(3)
    assert PolluxPolicy().optimize({}, nodes, {}, tmpl) == ({}, 3)
    allocs, desired = PolluxPolicy().optimize(jobs_with(), {}, {}, tmpl)
    assert allocs == {0: [], 1: []} and desired == 1


def test_job_requesting_no_resources():
    # Nothing bounds such a job's replicas: rejected before any table is sized by max_replicas.
    nodes, tmpl = cluster()
    jobs = {0: JobInfo({}, linear, 0, 0, 10**9), 1: JobInfo({GPU: 0, "pods": 0}, linear, 1, 0, 4)}
    with pytest.raises(ValueError, match="requests no resources"):
        PolluxPolicy(seed=0).optimize(jobs, nodes, {}, tmpl)


# -- issue 17: the policy in a live scheduler ------------------------------------------------
@pytest.mark.parametrize(
    "bad, reason",
    [
        (JobInfo({GPU: 1, "tpu": 1}, linear, 5, 0, 2), "'tpu'"),
        (JobInfo({}, linear, 5, 0, 3), "requests no resources"),
        (JobInfo({GPU: 1, "pods": 1}, lambda n, r: np.full(np.shape(r), np.nan), 5, 0, 2), "NaN"),
    ],
)
def test_skip_invalid_job(bad, reason, caplog):
    nodes, tmpl = cluster(2, 4)
    jobs = jobs_with(n=2)
    jobs["bad"] = bad
    with pytest.raises(ValueError, match=reason):
        PolluxPolicy(seed=0, generations=5).optimize(jobs, nodes, {}, tmpl)
    policy = PolluxPolicy(seed=0, generations=5, on_invalid_job="skip")
    with caplog.at_level("WARNING", logger="fastsched.policy"):
        allocs, _ = policy.optimize(jobs, nodes, {}, tmpl)
    assert set(allocs) == {0, 1, "bad"}
    assert allocs["bad"] == []
    assert len(allocs[0]) + len(allocs[1]) > 0  # the round went on for the others
    assert list(policy.last_stats["skipped"]) == ["bad"]
    assert any("'bad'" in r.getMessage() and "skipped" in r.getMessage() for r in caplog.records)


def test_skip_every_job():
    nodes, tmpl = cluster()
    jobs = {"x": JobInfo({"tpu": 1}, linear, 0, 0, 2)}
    allocs, _ = PolluxPolicy(seed=0, on_invalid_job="skip").optimize(jobs, nodes, {}, tmpl)
    assert allocs == {"x": []}


def test_on_invalid_job_validated():
    with pytest.raises(ValueError, match="on_invalid_job"):
        PolluxPolicy(on_invalid_job="ignore")


def test_base_over_max_replicas():
    nodes, tmpl = cluster(2, 4)
    jobs = {0: JobInfo({GPU: 1}, linear, 0, 0, 2)}
    with pytest.raises(ValueError, match=r"base_allocations\[0\] has 3 replicas.*max_replicas"):
        PolluxPolicy(seed=0).optimize(jobs, nodes, {0: [0, 0, 1]}, tmpl)


def test_base_over_node_capacity():
    nodes, tmpl = cluster(2, 2)
    jobs = jobs_with(n=2)
    with pytest.raises(ValueError, match=f"resource '{GPU}' on node 0, which has 2"):
        PolluxPolicy(seed=0).optimize(jobs, nodes, {0: [0, 0], 1: [0]}, tmpl)
    # At capacity is fine.
    PolluxPolicy(seed=0, generations=2).optimize(jobs, nodes, {0: [0, 0], 1: [1, 1]}, tmpl)


def test_mixed_key_types_ordered_deterministically():
    nodes = {1: NodeInfo({GPU: 2, "pods": 8}, False), "1": NodeInfo({GPU: 2, "pods": 8}, False)}
    tmpl = NodeInfo({GPU: 2, "pods": 8}, True)
    jobs = {1: JobInfo({GPU: 1, "pods": 1}, linear, 0, 0, 2), "1": JobInfo({GPU: 1, "pods": 1}, linear, 0, 0, 2)}
    runs = [PolluxPolicy(seed=3, generations=5).optimize(jobs, nodes, {1: ["1"]}, tmpl) for _ in range(2)]
    assert runs[0] == runs[1]
    allocs, _ = runs[0]
    assert set(allocs) == {1, "1"}
    assert all(n in nodes for a in allocs.values() for n in a)
    # Numbers first: allocate_job's first fit picks node 1, then "1".
    policy = PolluxPolicy(seed=0)
    assert policy.allocate_job(jobs[1], nodes) == [1]
    assert policy.allocate_job(jobs[1], {"1": nodes["1"], 1: nodes[1]}) == [1]


def test_uncomparable_node_keys_rejected():
    nodes = {(1, "a"): NodeInfo({GPU: 2}, False), (1, 2): NodeInfo({GPU: 2}, False)}
    with pytest.raises(ValueError, match="node keys"):
        PolluxPolicy(seed=0).optimize(jobs_with(n=1), nodes, {}, None)
