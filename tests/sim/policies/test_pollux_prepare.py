"""The Pollux adapter compiles the kernels of the run's largest rounds before its first round."""

from __future__ import annotations

from fastsched.sim import simulate
from fastsched.sim.policies import make_policy
from fastsched.sim.truth.builtin import builtin_workload


def test_prepares_once_for_the_workload_before_the_first_round():
    pol = make_policy("pollux", seed=0, pop_size=8, generations=2)
    calls = []
    rounds = []
    optimize = pol.policy.optimize_problem

    def record_round(prob):
        rounds.append(len(calls))
        return optimize(prob)

    pol.policy.prepare = calls.append
    pol.policy.optimize_problem = record_round
    jobs = builtin_workload()[:3]
    simulate(jobs, policy=pol, nodes=2, gpus=4, seed=0, max_time=1800)
    assert calls == [3]  # once, with the workload's jobs
    assert rounds and rounds[0] == 1  # before the first round's search
