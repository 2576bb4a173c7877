"""Compile time inside a run's rounds: whether any Pollux round compiles numba kernels.

Usage::

    python -m benchmarks.policy.compile_midrun [--scale 8] [--modes cold precompiled warm] [--tree DIR]

Each mode is a fresh process running the K-fold Sia scaling study under Pollux (``fastsched
simulate rate_50 --preset sia --scale K --policy pollux``) with numba's compile events timed
(CPU seconds of the outermost ``numba:compile`` events, so nested compiles count once) and attributed to the round
(:meth:`PolluxPolicy.optimize_problem` call) they happen in, or to the time before the first
round. Modes:

* ``cold``: an empty numba cache (``NUMBA_CACHE_DIR`` a fresh folder), nothing compiled ahead;
* ``precompiled``: an empty cache, then :func:`fastsched.policy._precompile.compile_round_kernels`
  before the run (what a run does behind its first-run notice, and ``fastsched warmup``);
* ``warm``: the same cache folder again, now filled (a later run on the machine).

One JSON line per mode: compile seconds before the first round, in rounds (total, the largest
in one round and that round's job count, every round over 1 s as (round, jobs, seconds)), the
run's CPU seconds and average JCT.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import json, os, sys, time
from pathlib import Path
import numba.core.event as ev
from fastsched.policy import PolluxPolicy
from fastsched.sim import simulate
from fastsched.sim.inputs.scale import scale_cluster, scale_workload, workload_files

k, mode, max_time, sia = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])
state = {"where": "before", "before": 0.0, "rounds": [], "depth": 0, "t0": 0.0, "acc": 0.0}


class Outer(ev.Listener):
    # Outermost compile events only: a kernel compiles its callees inside its own event.
    def on_start(self, event):
        if state["depth"] == 0:
            state["t0"] = time.thread_time()
        state["depth"] += 1

    def on_end(self, event):
        state["depth"] -= 1
        if state["depth"] == 0:
            state["acc"] += time.thread_time() - state["t0"]


ev.register("numba:compile", Outer())
c0 = time.process_time()
if mode == "precompiled":
    from fastsched.policy._precompile import compile_round_kernels
    compile_round_kernels(PolluxPolicy)
orig = PolluxPolicy.optimize_problem


def hooked(self, prob):
    if state["where"] == "before":
        state["before"] = state["acc"]
        state["where"] = "rounds"
    a0 = state["acc"]
    out = orig(self, prob)
    state["rounds"].append((state["acc"] - a0, prob.num_jobs))
    return out


PolluxPolicy.optimize_problem = hooked
files = workload_files(sia / "workloads" / "scale" / "rate_50")
wl = scale_workload(files[:k] if k < len(files) else files, k)
res = simulate(wl, traces=sia / "traces", preset="sia", policy="pollux", cluster=str(scale_cluster("6xaws,3xrtx,2xdgx-ext", k)),
               cap_replicas=True, max_time=max_time, progress=False)
rounds = state["rounds"]
worst = max(range(len(rounds)), key=lambda i: rounds[i][0]) if rounds else 0
print(json.dumps({
    "k": k, "mode": mode, "before_s": state["before"], "in_rounds_s": sum(r[0] for r in rounds),
    "worst_round_s": rounds[worst][0] if rounds else 0.0, "worst_round": worst + 1,
    "worst_round_jobs": rounds[worst][1] if rounds else 0, "rounds": len(rounds),
    "rounds_over_1s": [(i + 1, r[1], round(r[0], 2)) for i, r in enumerate(rounds) if r[0] > 1.0],
    "cpu_s": time.process_time() - c0,
    "avg_jct": res.summary()["avg_jct"],
}))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=8)
    ap.add_argument("--modes", nargs="+", default=["cold", "precompiled", "warm"])
    ap.add_argument("--max-time", type=float, default=6 * 3600.0, help="simulated seconds")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose fastsched runs (default: this one)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    shared = Path(os.environ.get("FASTSCHED_SHARED", ROOT.parent / "shared"))
    cache = tempfile.mkdtemp(prefix="fastsched-cold-")
    for mode in args.modes:
        if mode in ("cold", "precompiled"):
            cache = tempfile.mkdtemp(prefix="fastsched-cold-")
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(args.tree))
        p = subprocess.run(
            [sys.executable, "-c", _CHILD, str(args.scale), mode, str(args.max_time), str(shared / "sia-traces")],
            capture_output=True,
            text=True,
            env=env,
            cwd=args.tree,
        )
        if p.returncode == 0:
            row = {**json.loads(p.stdout.strip().splitlines()[-1]), "tree": str(args.tree)}
        else:
            row = {"mode": mode, "tree": str(args.tree), "error": p.stderr[-500:]}
        line = json.dumps(row)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(line + "\n")


if __name__ == "__main__":
    main()
