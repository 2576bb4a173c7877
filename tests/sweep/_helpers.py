"""Shared pieces of the sweep tests (importable by dask worker processes)."""

from __future__ import annotations

import time
from pathlib import Path

HEADER = "name,time,application,num_replicas,batch_size\n"
# Tiny workloads of builtin applications: a few small jobs, fast under Tiresias on 2 x 4 GPUs.
WORKLOAD_A = HEADER + "ncf-2,255,ncf,1,32768\nyolov3-8,954,yolov3,4,64\nncf-16,2295,ncf,1,32768\n"
WORKLOAD_B = HEADER + "ncf-17,2383,ncf,1,32768\nncf-33,4810,ncf,1,32768\nncf-34,5160,ncf,1,32768\n"


def write_workloads(folder: Path) -> tuple[str, str]:
    """Write the two tiny workloads into ``folder``; return their paths."""
    a, b = folder / "a.csv", folder / "b.csv"
    a.write_text(WORKLOAD_A)
    b.write_text(WORKLOAD_B)
    return str(a), str(b)


def small_spec(folder: Path, **extra) -> dict:
    """2 workloads x 2 intervals x 2 seeds of tiny Tiresias simulations."""
    a, b = write_workloads(folder)
    spec = {
        "workloads": [a, b],
        "interval": [30, 60],
        "seeds": 2,
        "seed": 7,
        "policy": "tiresias",
        "nodes": 2,
        "gpus": 4,
        "max_time": 20000,
    }
    spec.update(extra)
    return spec


def slow_simulate(**kwargs):
    """``simulate`` that first sleeps, so that a test can kill a worker mid-task."""
    from fastsched.sim import simulate

    time.sleep(0.6)
    return simulate(**kwargs)


def comparable(rows):
    """Rows without the fields that legitimately differ between executions (wall time)."""
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]
