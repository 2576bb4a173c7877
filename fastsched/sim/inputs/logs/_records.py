"""The record every log reader returns: one job per row, as read-only numpy columns.

A production log says, per job, when it was submitted, how long it ran on how many GPUs and
how it ended. The four readers (Philly, Helios, PAI, Slurm) map their own schemas onto the
columns of :class:`LogJobs`; the filters and the drop counts are shared (:mod:`._finish`).

Final states are normalised to Slurm's lower-case names (:data:`FINISHED_STATES`); states of
jobs still queued or running when the log was cut are :data:`UNFINISHED_STATES`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "LogJob",
    "LogJobs",
    "LogRead",
    "FINISHED_STATES",
    "UNFINISHED_STATES",
    "DROP_REASONS",
]

#: Final states a job can end in (Slurm's vocabulary, lower case). Philly's ``Pass``/``Killed``/
#: ``Failed`` and PAI's ``Terminated``/``Failed`` map onto the first three.
FINISHED_STATES = (
    "completed",
    "cancelled",
    "failed",
    "timeout",
    "node_fail",
    "out_of_memory",
    "preempted",
    "deadline",
    "boot_fail",
)
#: States of a job that had not ended when the log was taken (dropped as ``"unfinished"``).
UNFINISHED_STATES = ("pending", "running", "suspended", "requeued", "resizing", "completing")

#: Why a reader leaves a job out, in the order the reasons are tested (a job counts once, under
#: the first reason that applies).
DROP_REASONS = (
    "job step",  # Slurm: a step (123.batch, 123.0) of a job, not a job
    "no tasks",  # PAI: a job with no row in the task table
    "orphan task",  # PAI: a task row whose job is not in the job table (a row, not a job)
    "malformed row",  # only with on_error="drop": a row that would have raised
    "unfinished",  # still pending/running, or no end time
    "never started",  # ended without ever running (no start time / no attempt)
    "outside window",
    "state not kept",
    "other virtual cluster",
    "no GPUs",
)

# Column name -> dtype of the arrays of LogJobs; object columns hold Python str.
_COLUMNS = {
    "name": object,
    "submit": np.float64,
    "duration": np.float64,
    "gpus": np.int32,
    "nodes": np.int32,
    "gpu_type": object,
    "state": object,
    "vc": object,
    "user": object,
    "queued": np.float64,
}


def _scalar(v):
    """Return a numpy scalar as the Python number it holds (object columns already hold str)."""
    return v.item() if isinstance(v, np.generic) else v


class LogJob(NamedTuple):
    """One job of a production log.

    Attributes
    ----------
    name : str
        The job's id in the log (Philly ``jobid``, Helios ``job_id``, PAI ``job_name``, Slurm
        ``JobID``), so that results can be joined back to the log.
    submit : float
        Submission time, seconds after the first kept job's submission.
    duration : float
        Recorded run time in seconds (start of the first run to the end of the last).
    gpus : int
        GPUs the job ran on (0 for a CPU job).
    nodes : int
        Machines it ran on; 0 where the log does not record it (PAI).
    gpu_type : str
        GPU model where the log names one (PAI ``gpu_type``, Slurm ``gres/gpu:TYPE``), else ``""``.
    state : str
        Final state, one of :data:`FINISHED_STATES`.
    vc : str
        Virtual cluster (Philly/Helios ``vc``, Slurm partition), ``""`` where there is none.
    user : str
        The (hashed) user.
    queued : float
        Recorded wait from submission to first start, seconds.

    Examples
    --------
    >>> job = LogJob("j1", 0.0, 3600.0, 8, 1, "", "completed", "vc1", "u1", 12.0)
    >>> job.gpus * job.duration / 3600  # GPU-hours
    8.0
    """

    name: str
    submit: float
    duration: float
    gpus: int
    nodes: int
    gpu_type: str
    state: str
    vc: str
    user: str
    queued: float


class LogJobs:
    """The jobs of a log as read-only numpy columns, sorted by submission time.

    Not a namedtuple, although it is a bundle of arrays: ``len(jobs)`` is the number of jobs
    and ``jobs[i]`` one :class:`LogJob`, which a tuple's length and indexing would contradict.
    The columns are the fields of :class:`LogJob`: ``submit``, ``duration``, ``queued``
    (float64 seconds), ``gpus``, ``nodes`` (int32) and ``name``, ``gpu_type``, ``state``,
    ``vc``, ``user`` (object arrays of str). A rigid-job engine takes ``submit``,
    ``duration`` and ``gpus`` as they are.

    Examples
    --------
    >>> jobs = LogJobs.from_rows([LogJob("a", 0.0, 60.0, 1, 1, "", "completed", "", "u", 0.0),
    ...                           LogJob("b", 5.0, 30.0, 4, 1, "", "failed", "", "u", 2.0)])
    >>> len(jobs), jobs.gpus.dtype.name, float(jobs.duration.sum())
    (2, 'int32', 90.0)
    >>> jobs[1].name, [j.state for j in jobs]
    ('b', ['completed', 'failed'])
    >>> jobs[jobs.gpus > 1].name.tolist()
    ['b']
    """

    __slots__ = tuple(_COLUMNS)

    def __init__(self, **columns):
        missing = set(_COLUMNS) - set(columns)
        extra = set(columns) - set(_COLUMNS)
        if missing or extra:
            raise TypeError(
                f"LogJobs needs the columns {list(_COLUMNS)}; missing {sorted(missing)}, extra {sorted(extra)}"
            )
        n = None
        for col, dtype in _COLUMNS.items():
            a = np.array(columns[col], dtype=dtype)  # a copy, so that freezing it leaves the caller's alone
            if a.ndim != 1:
                raise ValueError(f"LogJobs column {col} must be 1-D, got shape {a.shape}")
            if n is None:
                n = a.size
            elif a.size != n:
                raise ValueError(f"LogJobs column {col} has {a.size} rows, the others {n}")
            a.flags.writeable = False
            object.__setattr__(self, col, a)

    def __setattr__(self, name, value):
        raise AttributeError("LogJobs is read-only")

    @classmethod
    def _own(cls, **columns) -> LogJobs:
        """Take fresh arrays of the right dtypes without copying them (a reader's own; frozen here)."""
        self = object.__new__(cls)
        for col, dtype in _COLUMNS.items():
            a = np.asarray(columns[col], dtype=dtype)
            a.flags.writeable = False
            object.__setattr__(self, col, a)
        return self

    @classmethod
    def from_rows(cls, rows) -> LogJobs:
        """Build from an iterable of :class:`LogJob` (or tuples in its field order)."""
        rows = [LogJob(*r) for r in rows]
        return cls(**{c: [getattr(r, c) for r in rows] for c in _COLUMNS})

    @classmethod
    def empty(cls) -> LogJobs:
        """No jobs."""
        return cls(**{c: [] for c in _COLUMNS})

    def __len__(self) -> int:
        return self.submit.size

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            return LogJob(*(_scalar(getattr(self, c)[index]) for c in _COLUMNS))
        return LogJobs(**{c: getattr(self, c)[index] for c in _COLUMNS})

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other):
        if not isinstance(other, LogJobs):
            return NotImplemented
        return all(np.array_equal(getattr(self, c), getattr(other, c)) for c in _COLUMNS)

    __hash__ = None

    def __getstate__(self):
        return {c: getattr(self, c) for c in _COLUMNS}

    def __setstate__(self, state):
        for c in _COLUMNS:
            a = np.array(state[c], dtype=_COLUMNS[c])
            a.flags.writeable = False
            object.__setattr__(self, c, a)

    def __repr__(self) -> str:
        gpus = int(self.gpus.sum()) if len(self) else 0
        return f"LogJobs({len(self)} jobs, {gpus} GPUs requested in all)"


class LogRead(NamedTuple):
    """What :func:`~fastsched.sim.inputs.logs.read_log` returns.

    Attributes
    ----------
    jobs : LogJobs
        The kept jobs, sorted by submission time (ties in file order).
    dropped : dict
        Reason (:data:`DROP_REASONS`) -> number of jobs left out, only reasons that occurred.
    format : str
        ``"philly"``, ``"helios"``, ``"pai"`` or ``"slurm"``.
    origin : float
        Absolute time of ``submit == 0`` (the first kept submission), seconds since the Unix
        epoch as the log states it (PAI's times are shifted by an unknown constant); NaN when
        no job is kept.
    rows : int
        Records read: ``len(jobs) + sum(dropped.values())`` (jobs, Slurm step rows, PAI task
        rows of no listed job).
    errors : tuple of str
        With ``on_error="drop"``: the first messages of malformed rows (their count is
        ``dropped["malformed row"]``); empty otherwise.

    Examples
    --------
    >>> r = LogRead(LogJobs.empty(), {"no GPUs": 3}, "helios", float("nan"), 3, ())
    >>> r.rows == len(r.jobs) + sum(r.dropped.values())
    True
    """

    jobs: LogJobs
    dropped: dict
    format: str
    origin: float
    rows: int
    errors: tuple = ()
