"""The trusted array-level entry gives what the validated dict entry gives, bit for bit.

``problem_from_records`` on records built here straight from random instances (the way a
simulator holds its jobs) must equal ``build_problem`` on the same jobs as dicts, array for
array; the policy's allocations from ``optimize_problem`` must equal ``optimize``'s in both
threading paths. The simulator's Pollux adapter takes the trusted entry; switched to the dict
entry it must simulate the same run.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched.policy import PolluxPolicy, build_problem
from fastsched.policy.problem import InvalidJobError, RoundRecords, problem_from_records

from .conftest import make_speedup_fn
from .strategies import instances

ARRAYS = ("job_res", "node_res", "max_rep", "min_rep", "pinned", "base_off", "base_node", "base_cnt", "scale", "table")
SPEEDUP = make_speedup_fn()


def records_of(jobs, nodes, base, template) -> RoundRecords:
    """The instance as plain records in dict order (what a simulator would hold)."""
    rtypes = sorted({rt for job in jobs.values() for rt in job.resources})

    def row(resources):
        return [int(resources.get(rt, 0)) for rt in rtypes]

    pens = [job.restart_penalty for job in jobs.values()]
    return RoundRecords(
        job_keys=list(jobs),
        speedup_fns=[job.speedup_fn for job in jobs.values()],
        creation=[job.creation_timestamp for job in jobs.values()],
        min_rep=[job.min_replicas for job in jobs.values()],
        max_rep=[job.max_replicas for job in jobs.values()],
        preemptible=[job.preemptible for job in jobs.values()],
        penalty=None if all(p is None for p in pens) else np.array([np.nan if p is None else p for p in pens]),
        rtypes=rtypes,
        job_res=np.array([row(job.resources) for job in jobs.values()], dtype=np.int64).reshape(len(jobs), -1),
        node_keys=list(nodes),
        node_preemptible=[node.preemptible for node in nodes.values()],
        node_res=np.array([row(node.resources) for node in nodes.values()], dtype=np.int64).reshape(len(nodes), -1),
        template_res=None if template is None else np.array(row(template.resources), dtype=np.int64),
        base_allocations=base,
    )


def assert_same_problem(a, b):
    assert (a.job_keys, a.node_keys, a.rtypes, a.num_real) == (b.job_keys, b.node_keys, b.rtypes, b.num_real)
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name
    assert (a.penalty is None) == (b.penalty is None)
    if a.penalty is not None:
        assert a.penalty.tobytes() == b.penalty.tobytes()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    inst=instances(tabulated_fn=SPEEDUP),
    with_template=st.booleans(),
    penalties=st.lists(st.none() | st.floats(0.0, 1.0), min_size=8, max_size=8),
)
def test_records_give_the_validated_problem(inst, with_template, penalties):
    jobs, nodes, base, template = inst
    for job, pen in zip(jobs.values(), penalties, strict=False):
        job.restart_penalty = pen
    template = template if with_template else None
    try:
        want = build_problem(jobs, nodes, base, template)
    except InvalidJobError as exc:  # a job no node can hold: refused the same way
        with pytest.raises(InvalidJobError) as err:
            problem_from_records(records_of(jobs, nodes, base, template))
        assert (err.value.key, str(err.value)) == (exc.key, str(exc))
        return
    got = problem_from_records(records_of(jobs, nodes, base, template))
    assert_same_problem(got, want)
    assert got.meta["keys"] == list(jobs) and got.meta["base_allocations"] is base


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(tabulated_fn=SPEEDUP), parallel=st.booleans(), seed=st.integers(0, 2**20))
def test_trusted_round_allocates_as_the_validated_round(inst, parallel, seed):
    jobs, nodes, base, template = inst
    options = {"seed": seed, "pop_size": 12, "generations": 4, "parallel": parallel}
    validated, trusted = PolluxPolicy(**options), PolluxPolicy(**options)
    try:
        build_problem(jobs, nodes, base, template)
    except InvalidJobError:
        return  # refused alike (the test above)
    for _ in range(2):  # the second round starts from the first one's population
        want = validated.optimize(jobs, nodes, base, template)
        got = trusted.optimize_problem(problem_from_records(records_of(jobs, nodes, base, template)))
        assert got == want
        assert [list(v) for v in got[0].values()] == [list(v) for v in want[0].values()]
        base = want[0]


@pytest.mark.parametrize("variant", ["default", "osdi21"])
def test_simulator_adapter_trusted_and_validated_agree(variant):
    from fastsched.sim import simulate
    from fastsched.sim.policies.pollux import PolluxSimPolicy
    from fastsched.sim.truth.builtin import builtin_workload

    results = []
    for trusted in (True, False):
        options = (
            {"restart_penalty": "osdi21", "power_shift": True, "placeholders": False} if variant == "osdi21" else {}
        )
        policy = PolluxSimPolicy(variant=variant, seed=3, **options)
        policy._trusted = trusted
        r = simulate(builtin_workload()[:8], policy=policy, max_time=3 * 3600)
        summary = {k: v for k, v in r.summary().items() if not k.startswith(("wall_s", "policy_s"))}
        results.append((r.allocations.tobytes(), repr(summary)))
    assert results[0] == results[1]
