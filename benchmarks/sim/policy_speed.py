"""Issue 22's policy-side speed floors, two source trees side by side, with a bit-identity check.

Usage::

    python benchmarks/sim/policy_speed.py --trees /path/to/main . [--repeats 3] [--cases default osdi21_w6 ...]
        [--parallel true|false]

Each case runs in a fresh process per tree, the trees alternating within each repeat (so both
see the same machine load). Prints one JSON line per run (wall and CPU seconds of the whole
``simulate`` call, the policy's seconds, and a SHA-256 of the summary without its timings and
of the allocation matrix), then per case the medians of each tree, their ratio and whether
every run of both trees gave the same hash. Needs ../shared (the Pollux and Sia traces).
Results: ``benchmarks/results/policy_speed.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

SHARED = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared"))
S, P = SHARED / "sia-traces", SHARED / "pollux-traces"

CASES = {
    "default": {},
    "osdi21_w6": {"workload": str(P / "workloads" / "workload-6.csv"), "traces": str(P / "traces"), "preset": "osdi21"},
    "sia_x1": {
        "workload": str(S / "workloads" / "scale" / "rate_50" / "workload-1.csv"),
        "traces": str(S / "traces"),
        "preset": "sia",
    },
}
# Pollux on the Sia study's heterogeneous cluster with the philly workloads (Table 4's setting).
for _k in range(1, 9):
    CASES[f"philly{_k}_pollux"] = {
        "workload": str(S / "workloads" / "philly" / f"workload-{_k}.csv"),
        "traces": str(S / "traces"),
        "preset": "sia",
        "policy": "pollux",
    }
for _k in range(1, 11):
    for _pol in ("sia", "pollux", "gavel", "tiresias"):
        CASES[f"saturn{_k}_{_pol}"] = {
            "workload": str(S / "workloads" / "saturn" / f"workload-{_k}.csv"),
            "traces": str(S / "traces"),
            "preset": "sia",
            "policy": _pol,
        }

_CHILD = r"""
import hashlib, json, sys, time
w, c = time.perf_counter(), time.process_time()
from fastsched.sim import simulate
kw = json.loads(sys.argv[1])
r = simulate(**kw)
cpu, wall = time.process_time() - c, time.perf_counter() - w
s = {k: v for k, v in r.summary().items() if not k.startswith(("wall_s", "policy_s")) and k != "provenance"}
h = hashlib.sha256(json.dumps(s, sort_keys=True, default=str).encode() + r.allocations.tobytes()).hexdigest()[:16]
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "loop_s": r.wall_s, "policy_s": r.policy_s, "avg_jct": r.avg_jct,
                  "hash": h}))
"""


def run_in_tree(tree, kwargs):
    """``simulate(**kwargs)`` in a fresh process importing fastsched from ``tree``; its figures as a dict."""
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    # Run inside the tree: ``python -c`` puts the working folder first on the import path.
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(kwargs)], capture_output=True, text=True, env=env, cwd=tree
    )
    if p.returncode:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs=2, required=True, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cases", nargs="+", default=["default", "osdi21_w6", "sia_x1"], choices=list(CASES))
    ap.add_argument("--warmup", action="store_true", help="one untimed run per tree first (fills numba's cache)")
    ap.add_argument("--after-only", action="store_true", help="time the AFTER tree alone (a floor check, no ratio)")
    ap.add_argument(
        "--parallel",
        choices=["auto", "true", "false"],
        default="auto",
        help="Pollux's threading path (policy_options parallel=...; auto: the policy's own choice)",
    )
    args = ap.parse_args(argv)
    if args.parallel != "auto":
        for kw in CASES.values():
            preset_policy = "sia" if kw.get("preset", "").startswith("sia") else "pollux"
            if kw.get("policy", preset_policy) == "pollux":
                kw["policy_options"] = {"parallel": args.parallel == "true"}
    if args.after_only:
        args.trees = args.trees[1:]
    for i, case in enumerate(args.cases):
        runs = {t: [] for t in args.trees}
        for t in args.trees if args.warmup and i == 0 else []:
            run_in_tree(t, CASES[case])
        for rep in range(args.repeats):
            for t in args.trees if rep % 2 == 0 else args.trees[::-1]:
                out = run_in_tree(t, CASES[case])
                print(json.dumps({"case": case, "tree": t, **out}), flush=True)
                if "error" not in out:
                    runs[t].append(out)
        if not all(runs.values()):
            continue
        med = {
            t: {k: statistics.median(r[k] for r in v) for k in ("wall_s", "cpu_s", "policy_s")} for t, v in runs.items()
        }
        a, b = args.trees
        hashes = {r["hash"] for v in runs.values() for r in v}
        print(
            json.dumps(
                {
                    "case": case,
                    "median": med,
                    "cpu_ratio": med[b]["cpu_s"] / med[a]["cpu_s"],
                    "wall_ratio": med[b]["wall_s"] / med[a]["wall_s"],
                    "identical": len(hashes) == 1,
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
