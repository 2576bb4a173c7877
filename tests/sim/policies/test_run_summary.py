"""A policy's own figures about the run reach the result's summary, and only when it has some."""

from __future__ import annotations

import pytest

from fastsched.sim import simulate
from fastsched.sim.policies import FifoPolicy, SiaPolicy
from tests.sim.two_types import toy_workload

from .test_policies_hetero import CLUSTER


def test_sia_with_a_time_limit_reports_its_solver_rounds(two_type_traces):
    work = toy_workload(n=6, spacing=30)
    plain = simulate(work, policy=SiaPolicy(), traces=two_type_traces, cluster=CLUSTER, interval=60).summary()
    limited = simulate(work, policy=SiaPolicy(time_limit=60.0), traces=two_type_traces, cluster=CLUSTER, interval=60)
    s = limited.summary()
    assert not any(k.startswith("solver_") for k in plain)  # a default run's summary is as it was
    assert 0 < s["solver_rounds"] <= s["rounds"]  # one solve per round at most (unchanged rounds reuse theirs)
    assert 0 <= s["solver_limited"] <= s["solver_rounds"]
    assert s["solver_worst_gap"] >= 0
    # a limit this generous never binds on six jobs: the same decisions as the exact solve
    assert s["avg_jct"] == plain["avg_jct"] and s["solver_limited"] == 0


class _Noisy(FifoPolicy):
    name = "noisy"
    answer = {"avg_jct": 1.0}

    def run_summary(self):
        return self.answer


def test_a_policy_may_not_shadow_the_summary_or_return_garbage(two_type_traces):
    work = toy_workload(n=2, spacing=30)
    with pytest.raises(ValueError, match=r"noisy: run_summary\(\) keys \['avg_jct'\]"):
        simulate(work, policy=_Noisy(), traces=two_type_traces, cluster=CLUSTER)
    _Noisy.answer = ["not", "a", "dict"]
    with pytest.raises(TypeError, match="noisy: run_summary"):
        simulate(work, policy=_Noisy(), traces=two_type_traces, cluster=CLUSTER)
    _Noisy.answer = {"my_figure": 3}
    assert simulate(work, policy=_Noisy(), traces=two_type_traces, cluster=CLUSTER).summary()["my_figure"] == 3
