"""Quality sweep of PolluxPolicy against the exact MILP optimum on hard instance kinds.

Usage::

    python -m benchmarks.policy.quality [--seeds 20] [--out benchmarks/results/policy.md]

For every instance: first round from empty base allocations, policy seeds 0-2, each returned
allocation rescored by ``problems.score`` (the reference objective's formula on a speedup table
evaluated here, not the policy's own score), divided by the MILP optimum on the real nodes
(:func:`fastsched.policy.exact_optimize`). Kinds:

* ``problems``: every problem of ``../shared/ref/adaptdl/problems.py`` (MILP time-limited);
* ``varied``: drawn like ``varied_spec`` with random seeds, 8-64 jobs, 4-16 nodes, 4 or 8 GPUs;
* ``spare``: as ``varied`` but far more GPUs than the jobs can use (jobs <= nodes / 2);
* ``skewed``: nodes of 1-16 GPUs, jobs with 1-32 max replicas and some min replicas;
* ``extreme``: speedup parameters drawn with 4x the spread, tiny and huge batch sizes.

Writes a markdown table of per-kind mean/worst % of the optimum, % below first fit, and the
median round time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SHARED = Path(os.environ.get("FASTSCHED_SHARED", ROOT.parent / "shared"))
sys.path.insert(0, str(SHARED / "ref" / "adaptdl"))
sys.path.insert(0, str(ROOT))

import problems  # noqa: E402

from benchmarks.compare_policy import fastsched_api  # noqa: E402
from fastsched.policy import exact_optimize  # noqa: E402

API = fastsched_api()


def _varied(rng, jobs, nodes, gpus, spread=1.0):
    spec = problems.varied_spec(jobs, nodes, gpus, seed=int(rng.integers(1 << 30)))
    if spread != 1.0:
        srng = np.random.RandomState(int(rng.integers(1 << 30)))
        for j in spec["jobs"]:
            f = np.exp(srng.normal(0.0, 0.3 * (spread - 1.0), size=7))
            j["perf_params"] = [float("%.6g" % (p * x)) for p, x in zip(j["perf_params"][:6], f[:6], strict=True)] + [
                float("%.6g" % (1.0 + (j["perf_params"][6] - 1.0) * f[6]))
            ]
            j["grad_params"] = [float("%.6g" % (g * x)) for g, x in zip(j["grad_params"], f[:2], strict=True)]
            j["init_batch_size"] = int(srng.choice([8, 16, 64, 512]))
            j["max_batch_size"] = int(j["init_batch_size"] * srng.choice([1, 2, 100]))
            j["atomic_bsz_range"] = [8, 1024]
    return spec


def instance(kind, rng):
    if kind == "varied":
        jobs, nodes = int(rng.integers(8, 65)), int(rng.integers(4, 17))
        return _varied(rng, jobs, nodes, int(rng.choice([4, 8])))
    if kind == "spare":
        nodes = int(rng.integers(8, 17))
        jobs = int(rng.integers(4, nodes // 2 + 2))
        return _varied(rng, max(jobs, 8) if nodes * 8 > 64 else jobs, nodes, 8)
    if kind == "skewed":
        nodes = int(rng.integers(4, 13))
        spec = _varied(rng, int(rng.integers(8, 41)), nodes, 4)
        for n in spec["nodes"]:
            n["resources"][problems.GPU] = int(rng.choice([1, 2, 4, 8, 16]))
        for j in spec["jobs"]:
            j["max_replicas"] = int(rng.choice([1, 2, 4, 8, 16, 32]))
            j["min_replicas"] = int(rng.integers(0, 3)) if rng.random() < 0.3 else 0
            j["min_replicas"] = min(j["min_replicas"], j["max_replicas"])
        return spec
    if kind == "extreme":
        return _varied(rng, int(rng.integers(8, 41)), int(rng.integers(4, 17)), int(rng.choice([4, 8])), spread=4.0)
    raise ValueError(kind)


def evaluate(spec, seeds=(0, 1, 2), milp_limit=60.0):
    table = problems.speedup_table(spec, API)
    jobs, nodes, template = problems.build(spec, API)
    t = time.perf_counter()
    _, opt, status = exact_optimize(jobs, nodes, {}, template, time_limit=milp_limit)
    milp_s = time.perf_counter() - t
    ff = problems.score(spec, problems.first_fit(spec), table)["objective"]
    scores, times = [], []
    for seed in seeds:
        pol = API.PolluxPolicy(seed=seed)
        t = time.perf_counter()
        allocs, _ = pol.optimize(jobs, nodes, {}, template)
        times.append(time.perf_counter() - t)
        res = problems.score(spec, allocs, table)
        assert not res["violations"], res["violations"]
        scores.append(res["objective"])
    mean = float(np.mean(scores))
    return {
        "name": spec["name"],
        "ratio": mean / opt if opt > 0 else 1.0,
        "worst_seed": min(scores) / opt if opt > 0 else 1.0,
        "below_ff": min(scores) < ff - 1e-9,
        "time": statistics.median(times),
        "milp": status,
        "milp_s": milp_s,
    }


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20, help="random instances per kind")
    ap.add_argument("--kinds", nargs="*", default=["problems", "varied", "spare", "skewed", "extreme"])
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    rows = []
    for kind in args.kinds:
        res = []
        if kind == "problems":
            names = problems.all_names()[:-1] + ["varied16_16x4", "varied40_16x4"]
            specs = [problems.spec(n) for n in names]
        else:
            specs = [
                instance(kind, np.random.default_rng([s, len(kind)]))
                for s in range(args.first_seed, args.first_seed + args.seeds)
            ]
        for spec in specs:
            r = evaluate(spec)
            res.append(r)
            print(
                f"{kind:8s} {r['name']:18s} {100 * r['ratio']:6.2f}% worst seed {100 * r['worst_seed']:6.2f}% "
                f"{1e3 * r['time']:7.1f} ms milp {r['milp']} {r['milp_s']:.1f}s{' BELOW FF' if r['below_ff'] else ''}",
                flush=True,
            )
        rows.append((kind, res))
    lines = [
        "| kind | instances (MILP optimal) | mean % of optimum | worst % (mean of 3 seeds) | worst single seed "
        "| below first fit | median round |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, res in rows:
        # A time-limited MILP is no optimum: such instances are reported but not in the ratios.
        ok = [x for x in res if x["milp"] == "optimal"] or res
        r = np.array([x["ratio"] for x in ok])
        lines.append(
            f"| {kind} | {len(res)} ({len(ok)}) | {100 * r.mean():.2f} | {100 * r.min():.2f} | "
            f"{100 * min(x['worst_seed'] for x in ok):.2f} | {sum(x['below_ff'] for x in res)} | "
            f"{1e3 * statistics.median(x['time'] for x in res):.1f} ms |"
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
