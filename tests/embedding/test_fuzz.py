"""Adversarial input: every public goodput entry point returns a valid result or raises a
documented ``ValueError``/``TypeError`` — never a crash, a hang, or a silent NaN.

CI runs the hypothesis profile's example count; ``HYPOTHESIS_PROFILE=fuzz`` runs a long session.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction, fit_perf_params

weird_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, -1.0, 1e-320, 1e308, -1e308, 1.0, 10.0, 10.000001, 0.999999]),
)
weird_ints = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, 1, -1, 2**31, 2**63 - 1]))
scalars = st.one_of(weird_floats, weird_ints, st.booleans(), st.none(), st.text(max_size=3))
arrays = st.one_of(
    st.lists(st.one_of(weird_floats, st.integers(-5, 300)), max_size=6).map(np.array),
    st.lists(st.integers(-3, 70), min_size=1, max_size=6).map(np.array),
    st.just(np.array([])),
    st.just(np.zeros((2, 0))),
    st.just(np.array(["a"])),
    st.just(np.array([[1, 2], [3, 4]])),
)
anything = st.one_of(scalars, arrays, st.tuples(weird_floats, weird_floats))

GOOD_PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GOOD_GRAD = GradParams(0.00136, 0.000502)
ALLOWED = (ValueError, TypeError)


def _valid_output(value):
    if isinstance(value, (GoodputFunction, SpeedupFunction)):
        return
    for part in value if isinstance(value, tuple) else (value,):
        arr = np.asarray(part, dtype=float)
        assert not np.any(np.isnan(arr)), "silent NaN in an output"


def _call(fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except ALLOWED:
        return None
    _valid_output(out)
    return out


@given(st.lists(weird_floats, min_size=7, max_size=7), st.tuples(weird_floats, weird_floats), anything)
def test_goodput_constructor(perf, grad, init):
    fn = _call(GoodputFunction, perf, grad, init)
    if fn is not None:
        assert all(math.isfinite(v) for v in fn.perf_params)


@given(anything, anything, anything, anything)
def test_evaluate_and_throughput(n, r, a, s):
    fn = GoodputFunction(GOOD_PERF, GOOD_GRAD, 16)
    _call(fn.evaluate, n, r, a, s)
    _call(fn.throughput, n, r, a, s)
    _call(fn.efficiency, a)


@given(anything, anything, anything, st.one_of(st.none(), st.tuples(anything, anything), anything), st.booleans())
def test_optimize(n, r, max_bsz, bsz_range, accumulation):
    fn = GoodputFunction(GOOD_PERF, GOOD_GRAD, 16)
    _call(fn.optimize, n, r, max_bsz, bsz_range, accumulation)


@given(anything, anything, anything, st.one_of(st.none(), st.tuples(anything, anything)))
def test_speedup(n, r, max_bsz, bsz_range):
    fn = GoodputFunction(GOOD_PERF, GOOD_GRAD, 16)
    sp = _call(SpeedupFunction, fn, max_bsz, bsz_range)
    if sp is not None:
        _call(sp, n, r)


@given(anything, anything, anything, anything, anything)
def test_fit(n, r, a, t1, t2):
    out = _call(fit_perf_params, n, r, a, t1, t2)
    if out is not None:
        assert all(math.isfinite(v) for v in out)


# -- the policy --------------------------------------------------------------------------

from fastsched import JobInfo, NodeInfo, PolluxPolicy  # noqa: E402

resource_values = st.one_of(st.integers(-2, 6), weird_floats, st.none(), st.text(max_size=2))
resource_dicts = st.dictionaries(st.sampled_from(["gpu", "cpu", "pods", "x"]), resource_values, max_size=3)


@st.composite
def cluster_inputs(draw):
    sp = SpeedupFunction(GoodputFunction(GOOD_PERF, GOOD_GRAD, 16), 160)
    speedups = st.sampled_from([sp, lambda n, r: r, lambda n, r: float("nan"), lambda n, r: -1.0, None, 3])
    jobs = {}
    for key in draw(st.lists(st.one_of(st.integers(0, 5), st.text(max_size=1)), max_size=5, unique=True)):
        args = (draw(resource_dicts), draw(speedups), draw(st.one_of(st.integers(0, 9), st.none())))
        args += (draw(st.one_of(st.integers(-1, 4), weird_floats)), draw(st.one_of(st.integers(-1, 6), weird_floats)))
        try:
            jobs[key] = JobInfo(*args, preemptible=draw(st.booleans()))
        except ALLOWED:
            continue
    nodes = {}
    for key in draw(st.lists(st.integers(0, 5), max_size=4, unique=True)):
        try:
            nodes[key] = NodeInfo(draw(resource_dicts), draw(st.booleans()))
        except ALLOWED:
            continue
    base = draw(
        st.dictionaries(
            st.one_of(st.integers(0, 6), st.text(max_size=1)),
            st.lists(st.one_of(st.integers(-1, 6), st.text(max_size=1)), max_size=4),
            max_size=4,
        )
    )
    try:
        template = NodeInfo(draw(resource_dicts), True)
    except ALLOWED:
        template = draw(st.one_of(st.none(), st.just(3)))
    return jobs, nodes, base, template


@given(cluster_inputs(), st.integers(0, 3))
def test_policy_optimize(inputs, seed):
    jobs, nodes, base, template = inputs
    policy = PolluxPolicy(seed=seed, pop_size=8, generations=3)
    try:
        allocations, desired = policy.optimize(jobs, nodes, base, template)
    except ALLOWED:
        return
    assert isinstance(desired, int) and desired >= 0
    for key, placement in allocations.items():
        assert key in jobs
        assert all(n in nodes for n in placement)
        assert len(placement) <= jobs[key].max_replicas


# -- the cost model ----------------------------------------------------------------------

from fastsched.costmodel import estimate_cost  # noqa: E402

names = st.sampled_from(["a", "b", "c", "d", "w@GRAD", ""])


@st.composite
def programs(draw):
    vars_ = [
        {
            "name": draw(names),
            "shape": draw(st.lists(st.integers(-2, 4), max_size=2)),
            "dtype": draw(st.sampled_from(["float32", "int64", "bogus", 3])),
            "persistable": draw(st.booleans()),
        }
        for _ in range(draw(st.integers(0, 4)))
    ]
    ops = [
        {
            "id": draw(st.one_of(names, st.integers(0, 3))),
            "type": draw(st.sampled_from(["matmul", "c_allreduce_sum", "send_v2", "recv_v2", "relu", "?"])),
            "inputs": [["X", draw(st.lists(names, max_size=2))]],
            "outputs": [["Out", draw(st.lists(names, max_size=2))]],
            "op_role": draw(st.sampled_from([0, 1, 2, 256, -1])),
            "ring_id": draw(st.one_of(st.none(), st.integers(-1, 2))),
            "cost": draw(st.one_of(weird_floats, st.none(), st.text(max_size=1))),
        }
        for _ in range(draw(st.integers(0, 5)))
    ]
    rank = {"rank": 0, "vars": vars_, "ops": ops}
    if draw(st.booleans()):
        rank[draw(st.sampled_from(["unknown", "stage"]))] = 1
    return {"ranks": [rank] * draw(st.integers(0, 2))}


@given(
    programs(),
    st.one_of(st.integers(-1, 4), weird_floats),
    st.one_of(st.none(), st.lists(st.lists(st.integers(-1, 2), max_size=2), max_size=2)),
)
def test_estimate_cost(program, microbatches, pipeline):
    try:
        cost = estimate_cost(program, microbatch_num=microbatches, pipeline_config=pipeline)
    except ALLOWED:
        return
    assert np.isfinite(cost.runtime) and cost.runtime >= 0
    for field in ("static_mem", "peak_mem", "fwd_time", "bwd_time", "optim_time"):
        assert np.all(np.isfinite(np.asarray(getattr(cost, field), dtype=float)))
