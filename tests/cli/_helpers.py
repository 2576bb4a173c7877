"""Small inputs shared by the command-line tests."""

from __future__ import annotations

from pathlib import Path

HEADER = "name,time,application,num_replicas,batch_size\n"
# Two small jobs of builtin applications: a few dozen rounds under Tiresias on 2 x 4 GPUs.
TINY = HEADER + "ncf-2,255,ncf,1,32768\nyolov3-8,954,yolov3,4,64\n"


def write(folder: Path, name: str, text: str) -> str:
    """Write ``text`` to ``folder/name``; return the path as a string."""
    p = folder / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(p)


def tiny_args(workload: str) -> list:
    """Arguments of a quick ``fastsched simulate`` run of ``workload``."""
    return ["simulate", workload, "--policy", "tiresias", "--nodes", "2", "--gpus", "4", "-q"]


def listing(folder: Path) -> list:
    """Names in ``folder`` (to check that no temporary file was left behind)."""
    return sorted(p.name for p in folder.iterdir())


def record_and_stop(calls: list):
    """A stand-in for ``Cluster.step`` that records the call and stops the run (no round must run)."""

    def step(*args):
        calls.append(1)
        raise RuntimeError("the first round started")

    return step
