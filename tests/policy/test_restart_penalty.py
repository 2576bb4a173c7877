"""Per-job restart penalties (``JobInfo.restart_penalty``) and the shifted power mean."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched._jit import parallel_region
from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy
from fastsched.policy import _ga as G
from fastsched.policy._result import row_to_allocations
from fastsched.policy.problem import allocation_objective, build_problem
from tests.policy import naive
from tests.policy.conftest import make_speedup_fn
from tests.policy.strategies import instances

TAB = make_speedup_fn()
FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _with_penalties(jobs, pens):
    out = {}
    for (k, job), pen in zip(jobs.items(), pens, strict=False):
        out[k] = JobInfo(
            job.resources,
            job.speedup_fn,
            job.creation_timestamp,
            job.min_replicas,
            job.max_replicas,
            job.preemptible,
            restart_penalty=pen,
        )
    return out


@FAST
@given(instances(tabulated_fn=TAB), st.integers(0, 1000), st.sampled_from([None, -1.0]), st.booleans())
def test_fitness_with_per_job_penalties(inst, seed, p, shift):
    jobs, nodes, base, template = inst
    rng = np.random.default_rng(seed)
    pens = [None if rng.random() < 0.3 else float(rng.choice([0.0, 1.0, rng.random()])) for _ in jobs]
    jobs = _with_penalties(jobs, pens)
    policy = PolluxPolicy(seed=seed, pop_size=12, generations=3, p=p, power_shift=shift)
    prob = build_problem(jobs, nodes, base, template)
    pop, _, _ = policy._search(prob)
    A = policy._arrays(prob)
    per_job = prob.penalties(policy.restart_penalty)
    # The kernels always get one float64[J] (one specialisation), normalised once.
    for pen in (per_job, A.penalty):
        assert pen.dtype == np.float64 and pen.shape == (prob.num_jobs,) and pen.flags.writeable
    want_pen = np.array(
        [policy.restart_penalty if x is None else x for x in (jobs[k].restart_penalty for k in prob.job_keys)]
    )
    np.testing.assert_array_equal(per_job, want_pen)
    base_d = naive.base_dense(prob)
    rows_n = pop.off.shape[0]
    obj = np.zeros(rows_n)
    size = np.zeros(rows_n, dtype=np.int64)
    with parallel_region():
        G.evaluate_population(
            pop.off,
            pop.node,
            pop.cnt,
            prob.table,
            prob.scale,
            prob.base_off,
            prob.base_node,
            prob.base_cnt,
            A.penalty,
            A.mode,
            A.p,
            obj,
            size,
        )
    for i in range(rows_n):
        state = naive.to_dense(pop.off, pop.node, pop.cnt, i, prob.num_nodes)
        o, _ = naive.objectives(state, prob.table, prob.scale, base_d, want_pen, A.mode, A.p)
        assert obj[i] == pytest.approx(o, rel=1e-9, abs=1e-12)
        assert pop.obj[i] == pytest.approx(o, rel=1e-9, abs=1e-12)
        if p is None and pop.size[i] <= prob.num_real:  # allocation dicts hold real nodes only
            alloc = row_to_allocations(pop, i, prob)
            assert allocation_objective(prob, alloc, policy.restart_penalty) == pytest.approx(o, rel=1e-9, abs=1e-12)


def test_uniform_array_equals_scalar():
    """A per-job array with every entry equal to the constant scores exactly as the constant."""
    fn = make_speedup_fn()
    nodes = {f"n{i}": NodeInfo({"gpu": 4}, preemptible=False) for i in range(3)}
    base = {"a": ["n0"] * 4, "b": ["n1"] * 2, "c": []}
    plain = {k: JobInfo({"gpu": 1}, fn, i, 0, 8) for i, k in enumerate("abc")}
    pen = {k: JobInfo({"gpu": 1}, fn, i, 0, 8, restart_penalty=0.1) for i, k in enumerate("abc")}
    out = []
    for jobs in (plain, pen):
        policy = PolluxPolicy(seed=5, pop_size=16, generations=10)
        out.append(policy.optimize(jobs, nodes, base, None))
        out.append(policy.last_stats["objective"])
    assert out[0] == out[2] and out[1] == out[3]


class _Linear:
    """Speedup ``r`` (a generic callable: tabulated by the policy)."""

    def __call__(self, n, r):
        return np.asarray(r, dtype=np.float64)


def test_unmovable_job_is_kept():
    """Fairness needs GPUs for a pending job; only the job with penalty 0 gives them up."""
    lin = _Linear()
    nodes = {"n0": NodeInfo({"gpu": 4}, preemptible=False), "n1": NodeInfo({"gpu": 4}, preemptible=False)}
    base = {"a": ["n0"] * 4, "b": ["n1"] * 4, "c": []}
    for frozen, free in (("a", "b"), ("b", "a")):
        jobs = {
            "a": JobInfo({"gpu": 1}, lin, 0, 0, 8, restart_penalty=1.0 if frozen == "a" else 0.0),
            "b": JobInfo({"gpu": 1}, lin, 1, 0, 8, restart_penalty=1.0 if frozen == "b" else 0.0),
            "c": JobInfo({"gpu": 1}, lin, 2, 0, 8, restart_penalty=0.0),
        }
        alloc, _ = PolluxPolicy(seed=1, pop_size=20, generations=20, p=-1.0, power_shift=True).optimize(
            jobs, nodes, base, None
        )
        assert alloc[frozen] == base[frozen]
        assert 0 < len(alloc[free]) < 4 and len(alloc["c"]) > 0


def test_jobinfo_restart_penalty_validation():
    fn = make_speedup_fn()
    assert JobInfo({"gpu": 1}, fn, 0, 0, 1).restart_penalty is None
    assert JobInfo({"gpu": 1}, fn, 0, 0, 1, restart_penalty=1).restart_penalty == 1.0
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="restart_penalty"):
            JobInfo({"gpu": 1}, fn, 0, 0, 1, restart_penalty=bad)


def test_duck_typed_job_with_bad_penalty():
    class Info:
        resources = {"gpu": 1}
        speedup_fn = staticmethod(make_speedup_fn())
        creation_timestamp = 0
        min_replicas = 0
        max_replicas = 2
        preemptible = True
        restart_penalty = 3.0

    with pytest.raises(ValueError, match="restart_penalty"):
        build_problem({"j": Info()}, {"n": NodeInfo({"gpu": 2}, False)}, {}, None)


def test_init_front_grows_from_the_previous_front():
    fn = make_speedup_fn()
    nodes = {f"n{i}": NodeInfo({"gpu": 4}, preemptible=False) for i in range(4)}
    jobs = {k: JobInfo({"gpu": 1}, fn, i, 0, 8) for i, k in enumerate("abcde")}
    policy = PolluxPolicy(seed=3, pop_size=16, generations=8, p=-1.0, power_shift=True, init="front")
    base = {}
    for _ in range(3):
        base, _ = policy.optimize(jobs, nodes, base, None)
        per_node = {}
        for alloc in base.values():
            for n in alloc:
                per_node[n] = per_node.get(n, 0) + 1
        assert all(c <= 4 for c in per_node.values())
        assert all(len(a) > 0 for a in base.values())  # p = -1: nobody is left out
        pop = policy._prev[0]
        rank = G.nondominated_rank(-pop.obj, pop.size.astype(np.float64))
        assert (rank == 0).all()  # only the rank-0 set is carried to the next round
    with pytest.raises(ValueError, match="init"):
        PolluxPolicy(init="random")
