"""Average JCT of the osdi21 preset against the Pollux paper's published averages.

Runs workloads 1-8 at 1x load (../shared/pollux-traces/workloads) and, if a folder of
load-scaled stand-ins is given (see make_scaled_workloads.py), at 0.5x, 1.5x and 2x, and
prints per-workload averages and their means next to the published means.

Usage::

    python benchmarks/sim/fidelity_osdi21.py ../shared/pollux-traces [--scaled OUT] [--workers 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

#: Published means of the Pollux paper's simulator study (osdi21 artifact), seconds.
PUBLISHED = {"1": 2751.0, "0.5": 1534.0, "1.5": 3685.0}


def run_one(args):
    traces, workload, preset, seed, policy_options = args
    from fastsched.sim import simulate

    t0 = time.process_time()
    r = simulate(workload, traces=traces, preset=preset, seed=seed, policy_options=policy_options)
    return str(workload), r.avg_jct, r.completed, time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pollux", type=Path, help="folder with traces/ and workloads/")
    ap.add_argument("--scaled", type=Path, help="folder with workloads-0.5/, workloads-1.5/, workloads-2/")
    ap.add_argument("--loads", nargs="*", default=["1", "0.5", "1.5", "2"])
    ap.add_argument("--workloads", nargs="*", type=int, default=list(range(1, 9)))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--preset", default="osdi21")
    ap.add_argument("--option", action="append", default=[], help="policy option KEY=JSON, e.g. placeholders=false")
    args = ap.parse_args(argv)
    options = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.option)} or None
    tasks = []
    for load in args.loads:
        folder = (
            args.pollux / "workloads" if load == "1" else (args.scaled / f"workloads-{load}" if args.scaled else None)
        )
        if folder is None or not folder.is_dir():
            continue
        for k in args.workloads:
            tasks.append(
                (load, (str(args.pollux / "traces"), folder / f"workload-{k}.csv", args.preset, args.seed, options))
            )
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(run_one, [t for _, t in tasks]))
    by_load: dict[str, list] = {}
    for (load, _), (name, jct, done, cpu) in zip(tasks, results, strict=True):
        by_load.setdefault(load, []).append(jct)
        print(f"load {load:>4}  {Path(name).name:16s} avg JCT {jct:9.1f} s  completed {done}  cpu {cpu:6.1f} s")
    for load, jcts in by_load.items():
        mean = sum(jcts) / len(jcts)
        pub = PUBLISHED.get(load)
        rel = f"{(mean / pub - 1) * 100:+.1f} % vs published {pub:.0f} s" if pub else "(no published mean)"
        print(f"load {load:>4}  mean over {len(jcts)} workloads {mean:9.1f} s  {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
