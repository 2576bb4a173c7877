"""A controller thread calling the policy every round, for a long time, with other threads
calling the goodput model and the cost model: same answers as serial calls, flat state."""

from __future__ import annotations

import gc
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import numpy as np

from fastsched import GoodputFunction, GradParams, JobInfo, NodeInfo, PerfParams, PolluxPolicy, SpeedupFunction
from fastsched.costmodel import estimate_cost, transformer_stack

GPU = "nvidia.com/gpu"
EPOCH = datetime(2020, 1, 1)


def _speedup(k: int) -> SpeedupFunction:
    perf = PerfParams(0.121 * (1 + 0.1 * (k % 5)), 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
    fn = GoodputFunction(perf, GradParams(0.00136, 0.000502), 128)
    return SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))


def _cluster(num_jobs=16, num_nodes=4):
    jobs = {i: JobInfo({GPU: 1, "pods": 1}, _speedup(i), EPOCH + timedelta(minutes=i), 0, 8) for i in range(num_jobs)}
    nodes = {i: NodeInfo({GPU: 4, "pods": 32}, preemptible=False) for i in range(num_nodes)}
    return jobs, nodes, NodeInfo({GPU: 4, "pods": 32}, preemptible=True)


def _policy_round(seed: int):
    jobs, nodes, template = _cluster()
    policy = PolluxPolicy(seed=seed, pop_size=32, generations=20)
    allocations, desired = policy.optimize(jobs, nodes, {}, template)
    return {k: list(v) for k, v in allocations.items()}, desired


def _cost(layers: int):
    cost = estimate_cost(transformer_stack(layers))
    return cost.runtime, tuple(cost.peak_mem)


def _goodput(seed: int):
    rng = np.random.RandomState(seed)
    replicas = rng.randint(1, 65, 2000)
    fn = GoodputFunction(PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14), (0.00136, 0.000502), 128)
    return float(fn.optimize(np.minimum(replicas, 3), replicas, 1280, (64, 256), True)[0].sum())


def test_policy_goodput_and_cost_model_from_eight_threads():
    calls = [(_policy_round, s % 4) for s in range(24)]
    calls += [(_cost, 2 + s % 3) for s in range(24)]
    calls += [(_goodput, s % 5) for s in range(24)]
    serial = {(f.__name__, a): f(a) for f, a in calls}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda call: call[0](call[1]), calls))
    for (f, a), got in zip(calls, results, strict=True):
        assert got == serial[(f.__name__, a)]


def test_many_rounds_with_churn_keep_memory_and_state_flat():
    """500 rounds (the CI-sized form of a months-long controller loop) with jobs arriving and
    leaving: the policy's carried state and the process's traced memory stay bounded."""
    policy = PolluxPolicy(seed=0, pop_size=24, generations=5)
    _, nodes, template = _cluster(0)
    live: dict = {}
    allocations: dict = {}
    next_key = 0
    rng = np.random.default_rng(0)
    samples = []
    gc.collect()
    tracemalloc.start()
    try:
        for round_ in range(500):
            for _ in range(int(rng.integers(0, 3))):  # arrivals
                live[next_key] = JobInfo(
                    {GPU: 1, "pods": 1}, _speedup(next_key), EPOCH + timedelta(seconds=next_key), 0, 8
                )
                next_key += 1
            for key in list(live):  # departures
                if rng.random() < 0.1:
                    del live[key]
            if len(live) > 24:
                for key in list(live)[: len(live) - 24]:
                    del live[key]
            base = {k: v for k, v in allocations.items() if k in live}
            allocations, _ = policy.optimize(live, nodes, base, template)
            if round_ % 50 == 49:
                gc.collect()
                samples.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    # No growth trend: the last sample is within a small margin of the early ones.
    print("traced memory every 50 rounds:", samples)
    assert samples[-1] <= max(samples[:3]) * 1.5 + 2_000_000, samples
    assert next_key > 400  # real churn happened


def test_each_round_is_logged_not_printed(caplog, capsys):
    jobs, nodes, template = _cluster()
    with caplog.at_level("INFO", logger="fastsched.policy"):
        PolluxPolicy(seed=0, pop_size=16, generations=3).optimize(jobs, nodes, {}, template)
    rounds = [r for r in caplog.records if r.name.startswith("fastsched.policy") and "round" in r.getMessage()]
    assert rounds and "16 jobs" in rounds[-1].getMessage() and "ms" in rounds[-1].getMessage()
    assert capsys.readouterr() == ("", "")


def test_one_policy_shared_by_threads_runs_rounds_one_at_a_time():
    import copy
    import pickle

    jobs, nodes, template = _cluster()
    shared = PolluxPolicy(seed=0, pop_size=16, generations=5)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: shared.optimize(jobs, nodes, {}, template), range(16)))
    assert shared.last_stats["round"] == 16
    for allocations, _desired in results:
        assert set(allocations) == set(jobs)
        assert sum(len(a) for a in allocations.values()) <= 16
    # The lock does not get in the way of copying or pickling a policy.
    clone = pickle.loads(pickle.dumps(copy.deepcopy(shared)))
    assert clone.optimize(jobs, nodes, {}, template)[0] == shared.optimize(jobs, nodes, {}, template)[0]
