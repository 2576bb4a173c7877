"""Issue 37's speed floor, taken apart: ``uncertainty_bands(draws=20)`` against single runs, where the time goes.

Usage::

    python benchmarks/sweep/bands_cost.py --trees BEFORE AFTER [--policies gavel,sia] [--repeats 3] [--workers N]

Per tree, policy and repeat, a fresh process (that tree's ``fastsched`` first on the path)
bootstraps the six applications' profiles as ``benchmarks/oracle.py --bands-speed`` does (once,
kept in ``--work``), warms up with one run, times 3 single runs of philly workload 1 on the
central profile, one ``uncertainty_bands(draws=20)`` on it and 3 more single runs (the median of the 6;
``in_bands_ratio`` divides by the bands' own central run instead), one process, and records wall and
CPU seconds (on this VM, CPU time drifts with the load as wall time does), the seconds spent in
``draw_profiles``, in the runs' rounds and in the rest of each run, the rounds simulated, and a
SHA-256 of the sweep's rows without timings and paths (must match across trees). The trees
alternate within each repeat; the medians per (tree, policy) are printed as JSON lines.
``--workers N`` runs the draws on N local dask workers (the dask extra): then only the wall
ratio means anything (the workers' CPU and rounds are not this process's), and the parts
that this process times are left out.
Results: ``benchmarks/results/oracle.md`` ("Cost").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATHLESS = ("wall_s", "traces", "run_id", "profiles")  # timings, and fields that name the temporary folder


def measure(policy: str, work: Path, workers=None) -> dict:
    """One process's figures (run inside the tree under test)."""
    sys.path.insert(0, str(Path.cwd() / "benchmarks"))
    import oracle  # noqa: PLC0415 - the tree's own benchmarks/oracle.py

    import fastsched.sim.api as api
    import fastsched.sweep.uncertainty as unc
    from fastsched.sim import simulate

    prof = work / "profiles"
    if not prof.exists():
        oracle.bootstrap_profiles(oracle.TRACES, prof)
    wl = oracle.SHARED / "sia-traces" / "workloads" / "philly" / "workload-1.csv"
    spent: dict = {}

    def timed(mod, name, key):
        f = getattr(mod, name)

        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - t0

        setattr(mod, name, wrapper)

    timed(unc, "draw_profiles", "draw_profiles_s")
    timed(api, "_run_rounds", "rounds_s")
    simulate(wl, traces=prof, preset="sia", policy=policy, seed=0)  # warm: kernels loaded, caches filled
    walls, cpus = [], []

    def singles():
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            simulate(wl, traces=prof, preset="sia", policy=policy, seed=0)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)

    singles()
    spent.clear()
    out = work / f"bands-{policy}-{os.getpid()}"
    t0, c0 = time.perf_counter(), time.process_time()
    res = unc.uncertainty_bands(wl, prof, policies=[policy], draws=20, seed=0, preset="sia", out_dir=out,
                                workers=workers)  # fmt: skip
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    shutil.rmtree(out, ignore_errors=True)
    singles()  # 3 more after: the machine's load drifts over a minute
    in_runs = sum(r["wall_s"] for r in res.rows)  # each run's own time (run_task's)
    rows = sorted(({k: v for k, v in r.items() if k not in PATHLESS} for r in res.rows), key=lambda r: r["draw"])
    single, csingle = statistics.median(walls), statistics.median(cpus)
    sha = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]
    if workers is not None:  # the draws ran in other processes: their rounds are not timed here
        return {"single_s": single, "bands_s": wall, "ratio": wall / single, "workers": workers, "rows_sha": sha}
    rounds_s = spent["rounds_s"]
    return {
        "single_s": single,
        "bands_s": wall,
        "ratio": wall / single,
        "cpu_ratio": cpu / csingle,
        "in_bands_ratio": wall / next(r["wall_s"] for r in res.rows if r["draw"] < 0),
        "rounds_only_ratio": rounds_s / single,
        "draw_profiles_s": spent["draw_profiles_s"],
        "runs_not_rounds_s": in_runs - rounds_s,
        "rest_s": wall - in_runs - spent["draw_profiles_s"],
        "rounds_draws_over_central": sum(r["rounds"] for r in rows if r["draw"] >= 0)
        / (20 * next(r["rounds"] for r in rows if r["draw"] < 0)),
        "rows_sha": sha,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs="+", type=Path, default=[ROOT])
    ap.add_argument("--policies", default="gavel,sia")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/fastsched-bands-cost"))
    ap.add_argument("--workers", type=int, default=None, help="run the draws on N local dask workers")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure this policy in this process
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.work, args.workers)))
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    got: dict = {}
    for _ in range(args.repeats):
        for policy in args.policies.split(","):
            for tree in args.trees:
                env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
                cmd = [sys.executable, str(Path(__file__).resolve()), "--one", policy, "--work", str(args.work)]
                cmd += [] if args.workers is None else ["--workers", str(args.workers)]
                p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=True)
                got.setdefault((str(tree), policy), []).append(json.loads(p.stdout.strip().splitlines()[-1]))
    for (tree, policy), runs in got.items():
        med = {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0] if k not in ("rows_sha", "workers")}
        print(json.dumps({"tree": tree, "policy": policy, "repeats": len(runs), **med,
                          "rows_sha": sorted({r["rows_sha"] for r in runs})}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
