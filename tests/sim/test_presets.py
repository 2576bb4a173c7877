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
    pol._trusted = False  # the spy reads the JobInfo dicts of the validated entry
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
