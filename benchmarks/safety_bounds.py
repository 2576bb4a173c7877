"""Floor check of issue 28.6: every command given a count of 10**12 works in <= 5 s or refuses in <= 1 s, <= 500 MB.

Each case is a fresh ``fastsched`` process; its wall time and peak memory (``ru_maxrss``) are
measured side by side with a baseline command refused for a trivially bad argument
(``simulate --nodes 0``), cases interleaved over the repetitions, and reported as medians and
as the ratio to the baseline's median: a process start (imports) dominates both, so the
ratio says what the count itself costs. Not a timed test; run it by hand::

    python benchmarks/safety_bounds.py --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIG = 10**12
WORKLOAD = "name,time,application,num_replicas,batch_size\nncf-0,0,ncf,1,32768\n"
MODEL = {"layers": 24, "hidden": 2304, "heads": 24, "seq": 2048, "vocab": 51200, "global_batch": 512}


def _files(d: Path) -> dict:
    (d / "w.csv").write_text(WORKLOAD)
    (d / "c.toml").write_text(f'[[group]]\ntype = "aws"\ncount = {BIG}\n')
    for name, extra in (("seeds", {"seeds": BIG}), ("nodes", {"nodes": BIG}), ("plain", {})):
        (d / f"sweep-{name}.json").write_text(json.dumps({"workloads": "w.csv", "policy": "tiresias", **extra}))
    (d / "batch.json").write_text(json.dumps({**MODEL, "global_batch": 10**15}))
    (d / "layers.json").write_text(json.dumps({**MODEL, "layers": 10**9}))
    (d / "model.json").write_text(json.dumps(MODEL))
    return {
        "baseline: simulate --nodes 0": ["simulate", "w.csv", "--nodes", "0", "-q"],
        "simulate --cluster 10**12xaws": ["simulate", "w.csv", "--cluster", f"{BIG}xaws", "-q"],
        "simulate --cluster TOML count=10**12": ["simulate", "w.csv", "--cluster", "c.toml", "-q"],
        "simulate --nodes 10**12": ["simulate", "w.csv", "--nodes", str(BIG), "-q"],
        "simulate --max-nodes 10**12": ["simulate", "w.csv", "--max-nodes", str(BIG), "-q"],
        "simulate --interval 10**12": ["simulate", "w.csv", "--interval", str(BIG), "-q"],
        "sweep seeds: 10**12": ["sweep", "sweep-seeds.json", "--serial", "-q", "--output", "o1"],
        "sweep nodes: 10**12": ["sweep", "sweep-nodes.json", "--serial", "-q", "--output", "o2"],
        "sweep --workers 10**12": ["sweep", "sweep-plain.json", "-q", "--workers", str(BIG), "--output", "o3"],
        "plan global_batch=10**15": ["plan", "batch.json", "--gpus", "64", "--top", "1"],
        "plan layers=10**9": ["plan", "layers.json", "--gpus", "64", "--top", "1"],
        "plan --gpus 10**12": ["plan", "model.json", "--gpus", str(BIG), "--top", "1"],
        "cost --microbatches 10**12": [
            "cost",
            str(Path(__file__).resolve().parents[2] / "shared" / "paddle-cases" / "pp_tfm_L16_S2.json"),
            "--microbatches",
            str(BIG),
        ],
    }


def _one(argv, cwd) -> tuple[int, float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fastsched", *argv], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_maxrss / 1024  # MiB


def main(argv=None) -> int:
    """Run every case ``--repeat`` times, interleaved; print a markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cases = _files(Path(tmp))
        walls = {k: [] for k in cases}
        mems = {k: [] for k in cases}
        codes = {k: set() for k in cases}
        for _ in range(args.repeat):
            for name, command in cases.items():
                rc, wall, mem = _one(command, tmp)
                walls[name].append(wall)
                mems[name].append(mem)
                codes[name].add(rc)
    base = statistics.median(walls["baseline: simulate --nodes 0"])
    print(f"| case | exit | median wall s | ratio to baseline | peak MiB (max of {args.repeat}) |")
    print("|---|---|---|---|---|")
    for name in cases:
        w = statistics.median(walls[name])
        rc = ",".join(str(c) for c in sorted(codes[name]))
        print(f"| {name} | {rc} | {w:.2f} | {w / base:.2f} | {max(mems[name]):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
