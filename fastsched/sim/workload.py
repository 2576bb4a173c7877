"""Workloads: job arrivals in the published CSV format.

``name, time, application, num_replicas, batch_size``: one row per job with a unique name,
its submission time in seconds from the simulation start, the application it runs and the
user-requested GPU count and total batch size (used by the Tiresias and Optimus baselines).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WorkloadJob", "read_workload", "write_workload", "WORKLOAD_COLUMNS"]

WORKLOAD_COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")
#: Values of the optional ``category`` column.
CATEGORIES = ("adaptive", "scale-gpus", "rigid")


@dataclass(frozen=True)
class WorkloadJob:
    """One job of a workload.

    Attributes
    ----------
    name : str
        Unique job name.
    time : int
        Submission time in seconds from the simulation start (>= 0).
    application : str
        Name of the application model the job runs.
    num_replicas : int
        Requested GPU count (>= 1).
    batch_size : int
        Requested total batch size (>= 1).
    category : str, optional
        ``adaptive``, ``scale-gpus`` or ``rigid`` (the Sia workloads' optional column);
        ``None`` when absent.
    """

    name: str
    time: int
    application: str
    num_replicas: int
    batch_size: int
    category: str | None = None


def _as_int(value: str, what: str, where: str) -> int:
    try:
        f = float(value)
    except ValueError:
        raise ValueError(f"{where}: {what} must be a number, got {value!r}") from None
    if f != int(f):
        raise ValueError(f"{where}: {what} must be an integer, got {value!r}")
    return int(f)


def _as_time(value: str, where: str) -> int:
    """Submission time in whole seconds: fractional times (the Sia traces' newtrace) round up,
    since the simulator's clock is integral and a job cannot start before it arrives."""
    try:
        f = float(value)
    except ValueError:
        raise ValueError(f"{where}: time must be a number, got {value!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"{where}: time must be finite, got {value!r}")
    return int(math.ceil(f))


def read_workload(path) -> list[WorkloadJob]:
    """Read a workload CSV.

    Parameters
    ----------
    path : str or path
        CSV with the columns :data:`WORKLOAD_COLUMNS` (extra columns are ignored).

    Returns
    -------
    list of WorkloadJob
        In file order.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        On missing columns, malformed values, negative times, non-positive sizes,
        duplicate names or an empty workload.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"workload file not found: {path}")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in WORKLOAD_COLUMNS if c not in header]
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {missing}; a workload needs {list(WORKLOAD_COLUMNS)}, found {header}"
            )
        reader.fieldnames = header
        jobs = []
        seen = set()
        for lineno, row in enumerate(reader, start=2):
            where = f"{path}:{lineno}"
            if any(row.get(c) is None for c in WORKLOAD_COLUMNS):
                raise ValueError(f"{where}: too few fields")
            name = row["name"].strip()
            if not name:
                raise ValueError(f"{where}: empty job name")
            if name in seen:
                raise ValueError(f"{where}: duplicate job name {name!r}")
            seen.add(name)
            job = WorkloadJob(
                name=name,
                time=_as_time(row["time"], where),
                application=row["application"].strip(),
                num_replicas=_as_int(row["num_replicas"], "num_replicas", where),
                batch_size=_as_int(row["batch_size"], "batch_size", where),
            )
            category = (row.get("category") or "").strip() or None
            if category is not None:
                if category not in CATEGORIES:
                    raise ValueError(f"{where}: category must be one of {list(CATEGORIES)}, got {category!r}")
                job = WorkloadJob(**{**job.__dict__, "category": category})
            if job.time < 0:
                raise ValueError(f"{where}: time must be >= 0, got {job.time}")
            if job.num_replicas < 1 or job.batch_size < 1:
                raise ValueError(f"{where}: num_replicas and batch_size must be >= 1")
            jobs.append(job)
    if not jobs:
        raise ValueError(f"{path}: the workload has no jobs")
    return jobs


def write_workload(jobs, path) -> None:
    """Write ``jobs`` (WorkloadJob records) as a workload CSV."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(WORKLOAD_COLUMNS)
        for j in jobs:
            w.writerow([j.name, j.time, j.application, j.num_replicas, j.batch_size])
