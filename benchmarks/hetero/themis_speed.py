"""Themis before/after its faster search (issue 24.3), alternating in one process, CPU seconds.

Usage: python benchmarks/hetero/themis_speed.py [--workloads 1,2] [--pairs 2] [--preset sia]

"before" is the search of :mod:`fastsched.sim.policies.gavel_objectives` (regula falsi on the
clipped ``z``, every program through :func:`scipy.optimize.linprog`), "after" the one of
:mod:`fastsched.sim.policies.themis` (probes below the best allocation found, through
:func:`scipy.optimize.milp`); Gavel runs beside them as the reference. Prints one JSON
line per run: CPU seconds of the whole simulation and of the policy, average JCT, LP count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from fastsched.sim import simulate
from fastsched.sim.policies import gavel_objectives, themis

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the first search is kept in tests/ as the reference
from tests.sim.policies import themis_reference  # noqa: E402

SIA = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "sia-traces"


def _counting(cls, method, counter):
    solve = getattr(cls, method)

    def counted(self, need):
        counter[0] += 1
        return solve(self, need)

    setattr(cls, method, counted)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="1")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--preset", default="sia")
    args = ap.parse_args(argv)
    counts = {"before": [0], "after": [0], "gavel": [0]}
    _counting(gavel_objectives._BoundedLP, "z", counts["before"])
    _counting(themis._FairnessLP, "z_thr", counts["after"])
    makers = {
        "before": lambda: themis_reference.ThemisPolicy(placement="sequential", reoptimize="on-change", rtol=1e-3),
        "after": lambda: themis.ThemisPolicy(placement="sequential", reoptimize="on-change", rtol=1e-3),
        "gavel": lambda: "gavel",
    }
    for w in args.workloads.split(","):
        path = SIA / "workloads" / "philly" / f"workload-{w}.csv"
        for _ in range(args.pairs):
            for which, make in makers.items():
                counts[which][0] = 0
                t0 = time.process_time()
                r = simulate(path, traces=SIA / "traces", preset=args.preset, policy=make())
                s = r.summary()
                rec = {
                    "workload": w,
                    "which": which,
                    "cpu_s": round(time.process_time() - t0, 2),
                    "policy_wall_s": round(s["policy_s"], 2),
                    "avg_jct": s["avg_jct"],
                    "z_programs": counts[which][0],
                }
                print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
