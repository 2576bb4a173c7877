"""Random-input campaign over the public entry points (issue 27); results in ``results/fuzz.md``.

``tests/embedding/test_fuzz.py`` explores the same inputs with hypothesis (shrinking, one input
per example). This driver trades shrinking for volume: numpy draws whole arrays of
configurations per call, so a few minutes reach millions of inputs. Every call must return a
valid result or raise ``ValueError``/``TypeError`` with a message; results are checked for
non-finite or negative values and the policy's invariants (capacities, min/max replicas,
non-preemptible jobs kept).

Usage::

    python benchmarks/fuzz_campaign.py --seconds 600 --seed 0

Prints one line per entry point: calls, inputs (array entries count one each), allowed errors
and failures (anything else), then the first failures.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

from fastsched import GoodputFunction, GradParams, JobInfo, NodeInfo, PerfParams, PolluxPolicy, SpeedupFunction
from fastsched.catalog import gpus as gcat
from fastsched.catalog.models import (
    MAX_EPOCHS,
    MAX_MODEL_INT,
    MAX_MODEL_VALUE,
    check_model,
    load_model_spec,
    model_spec,
)
from fastsched.costmodel import encode, estimate
from fastsched.costmodel.deviations import deviations
from fastsched.goodput import ModelBatch
from fastsched.sim.inputs.cluster_spec import GPU_TYPES, MAX_CLUSTER_GPUS, parse_cluster
from fastsched.sim.inputs.workload import WorkloadJob, validate_workload
from fastsched.sim.policies import SimPolicy, load_policy, make_policy
from fastsched.sim.truth.oracle import write_profile

PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = GradParams(0.00136, 0.000502)
EDGE_INTS = [0, 1, 2, 4, 8, 2**20, 2**31 - 1, 2**31, 2**40, 2**53, 2**53 + 1, 2**63 - 1, 2**63]
EDGE_BATCH = [1e-300, 0.5, 1.0, 16.0, 1280.0, 2.0**31, 2.0**53, 2.0**53 + 2**11, 7.66e299, 1.7e308]
FIELD_INTS = [0, 1, -1, 2, 256, 257, 2**31 - 1, 2**31, 2**53, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), 2**64]
COSTS = [0.0, 1e-300, 1.0, 1e100, 1e300, 1e308, 1.7976931348623157e308]
ALLOWED = (ValueError, TypeError)


class Broken(AssertionError):
    """A result that breaks an invariant."""


def _pick(rng, values, size=None):
    if size is None:
        return values[rng.integers(len(values))]
    return [values[i] for i in rng.integers(0, len(values), size=size)]


def _replicas(rng, size):
    reps = np.where(
        rng.random(size) < 0.3, np.array(_pick(rng, EDGE_INTS, size), dtype=object), rng.integers(1, 65, size)
    )
    nodes = [max(1, min(int(r), int(rng.integers(1, 5)))) if r >= 1 else 1 for r in reps]
    dtype = _pick(rng, [np.float32, np.float64, np.int64])
    try:
        return np.array(nodes, dtype), np.array(reps.tolist(), dtype)
    except OverflowError:  # 2**63 as int64
        return np.array(nodes, np.float64), np.array(reps.tolist(), np.float64)


def _check_config(out):
    g, a, s = (np.asarray(x) for x in out)
    if not (np.all(np.isfinite(g)) and np.all(g >= 0) and np.all(a >= 0) and np.all(s >= 0)):
        raise Broken(f"goodput {g.ravel()[:4]}, atomic {a.ravel()[:4]}, accum {s.ravel()[:4]}")


def goodput_optimize(rng):
    size = int(rng.integers(1, 1025))
    nodes, reps = _replicas(rng, size)
    init = _pick(rng, [1.0, 16.0, 1e6, 2.0**53, 1e300])
    fn = GoodputFunction(PERF, GRAD, init) if init <= 2.0**53 else None
    if fn is None:
        try:
            GoodputFunction(PERF, GRAD, init)
        except ValueError:
            return 1
        raise Broken("init_batch_size above 2**53 accepted")
    rng_ = None if rng.random() < 0.3 else (_pick(rng, [None, *EDGE_BATCH]), _pick(rng, [None, *EDGE_BATCH]))
    try:
        _check_config(fn.optimize(nodes, reps, _pick(rng, EDGE_BATCH), rng_, bool(rng.integers(2))))
    except ALLOWED as exc:
        if not str(exc):
            raise
    return size


def goodput_evaluate(rng):
    size = int(rng.integers(1, 1025))
    nodes, reps = _replicas(rng, size)
    fn = GoodputFunction(PERF, GRAD, 16.0)
    atomic = np.array(_pick(rng, [1, 16, 2**31, 2**53, 1e300], size), dtype=_pick(rng, [np.float32, np.float64]))
    accum = rng.integers(0, 4, size)
    for call in (fn.evaluate, fn.throughput):
        try:
            v = np.asarray(call(nodes, reps, atomic, accum))
        except ALLOWED as exc:
            if not str(exc):
                raise
            continue
        if not (np.all(np.isfinite(v)) and np.all(v >= 0)):
            raise Broken(f"{call.__name__}: {v[:4]}")
    return 2 * size


def model_batch(rng):
    count = int(rng.integers(1, 9))
    perf = np.tile(np.asarray(PERF, np.float64), (count, 1))
    grad = np.tile(np.asarray(GRAD, np.float64), (count, 1))
    bsz_range = None if rng.random() < 0.5 else (_pick(rng, EDGE_BATCH), _pick(rng, EDGE_BATCH))
    try:
        batch = ModelBatch(perf, grad, 1.0, np.array(_pick(rng, EDGE_BATCH, count)), bsz_range, bool(rng.integers(2)))
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    nodes, reps = _replicas(rng, int(rng.integers(1, 129)))
    try:
        _check_config(batch.optimize_matrix(nodes, reps))
    except ALLOWED as exc:
        if not str(exc):
            raise
    return count * reps.shape[0]


def _round(rng):
    nodes = {
        f"n{i}": NodeInfo(
            {"gpu": _pick(rng, [0, 1, 4, 8, 2**20, 2**31, 2**40, 2**53]), "cpu": _pick(rng, [0, 4, 64])},
            bool(rng.integers(2)),
        )
        for i in range(int(rng.integers(1, 5)))
    }
    sp = SpeedupFunction(GoodputFunction(PERF, GRAD, 16), 160)
    free = {k: dict(v.resources) for k, v in nodes.items()}
    jobs, base = {}, {}
    for i in range(int(rng.integers(1, 6))):
        res = {"gpu": int(rng.integers(0, 3))}
        if rng.random() < 0.5:
            res["cpu"] = int(rng.integers(0, 2))
        mx = _pick(rng, [1, 2, 4, 2**31, 2**53])
        mn = min(mx, _pick(rng, [0, 1, 3]))
        key = f"j{i}"
        jobs[key] = JobInfo(
            res, sp if rng.random() < 0.5 else (lambda n, r: r), i, mn, mx, preemptible=bool(rng.integers(2))
        )
        node, count = f"n{int(rng.integers(len(nodes)))}", int(rng.integers(0, 4))
        if count <= mx and all(free[node].get(r, 0) >= count * v for r, v in res.items()):
            for r, v in res.items():
                free[node][r] -= count * v
            base[key] = [node] * count
    tmpl = None if rng.random() < 0.4 else NodeInfo({"gpu": _pick(rng, [0, 4, 2**20, 2**40]), "cpu": 8}, True)
    opts = {
        "pop_size": 8,
        "generations": int(rng.integers(0, 3)),
        "init": _pick(rng, ["seeded", "front"]),
        "p": _pick(rng, [None, 0.0, 0.5, -1.0]),
        "on_invalid_job": _pick(rng, ["raise", "skip"]),
    }
    return jobs, nodes, base, tmpl, opts


def policy_round(rng):
    jobs, nodes, base, tmpl, opts = _round(rng)
    try:
        allocs, desired = PolluxPolicy(seed=int(rng.integers(4)), **opts).optimize(jobs, nodes, base, tmpl)
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    if set(allocs) != set(jobs) or not (isinstance(desired, int) and desired >= 0):
        raise Broken(f"jobs listed {sorted(allocs)}, desired {desired!r}")
    used: dict = {}
    for key, placement in allocs.items():
        job = jobs[key]
        if not job.preemptible and base.get(key):
            if sorted(placement) != sorted(base[key]):
                raise Broken(f"non-preemptible job {key!r} moved: {base[key]} -> {placement}")
        elif placement and not job.min_replicas <= len(placement) <= job.max_replicas:
            raise Broken(f"job {key!r} got {len(placement)} replicas outside [{job.min_replicas}, {job.max_replicas}]")
        for n in placement:
            for r, v in job.resources.items():
                used[n, r] = used.get((n, r), 0) + v
    for (n, r), amount in used.items():
        if amount > nodes[n].resources.get(r, 0):
            raise Broken(f"node {n!r} over capacity on {r!r}")
    return 1


def _program(rng):
    ranks = []
    for r in range(int(rng.integers(1, 3))):
        shape = _pick(rng, [-1, 4, *FIELD_INTS], int(rng.integers(0, 4))) if rng.random() < 0.5 else [-1, 4]
        vars_ = [{"name": "x", "shape": list(shape) if shape else []}, {"name": "w", "shape": [4], "persistable": True}]
        ops = []
        for i in range(int(rng.integers(0, 5))):
            op = {
                "id": f"op{i}",
                "type": _pick(rng, ["relu", "sgd", "c_allreduce_sum", "send_v2", "matmul_grad"]),
                "inputs": _pick(rng, [[], [["X", ["x"]]], [["Param", ["w"]], ["LearningRate", []]]]),
                "outputs": [["Out", ["x"]]] if i == 0 else [],
                "op_role": _pick(rng, FIELD_INTS) if rng.random() < 0.3 else int(rng.integers(0, 3)),
                "cost": _pick(rng, COSTS),
            }
            for field in ("ring_id", "peer", "desc_id"):
                if rng.random() < 0.3:
                    op[field] = _pick(rng, FIELD_INTS)
            ops.append(op)
        rank = {"vars": vars_, "ops": ops}
        if rng.random() < 0.2:
            rank["rank"] = _pick(rng, [r, 2**31, 2**63])
        ranks.append(rank)
    return {"ranks": ranks}


def costmodel_case(rng):
    program = _program(rng)
    pipeline = [[0], [1]] if len(program["ranks"]) == 2 and rng.random() < 0.5 else None
    try:
        enc = encode(program, pipeline_config=pipeline)
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    overhead = _pick(rng, [0.0, 1.0, 1e300, 1e308])
    microbatches = _pick(rng, [1, 4, 2**20])
    deviations(enc, pipeline_config=pipeline, microbatch_num=microbatches, opcall_overhead=overhead)
    try:
        cost = estimate(
            enc,
            pipeline_config=pipeline,
            batch_size=_pick(rng, [1, 2**20, 2**53]),
            microbatch_num=microbatches,
            opcall_overhead=overhead,
        )
    except ValueError as exc:
        if not str(exc):
            raise
        return 1
    vals = [cost.runtime, *cost.static_mem, *cost.peak_mem, *cost.fwd_time, *cost.bwd_time, *cost.optim_time]
    if not all(math.isfinite(v) and v >= 0 for v in vals):
        raise Broken(f"cost {cost!r}")
    return 1


def cluster_spec(rng):
    parts = []
    for _ in range(int(rng.integers(1, 4))):
        gpn = _pick(rng, [None, 0, 1, 8, 2**31, 2**63])
        t = _pick(rng, [*GPU_TYPES, "h100", "x y", ""])
        parts.append(f"{_pick(rng, [0, 1, 3, 64, 10_000])}x{t}" + ("" if gpn is None else f":{gpn}"))
    try:
        spec = parse_cluster(",".join(parts))
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    if str(parse_cluster(str(spec))) != str(spec) or spec.total_gpus < spec.num_nodes:
        raise Broken(f"cluster spec {spec}")
    return 1


# -- the simulator's entry points: cluster files, the GPU catalogue, policy plugins, profiles --------
SCRATCH = Path(tempfile.mkdtemp(prefix="fuzz-campaign-"))
ODD = [0, -1, 1, 2, 3, 8, 2**31, 2**53, 2**63, 1.5, 1e-320, 1e308, float("nan"), float("inf"), True, None, "4", [4], {}]
POSITIVE = [1, 4, 8, 16, 2.5, 100.0, 1e3, 1e9, 1e9 + 1, 1e-300, 1e30]


def _odd(rng):
    return _pick(rng, ODD)


def _name(rng):
    base = _pick(
        rng, [*gcat.known_names(), "zz100", "my-gpu", "", " ", "a/b", "../x", ".x", "x y", "é", "A100", "H100"]
    )
    if rng.random() < 0.3:
        base = base.upper() if rng.random() < 0.5 else f" {base} "
    return base


def _gpu_types(rng):
    types = {}
    for _ in range(int(rng.integers(0, 3))):
        spec = {}
        if rng.random() < 0.7:
            spec["base"] = _pick(rng, [*gcat.GPUS, "aws", "nosuch", 3, None])
        for field in rng.choice(gcat.GpuType._fields, size=int(rng.integers(0, 4)), replace=False):
            spec[str(field)] = _odd(rng) if rng.random() < 0.4 else _pick(rng, POSITIVE)
        types[_name(rng)] = spec
    return types


def _group(rng):
    g = {"type": _name(rng) if rng.random() < 0.9 else _odd(rng), "count": _pick(rng, [1, 2, 16, *ODD])}
    if rng.random() < 0.5:
        g["gpus_per_node"] = _pick(rng, [1, 4, 8, 2**20, *ODD])
    if rng.random() < 0.05:
        g["extra"] = 1
    return g


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return {"nan": "nan", "inf": "inf"}.get(repr(v), repr(v)) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{}"  # None and dicts: an empty inline table


def _cluster_text(rng):
    groups = [_group(rng) for _ in range(int(rng.integers(0, 4)))]
    types = _gpu_types(rng) if rng.random() < 0.5 else None
    if rng.random() < 0.5:
        data = {"groups": groups} if rng.random() < 0.8 else groups
        if types is not None and isinstance(data, dict):
            data["gpu_types"] = types
        return ".json", json.dumps(data)
    lines = []
    for g in groups:
        lines.append("[[group]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in g.items()]
    for name, spec in (types or {}).items():
        lines.append(f"[gpu_types.{json.dumps(name)}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in spec.items()]
    text = "\n".join(lines) + "\n"
    if rng.random() < 0.1:  # a cut-off file
        text = text[: int(rng.integers(0, len(text) + 1))]
    return ".toml", text


def _check_spec(spec):
    if not 1 <= spec.total_gpus <= MAX_CLUSTER_GPUS or sum(spec.gpus_by_type.values()) != spec.total_gpus:
        raise Broken(f"cluster {spec!r}: {spec.total_gpus} GPUs")
    if min(spec.node_gpus) < 1 or len(spec.node_types) != spec.num_nodes:
        raise Broken(f"cluster {spec!r}: a node without GPUs")


def cluster_file(rng):
    suffix, text = _cluster_text(rng)
    path = SCRATCH / f"cluster{suffix}"
    path.write_text(text)
    try:
        spec = parse_cluster(str(path) if rng.random() < 0.5 else path)
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    _check_spec(spec)
    return 1


def cluster_groups(rng):
    groups = []
    for _ in range(int(rng.integers(0, 4))):
        g = (_name(rng), _pick(rng, [1, 3, *ODD]), _pick(rng, [1, 4, 8, *ODD]))
        groups.append(list(g) if rng.random() < 0.3 else g[: int(rng.integers(1, 4))] if rng.random() < 0.1 else g)
    try:
        spec = parse_cluster(groups if rng.random() < 0.8 else tuple(groups))
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    _check_spec(spec)
    return 1


def catalog_lookup(rng):
    name = _name(rng) if rng.random() < 0.95 else _odd(rng)
    catalog = None if rng.random() < 0.7 else _user_catalog(rng)
    try:
        canon = gcat.canonical_name(name, catalog)
        t = gcat.gpu_type(name, catalog)
        trace = gcat.trace_name(name, catalog)
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 3
    if t.name != canon or gcat.canonical_name(canon, catalog) != canon or not trace:
        raise Broken(f"lookup of {name!r}: {canon!r}, {t.name!r}, {trace!r}")
    return 3


def _user_catalog(rng):
    try:
        return gcat.with_types(_gpu_types(rng))
    except ALLOWED:
        return None


def _check_type(t):
    nums = [t.bf16_tflops, t.tf32_tflops, t.fp32_tflops, t.memory_gib, t.memory_gbps, t.intra_gbps, t.network_gbps]
    if not all(isinstance(v, float) and 0 < v <= gcat.MAX_GPU_VALUE for v in nums):
        raise Broken(f"GPU type {t!r}: a number out of range")
    if not (isinstance(t.gpus_per_node, int) and t.gpus_per_node >= 1 and "/" not in t.trace_name):
        raise Broken(f"GPU type {t!r}")


def catalog_types(rng):
    types = _gpu_types(rng) if rng.random() < 0.95 else _odd(rng)
    try:
        cat = gcat.with_types(types)
    except (*ALLOWED, FileNotFoundError) as exc:  # a string is the path of a GPU types file
        if not str(exc):
            raise
        return 1
    for t in cat.values():
        _check_type(t)
    if set(gcat.GPUS) - set(cat):
        raise Broken("a built-in type was dropped")
    return 1


_PLUGIN_MODULES = {
    "fz_syntax": "def x(:\n",
    "fz_raises": "raise RuntimeError('boom at import')\n",
    "fz_plugins": (
        "from fastsched.sim.policies.base import SimPolicy\n"
        "class Fine(SimPolicy):\n    name = 'fine'\n"
        "class Options(SimPolicy):\n    def __init__(self, seed=0):\n        self.seed = seed\n"
        "class NeedsArg(SimPolicy):\n    def __init__(self, x):\n        self.x = x\n"
        "class Raises(SimPolicy):\n    def __init__(self, **kw):\n        raise RuntimeError('init boom')\n"
        "class Meta(type):\n    def __getattr__(cls, name):\n        raise RuntimeError('getattr boom')\n"
        "class Weird(metaclass=Meta):\n    pass\n"
        "NotAClass = 3\n"
    ),
}
_POLICY_STRINGS = [
    "pollux", "tiresias", "optimus", "sia", "gavel", "fifo", "srtf", "las", "themis", "gandiva", "allox",
    "min-total-duration", "max-sum-throughput", "POLLUX", " pollux", "nosuch", "", ":", "a:", ":b", "..:X", ".x:Y",
    "x..y:Z", "\x00:X", "é:X", "1abc:X", "x:y:z", "fz_syntax:X", "fz_raises:X", "fz_plugins:Fine", "fz_plugins:Options",
    "fz_plugins:NeedsArg", "fz_plugins:Raises", "fz_plugins:Weird.attr", "fz_plugins:NotAClass", "fz_plugins:Fine.name",
    "fz_plugins:Nope", "fastsched.sim.policies.base:SimPolicy", "fastsched.sim.policies.base:JobView",
    "fastsched.sim.policies.pollux:PolluxSimPolicy", "fastsched.sim.policies.base:free_gpus", "fastsched:__version__",
    "a" * 300 + ":X",
]  # fmt: skip


def _install_plugins():
    for mod, text in _PLUGIN_MODULES.items():
        (SCRATCH / f"{mod}.py").write_text(text)
    sys.path.insert(0, str(SCRATCH))


def policy_plugin(rng):
    name = _pick(rng, _POLICY_STRINGS) if rng.random() < 0.95 else _odd(rng)
    options = {}
    for _ in range(int(rng.integers(0, 3)) if rng.random() < 0.3 else 0):
        options[_pick(rng, ["seed", "pop_size", "p", "bogus"])] = _pick(rng, [0, 1, 8, 2**63, -1, 1e9, float("nan")])
    try:
        cls = load_policy(name)
        pol = make_policy(name, **options)
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    if not (isinstance(cls, type) and issubclass(cls, SimPolicy) and isinstance(pol, cls)):
        raise Broken(f"policy {name!r} gave {pol!r}")
    return 1


_MODELS = [model_spec(n) for n in ("cifar10", "ncf", "bert", "gpt-125m")]
_MODEL_EDGES = [0, 1, -1, 2**31, 2**53, 2**53 + 1, 2**63, 1e-320, 1e30, 1e31, 1e308, float("nan"), float("inf"), True,
                "x", "", "../x", None, [1, 2], [1.0, float("inf")], (200.0, 2000.0), "decoder", MAX_EPOCHS,
                MAX_EPOCHS + 1]  # fmt: skip


def _mutated_model(rng):
    m = _pick(rng, _MODELS)
    fields = rng.choice(m._fields, size=int(rng.integers(0, 3)), replace=False)
    return m._replace(**{str(f): _pick(rng, _MODEL_EDGES) for f in fields})


def _check_model_fields(m):
    floats = (m.parameters, m.flops_per_sample, m.activation_bytes, m.state_bytes_per_param, m.grad_bytes_per_param)
    ints = (m.kernels, m.init_batch_size, m.max_batch_size, m.min_local_bsz, m.samples_per_epoch)
    if not all(0 < v <= MAX_MODEL_VALUE for v in floats) or not all(1 <= v <= MAX_MODEL_INT for v in ints):
        raise Broken(f"model {m!r} accepted")
    if not (1 <= m.max_epochs <= MAX_EPOCHS and "/" not in m.name and m.name and not m.name.startswith(".")):
        raise Broken(f"model {m!r} accepted")
    if not all(math.isfinite(v) and v > 0 for v in m.noise_scale):
        raise Broken(f"model {m!r} accepted")


def model_check(rng):
    m = _mutated_model(rng)
    try:
        check_model(m)
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    _check_model_fields(m)
    return 1


def model_file(rng):
    if rng.random() < 0.5:
        data = {"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}
        for key in rng.choice([*data, "dtype_bytes", "tokens", "fixed_batch", "name"], size=2, replace=False):
            data[str(key)] = _pick(rng, _MODEL_EDGES[:-2])
    else:
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in _pick(rng, _MODELS)._asdict().items()}
        for key in rng.choice(list(data), size=int(rng.integers(0, 3)), replace=False):
            data[str(key)] = _pick(rng, _MODEL_EDGES[:-2])
    path = SCRATCH / "model.json"
    try:
        path.write_text(json.dumps(data))
    except (TypeError, ValueError):  # NaN is written as NaN (read back by json); others are JSON already
        return 0
    try:
        m = load_model_spec(path)
    except (*ALLOWED, FileNotFoundError) as exc:
        if not str(exc):
            raise
        return 1
    _check_model_fields(m)
    return 1


def _scan_profile(out: Path, model_name: str):
    for p in out.rglob("*"):
        if p.is_file() and p.parent != out / model_name:
            raise Broken(f"profile wrote {p} outside {out / model_name}")
        if p.suffix == ".csv":
            for row in csv.reader(io.StringIO(p.read_text())):
                for v in row:
                    with contextlib.suppress(ValueError):
                        if not 0 <= float(v) < math.inf:
                            raise Broken(f"{p.name}: {v}")


def profile(rng):
    out = SCRATCH / "profile"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    m = _pick(rng, _MODELS[:3]) if rng.random() < 0.7 else _mutated_model(rng)
    if m.family == "decoder" or m.name == "bert":  # the strategy search is heavy: a small decoder
        m = model_spec("ncf")._replace(name="d")
    types = [_name(rng) for _ in range(int(rng.integers(1, 3)))]
    catalog = _user_catalog(rng) if rng.random() < 0.3 else None
    eff = {}
    if rng.random() < 0.3:
        eff = {_name(rng): _pick(rng, [1e-320, 1e-6, 0.5, 1.0])}
    try:
        write_profile(check_model(m), types, out, efficiencies=eff, catalog=catalog, max_nodes=4)
    except (*ALLOWED, FileNotFoundError) as exc:
        if not str(exc):
            raise
        return 1
    finally:
        _scan_profile(out, m.name if isinstance(m.name, str) else "")
    return 1


def workload_jobs(rng):
    jobs = []
    for i in range(int(rng.integers(0, 5))):
        name = _pick(rng, [f"j{i}", "a", "", None, 3]) if rng.random() < 0.2 else f"j{i}"
        t = _pick(rng, [0, 10, -100, 1.5, 2.0, 2**53, 2**63, *ODD]) if rng.random() < 0.3 else int(rng.integers(0, 99))
        reps = _pick(rng, [0, 1, 4, 2**31, 2**63, -1, 1.0, True]) if rng.random() < 0.3 else 1
        bsz = _pick(rng, [0, 1, 128, 2**53, 2**63, -1, 1e9]) if rng.random() < 0.3 else 128
        try:
            jobs.append(WorkloadJob(name, t, _pick(rng, ["cifar10", "ncf", "", 3]), reps, bsz))
        except ALLOWED as exc:
            if not str(exc):
                raise
    try:
        jobs = validate_workload(jobs)
    except ALLOWED as exc:
        if not str(exc):
            raise
        return 1
    names = [j.name for j in jobs]
    if len(set(names)) != len(names) or not all(
        isinstance(j.time, int) and j.time >= 0 and j.num_replicas >= 1 and j.batch_size >= 1 for j in jobs
    ):
        raise Broken(f"workload accepted: {jobs}")
    return 1


# -- memory: the largest problems of a cluster of <= 10,000 GPUs, one fresh process each ---------------
def _mem_goodput():
    fn = GoodputFunction(PERF, GRAD, 128)
    reps = np.arange(1, 10_001, dtype=np.float64)  # every replica count of a 10,000-GPU cluster
    return fn.optimize(np.ceil(reps / 8), reps, 2.0**53, (1.0, 2.0**53), True)


def _mem_model_batch():
    count = 64
    batch = ModelBatch(np.tile(np.asarray(PERF), (count, 1)), np.tile(np.asarray(GRAD), (count, 1)), 128.0,
                       np.full(count, 2.0**53), None, True)  # fmt: skip
    return batch.speedup_tables(10_000)


def _mem_policy():
    nodes = {f"n{i}": NodeInfo({"gpu": 8, "cpu": 64}, False) for i in range(1_250)}  # 10,000 GPUs
    sp = SpeedupFunction(GoodputFunction(PERF, GRAD, 128), 2**53)
    jobs = {f"j{i}": JobInfo({"gpu": 1}, sp, i, 0, 2**31) for i in range(256)}
    return PolluxPolicy(seed=0, pop_size=32, generations=10).optimize(jobs, nodes, {}, None)


def _mem_cluster():
    path = SCRATCH / "c.toml"
    path.write_text("".join(f'[[group]]\ntype = "g{i}"\ncount = 1\ngpus_per_node = 1\n' for i in range(10_000)))
    return parse_cluster(path), parse_cluster("10000xgpu:1"), parse_cluster("1250xh100")


def _mem_simulate():
    from fastsched.sim import simulate
    from fastsched.sim.truth.builtin import builtin_workload

    return simulate(builtin_workload(), policy="tiresias", nodes=1_250, gpus=8, max_time=4 * 3600)


def _mem_profile():
    # The largest profile a model may ask for: MAX_EPOCHS rows in each of 54 validation files.
    m = model_spec("ncf")._replace(name="big", init_batch_size=1, max_batch_size=2**53, max_epochs=MAX_EPOCHS)
    out = SCRATCH / "mem-profile"
    shutil.rmtree(out, ignore_errors=True)
    return len(write_profile(check_model(m), ["t4"], out))


MEMORY_CASES = {
    "GoodputFunction.optimize: 10,000 replica counts, max batch 2**53": _mem_goodput,
    "ModelBatch.speedup_tables: 64 models x 10,000 replicas": _mem_model_batch,
    "PolluxPolicy.optimize: 1,250 nodes x 8 GPUs, 256 jobs, max_replicas 2**31": _mem_policy,
    "parse_cluster: 10,000 one-GPU groups (TOML), 10000xgpu:1, 1250xh100": _mem_cluster,
    "simulate: builtin workload, tiresias, 1,250 x 8 GPUs": _mem_simulate,
    "write_profile: max_epochs 10,000, batch 1 to 2**53 (54 validation files)": _mem_profile,
}


def _memory_case(name):
    """Run one case after a warm-up call (compilation is not the problem's memory); print peaks as JSON."""
    import resource
    import tracemalloc

    fn = MEMORY_CASES[name]
    fn()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t = time.process_time()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"case": name, "traced_peak_mib": peak / 2**20, "rss_peak_mib": rss / 1024,
                      "rss_growth_mib": (rss - base) / 1024, "cpu_s": time.process_time() - t}))  # fmt: skip


def _memory_report():
    import subprocess

    print("| case | tracemalloc peak (MiB) | peak RSS (MiB) | RSS growth in the measured call (MiB) | CPU s |")
    print("|---|---:|---:|---:|---:|")
    for name in MEMORY_CASES:
        r = subprocess.run([sys.executable, __file__, "--memory-case", name], capture_output=True, text=True)
        if r.returncode:
            print(f"| {name} | failed: {r.stderr.strip().splitlines()[-1]} | | | |")
            continue
        d = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"| {name} | {d['traced_peak_mib']:.1f} | {d['rss_peak_mib']:.0f} | {d['rss_growth_mib']:.0f} | "
              f"{d['cpu_s']:.1f} |")  # fmt: skip
        sys.stdout.flush()


# Calls of each entry point per cycle: validation-level ones answer in microseconds, so they take
# many calls; whole policy rounds, cost cases and profiles still get thousands in a long run.
ENTRY_POINTS = {
    "GoodputFunction.optimize": (goodput_optimize, 4),
    "GoodputFunction.evaluate/throughput": (goodput_evaluate, 4),
    "ModelBatch.optimize_matrix": (model_batch, 4),
    "PolluxPolicy.optimize": (policy_round, 4),
    "costmodel encode/deviations/estimate": (costmodel_case, 4),
    "parse_cluster (strings)": (cluster_spec, 50),
    "parse_cluster (TOML/JSON files, gpu_types)": (cluster_file, 10),
    "parse_cluster (group lists)": (cluster_groups, 300),
    "catalogue lookups": (catalog_lookup, 300),
    "catalogue with_types": (catalog_types, 100),
    "policy plugins (load_policy/make_policy)": (policy_plugin, 20),
    "check_model": (model_check, 400),
    "load_model_spec (model files)": (model_file, 10),
    "write_profile (profile)": (profile, 2),
    "WorkloadJob/validate_workload": (workload_jobs, 400),
}


def _report(stats, failures, seed, wall, file=None):
    print(f"seed {seed}, {wall:.0f} s", file=file)
    print(f"{'entry point':44} {'calls':>9} {'inputs':>11} {'failures':>9} {'seconds':>8} {'slowest':>8}", file=file)
    for name, (calls, inputs, bad, sec, slow) in stats.items():
        print(f"{name:44} {calls:9d} {inputs:11d} {bad:9d} {sec:8.1f} {slow:8.2f}", file=file)
    total = [sum(s[i] for s in stats.values()) for i in range(3)]
    print(f"{'total':44} {total[0]:9d} {total[1]:11d} {total[2]:9d}", file=file)
    for name, text, tb in failures:
        print(f"\n{name}: {text}\n{tb}", file=file)
    return total


def _checkpoint(path, stats, failures, seed, wall):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        _report(stats, failures, seed, wall, file=f)
    os.replace(tmp, path)


def main() -> int:
    """Run the campaign; exit status 1 when anything failed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="wall-clock budget")
    ap.add_argument("--calls", type=int, default=None, help="stop after this many calls in all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", action="append", help="entry points whose name starts with this")
    ap.add_argument("--checkpoint", help="file rewritten with the counts every --every seconds")
    ap.add_argument("--every", type=float, default=30.0)
    ap.add_argument("--memory", action="store_true", help="measure peak memory of the largest problems instead")
    ap.add_argument("--memory-case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_case or args.memory:
        try:
            _memory_case(args.memory_case) if args.memory_case else _memory_report()
        finally:
            shutil.rmtree(SCRATCH, ignore_errors=True)
        return 0
    logging.disable(logging.WARNING)  # the policy logs every skipped job
    np.seterr(over="ignore")  # float32 casts of 2**53 and 1e300 in the inputs are intended
    import warnings

    warnings.simplefilter("ignore", RuntimeWarning)  # overflow in the oracle's sums, which it then refuses
    _install_plugins()
    rng = np.random.default_rng(args.seed)
    chosen = {n: v for n, v in ENTRY_POINTS.items() if not args.only or any(n.startswith(o) for o in args.only)}
    stats = {name: [0, 0, 0, 0.0, 0.0] for name in chosen}  # calls, inputs, failures, seconds, slowest
    failures = []
    t0 = last = time.perf_counter()
    calls = 0
    try:
        while time.perf_counter() - t0 < args.seconds and (args.calls is None or calls < args.calls):
            for name, (fn, weight) in chosen.items():
                st = stats[name]
                for _ in range(weight):
                    st[0] += 1
                    t = time.perf_counter()
                    try:
                        st[1] += fn(rng)
                    except Exception as exc:  # the campaign records anything that is not an allowed error
                        st[2] += 1
                        if len(failures) < 20:
                            failures.append((name, repr(exc), traceback.format_exc(limit=3)))
                    dt = time.perf_counter() - t
                    st[3] += dt
                    st[4] = max(st[4], dt)
                calls += weight
            if args.checkpoint and time.perf_counter() - last > args.every:
                last = time.perf_counter()
                _checkpoint(args.checkpoint, stats, failures, args.seed, last - t0)
    finally:
        wall = time.perf_counter() - t0
        if args.checkpoint:
            _checkpoint(args.checkpoint, stats, failures, args.seed, wall)
        shutil.rmtree(SCRATCH, ignore_errors=True)
    total = _report(stats, failures, args.seed, wall)
    return 1 if total[2] else 0


if __name__ == "__main__":
    raise SystemExit(main())
