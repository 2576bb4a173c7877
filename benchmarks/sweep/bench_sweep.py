"""Benchmark: a 32-run sweep on 2 dask worker processes vs the serial loop, and dask's per-task overhead.

Run: ``python benchmarks/sweep/bench_sweep.py [--policy optimus] [--workers 2]`` (needs the ``dask`` extra).
Floor (issue 7): >= 1.7x the serial throughput with 2 worker processes on the 2-core machine.
Cluster start-up and kernel warm-up are reported separately and excluded from the throughput.
The sweep is ``benchmarks.harness.SWEEP_SPEC`` (asv times its serial run as ``sweep_serial_32``);
only public API is used.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.harness import SINGLE_THREAD_ENV, SWEEP_SPEC  # noqa: E402  (after the path is set)


class _Stub:
    def summary(self):
        return {}


def noop_simulate(**kwargs):
    """Do nothing: a stand-in simulation that measures the pure dask round trip of a sweep task."""
    return _Stub()


def main(argv=None) -> int:
    """Run the benchmark and print a JSON report."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--policy", default="optimus", help="simulated policy (default optimus: ~0.1-0.5 s per run)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--overhead-tasks", type=int, default=200)
    args = p.parse_args(argv)

    from distributed import Client, LocalCluster

    from fastsched.sweep import run_serial, run_sweep

    spec = dict(SWEEP_SPEC, policy=args.policy)
    warm_spec = {"workloads": ["builtin"], "policy": args.policy, "seeds": args.workers}
    run_serial(warm_spec)  # compile or load this process's kernels outside the timing
    t0 = time.perf_counter()
    serial = run_serial(spec)
    t_serial = time.perf_counter() - t0
    assert len(serial.rows) == 32 and not serial.errors, serial.errors[:1]

    t0 = time.perf_counter()
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
            env=dict(SINGLE_THREAD_ENV),
        ) as cluster,
        Client(cluster) as client,
    ):
        t_start = time.perf_counter() - t0
        t0 = time.perf_counter()
        run_sweep(warm_spec, client=client, progress=False)  # warms every worker's kernels
        t_warm = time.perf_counter() - t0
        t0 = time.perf_counter()
        dist = run_sweep(spec, client=client, progress=False, warm=False)
        t_dist = time.perf_counter() - t0
        same = [{k: v for k, v in r.items() if k != "wall_s"} for r in dist.rows] == [
            {k: v for k, v in r.items() if k != "wall_s"} for r in serial.rows
        ]
        n = args.overhead_tasks
        t0 = time.perf_counter()
        noop = run_sweep(
            {"workloads": ["builtin"], "seeds": n}, client=client, progress=False, warm=False, simulate_fn=noop_simulate
        )
        t_noop = time.perf_counter() - t0
        assert len(noop.rows) == n
    task_sum = sum(r["wall_s"] for r in dist.rows)
    report = {
        "runs": 32,
        "policy": args.policy,
        "workers": args.workers,
        "serial_s": round(t_serial, 3),
        "dask_s": round(t_dist, 3),
        "speedup": round(t_serial / t_dist, 2),
        "floor": 1.7,
        "same_table": same,
        "mean_task_s": round(task_sum / 32, 4),
        "overhead_per_task_ms_from_sweep": round(1000 * (t_dist * args.workers - task_sum) / 32, 2),
        "overhead_per_task_ms_noop": round(1000 * t_noop / n, 2),
        "cluster_start_s": round(t_start, 2),
        "worker_warmup_s": round(t_warm, 2),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
