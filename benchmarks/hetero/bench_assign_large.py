"""Sia's round program at cluster scale: HiGHS on the whole program vs the Lagrangian reduction.

Runs Sia on the ``rate_50`` workload merged k times (``--preset sia``, the cluster scaled k
times, as ``fastsched simulate ... --scale k``) until ``--cpu`` CPU seconds have passed,
keeping every round's integer program; then solves every ``--every``-th of them with
``method="milp"`` and ``method="reduced"`` alternately, checks that both reach the same
objective value, and prints the CPU seconds of each (total, median) and their ratio.

    python benchmarks/hetero/bench_assign_large.py --k 16 --cpu 240 --every 4
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import fastsched.sim.policies.sia as sia_mod
from fastsched.sim import simulate
from fastsched.sim.inputs.scale import scale_cluster, scale_workload, workload_files
from fastsched.sim.policies import _assign

SIA = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "sia-traces"


class _Enough(Exception):
    pass


def capture(k, cpu):
    """Return the round programs of the first ``cpu`` CPU seconds of Sia at scale ``k``."""
    solve = _assign.solve_assignment
    out = []
    start = time.process_time()

    def keep(problem, method="auto"):
        out.append(problem)
        if time.process_time() - start > cpu:
            raise _Enough
        return solve(problem, method)

    files = workload_files(SIA / "workloads" / "scale" / "rate_50")
    wl = scale_workload(files[:k] if k < len(files) else files, k)
    sia_mod.solve_assignment = keep
    try:
        simulate(
            wl,
            traces=SIA / "traces",
            preset="sia",
            policy="sia",
            cluster=str(scale_cluster("6xaws,3xrtx,2xdgx-ext", k)),
            cap_replicas=True,
            max_time=10**9,
        )
    except _Enough:
        pass
    finally:
        sia_mod.solve_assignment = solve
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--cpu", type=float, default=240.0)
    ap.add_argument("--every", type=int, default=4)
    args = ap.parse_args(argv)
    problems = [p for p in capture(args.k, args.cpu) if p.cost.size][:: args.every]
    times = {"milp": [], "reduced": []}
    for p in problems:
        values = {}
        for method in times:
            t0 = time.process_time()
            x = _assign.solve_assignment(p, method)
            times[method].append(time.process_time() - t0)
            values[method] = float(p.cost[x].sum())
        assert abs(values["milp"] - values["reduced"]) < 1e-6, values
    m, r = np.array(times["milp"]), np.array(times["reduced"])
    sizes = [p.cost.size for p in problems]
    print(f"k = {args.k}: {len(problems)} programs, {min(sizes)}-{max(sizes)} candidates, same optimum in each")
    print(f"  HiGHS:     total {m.sum():.2f} CPU s, median {np.median(m) * 1000:.1f} ms")
    print(f"  reduction: total {r.sum():.2f} CPU s, median {np.median(r) * 1000:.1f} ms")
    print(f"  ratio of totals {r.sum() / m.sum():.3f}, of medians {np.median(r) / np.median(m):.3f}")


if __name__ == "__main__":
    main()
