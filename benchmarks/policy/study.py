"""Sia's scaling study under two checkouts side by side: JCTs, fairness, restarts, policy time.

Usage::

    python -m benchmarks.policy.study run --trees /work/wt/base . --sizes 1 4 16 32 --policies pollux sia
        --out study.jsonl
    python -m benchmarks.policy.study report study.jsonl

``run`` simulates each (tree, k, policy) in a fresh process with that tree's ``fastsched``
(``PYTHONPATH``), as ``benchmarks/sim/scale_study.py`` does (``rate_50`` merged k times on
``6xaws,3xrtx,2xdgx-ext`` times k, ``--preset sia``), and writes one JSON line: the summary's
average and p99 JCT, restarts per job, the worst finish-time fairness and the share of jobs above
1.05 (:func:`fastsched.sim.results.metrics.compute_metrics`), the policy's seconds per call (median, p95,
and CPU seconds of the whole run), and a hash of the summary (same hash: same results). Skips a
(tree, k, policy) already in ``--out``. ``report`` prints the markdown table, with each Pollux
row's average JCT over Sia's of the same tree and k.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import hashlib, json, sys, time
from pathlib import Path
from fastsched.sim import simulate
from fastsched.sim.results.metrics import compute_metrics
from fastsched.sim.inputs.scale import scale_cluster, scale_workload, workload_files
sia, k, policy = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
files = workload_files(sia / "workloads" / "scale" / "rate_50")
wl = scale_workload(files[:k] if k < len(files) else files, k)
c0 = time.process_time()
r = simulate(wl, traces=sia / "traces", preset="sia", policy=policy, cluster=str(scale_cluster("6xaws,3xrtx,2xdgx-ext", k)),
             cap_replicas=True, max_time=10**9)
cpu = time.process_time() - c0
s = r.summary()
m = compute_metrics(r)
timing = {"wall_s", "policy_s", "policy_s_median", "policy_s_p95"}
h = hashlib.sha256(json.dumps({a: b for a, b in s.items() if a not in timing}, sort_keys=True, default=str).encode())
print(json.dumps({"jobs": s["jobs"], "completed": s["completed"], "avg_jct": s["avg_jct"], "p99_jct": s["p99_jct"],
                  "makespan": s["makespan"], "restarts_per_job": m["restarts_per_job"], "ftf_worst": m["ftf_worst"],
                  "ftf_unfair_fraction": m["ftf_unfair_fraction"], "policy_s_median": s["policy_s_median"],
                  "policy_s_p95": s["policy_s_p95"], "policy_s": s["policy_s"], "cpu_s": cpu,
                  "hash": h.hexdigest()[:16]}))
"""


def _done(out: Path) -> set:
    if not out.exists():
        return set()
    return {(r["tree"], r["k"], r["policy"]) for r in map(json.loads, open(out)) if "error" not in r}


def run(args):
    shared = Path(os.environ.get("FASTSCHED_SHARED", ROOT.parent / "shared"))
    done = _done(args.out)
    for k in args.sizes:
        for policy in args.policies:
            for tree in args.trees:
                tree = str(Path(tree).resolve())
                if (tree, k, policy) in done:
                    continue
                env = dict(os.environ, PYTHONPATH=tree)
                p = subprocess.run(
                    [sys.executable, "-c", _CHILD, str(shared / "sia-traces"), str(k), policy],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=tree,
                )
                row = {"tree": tree, "k": k, "policy": policy}
                if p.returncode == 0:
                    row.update(json.loads(p.stdout.strip().splitlines()[-1]))
                else:
                    row["error"] = p.stderr.strip()[-300:]
                print(json.dumps(row), flush=True)
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")


def report(args):
    rows = [json.loads(x) for x in open(args.results) if x.strip()]
    sia = {(r["tree"], r["k"]): r["avg_jct"] for r in rows if r["policy"] == "sia" and "error" not in r}
    print(
        "| k | policy | tree | avg JCT h | / Sia | p99 JCT h | worst FTF | FTF > 1.05 | restarts/job "
        "| policy s/call median | p95 | CPU s | hash |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["k"], r["policy"], r["tree"])):
        if "error" in r:
            print(f"| {r['k']} | {r['policy']} | {Path(r['tree']).name} | {r['error']} |")
            continue
        gap = sia.get((r["tree"], r["k"])) or next((v for (t, k), v in sia.items() if k == r["k"]), None)
        ratio = f"{r['avg_jct'] / gap:.2f}" if gap else ""
        print(
            f"| {r['k']} | {r['policy']} | {Path(r['tree']).name} | {r['avg_jct'] / 3600:.2f} | {ratio} | "
            f"{r['p99_jct'] / 3600:.2f} | {r['ftf_worst']:.2f} | {100 * r['ftf_unfair_fraction']:.1f} % | "
            f"{r['restarts_per_job']:.2f} | {r['policy_s_median']:.4f} | {r['policy_s_p95']:.4f} | "
            f"{r['cpu_s']:.0f} | {r['hash']} |"
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--trees", nargs="+", required=True)
    r.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 32])
    r.add_argument("--policies", nargs="+", default=["pollux", "sia"])
    r.add_argument("--out", type=Path, default=Path("study.jsonl"))
    r.set_defaults(func=run)
    p = sub.add_parser("report")
    p.add_argument("results")
    p.set_defaults(func=report)
    args = ap.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
