"""Sia's per-round time at scale (issue 38, item 3): the policy's rounds of the K-fold scaling study.

Usage::

    python benchmarks/hetero/sia_tail.py run --scale 32 --hours 6 --time-limit 1.5 [--save heavy.pkl]
    python benchmarks/hetero/sia_tail.py replay heavy.pkl --time-limit 1.5 --top 4

``run`` simulates ``rate_50`` merged K times on ``6xaws,3xrtx,2xdgx-ext`` x K (``--preset sia``,
as ``benchmarks/sim/scale_study.py``) up to ``--hours`` of simulated time, with a
:class:`~fastsched.sim.policies.sia.SiaPolicy` of the given ``--time-limit`` (``none``: exact),
and prints the CPU seconds (``time.process_time``) of every ``optimize`` call (median, p95,
p99, max) and of its integer program alone, with the policy's ``solver_stats`` (rounds the
limit stopped, worst gap). ``--save`` pickles each round whose program took over 0.3 CPU s.
``replay`` solves saved programs exactly and under the limit, side by side: CPU and wall
seconds, whether the limit bound, the reported gap and the true loss against the optimum.
A run of K=32 takes many minutes. Needs ../shared/sia-traces. Results: benchmarks/results/hetero.md.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from pathlib import Path

import numpy as np

SIA = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "sia-traces"


def _quantiles(xs):
    a = np.sort(np.asarray(xs))
    q = lambda f: float(a[min(int(f * a.size), a.size - 1)])  # noqa: E731
    return f"n={a.size} median {q(0.5):.3f} p95 {q(0.95):.3f} p99 {q(0.99):.3f} max {a[-1]:.3f}"


def run(args):
    import fastsched.sim.policies.sia as sia_mod
    from fastsched.sim import simulate
    from fastsched.sim.inputs.scale import scale_cluster, scale_workload, workload_files

    limit = None if args.time_limit == "none" else float(args.time_limit)
    pol = sia_mod.SiaPolicy(time_limit=limit)
    solve, rounds = [], []
    real_solve, real_opt = sia_mod.solve_assignment_report, pol.optimize

    def timed_solve(problem, *a):
        t0 = time.process_time()
        out = real_solve(problem, *a)
        dt = time.process_time() - t0
        solve.append(dt)
        if args.save and dt > 0.3:
            with open(args.save, "ab") as f:
                pickle.dump((dt, problem), f)
        return out

    def timed_opt(*a):
        t0 = time.process_time()
        out = real_opt(*a)
        rounds.append(time.process_time() - t0)
        return out

    sia_mod.solve_assignment_report = timed_solve
    pol.optimize = timed_opt
    files = workload_files(SIA / "workloads" / "scale" / "rate_50")
    k = args.scale
    wl = scale_workload(files[:k] if k < len(files) else files, k)
    cluster = str(scale_cluster("6xaws,3xrtx,2xdgx-ext", k))
    simulate(wl, traces=SIA / "traces", preset="sia", policy=pol, cluster=cluster, max_time=args.hours * 3600)
    print(f"K={k} time_limit={limit} hours={args.hours}")
    print("round CPU s:", _quantiles(rounds))
    print("program CPU s:", _quantiles(solve))
    print("solver_stats:", pol.solver_stats)


def replay(args):
    from fastsched.sim.policies._assign import solve_assignment_report

    saved = []
    with open(args.file, "rb") as f:
        while True:
            try:
                saved.append(pickle.load(f))
            except EOFError:
                break
    saved.sort(key=lambda t: -t[0])
    for _dt0, p in saved[: args.top]:
        c0, w0 = time.process_time(), time.perf_counter()
        ex = solve_assignment_report(p)
        c1, w1 = time.process_time(), time.perf_counter()
        lm = solve_assignment_report(p, time_limit=float(args.time_limit))
        c2, w2 = time.process_time(), time.perf_counter()
        opt, val = float(p.cost[ex.chosen].sum()), float(p.cost[lm.chosen].sum())
        print(
            f"candidates {p.cost.size} jobs {p.num_jobs}: exact {c1 - c0:.2f} CPU s ({w1 - w0:.2f} wall) | "
            f"limit {args.time_limit}: {c2 - c1:.2f} CPU s ({w2 - w1:.2f} wall), limited {lm.limited}, "
            f"reported gap {lm.gap:.2e}, true loss {(val - opt) / abs(opt):.2e}, same choice {np.array_equal(ex.chosen, lm.chosen)}"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--scale", type=int, default=32)
    r.add_argument("--hours", type=float, default=6.0)
    r.add_argument("--time-limit", default="1.5")
    r.add_argument("--save")
    p = sub.add_parser("replay")
    p.add_argument("file")
    p.add_argument("--time-limit", default="1.5")
    p.add_argument("--top", type=int, default=4)
    args = ap.parse_args()
    (run if args.cmd == "run" else replay)(args)


if __name__ == "__main__":
    main()
