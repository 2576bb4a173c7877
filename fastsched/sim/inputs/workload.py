"""Workloads: job arrivals in the published CSV format.

``name, time, application, num_replicas, batch_size``: one row per job with a unique name,
its submission time in seconds from the simulation start, the application it runs and the
user-requested GPU count and total batch size (used by the Tiresias and Optimus baselines).
Submission times may be fractional (rounded up to whole seconds); the other numbers are integers. Every error
names the file, the line and the column (``path:line:column: ...``).
"""

from __future__ import annotations

import csv
import math
import numbers
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WorkloadJob", "read_workload", "write_workload", "validate_workload", "WORKLOAD_COLUMNS"]

WORKLOAD_COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")
# Larger sizes are typing mistakes; the bound keeps them in the kernels' 32-bit integers.
_MAX_SIZE = 2**31 - 1
#: Values of the optional ``category`` column.
CATEGORIES = ("adaptive", "scale-gpus", "rigid")


def _problem(field: str, value) -> str | None:
    """Say what is wrong with one (typed) field of a job, or ``None``: the CSV's and the list's rules."""
    if field in ("name", "application"):
        return "must not be empty" if not value.strip() else None
    if field == "time":
        if not math.isfinite(value):
            return f"must be finite, got {value!r}"
        return f"must be >= 0, got {value}" if value < 0 else None
    if field in ("num_replicas", "batch_size"):
        if value < 1:
            return f"must be >= 1, got {value}"
        return f"must be <= {_MAX_SIZE}, got {value}" if value > _MAX_SIZE else None
    if field == "category":
        return None if value is None or value in CATEGORIES else f"must be one of {list(CATEGORIES)}, got {value!r}"
    raise AssertionError(field)


@dataclass(frozen=True)
class WorkloadJob:
    """One job of a workload.

    Attributes
    ----------
    name : str
        Unique job name.
    time : int
        Submission time in whole seconds from the simulation start (>= 0; fractional times in
        a CSV are rounded up).
    application : str
        Name of the application model the job runs.
    num_replicas : int
        Requested GPU count (>= 1).
    batch_size : int
        Requested total batch size (>= 1).
    category : str, optional
        ``adaptive``, ``scale-gpus`` or ``rigid`` (the Sia workloads' optional column);
        ``None`` when absent.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob
    >>> job = WorkloadJob(name="cifar10-0", time=157, application="cifar10", num_replicas=6, batch_size=2048)
    >>> job.application, job.num_replicas
    ('cifar10', 6)
    """

    name: str
    time: int
    application: str
    num_replicas: int
    batch_size: int
    category: str | None = None

    def __post_init__(self):
        # Checked here, so that a list of jobs given to simulate() meets the rules the CSV reader applies.
        if not isinstance(self.name, str):
            raise TypeError(f"WorkloadJob name must be a str, got {self.name!r}")
        who = f"job {self.name!r}"
        if not isinstance(self.application, str):
            raise TypeError(f"{who}: application must be a str, got {self.application!r}")
        if self.category is not None and not isinstance(self.category, str):
            raise TypeError(f"{who}: category must be a str or None, got {self.category!r}")
        t = self.time
        if isinstance(t, bool) or not isinstance(t, numbers.Real):
            raise TypeError(f"{who}: time must be a number of seconds, got {t!r}")
        if isinstance(t, numbers.Integral):
            object.__setattr__(self, "time", int(t))
        elif math.isfinite(t) and t >= 0:
            if t != int(t):
                raise ValueError(f"{who}: time must be whole seconds, got {t!r} (read_workload rounds a CSV's up)")
            object.__setattr__(self, "time", int(t))
        for f in ("num_replicas", "batch_size"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"{who}: {f} must be an integer, got {v!r}")
            object.__setattr__(self, f, int(v))
        for f in ("name", "time", "application", "num_replicas", "batch_size", "category"):
            problem = _problem(f, getattr(self, f))
            if problem is not None:
                raise ValueError(f"{who}: {f} {problem}")


def _number(value: str, what: str, where: str, *, integer: bool) -> int | float:
    """Parse one numeric field: finite, and whole when ``integer`` (whole floats become ints)."""
    try:
        f = float(value)
    except ValueError:
        raise ValueError(f"{where}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(f):
        raise ValueError(f"{where}: {what} must be finite, got {value.strip()!r}")
    if f == int(f):
        return int(f)
    if integer:
        raise ValueError(f"{where}: {what} must be an integer, got {value!r}")
    return f


def read_workload(path) -> list[WorkloadJob]:
    r"""Read a workload CSV.

    Parameters
    ----------
    path : str or path
        CSV with the columns :data:`WORKLOAD_COLUMNS` (extra columns are ignored), UTF-8
        with or without a byte-order mark.

    Returns
    -------
    list of WorkloadJob
        In file order.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        On missing columns, malformed or non-finite values, negative times, non-positive
        sizes, duplicate names or an empty workload; the message starts with
        ``path:line:column``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "w.csv").write_text(
    ...     "name,time,application,num_replicas,batch_size\n"
    ...     "a,0,cifar10,1,128\nb,30.5,ncf,1,32768\n")
    >>> [(j.name, j.time) for j in read_workload(folder / "w.csv")]
    [('a', 0), ('b', 31)]
    >>> _ = (folder / "bad.csv").write_text(
    ...     "name,time,application,num_replicas,batch_size\na,nan,cifar10,1,128\n")
    >>> read_workload(folder / "bad.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...bad.csv:2:2: time must be finite, got 'nan'
    """
    path = Path(path)
    if not path.is_file():
        if path.is_dir():
            raise ValueError(f"{path}: is a folder, not a workload CSV")
        raise FileNotFoundError(f"workload file not found: {path}")
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return _read_rows(path, csv.reader(f))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: malformed CSV: {exc}") from None


def _read_rows(path: Path, reader) -> list[WorkloadJob]:
    header_row = next(reader, None)
    if header_row is None:
        raise ValueError(f"{path}: empty file; a workload needs the header {','.join(WORKLOAD_COLUMNS)}")
    header = [h.strip() for h in header_row]
    missing = [c for c in WORKLOAD_COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"{path}:1: missing column(s) {missing}; a workload needs {list(WORKLOAD_COLUMNS)}, found {header}"
        )
    col = {c: header.index(c) for c in WORKLOAD_COLUMNS}
    cat_col = header.index("category") if "category" in header else None
    jobs = []
    seen = set()
    for row in reader:
        lineno = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue  # blank line
        if len(row) <= max(col.values()):
            raise ValueError(f"{path}:{lineno}: too few fields ({len(row)} of {len(header)})")

        def at(c, lineno=lineno):
            return f"{path}:{lineno}:{col[c] + 1}"

        name = row[col["name"]].strip()
        if _problem("name", name):
            raise ValueError(f"{at('name')}: empty job name")
        if name in seen:
            raise ValueError(f"{at('name')}: duplicate job name {name!r}")
        seen.add(name)
        # Fractional times (the Sia traces' newtrace) round up: the simulator's clock is integral
        # and a job cannot start before it arrives.
        arrival = _number(row[col["time"]], "time", at("time"), integer=False)
        if _problem("time", arrival):
            raise ValueError(f"{at('time')}: time {_problem('time', arrival)}")
        application = row[col["application"]].strip()
        if _problem("application", application):
            raise ValueError(f"{at('application')}: empty application name")
        sizes = {}
        for c in ("num_replicas", "batch_size"):
            sizes[c] = _number(row[col[c]], c, at(c), integer=True)
            if _problem(c, sizes[c]):
                raise ValueError(f"{at(c)}: {c} {_problem(c, sizes[c])}")
        category = None
        if cat_col is not None and cat_col < len(row) and row[cat_col].strip():
            category = row[cat_col].strip()
            if _problem("category", category):
                raise ValueError(f"{path}:{lineno}:{cat_col + 1}: category {_problem('category', category)}")
        time = math.ceil(arrival)
        jobs.append(WorkloadJob(name, time, application, sizes["num_replicas"], sizes["batch_size"], category))
    return validate_workload(jobs, source=path)


def validate_workload(jobs, *, source=None) -> list[WorkloadJob]:
    """Check a whole workload: a non-empty list of :class:`WorkloadJob` with unique names.

    Each job checks its own fields when it is built; this adds what only the list can tell.
    :func:`read_workload` and :func:`fastsched.sim.simulate` (given a list) both call it.

    Parameters
    ----------
    jobs : iterable of WorkloadJob
    source : str or path, optional
        The workload file, for messages.

    Returns
    -------
    list of WorkloadJob

    Raises
    ------
    TypeError
        Not an iterable of WorkloadJob.
    ValueError
        No jobs, or two jobs with one name (a name identifies a job in the simulator's state).

    Examples
    --------
    >>> validate_workload([WorkloadJob("a", 0, "cifar10", 1, 128)])[0].name
    'a'
    >>> validate_workload([WorkloadJob("a", 0, "cifar10", 1, 128), WorkloadJob("a", 10, "ncf", 1, 128)])
    Traceback (most recent call last):
    ...
    ValueError: workload: jobs 0 and 1 have the same name 'a'; job names must be unique
    >>> WorkloadJob("b", -100, "cifar10", 1, 128)
    Traceback (most recent call last):
    ...
    ValueError: job 'b': time must be >= 0, got -100
    """
    where = f"{source}: " if source else "workload: "
    if isinstance(jobs, (str, bytes, WorkloadJob)) or not hasattr(jobs, "__iter__"):
        raise TypeError(f"{where}expected a list of WorkloadJob, got {type(jobs).__name__}")
    jobs = list(jobs)
    if not jobs:
        raise ValueError(f"{where}the workload has no jobs")
    first = {}
    for i, j in enumerate(jobs):
        if not isinstance(j, WorkloadJob):
            raise TypeError(f"{where}job {i} must be a WorkloadJob, got {type(j).__name__}")
        k = first.setdefault(j.name, i)
        if k != i:
            raise ValueError(f"{where}jobs {k} and {i} have the same name {j.name!r}; job names must be unique")
    return jobs


def write_workload(jobs, path) -> None:
    """Write ``jobs`` (WorkloadJob records) as a workload CSV.

    A ``category`` column follows when any job has one (an empty cell: none), so a generated
    workload (:func:`fastsched.sim.inputs.llm_workload.llm_workload`) reads back as it was.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "w.csv"
    >>> write_workload([WorkloadJob("a", 0, "cifar10", 2, 256)], p)
    >>> read_workload(p)
    [WorkloadJob(name='a', time=0, application='cifar10', num_replicas=2, batch_size=256, category=None)]
    """
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        jobs = list(jobs)
        # Written only when used: files of workloads without categories keep the five columns.
        categories = any(getattr(j, "category", None) is not None for j in jobs)
        w.writerow(WORKLOAD_COLUMNS + (("category",) if categories else ()))
        for j in jobs:
            row = [j.name, j.time, j.application, j.num_replicas, j.batch_size]
            w.writerow(row + [j.category or ""] if categories else row)
