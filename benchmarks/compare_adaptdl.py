"""Side-by-side timing of fastsched against the AdaptDL 0.2.11 reference.

Usage::

    python benchmarks/compare_adaptdl.py --ref-python ../refenv/adaptdl/bin/python [--rounds 3]

The reference interpreter is built by ``../shared/ref/adaptdl/setup_ref.sh``. Each workload is
timed in both interpreters alternately (fastsched, reference, fastsched, ...), each run in a
fresh process by ``_bench_worker.py``; the table shows per-call medians over rounds and the
median of the per-round ratios (reference / fastsched), so machine drift cancels pairwise.
Without ``--ref-python`` it prints a message and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS = ["optimize_scalar", "optimize_1e5", "evaluate_1e6", "fit_20", "speedup_1000"]
FLOORS = {
    "optimize_scalar": 50,
    "optimize_1e5": 30,
    "evaluate_1e6": 10,
    "fit_20": 20,
    "speedup_1000": 100,
}


def run_worker(python: str, api: str, workload: str, seconds: float) -> dict:
    env = dict(os.environ)
    if api == "fastsched":
        env["PYTHONPATH"] = str(HERE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [
            python,
            str(HERE / "_bench_worker.py"),
            "--api",
            api,
            "--workload",
            workload,
            "--seconds",
            str(seconds),
        ],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=str(HERE.parent) if api == "fastsched" else "/",
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref-python", help="interpreter with adaptdl 0.2.11 installed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0, help="timing budget per worker run")
    ap.add_argument("--workloads", nargs="*", default=WORKLOADS, choices=WORKLOADS)
    args = ap.parse_args(argv)
    if not args.ref_python:
        print(
            "compare_adaptdl: no --ref-python given; skipping the side-by-side comparison "
            "(build one with ../shared/ref/adaptdl/setup_ref.sh)"
        )
        return 0
    rows = []
    for workload in args.workloads:
        fast, ref, ratios = [], [], []
        for _ in range(args.rounds):
            f = run_worker(sys.executable, "fastsched", workload, args.seconds)
            r = run_worker(args.ref_python, "adaptdl", workload, args.seconds)
            fast.append(f)
            ref.append(r)
            ratios.append(r["median_s"] / f["median_s"])
        rows.append(
            (
                workload,
                statistics.median(x["median_s"] for x in ref),
                statistics.median(x["median_s"] for x in fast),
                statistics.median(ratios),
                min(ratios),
                max(ratios),
                statistics.median(x["first_call_s"] for x in fast),
            )
        )
        print(f"  done {workload}", file=sys.stderr)
    print(
        f"{'workload':<17} {'adaptdl':>10} {'fastsched':>10} {'ratio':>8} {'(min-max)':>15} {'floor':>6} "
        f"{'fs first call':>14}"
    )
    for name, r, f, ratio, lo, hi, first in rows:
        print(
            f"{name:<17} {fmt(r):>10} {fmt(f):>10} {ratio:>7.1f}x {f'{lo:.0f}-{hi:.0f}':>15} "
            f"{FLOORS[name]:>5}x {fmt(first):>14}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
