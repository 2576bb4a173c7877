"""Work a policy reuses between rounds gives the same allocations as recomputing it each round."""

from __future__ import annotations

import numpy as np

from fastsched.sim import simulate
from fastsched.sim.engine.hetero_job import HeteroJob, load_hetero_applications
from fastsched.sim.policies import SiaPolicy
from tests.sim.two_types import toy_workload

from .test_policies_hetero import CLUSTER, _sia


class _SiaWithoutReuse(SiaPolicy):
    """The reference: every round evaluates every job's row afresh."""

    def optimize(self, now, jobs, nodes, allocations):
        self._rows = {}
        return super().optimize(now, jobs, nodes, allocations)


def _records(result):
    return result.jobs, result.times.tolist(), result.allocations.tolist()


def test_sia_row_reuse_gives_the_same_run(two_type_traces):
    work = toy_workload(n=8, spacing=30)
    kw = {"traces": two_type_traces, "cluster": CLUSTER, "interval": 60}
    fresh = _SiaWithoutReuse()
    reused = SiaPolicy()
    a = simulate(work, policy=fresh, **kw)
    b = simulate(work, policy=reused, **kw)
    assert _records(a) == _records(b)
    assert reused._rows  # the reuse was exercised


def test_sia_row_follows_new_gradient_statistics(two_type_traces):
    # Same observations (same plan), new gradient statistics at the next epoch: the row is
    # recomputed, and equals a fresh policy's.
    app = load_hetero_applications(two_type_traces, ["slow", "fast"])["toy"]
    pol = _sia()
    job = HeteroJob("j", app, 0)
    job.set_gpu_type("slow")
    job.reallocate([2])
    job.step(100)
    pol._adaptive_rows([job])  # the first round may add empty per-type states (a new observation version)
    version, grads = job.observation_version, job.grad_params
    first = pol._adaptive_rows([job])[0]
    assert pol._adaptive_rows([job])[0] is first  # unchanged inputs: the same row
    job.step(400)
    assert job.observation_version == version and job.grad_params != grads
    second = pol._adaptive_rows([job])[0]
    assert second == _sia()._adaptive_rows([job])[0]
    assert not np.allclose(second[1], first[1])


class _SiaCountingSolves(SiaPolicy):
    """Sia counting the rounds whose program it solved afresh (``fresh=True``: every round)."""

    def __init__(self, fresh=False):
        super().__init__()
        self.fresh, self.solved, self.rounds = fresh, 0, 0

    def _solve(self, problem):
        if self.fresh:
            self._last_solve = None
        self.rounds += 1
        before = self._last_solve
        chosen = super()._solve(problem)
        self.solved += self._last_solve is not before
        return chosen


def test_sia_reuses_the_last_solution_of_the_same_program(two_type_traces):
    # Short rounds: restart factors change little from one round to the next.
    work = toy_workload(n=4, spacing=30)
    kw = {"traces": two_type_traces, "cluster": CLUSTER, "interval": 10}
    fresh, reused = _SiaCountingSolves(fresh=True), _SiaCountingSolves()
    a = simulate(work, policy=fresh, **kw)
    b = simulate(work, policy=reused, **kw)
    assert _records(a) == _records(b)
    assert fresh.solved == fresh.rounds
    assert reused.solved < reused.rounds  # some rounds posed the previous round's program


def test_sia_jobs_with_the_same_inputs_share_one_row(two_type_traces):
    # Two jobs of one application given the same allocations make the same observations:
    # their rows are evaluated once, and equal a fresh policy's for each job alone.
    app = load_hetero_applications(two_type_traces, ["slow", "fast"])["toy"]
    jobs = [HeteroJob(name, app, 0) for name in ("a", "b", "c")]
    for job, seconds in zip(jobs, (400, 400, 700), strict=True):
        job.set_gpu_type("slow")
        job.reallocate([2])
        job.step(seconds)
    pol = _sia()
    evaluated = []
    real = pol.normalised_rows
    pol.normalised_rows = lambda items: evaluated.append(len(items)) or real(items)
    rows = pol._adaptive_rows(jobs)
    assert evaluated == [2]  # a and b share their inputs; c has run longer
    assert rows[0] is rows[1] and rows[0] == _sia()._adaptive_rows([jobs[0]])[0]
    assert rows[2] == _sia()._adaptive_rows([jobs[2]])[0] != rows[0]
