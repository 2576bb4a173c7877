"""Issue 22's speed floors, two source trees side by side (e.g. main vs a branch).

Usage::

    python benchmarks/sim/scale_floors.py --trees /path/to/main . --repeats 3 [--cases default tiresias_x1 ...]

Each case runs in a fresh process per tree, the trees alternating within each repeat (so
both see the same machine load), after one warm-up run per tree (numba's cache filled).
Prints one JSON line per run and then, per case, the medians of each tree and their ratio:
wall and CPU seconds of the whole ``simulate`` call (loading the traces included), the round
loop's wall seconds and the policy's. Needs ../shared (the Pollux and Sia traces).
"""

from __future__ import annotations

import argparse
import json
import statistics

from policy_speed import CASES as PS_CASES
from policy_speed import SHARED, run_in_tree

# The shared cases and the runner live in policy_speed.py (same folder: run as a script, it is
# on the import path); this script adds the k = 1 baselines' floors.
S = SHARED / "sia-traces"
R50 = S / "workloads" / "scale" / "rate_50" / "workload-1.csv"
CASES = {k: PS_CASES[k] for k in ("default", "osdi21_w6", "sia_x1")}
for _pol in ("tiresias", "gavel"):
    CASES[f"{_pol}_x1"] = {"workload": str(R50), "traces": str(S / "traces"), "preset": "sia", "policy": _pol}
for _pol in ("sia", "pollux", "gavel", "tiresias"):
    CASES[f"saturn1_{_pol}"] = PS_CASES[f"saturn1_{_pol}"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs=2, required=True, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--no-warmup", action="store_true", help="skip the warm-up runs (caches already filled)")
    args = ap.parse_args(argv)
    for case in args.cases:
        runs = {t: [] for t in args.trees}
        for t in [] if args.no_warmup else args.trees:
            run_in_tree(t, CASES[case])  # warm-up: numba's cache, the OS's file cache
        for rep in range(args.repeats):
            for t in args.trees if rep % 2 == 0 else args.trees[::-1]:
                out = run_in_tree(t, CASES[case])
                print(json.dumps({"case": case, "tree": t, **out}), flush=True)
                if "error" not in out:
                    runs[t].append(out)
        before, after = (runs[t] for t in args.trees)
        if before and after:
            keys = ("wall_s", "cpu_s", "loop_s", "policy_s")
            med = {k: [statistics.median(r[k] for r in rs) for rs in (before, after)] for k in keys}
            figures = ", ".join(f"{k} {a:.2f} -> {b:.2f} (x{a / b:.2f})" for k, (a, b) in med.items())
            print(f"{case}: {figures}; avg JCT {before[0]['avg_jct']} vs {after[0]['avg_jct']}", flush=True)


if __name__ == "__main__":
    main()
