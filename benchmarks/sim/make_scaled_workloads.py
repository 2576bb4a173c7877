"""Load-scaled Pollux workloads (0.5x, 1.5x, 2x) drawn like the shared 160-job ones.

The Pollux artifact evaluates its simulator on workloads of 80, 240 and 320 jobs submitted
over the same 8-hour window as the 160-job ones; those files are not in ../shared. This
script builds stand-ins from the shared files themselves. Each row of a shared workload is
one independent draw of the artifact's generator (a Philly job: its time of day, and an
application chosen by its GPU time, with a tuned (GPUs, batch)); the eight files use
different seeds. So any subset chosen without looking at the rows is again a sample of the
generator: for load ``s`` and workload ``k`` the stand-in holds ``round(160 s)`` rows taken
from workload ``k``, then ``k + 1``, ... (cyclically), each file's rows in a seeded random
order, all rows keeping their times (0.5x: half of workload k; 1.5x: workload k and half of
k + 1; 2x: k and k + 1). Busy and quiet hours and the job mix follow the generator.
``--uniform`` gives the earlier stand-ins instead: (application, GPUs, batch) drawn from
the pooled rows of workloads 1-8, times uniform over the window (no busy hours).
Seeded either way: the same files every run. Writes ``OUT/workloads-<s>/workload-<k>.csv``;
the files are derived data, keep them out of the repository.

Usage::

    python benchmarks/sim/make_scaled_workloads.py ../shared/pollux-traces/workloads OUT
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

LOADS = (0.5, 1.5, 2.0)


def read_rows(workloads: Path) -> tuple[list[dict], int]:
    rows, last = [], 0
    for k in range(1, 9):
        with open(workloads / f"workload-{k}.csv", newline="") as f:
            for row in csv.DictReader(f):
                rows.append(row)
                last = max(last, int(row["time"]))
    return rows, last


def draw_subset(files: list[list[dict]], load: float, k: int) -> list[dict]:
    """Rows of workload ``k``, ``k + 1``, ... (seeded random order within each file)."""
    rng = np.random.default_rng([k, int(round(load * 10))])
    n = int(round(160 * load))
    chosen: list[dict] = []
    j = k - 1
    while len(chosen) < n:
        rows = files[j % len(files)]
        order = rng.permutation(len(rows))[: n - len(chosen)]
        chosen.extend(rows[i] for i in sorted(order.tolist()))
        j += 1
    chosen.sort(key=lambda r: int(r["time"]))  # stable: ties keep file order
    return [dict(r, name=f"{r['application']}-{i}") for i, r in enumerate(chosen)]


def draw(rows: list[dict], window: int, load: float, k: int) -> list[dict]:
    rng = np.random.default_rng([k, int(round(load * 10))])
    n = int(round(160 * load))
    times = np.sort(rng.integers(0, window + 1, n))
    picks = rng.integers(0, len(rows), n)
    out = []
    for i, (t, p) in enumerate(zip(times.tolist(), picks.tolist(), strict=True)):
        row = rows[p]
        app = row["application"]
        out.append(
            {
                "name": f"{app}-{i}",
                "time": t,
                "application": app,
                "num_replicas": row["num_replicas"],
                "batch_size": row["batch_size"],
            }
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", type=Path, help="folder with workload-1.csv ... workload-8.csv")
    ap.add_argument("out", type=Path)
    ap.add_argument("--uniform", action="store_true", help="pooled jobs at uniform times (the earlier stand-ins)")
    args = ap.parse_args(argv)
    rows, window = read_rows(args.workloads)
    files = []
    for k in range(1, 9):
        with open(args.workloads / f"workload-{k}.csv", newline="") as f:
            files.append(list(csv.DictReader(f)))
    for load in LOADS:
        folder = args.out / f"workloads-{load:g}"
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(1, 9):
            jobs = draw(rows, window, load, k) if args.uniform else draw_subset(files, load, k)
            with open(folder / f"workload-{k}.csv", "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=["name", "time", "application", "num_replicas", "batch_size"])
                w.writeheader()
                w.writerows(jobs)
        print(f"wrote {folder} (8 x {len(jobs)} jobs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
