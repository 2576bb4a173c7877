"""Cold-start figures: a fresh process importing fastsched and making its first calls.

Reports, each as the median of several fresh processes (``first_call_cpu_s``: user + system CPU
seconds of the first call, from ``getrusage``; the wall times suffer more from other load):
  * warm cache: numba's on-disk cache already populated (the normal case after the first run);
  * cold cache: an empty ``NUMBA_CACHE_DIR`` each time (first run after install).

Usage: ``python benchmarks/cold_start.py [--runs 3] [--what optimize|policy]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SNIPPETS = {
    "optimize": """
import resource, time; t0 = time.perf_counter()
import fastsched
t1 = time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_SELF)
f = fastsched.GoodputFunction(fastsched.PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
                              fastsched.GradParams(0.00136, 0.000502), 128)
f.optimize(1, 4, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True)
t2 = time.perf_counter(); r2 = resource.getrusage(resource.RUSAGE_SELF)
cpu = r2.ru_utime + r2.ru_stime - r1.ru_utime - r1.ru_stime
print({"import_s": t1 - t0, "first_call_s": t2 - t1, "first_call_cpu_s": cpu, "total_s": t2 - t0})
""",
    "policy": """
import resource, time; t0 = time.perf_counter()
from datetime import datetime, timedelta
import fastsched
t1 = time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_SELF)
perf = fastsched.PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
g = fastsched.GoodputFunction(perf, fastsched.GradParams(0.00136, 0.000502), 128)
sp = fastsched.SpeedupFunction(g, max_batch_size=1280, atomic_bsz_range=(64, 256))
now = datetime(2020, 1, 1)
jobs = {i: fastsched.JobInfo({"nvidia.com/gpu": 1, "pods": 1}, sp, now + timedelta(minutes=i), 0, 8) for i in range(16)}
nodes = {i: fastsched.NodeInfo({"nvidia.com/gpu": 4, "pods": 32}, preemptible=False) for i in range(4)}
fastsched.PolluxPolicy().optimize(jobs, nodes, {}, fastsched.NodeInfo({"nvidia.com/gpu": 4, "pods": 32}, True))
t2 = time.perf_counter(); r2 = resource.getrusage(resource.RUSAGE_SELF)
cpu = r2.ru_utime + r2.ru_stime - r1.ru_utime - r1.ru_stime
print({"import_s": t1 - t0, "first_call_s": t2 - t1, "first_call_cpu_s": cpu, "total_s": t2 - t0})
""",
}


def run(snippet: str, cache_dir: str | None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", snippet], check=True, capture_output=True, text=True, env=env)
    return eval(out.stdout.strip().splitlines()[-1])  # a dict literal we printed ourselves


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--what", choices=sorted(SNIPPETS), default="optimize")
    args = ap.parse_args(argv)
    snippet = SNIPPETS[args.what]
    with tempfile.TemporaryDirectory() as shared_cache:
        run(snippet, shared_cache)  # populate a cache for the warm runs
        warm = [run(snippet, shared_cache) for _ in range(args.runs)]
    cold = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as empty:
            cold.append(run(snippet, empty))
    result = {}
    for label, rows in (("warm_cache", warm), ("cold_cache", cold)):
        result[label] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
