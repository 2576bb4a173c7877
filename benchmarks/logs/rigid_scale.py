"""Rigid jobs at full size: FIFO, SJF, EASY backfilling and Tiresias on the synthetic Helios log.

Any rigid policy can be named (``--policies gandiva,themis``; the study table runs those on the
log's first 100,000 jobs, ``--first 100000 --nodes 550``).

Usage::

    python benchmarks/logs/rigid_scale.py [--jobs 1000000] [--nodes 800] [--gpus 8] \
        [--policies fifo,sjf,backfill,tiresias] [--log /tmp/helios_1m.csv] [--plot queue.svg]

Writes the synthetic Helios log once (seed 0), warms the kernel's compile cache in a process of
its own (the compile is reported apart), then runs each policy in a fresh process: read the log
(:func:`~fastsched.sim.inputs.logs.read_log`), replay it
(:func:`~fastsched.sim.log_api.simulate_log`, which builds the per-job records too), take the
summary. Each phase is timed in CPU seconds of that process (the machine is shared, wall time
is reported beside it) and the process's peak resident memory is its own ``ru_maxrss``. Prints
one JSON line per run and, with ``--plot`` and matplotlib, saves the queue length over time of
every policy (SVG by the suffix).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import json, resource, sys, time
import numpy as np
sys.path.insert(0, ROOT)
from fastsched.sim.inputs.logs import read_log
from fastsched.sim.log_api import simulate_log
from fastsched.sim.engine.rigid import run_rigid

c = time.process_time(); w = time.perf_counter()
r = read_log(PATH)
jobs = r.jobs[:N] if N else r.jobs
read_cpu, read_wall = time.process_time() - c, time.perf_counter() - w
# the engine alone (the kernel and its face)
c = time.process_time(); w = time.perf_counter()
run_rigid(jobs.submit, jobs.duration, jobs.gpus, nodes=NODES, gpus_per_node=GPUS, policy=POLICY)
engine_cpu, engine_wall = time.process_time() - c, time.perf_counter() - w
# the whole replay: engine, per-job records, summary
c = time.process_time(); w = time.perf_counter()
res = simulate_log(jobs, policy=POLICY, nodes=NODES, gpus=GPUS)
s = res.summary()
replay_cpu, replay_wall = time.process_time() - c, time.perf_counter() - w
out = {
    "policy": POLICY, "jobs": len(jobs), "gpus": NODES * GPUS,
    "read_cpu_s": read_cpu, "read_wall_s": read_wall,
    "engine_cpu_s": engine_cpu, "engine_wall_s": engine_wall,
    "replay_cpu_s": replay_cpu, "replay_wall_s": replay_wall,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "avg_jct_s": s["avg_jct"], "p99_jct_s": s["p99_jct"], "avg_wait_s": s["avg_wait"], "p99_wait_s": s["p99_wait"],
    "utilisation": s["gpu_utilization"], "max_queued": s["max_queued"], "restarts": s["restarts"],
    "events": s["events"], "completed": s["completed"],
}
if PLOT:
    np.savez(PLOT, t=res.event_times, q=res.queued)
print(json.dumps(out))
"""


def child(policy, log, jobs, nodes, gpus, series=None) -> dict:
    code = (
        f"ROOT = {str(ROOT)!r}\nPATH = {str(log)!r}\nN = {jobs}\nNODES = {nodes}\nGPUS = {gpus}\n"
        f"POLICY = {policy!r}\nPLOT = {str(series) if series else ''!r}\n" + _CHILD
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        return {
            "policy": policy,
            "error": out.stderr.strip().splitlines()[-1] if out.stderr else f"exit {out.returncode}",
        }
    return json.loads(out.stdout.strip().splitlines()[-1])


def warm() -> float:
    """Compile (or load) the kernel in a process of its own; return its CPU seconds."""
    code = (
        f"import sys, time\nsys.path.insert(0, {str(ROOT)!r})\nc = time.process_time()\n"
        "from fastsched.sim.engine.rigid import run_rigid\n"
        "run_rigid([0, 1], [5, 5], [1, 2], nodes=1, gpus_per_node=2, policy='fifo')\n"
        "print(time.process_time() - c)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def plot(series: dict, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(9, 3.6))
    for policy, f in series.items():
        d = np.load(f)
        # the largest queue in each of 3,000 bins of time: the figure stays small, no peak is lost
        edges = np.linspace(d["t"][0], d["t"][-1], 3001)
        which = np.clip(np.searchsorted(edges, d["t"], side="right") - 1, 0, 2999)
        peak = np.zeros(3000, np.int64)
        np.maximum.at(peak, which, d["q"])
        ax.step(edges[:-1] / 86400.0, peak, where="post", label=policy, linewidth=0.7)
    ax.set_xlabel("day")
    ax.set_ylabel("jobs waiting (max per bin)")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1_000_000, help="GPU jobs in the synthetic log")
    ap.add_argument("--first", type=int, default=0, help="replay only the first N jobs of it (0: all)")
    ap.add_argument("--nodes", type=int, default=800)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--policies", default="fifo,sjf,backfill,tiresias")
    ap.add_argument("--log", type=Path, default=Path("/tmp/helios_1m.csv"))
    ap.add_argument("--plot", type=Path, help="queue length over time (SVG/PNG by the suffix; needs matplotlib)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from fastsched.sim.inputs.logs import synthetic_log

    if not args.log.exists():
        t = time.perf_counter()
        synthetic_log(args.log, num_jobs=args.jobs, seed=0)
        print(json.dumps({"wrote": str(args.log), "wall_s": time.perf_counter() - t}), flush=True)
    print(json.dumps({"compile_or_load_cpu_s": warm()}), flush=True)
    series = {}
    for policy in args.policies.split(","):
        f = Path(f"/tmp/rigid_queue_{policy}_{args.nodes * args.gpus}.npz") if args.plot else None
        print(json.dumps(child(policy, args.log, args.first, args.nodes, args.gpus, f)), flush=True)
        if f is not None and f.exists():
            series[policy] = f
    if args.plot and series:
        try:
            plot(
                series,
                args.plot,
                f"synthetic Helios log, {args.first or args.jobs:,} jobs on {args.nodes * args.gpus:,} GPUs",
            )
        except ImportError:
            print("no matplotlib: no plot", file=sys.stderr)


if __name__ == "__main__":
    main()
