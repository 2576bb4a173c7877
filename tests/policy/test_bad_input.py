"""Bad inputs: clear errors naming the field, or a documented skip."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy, exact_optimize
from tests.policy.conftest import make_speedup_fn

SPEEDUP = make_speedup_fn()

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


# -- issue 27: extreme but legal inputs ------------------------------------------------------
def test_node_advertising_huge_counts_is_a_clear_error():
    # Sizes came from the nodes' advertised GPUs and max_replicas: MemoryError (224 GiB).
    nodes = {
        "n0": NodeInfo({GPU: 2**40, "cpu": 0}, False),
        "n1": NodeInfo({GPU: 2**20, "cpu": 4}, False),
        "n2": NodeInfo({GPU: 4, "cpu": 8}, False),
    }
    jobs = {"a": JobInfo({GPU: 1, "cpu": 1}, linear, 0, 0, 2**31), "b": JobInfo({GPU: 1}, linear, 1, 0, 2**31)}
    for mode in ("raise", "skip"):
        with pytest.raises(ValueError, match=r"MAX_NODE_REPLICAS.*") as info:
            PolluxPolicy(seed=0, pop_size=8, generations=1, on_invalid_job=mode).optimize(jobs, nodes, {}, None)
        assert "nodes['n0']" in str(info.value) and "job 'b'" in str(info.value)


def test_unusable_huge_nodes_do_not_size_the_round():
    # A node without the CPUs a job asks for holds none of its replicas, however many GPUs it has.
    from fastsched.policy import build_problem

    nodes = {"n0": NodeInfo({GPU: 2**40, "cpu": 0}, False), "n1": NodeInfo({GPU: 4, "cpu": 8}, False)}
    jobs = {"a": JobInfo({GPU: 1, "cpu": 1}, linear, 0, 0, 2**31)}
    prob = build_problem(jobs, nodes, {}, NodeInfo({GPU: 2**50, "cpu": 0}, True))
    assert prob.max_rep.tolist() == [4] and prob.table.shape[2] == 5
    allocs, _ = PolluxPolicy(seed=0, pop_size=8, generations=2).optimize(jobs, nodes, {}, None)
    assert allocs == {"a": ["n1"] * 4}


def test_ten_thousand_gpus_stay_under_a_gibibyte():
    # The floor of issue 27: no allocation above 1 GiB for a cluster of <= 10,000 GPUs, here
    # with max_replicas = 2**31 (sized by the cluster) and a generic callable (refused, named).
    import tracemalloc

    from fastsched.policy import InvalidJobError, build_problem

    nodes = {i: NodeInfo({GPU: 8, "pods": 110}, False) for i in range(1250)}
    tmpl = NodeInfo({GPU: 8, "pods": 110}, True)
    tracemalloc.start()
    try:
        jobs = {i: JobInfo({GPU: 1, "pods": 1}, SPEEDUP, i, 0, 2**31) for i in range(4)}
        prob = build_problem(jobs, nodes, {}, tmpl)
        assert prob.max_rep.tolist() == [2 * 8 * 1250] * 4
        jobs[9] = JobInfo({GPU: 1, "pods": 1}, linear, 9, 0, 2**31)
        with pytest.raises(InvalidJobError, match="MAX_TABLE_BYTES") as info:
            build_problem(jobs, nodes, {}, tmpl)
        assert info.value.key == 9
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**30


def test_duck_typed_counts_bounded():
    class Job:
        resources = {GPU: 2**70}
        speedup_fn = staticmethod(linear)
        creation_timestamp = 0
        min_replicas = 0
        max_replicas = 2
        preemptible = True

    nodes, tmpl = cluster()
    with pytest.raises(ValueError, match=r"resources\['nvidia.com/gpu'\] is too large"):
        PolluxPolicy(seed=0).optimize({0: Job()}, nodes, {}, tmpl)


@pytest.mark.parametrize("mode", ["raise", "skip"])
@pytest.mark.parametrize("init", ["seeded", "front"])
@pytest.mark.parametrize("generations", [0, 1])
def test_non_preemptible_zero_request_job_keeps_its_allocation(mode, init, generations):
    # Came back {'j0': []}: skipped as "requests no resources" although it is running.
    nodes = {"n0": NodeInfo({GPU: 4, "pods": 8}, False)}
    jobs = {"j0": JobInfo({GPU: 0}, linear, 0, 0, 2, preemptible=False)}
    policy = PolluxPolicy(seed=0, pop_size=8, generations=generations, init=init, p=0.5, on_invalid_job=mode)
    allocs, _ = policy.optimize(jobs, nodes, {"j0": ["n0"]}, None)
    assert allocs == {"j0": ["n0"]}


def test_skipped_non_preemptible_job_keeps_allocation_and_resources():
    nodes = {"n0": NodeInfo({GPU: 4, "pods": 8}, False), "n1": NodeInfo({GPU: 4, "pods": 8}, False)}
    nan = JobInfo({GPU: 1, "pods": 1}, lambda n, r: np.full(np.shape(r), np.nan), 0, 0, 3, preemptible=False)
    jobs = {"bad": nan, "ok": JobInfo({GPU: 1, "pods": 1}, linear, 1, 0, 8)}
    with pytest.raises(ValueError, match="NaN"):
        PolluxPolicy(seed=0).optimize(jobs, nodes, {"bad": ["n0"] * 3}, None)
    policy = PolluxPolicy(seed=0, pop_size=8, generations=3, on_invalid_job="skip")
    allocs, _ = policy.optimize(jobs, nodes, {"bad": ["n0"] * 3}, None)
    assert allocs["bad"] == ["n0"] * 3 and list(policy.last_stats["skipped"]) == ["bad"]
    # The kept job's 3 GPUs on n0 are not handed out again.
    assert allocs["ok"].count("n0") <= 1 and len(allocs["ok"]) == 5


@st.composite
def _pinned_rounds(draw):
    nodes = {f"n{i}": NodeInfo({GPU: draw(st.integers(0, 4)), "pods": 8}, draw(st.booleans())) for i in range(3)}
    free = {k: dict(v.resources) for k, v in nodes.items()}
    jobs, base = {}, {}
    for i in range(draw(st.integers(1, 5))):
        res = {GPU: draw(st.integers(0, 2))}
        if draw(st.booleans()):
            res["pods"] = draw(st.integers(0, 1))
        mx = draw(st.integers(1, 4))
        fn = draw(st.sampled_from([linear, SPEEDUP, lambda n, r: np.full(np.shape(r), np.nan)]))
        key = f"j{i}"
        jobs[key] = JobInfo(res, fn, i, draw(st.integers(0, mx)), mx, preemptible=draw(st.booleans()))
        node, count = draw(st.sampled_from(sorted(nodes))), draw(st.integers(0, mx))
        if all(free[node].get(r, 0) >= count * v for r, v in res.items()):
            for r, v in res.items():
                free[node][r] -= count * v
            base[key] = [node] * count
    opts = {
        "pop_size": 8,
        "generations": draw(st.integers(0, 2)),
        "init": draw(st.sampled_from(["seeded", "front"])),
        "p": draw(st.sampled_from([None, 0.0, 0.5, -1.0])),
        "on_invalid_job": draw(st.sampled_from(["raise", "skip"])),
    }
    return jobs, nodes, base, opts


@settings(max_examples=25, deadline=None)
@given(_pinned_rounds(), st.integers(0, 3))
def test_non_preemptible_jobs_always_keep_their_allocation(inputs, seed):
    jobs, nodes, base, opts = inputs
    try:
        allocs, _ = PolluxPolicy(seed=seed, **opts).optimize(jobs, nodes, base, None)
    except ValueError:
        assert opts["on_invalid_job"] == "raise"
        return
    assert set(allocs) == set(jobs)
    for key, job in jobs.items():
        if not job.preemptible and base.get(key):
            assert sorted(allocs[key]) == sorted(base[key]), key
    used = {}
    for key, alloc in allocs.items():
        for n in alloc:
            for r, v in jobs[key].resources.items():
                used[n, r] = used.get((n, r), 0) + v
    assert all(amount <= nodes[n].resources.get(r, 0) for (n, r), amount in used.items())
