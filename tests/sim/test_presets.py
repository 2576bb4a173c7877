"""The osdi21 preset and the research adapter's re-based speedups (no ../shared needed)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from fastsched.goodput import GoodputFunction, GradParams, PerfParams, SpeedupFunction
from fastsched.sim.api import PRESETS
from fastsched.sim.policies import make_policy
from fastsched.sim.policies.pollux import RebasedSpeedup


def test_osdi21_preset_is_the_papers_objective():
    # SIMULATOR.md 6.5: each job's own restart factor, power mean p = -1 of S + 1e-3, fixed cluster.
    pol = make_policy("pollux", seed=0, **PRESETS["osdi21"]["pollux"])
    assert pol.variant == "osdi21"
    assert pol.per_job_penalty and not pol.dynamic_penalty
    assert not pol.placeholders
    assert pol.policy.p == -1.0 and pol.policy.power_shift


def _speedup(alpha):
    perf = PerfParams(alpha, 0.01, 0.2, 0.002, 0.1, 0.001, 1.2)
    good = GoodputFunction(perf, GradParams(0.5, 2.0), 128)
    return SpeedupFunction(good, 4096, (32, 256), accumulation=True)


def _job(name, fn):
    app = types.SimpleNamespace(max_replicas=None, max_batch_size=4096, min_local_bsz=32)
    return types.SimpleNamespace(
        name=name,
        speedup_fn=lambda: fn,
        attained_service=0.0,
        submission_time=0,
        num_restarts=0,
        max_profiled_replicas=4,
        application=app,
    )


def test_rebased_speedups_are_reused_only_while_model_and_share_hold():
    seen = []

    class Spy:
        def optimize(self, jobs, nodes, base, template):
            seen.append({k: j.speedup_fn for k, j in jobs.items()})
            return {k: [] for k in jobs}, len(nodes)

    pol = make_policy("pollux", seed=0, **PRESETS["osdi21"]["pollux"])
    pol.policy = Spy()
    fa, fb = _speedup(0.05), _speedup(0.08)
    a, b = _job("a", fa), _job("b", fb)
    nodes = {0: 4, 1: 4}
    pol.optimize(60, [a, b], nodes, {})
    pol.optimize(120, [a, b], nodes, {})
    assert seen[1]["a"] is seen[0]["a"]  # same model, same fair share (4 replicas)
    b.speedup_fn = lambda: _speedup(0.09)  # b saw a new configuration: refitted
    pol.optimize(180, [a, b], nodes, {})
    assert seen[2]["a"] is seen[0]["a"] and seen[2]["b"] is not seen[1]["b"]
    pol.optimize(240, [a], nodes, {})  # one job left: the fair share becomes 8 replicas
    assert seen[3]["a"] is not seen[0]["a"]
    # A reused wrapper answers exactly as a fresh one.
    for got, fair in ((seen[1]["a"], 4), (seen[3]["a"], 8)):
        fresh = RebasedSpeedup(fa, 1, fair)
        np.testing.assert_array_equal(got.table(8), fresh.table(8))
        np.testing.assert_array_equal(got.table(8), got.table(8))
        assert got(2, 8) == pytest.approx(fresh(2, 8), rel=0, abs=0)


class _Concave:
    """Tabulated speedup: ``r ** e`` on one node, ``m r ** e`` across nodes."""

    is_tabulated = True

    def __init__(self, e, m):
        self.e, self.m = e, m

    def table(self, max_replicas):
        r = np.arange(max_replicas + 1, dtype=np.float64) ** self.e
        return np.stack([r, self.m * r])

    def __call__(self, num_nodes, num_replicas):
        return self.table(num_replicas)[0 if num_nodes == 1 else 1, num_replicas]


def _value(info, alloc, base, scale):
    if not alloc:
        return 0.0
    t = info.speedup_fn.table(info.max_replicas)
    v = t[0 if len(set(alloc)) == 1 else 1, len(alloc)] * scale
    return v * (1.0 - info.restart_penalty) if sorted(alloc) != sorted(base) else v


def test_growth_into_idle_gpus_only_raises_values_and_keeps_the_rules():
    # The research adapter's growth step (SIMULATOR.md 6.5 objective, separable in the jobs'
    # values): every job's value is at least the search's, capacities, max_replicas, the
    # 16-node cap and interference avoidance (one distributed job per node) hold.
    from fastsched.policy import JobInfo
    from fastsched.sim.policies.pollux import PolluxSimPolicy

    rng = np.random.default_rng(3)
    pol = PolluxSimPolicy(variant="osdi21", restart_penalty="osdi21")
    grew = 0
    for _ in range(40):
        nodes = {n: 4 for n in range(int(rng.integers(1, 6)))}
        slots = [n for n, g in nodes.items() for _ in range(g)]
        rng.shuffle(slots)
        infos, new, base = {}, {}, {}
        for j in range(int(rng.integers(1, 5))):
            key = f"j{j}"
            cap = int(rng.integers(1, 20))
            pen = float(rng.uniform(0.0, 0.6))
            fn = _Concave(float(rng.uniform(0.5, 1.0)), float(rng.uniform(0.6, 1.0)))
            infos[key] = JobInfo({"nvidia.com/gpu": 1}, fn, j, 0, cap, restart_penalty=pen)
            take = min(int(rng.integers(0, 5)), cap, len(slots))
            new[key] = sorted(slots[:take])
            slots = slots[take:]
            base[key] = list(new[key]) if rng.random() < 0.5 else []
        # The search's answer must itself obey interference avoidance: keep one distributed job.
        seen = set()
        for key, a in new.items():
            if len(set(a)) > 1 and set(a) & seen:
                new[key] = []
            elif len(set(a)) > 1:
                seen |= set(a)
        out = pol.grow_into_free(new, infos, nodes, base)
        scale = len(nodes) / sum(nodes.values())
        used = {}
        owner = {}
        for key, a in out.items():
            assert len(a) <= infos[key].max_replicas and len(set(a)) <= 16
            assert _value(infos[key], a, base[key], scale) >= _value(infos[key], new[key], base[key], scale) - 1e-12
            grew += len(a) > len(new[key])
            for n in a:
                used[n] = used.get(n, 0) + 1
            if len(set(a)) > 1:
                for n in set(a):
                    assert n not in owner, "two distributed jobs on one node"
                    owner[n] = key
        assert all(used[n] <= nodes[n] for n in used)
    assert grew > 0
