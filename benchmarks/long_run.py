"""Long-run check: many consecutive policy rounds with job churn; memory and time per round.

Usage: ``python benchmarks/long_run.py [--rounds 10000] [--jobs 24] [--nodes 4]``

Prints, every 10% of the rounds, the resident set size, the traced Python heap and the median
round time of the last block, so a growth trend in either shows at a glance.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
import tracemalloc
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastsched import GoodputFunction, GradParams, JobInfo, NodeInfo, PerfParams, PolluxPolicy, SpeedupFunction  # noqa: E402

GPU = "nvidia.com/gpu"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=24, help="cap on live jobs")
    ap.add_argument("--nodes", type=int, default=4)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    policy = PolluxPolicy(seed=0)
    nodes = {i: NodeInfo({GPU: 4, "pods": 32}, False) for i in range(args.nodes)}
    template = NodeInfo({GPU: 4, "pods": 32}, True)
    live, allocations, next_key = {}, {}, 0
    times = []
    tracemalloc.start()
    print(f"{'round':>7} {'rss MiB':>8} {'heap MiB':>9} {'median ms':>10} {'live jobs':>9}")
    for r in range(args.rounds):
        for _ in range(int(rng.integers(0, 3))):
            perf = PerfParams(0.121 * rng.uniform(0.5, 2), 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
            sp = SpeedupFunction(GoodputFunction(perf, GradParams(0.00136, 0.000502), 128), 1280, (64, 256))
            live[next_key] = JobInfo({GPU: 1, "pods": 1}, sp, datetime(2020, 1, 1) + timedelta(seconds=r), 0, 8)
            next_key += 1
        for key in [k for k in live if rng.random() < 0.1]:
            del live[key]
        while len(live) > args.jobs:
            del live[next(iter(live))]
        t0 = time.perf_counter()
        allocations, _ = policy.optimize(live, nodes, {k: v for k, v in allocations.items() if k in live}, template)
        times.append(time.perf_counter() - t0)
        if (r + 1) % max(args.rounds // 10, 1) == 0:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            heap = tracemalloc.get_traced_memory()[0] / 2**20
            print(
                f"{r + 1:>7} {rss:>8.1f} {heap:>9.2f} {statistics.median(times) * 1e3:>10.2f} {len(live):>9}",
                flush=True,
            )
            times.clear()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
