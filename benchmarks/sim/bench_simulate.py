"""Simulator benchmarks: workload-6 end to end per policy, and the no-argument command.

Run: ``python benchmarks/sim/bench_simulate.py [--all-workloads]`` (needs ../shared for the
trace runs). Prints wall seconds and average JCTs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

SHARED = (
    Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[2].parent / "shared")) / "pollux-traces"
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--all-workloads", action="store_true", help="mean over workloads 1-8")
    parser.add_argument("--policies", default="tiresias,optimus,osdi21")
    args = parser.parse_args()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fastsched", "simulate", "--json", "-q"], check=True)
    print(f"fastsched simulate (no arguments): {time.perf_counter() - t0:.2f} s wall")
    if not (SHARED / "traces").is_dir():
        print(f"skipping trace benchmarks: {SHARED} absent")
        return 0
    from fastsched.sim import load_applications, simulate

    apps = load_applications(SHARED / "traces")
    ks = range(1, 9) if args.all_workloads else [6]
    for pol in args.policies.split(","):
        kw = {"preset": "osdi21", "seed": 0} if pol == "osdi21" else {"policy": pol}
        avgs = []
        for k in ks:
            t = time.perf_counter()
            r = simulate(SHARED / "workloads" / f"workload-{k}.csv", applications=apps, **kw)
            avgs.append(r.avg_jct)
            print(f"{pol:9s} workload-{k}: avg JCT {r.avg_jct:9.2f} s  wall {time.perf_counter() - t:6.1f} s")
        if len(avgs) > 1:
            print(f"{pol:9s} mean over workloads: {sum(avgs) / len(avgs):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
