"""Sia-study fidelity runs: average JCT per policy over a trace's workloads (needs ../shared/sia-traces).

Usage: python benchmarks/hetero/fidelity.py TRACE [POLICY ...] [--preset sia] [--seeds 0] [--out FILE]
Prints one JSON line per (workload, policy, seed) and a summary per policy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from fastsched.sim import simulate
from fastsched.sim.results.metrics import METRIC_KEYS

SIA = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "sia-traces"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("policies", nargs="*", default=["sia", "pollux", "gavel"])
    ap.add_argument("--preset", default="sia")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--workloads", default=None, help="comma-separated workload numbers (default all)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    folder = SIA / "workloads" / args.trace
    files = sorted(folder.glob("workload-*.csv"), key=lambda p: int(p.stem.split("-")[1]))
    if args.workloads:
        keep = {int(x) for x in args.workloads.split(",")}
        files = [f for f in files if int(f.stem.split("-")[1]) in keep]
    seeds = [int(s) for s in args.seeds.split(",")]
    out = open(args.out, "a") if args.out else None
    summary = {}
    for pol in args.policies:
        for f in files:
            for seed in seeds if pol == "pollux" else seeds[:1]:
                t0 = time.perf_counter()
                r = simulate(f, traces=SIA / "traces", preset=args.preset, policy=pol, seed=seed)
                s = r.summary()
                rec = {
                    "trace": args.trace,
                    "workload": f.stem,
                    "policy": pol,
                    "seed": seed,
                    "preset": args.preset,
                    "wall_s": time.perf_counter() - t0,
                    "sim_wall_s": s["wall_s"],  # the rounds alone (no trace loading)
                    "policy_s": s["policy_s"],  # of which in the policy
                }
                rec.update({k: s[k] for k in (*METRIC_KEYS, "completed", "jobs")})
                line = json.dumps(rec)
                print(line, flush=True)
                if out:
                    out.write(line + "\n")
                    out.flush()
                summary.setdefault(pol, []).append(s["avg_jct"])
    for pol, v in summary.items():
        print(
            f"# {args.trace} {args.preset} {pol}: mean avg JCT {np.mean(v) / 3600:.3f} h over {len(v)} runs",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
