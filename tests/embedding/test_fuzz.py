"""Adversarial input: every public goodput entry point returns a valid result or raises a
documented ``ValueError``/``TypeError`` — never a crash, a hang, or a silent NaN.

CI runs the hypothesis profile's example count; ``HYPOTHESIS_PROFILE=fuzz`` runs a long session.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
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


# -- issue 27: extreme but legal inputs --------------------------------------------------------
# Whole policy rounds and cost-model estimates per example: a quarter of the profile's count.
_heavy = settings(max_examples=max(10, settings.default.max_examples // 4))
# Values at the edges of the integer and float types the boundary converts to (int32, float64's
# exact integers, int64) and of float64 itself, mixed with ordinary ones.
EDGE_INTS = [0, 1, 2, 4, 8, 2**20, 2**31 - 1, 2**31, 2**40, 2**53, 2**53 + 1, 2**63 - 1, 2**63]
edge_ints = st.one_of(st.sampled_from(EDGE_INTS), st.integers(0, 64))
edge_batch = st.one_of(
    st.sampled_from([1e-300, 0.5, 1.0, 16.0, 1280.0, 2.0**31, 2.0**53, 2.0**53 + 2**11, 7.66e299, 1.7e308]),
    st.floats(1.0, 1e6),
)
float_dtypes = st.sampled_from([np.float32, np.float64])


@st.composite
def replica_arrays(draw):
    """(num_nodes, num_replicas) arrays of float32/float64/int64 with replicas up to 2**63."""
    size = draw(st.integers(1, 8))
    reps = draw(st.lists(edge_ints, min_size=size, max_size=size))
    nodes = [draw(st.integers(1, max(1, min(r, 4)))) if r >= 1 else 1 for r in reps]
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    with np.errstate(over="ignore"):
        try:
            return np.array(nodes, dtype), np.array(reps, dtype)
        except OverflowError:  # 2**63 as int64
            return np.array(nodes, np.float64), np.array(reps, np.float64)


def _valid_config(goodput, atomic, accum):
    g, a, s = (np.asarray(x) for x in (goodput, atomic, accum))
    assert np.all(np.isfinite(g)) and np.all(g >= 0), "goodput must be finite and >= 0"
    assert np.all(a >= 0) and np.all(s >= 0), "atomic batch and accumulation steps must be counts"


@given(
    replica_arrays(),
    edge_batch,
    st.one_of(st.none(), st.tuples(st.one_of(st.none(), edge_batch), st.one_of(st.none(), edge_batch))),
    st.booleans(),
    st.sampled_from([1.0, 16.0, 1e6, 2.0**53, 1e300]),
)
def test_optimize_extreme_batch_limits(arrays, max_bsz, bsz_range, accumulation, init):
    nodes, reps = arrays
    fn = _call(GoodputFunction, GOOD_PERF, GOOD_GRAD, init)
    if fn is None:
        return
    out = _call(fn.optimize, nodes, reps, max_bsz, bsz_range, accumulation)
    if out is not None:
        _valid_config(*out)
    out = _call(
        fn.optimize, int(nodes[0]) if np.isfinite(nodes[0]) else 1, reps[0].item(), max_bsz, bsz_range, accumulation
    )
    if out is not None:
        _valid_config(*out)


@_heavy
@given(
    st.integers(1, 4),
    st.lists(edge_batch, min_size=1, max_size=3),
    st.one_of(st.none(), st.tuples(edge_batch, edge_batch)),
    st.booleans(),
    replica_arrays(),
)
def test_model_batch_extreme(count, max_bsz, bsz_range, accumulation, arrays):
    from fastsched.goodput import ModelBatch

    perf = np.tile(np.asarray(GOOD_PERF, np.float64), (count, 1))
    grad = np.tile(np.asarray(GOOD_GRAD, np.float64), (count, 1))
    maxb = np.resize(np.asarray(max_bsz), count)
    try:
        batch = ModelBatch(perf, grad, 1.0, maxb, bsz_range, accumulation)
    except ALLOWED:
        return
    nodes, reps = arrays
    out = _call(batch.optimize_matrix, nodes, reps)
    if out is not None:
        _valid_config(*out)
    tables = _call(batch.speedup_tables, int(min(max(reps.max(), 1), 64)))
    if tables is not None:
        assert np.all(np.isfinite(tables)) and np.all(tables >= 0)


GPU_COUNTS = [0, 1, 4, 8, 2**20, 2**31, 2**40, 2**53]


@st.composite
def extreme_rounds(draw):
    """A policy round with huge GPU counts and replica bounds, zero-GPU and pinned jobs."""
    nodes = {}
    for i in range(draw(st.integers(1, 4))):
        res = {"gpu": draw(st.sampled_from(GPU_COUNTS)), "cpu": draw(st.sampled_from([0, 4, 64]))}
        nodes[f"n{i}"] = NodeInfo(res, draw(st.booleans()))
    sp = SpeedupFunction(GoodputFunction(GOOD_PERF, GOOD_GRAD, 16), 160)
    free = {k: dict(v.resources) for k, v in nodes.items()}
    jobs, base = {}, {}
    for i in range(draw(st.integers(1, 5))):
        res = {"gpu": draw(st.sampled_from([0, 1, 2]))}
        if draw(st.booleans()):
            res["cpu"] = draw(st.sampled_from([0, 1]))
        mx = draw(st.sampled_from([1, 2, 4, 2**31, 2**53]))
        mn = draw(st.sampled_from([0, 1, min(mx, 3)]))
        fn = draw(st.sampled_from([sp, lambda n, r: r]))
        key = f"j{i}"
        jobs[key] = JobInfo(res, fn, i, min(mn, mx), mx, preemptible=draw(st.booleans()))
        node = draw(st.sampled_from(sorted(nodes)))
        count = draw(st.integers(0, 3))
        if count <= mx and all(free[node].get(r, 0) >= count * v for r, v in res.items()):
            for r, v in res.items():
                free[node][r] -= count * v
            base[key] = [node] * count
    template = draw(
        st.one_of(st.none(), st.builds(lambda g: NodeInfo({"gpu": g, "cpu": 8}, True), st.sampled_from(GPU_COUNTS)))
    )
    opts = {
        "pop_size": 8,
        "generations": draw(st.integers(0, 2)),
        "init": draw(st.sampled_from(["seeded", "front"])),
        "p": draw(st.sampled_from([None, 0.0, 0.5, -1.0])),
        "on_invalid_job": draw(st.sampled_from(["raise", "skip"])),
    }
    return jobs, nodes, base, template, opts


@_heavy
@given(extreme_rounds(), st.integers(0, 3))
def test_policy_extreme_rounds(inputs, seed):
    jobs, nodes, base, template, opts = inputs
    try:
        allocations, desired = PolluxPolicy(seed=seed, **opts).optimize(jobs, nodes, base, template)
    except ALLOWED as exc:
        assert str(exc), "errors must say what is wrong"
        return
    assert set(allocations) == set(jobs) and isinstance(desired, int) and desired >= 0
    used: dict = {}
    for key, placement in allocations.items():
        job = jobs[key]
        pinned = not job.preemptible and bool(base.get(key))
        if pinned:
            assert sorted(placement) == sorted(base[key]), f"non-preemptible job {key!r} moved"
        elif placement:
            assert job.min_replicas <= len(placement) <= job.max_replicas
        for n in placement:
            for r, v in job.resources.items():
                used[n, r] = used.get((n, r), 0) + v
    for (n, r), amount in used.items():
        assert amount <= nodes[n].resources.get(r, 0), f"node {n!r} over capacity on {r!r}"


from fastsched.costmodel import encode as _encode  # noqa: E402
from fastsched.costmodel import estimate as _estimate  # noqa: E402
from fastsched.costmodel.deviations import deviations as _deviations  # noqa: E402

EDGE_FIELD_INTS = [0, 1, -1, 2, 256, 257, 2**31 - 1, 2**31, 2**53, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), 2**64]
EDGE_COSTS = [0.0, 1e-300, 1.0, 1e100, 1e300, 1e308, 1.7976931348623157e308]


@st.composite
def extreme_programs(draw):
    """Two-stage programs whose integer fields sit at 2**31, 2**53, 2**63 and costs near 1e308."""
    nranks = draw(st.integers(1, 2))
    ranks = []
    for r in range(nranks):
        shape = draw(st.lists(st.one_of(st.sampled_from([-1, 4, *EDGE_FIELD_INTS])), max_size=3))
        vars_ = [
            {"name": "x", "shape": shape},
            {"name": "w", "shape": [4], "persistable": True},
            {"name": "x@GRAD", "shape": [4]},
        ]
        ops = []
        for i in range(draw(st.integers(0, 4))):
            op = {
                "id": f"op{i}",
                "type": draw(st.sampled_from(["relu", "sgd", "c_allreduce_sum", "send_v2", "matmul_grad"])),
                "inputs": draw(st.sampled_from([[], [["X", ["x"]]], [["Param", ["w"]], ["LearningRate", []]]])),
                "outputs": [["Out", ["x"]]] if i == 0 else [],
                "op_role": draw(st.sampled_from(EDGE_FIELD_INTS)),
                "cost": draw(st.sampled_from(EDGE_COSTS)),
            }
            for field in ("ring_id", "peer", "desc_id"):
                if draw(st.booleans()):
                    op[field] = draw(st.sampled_from(EDGE_FIELD_INTS))
            ops.append(op)
        rank = {"vars": vars_, "ops": ops}
        if draw(st.booleans()):
            rank["rank"] = draw(st.sampled_from([r, 2**31, 2**63]))
        ranks.append(rank)
    return {"ranks": ranks}


@_heavy
@given(
    extreme_programs(),
    st.sampled_from([1, 2**20, 2**53]),
    st.sampled_from([0.0, 1.0, 1e300, 1e308]),
    st.sampled_from([1, 4, 2**20]),
    st.booleans(),
)
def test_costmodel_extreme_fields(program, batch_size, overhead, microbatches, pipelined):
    pipeline = [[0], [1]] if pipelined and len(program["ranks"]) == 2 else None
    try:
        enc = _encode(program, pipeline_config=pipeline)
    except ALLOWED:
        return
    # encode accepted it: deviations never raises
    _deviations(enc, pipeline_config=pipeline, microbatch_num=microbatches, opcall_overhead=overhead)
    try:
        cost = _estimate(
            enc, pipeline_config=pipeline, batch_size=batch_size, microbatch_num=microbatches, opcall_overhead=overhead
        )
    except ValueError:
        return
    assert math.isfinite(cost.runtime) and cost.runtime >= 0
    for field in ("static_mem", "peak_mem", "fwd_time", "bwd_time", "optim_time"):
        vals = np.asarray(getattr(cost, field), dtype=float)
        assert np.all(np.isfinite(vals)) and np.all(vals >= 0), field


from fastsched.sim.inputs.cluster_spec import GPU_TYPES, parse_cluster  # noqa: E402

spec_parts = st.tuples(
    st.sampled_from([0, 1, 3, 64, 10_000]),
    st.sampled_from([*GPU_TYPES, "h100", "x y", ""]),
    st.one_of(st.none(), st.sampled_from([0, 1, 8, 2**31, 2**63])),
)


@given(st.lists(spec_parts, min_size=1, max_size=3), st.sampled_from([",", ", ", ";"]))
def test_cluster_specs(parts, sep):
    text = sep.join(f"{n}x{t}" + ("" if g is None else f":{g}") for n, t, g in parts)
    try:
        spec = parse_cluster(text)
    except ALLOWED:
        return
    assert spec.num_nodes == sum(n for n, _, _ in parts) and spec.total_gpus >= spec.num_nodes
    assert str(parse_cluster(str(spec))) == str(spec)


# -- the simulator's entry points: cluster files, the GPU catalogue, policy plugins, profiles ----------
import json  # noqa: E402

from fastsched.catalog import gpus as gcat  # noqa: E402
from fastsched.catalog.models import MAX_EPOCHS, MAX_MODEL_INT, MAX_MODEL_VALUE, check_model, model_spec  # noqa: E402
from fastsched.sim.inputs.cluster_spec import MAX_CLUSTER_GPUS  # noqa: E402
from fastsched.sim.policies import SimPolicy, make_policy  # noqa: E402

odd_values = st.sampled_from(
    [0, -1, 1, 2, 8, 2**31, 2**53, 2**63, 1.5, 1e-320, 1e308, float("nan"), float("inf"), True, None, "4", [4], {}]
)
gpu_names = st.one_of(
    st.sampled_from([*gcat.known_names(), "zz100", "my-gpu", "", "a/b", "../x", ".x", "x y"]),
    st.sampled_from(gcat.known_names()).map(str.upper),
    st.sampled_from(gcat.known_names()).map(lambda n: f" {n} "),
    st.text(max_size=4),
)
positive = st.sampled_from([1, 4, 8, 2.5, 100.0, 1e9, 1e9 + 1, 1e-300, 1e30])
type_specs = st.dictionaries(
    st.sampled_from([*gcat.GpuType._fields, "base"]),
    st.one_of(odd_values, positive, st.sampled_from([*gcat.GPUS, "aws", "nosuch"])),
    max_size=4,
)
user_types = st.dictionaries(gpu_names, type_specs, max_size=2)
groups = st.fixed_dictionaries(
    {"type": st.one_of(gpu_names, odd_values), "count": st.one_of(st.sampled_from([1, 2, 16]), odd_values)},
    optional={"gpus_per_node": st.one_of(st.sampled_from([1, 4, 8, 2**20]), odd_values)},
)


def _toml(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return {"nan": "nan", "inf": "inf"}.get(repr(v), repr(v))
    if isinstance(v, (int, str)):
        return json.dumps(v)
    return "[" + ", ".join(_toml(x) for x in v) + "]" if isinstance(v, list) else "{}"


def _valid_spec(spec):
    assert 1 <= spec.total_gpus <= MAX_CLUSTER_GPUS and min(spec.node_gpus) >= 1
    assert sum(spec.gpus_by_type.values()) == spec.total_gpus and len(spec.node_types) == spec.num_nodes


@given(st.lists(groups, max_size=3), st.one_of(st.none(), user_types), st.booleans())
def test_cluster_files(tmp_path_factory, items, types, as_toml):
    folder = tmp_path_factory.mktemp("cluster")
    if as_toml:
        lines = [line for g in items for line in ("[[group]]", *(f"{k} = {_toml(v)}" for k, v in g.items()))]
        for name, spec in (types or {}).items():
            lines += [f"[gpu_types.{json.dumps(name)}]", *(f"{k} = {_toml(v)}" for k, v in spec.items())]
        path = folder / "c.toml"
        path.write_text("\n".join(lines) + "\n")
    else:
        path = folder / "c.json"
        path.write_text(json.dumps({"groups": items, **({"gpu_types": types} if types is not None else {})}))
    try:
        spec = parse_cluster(path)
    except (*ALLOWED, FileNotFoundError) as exc:
        assert str(exc)
        return
    _valid_spec(spec)


@given(st.lists(st.tuples(gpu_names, st.one_of(st.integers(1, 3), odd_values), odd_values), max_size=3))
def test_cluster_group_lists(items):
    try:
        spec = parse_cluster(items)
    except ALLOWED as exc:
        assert str(exc)
        return
    _valid_spec(spec)


@given(st.one_of(gpu_names, odd_values), st.one_of(st.none(), user_types))
def test_catalogue_lookups_and_user_types(name, types):
    try:
        catalog = gcat.with_types(types)
    except (*ALLOWED, FileNotFoundError) as exc:
        assert str(exc)
        return
    for t in catalog.values():
        nums = (t.bf16_tflops, t.tf32_tflops, t.fp32_tflops, t.memory_gib, t.memory_gbps, t.intra_gbps, t.network_gbps)
        assert all(0 < v <= gcat.MAX_GPU_VALUE for v in nums) and t.gpus_per_node >= 1
        assert "/" not in t.trace_name and not t.trace_name.startswith(".")
    try:
        canon = gcat.canonical_name(name, catalog)
    except ALLOWED as exc:
        assert str(exc)
        return
    assert gcat.gpu_type(name, catalog).name == canon == gcat.canonical_name(canon, catalog)
    assert gcat.trace_name(name, catalog)


plugin_names = st.one_of(
    st.sampled_from(["pollux", "tiresias", "POLLUX", "nosuch", "", ":", "a:", ":b", "..:X", ".x:Y", "x:y:z", "é:X"]),
    st.sampled_from(
        [
            "fastsched.sim.policies.base:SimPolicy",
            "fastsched.sim.policies.base:JobView",
            "fastsched.sim.policies.base:free_gpus",
            "fastsched.sim.policies.queue:FifoPolicy",
            "fastsched.sim.policies.queue:FifoPolicy.name",
            "fastsched:__version__",
        ]
    ),
    st.text(alphabet=st.sampled_from("ab.:_é\x00"), max_size=6),
    odd_values,
)


@given(plugin_names, st.dictionaries(st.sampled_from(["seed", "pop_size", "bogus"]), odd_values, max_size=2))
def test_policy_plugins(name, options):
    try:
        policy = make_policy(name, **options)
    except ALLOWED as exc:
        assert str(exc)
        return
    assert isinstance(policy, SimPolicy)


model_edges = st.sampled_from(
    [0, 1, -1, 2**31, 2**53, 2**53 + 1, 2**63, 1e-320, 1e30, 1e31, 1e308, float("nan"), float("inf"), True, "x", "",
     "../x", None, (1, 2), (1.0, float("inf")), (200.0, 2000.0), "decoder", MAX_EPOCHS, MAX_EPOCHS + 1]
)  # fmt: skip


@given(
    st.sampled_from(["cifar10", "ncf", "bert", "gpt-125m"]),
    st.dictionaries(st.sampled_from(model_spec("ncf")._fields), model_edges, max_size=2),
)
def test_profile_models(name, changes):
    try:
        m = check_model(model_spec(name)._replace(**changes))
    except ALLOWED as exc:
        assert str(exc)
        return
    sizes = (m.parameters, m.flops_per_sample, m.activation_bytes, m.state_bytes_per_param, m.grad_bytes_per_param)
    counts = (m.kernels, m.init_batch_size, m.max_batch_size, m.min_local_bsz, m.samples_per_epoch)
    assert all(0 < v <= MAX_MODEL_VALUE for v in sizes) and all(1 <= v <= MAX_MODEL_INT for v in counts)
    assert 1 <= m.max_epochs <= MAX_EPOCHS and all(0 < v <= MAX_MODEL_VALUE for v in m.noise_scale)
    assert "/" not in m.name and not m.name.startswith(".")


@_heavy
@given(
    st.sampled_from(["ncf", "cifar10", "zz", "gpt-125m"]),
    st.lists(gpu_names, min_size=0, max_size=2).map(",".join),
    st.sampled_from([[], ["--efficiency", "1e-320"], ["--efficiency", "nan"], ["--noise-scale", "1e-320,1"]]),
)
def test_profile_command(tmp_path_factory, model, gpus, extra):
    from fastsched.cli import main

    out = tmp_path_factory.mktemp("profile")
    try:
        rc = main(["profile", model, "--gpu", gpus, "--output", str(out / "o"), "-q", *extra])
    except SystemExit as exc:  # argparse's own refusals (a value that looks like a flag, "-:") exit while parsing
        rc = exc.code
    assert rc in (0, 2), "bad input is exit 2, never an internal error"
    for path in out.rglob("*.csv"):
        assert path.parent == out / "o" / model
        for line in path.read_text().splitlines()[1:]:
            assert all(0 <= float(v) < math.inf for v in line.split(",")[1:]), path.name
