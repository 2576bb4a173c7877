"""Tiny hand-made two-type traces: application 'toy' measured on a 'slow' and a 'fast' GPU type.

The fast type runs every step in half the time of the slow one (same sync time), and accepts
per-GPU batches up to 16 instead of 8. Nodes hold 2 GPUs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fastsched.sim.inputs.workload import WorkloadJob

# (placement, local_bsz, step_time, sync_time) on the slow type.
SLOW = [
    ("1", 4, 1.0, 0.0),
    ("1", 8, 2.0, 0.0),
    ("2", 4, 1.5, 0.5),
    ("2", 8, 2.5, 0.5),
    ("11", 4, 2.0, 1.0),
    ("11", 8, 3.0, 1.0),
    ("12", 4, 2.5, 1.5),
    ("12", 8, 3.5, 1.5),
    ("22", 4, 3.0, 2.0),
    ("22", 8, 4.0, 2.0),
]


def _fast_rows():
    rows = [(p, b, (st - sy) / 2 + sy, sy) for p, b, st, sy in SLOW]
    rows += [(p, 16, 2 * ((st - sy) / 2) + sy, sy) for p, b, st, sy in SLOW if b == 8]
    return rows


def _write(path: Path, header: str, rows) -> None:
    path.write_text(header + "\n" + "".join(",".join(str(x) for x in r) + "\n" for r in rows))


def write_two_type_traces(root: Path, plain=True) -> Path:
    """Folder ``root/toy`` with ``placements-{slow,fast}.csv`` (and plain ``placements.csv`` = slow)."""
    app = root / "toy"
    app.mkdir(parents=True, exist_ok=True)
    scal = [(3, 6, 4, 4.0, 3.0), (3, 6, 8, 5.0, 3.0), (3, 3, 4, 3.0, 2.0), (3, 3, 8, 4.0, 2.0)]
    tables = {"slow": SLOW, "fast": _fast_rows()}
    for t, rows in tables.items():
        _write(
            app / f"placements-{t}.csv",
            "placement,local_bsz,step_time,sync_time",
            [(p, b, s, y) for p, b, s, y in rows],
        )
        srows = scal if t == "slow" else [(n, r, b, (st - sy) / 2 + sy, sy) for n, r, b, st, sy in scal]
        _write(app / f"scalability-{t}.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time", srows)
    if plain:
        _write(app / "placements.csv", "placement,local_bsz,step_time,sync_time", SLOW)
        _write(app / "scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time", scal)
    # Three epochs of about 300 s each on one slow GPU.
    (app / "validation-4.csv").write_text(
        "progress,iteration,metric,grad_sqr,grad_var\n300.0,300,0.5,1.0,1.0\n600.0,600,0.6,1.0,2.0\n"
        "900.0,900,0.7,1.0,3.0\n"
    )
    (app / "validation-32.csv").write_text(
        "progress,iteration,metric,grad_sqr,grad_var\n360.0,60,0.4,3.0,5.0\n540.0,120,0.65,3.0,6.0\n"
        "990.0,180,0.8,3.0,7.0\n"
    )
    return app


@pytest.fixture
def two_type_traces(tmp_path):
    """Folder holding the two-type 'toy' application."""
    write_two_type_traces(tmp_path)
    return tmp_path


def toy_workload(n=6, spacing=40, replicas=2, batch=8):
    """``n`` toy jobs arriving every ``spacing`` seconds."""
    return [WorkloadJob(f"toy-{i}", i * spacing, "toy", replicas, batch) for i in range(n)]
