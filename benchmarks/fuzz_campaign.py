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
import logging
import math
import time
import traceback

import numpy as np

from fastsched import GoodputFunction, GradParams, JobInfo, NodeInfo, PerfParams, PolluxPolicy, SpeedupFunction
from fastsched.costmodel import encode, estimate
from fastsched.costmodel.deviations import deviations
from fastsched.goodput import ModelBatch
from fastsched.sim.cluster_spec import GPU_TYPES, parse_cluster

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


ENTRY_POINTS = {
    "GoodputFunction.optimize": goodput_optimize,
    "GoodputFunction.evaluate/throughput": goodput_evaluate,
    "ModelBatch.optimize_matrix": model_batch,
    "PolluxPolicy.optimize": policy_round,
    "costmodel encode/deviations/estimate": costmodel_case,
    "parse_cluster": cluster_spec,
}


def main() -> int:
    """Run the campaign; exit status 1 when anything failed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="wall-clock budget")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # the policy logs every skipped job
    np.seterr(over="ignore")  # float32 casts of 2**53 and 1e300 in the inputs are intended
    rng = np.random.default_rng(args.seed)
    stats = {name: [0, 0, 0, 0.0, 0.0] for name in ENTRY_POINTS}  # calls, inputs, failures, seconds, slowest
    failures = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        for name, fn in ENTRY_POINTS.items():
            st = stats[name]
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
    wall = time.perf_counter() - t0
    print(f"seed {args.seed}, {wall:.0f} s")
    print(f"{'entry point':40} {'calls':>9} {'inputs':>11} {'failures':>9} {'seconds':>8} {'slowest':>8}")
    for name, (calls, inputs, bad, sec, slow) in stats.items():
        print(f"{name:40} {calls:9d} {inputs:11d} {bad:9d} {sec:8.1f} {slow:8.2f}")
    total = [sum(s[i] for s in stats.values()) for i in range(3)]
    print(f"{'total':40} {total[0]:9d} {total[1]:11d} {total[2]:9d}")
    for name, text, tb in failures:
        print(f"\n{name}: {text}\n{tb}")
    return 1 if total[2] else 0


if __name__ == "__main__":
    raise SystemExit(main())
