"""Read a production cluster log (Philly, Helios, Alibaba PAI or Slurm ``sacct``) into one record type.

:func:`read_log` tells the format from the file's first bytes (:func:`detect_format`; ``format=``
overrides), reads it a chunk at a time, checks every row (a malformed one raises, naming the
file, line and field; or, with ``on_error="drop"``, is counted and left out), filters and says
what it dropped and why.
"""

from __future__ import annotations

from pathlib import Path

from fastsched.sim.inputs.logs._detect import LOG_FORMATS, detect_format
from fastsched.sim.inputs.logs._finish import check_filters, finish
from fastsched.sim.inputs.logs._parse import Problems
from fastsched.sim.inputs.logs._records import LogRead

__all__ = ["read_log", "detect_format", "LOG_FORMATS"]


def _pai_files(path: Path):
    """(job table, task table or None) for a PAI folder or a ``pai_job_table*.csv``."""
    if path.is_dir():
        return path / "pai_job_table.csv", path / "pai_task_table.csv"
    sibling = path.with_name(path.name.replace("pai_job_table", "pai_task_table"))
    return path, (sibling if sibling != path and sibling.exists() else None)


def read_log(
    path,
    format=None,
    *,
    window=None,
    vcs=None,
    states="finished",
    gpu_only=True,
    tasks=None,
    on_error="raise",
) -> LogRead:
    r"""Read a production log's jobs, filtered, with the count of every job left out and why.

    Parameters
    ----------
    path : str or path
        The log: Philly ``cluster_job_log`` (JSON), Helios ``cluster_log.csv``, PAI
        ``pai_job_table.csv`` (or the folder holding it and ``pai_task_table.csv``), or the
        output of ``sacct --parsable2`` with a header row.
    format : {"philly", "helios", "pai", "slurm"}, optional
        Overrides :func:`detect_format`.
    window : (float, float), optional
        Keep jobs submitted in ``[start, end)`` seconds after the log's first submission.
    vcs : str or collection of str, optional
        Keep jobs of these virtual clusters (Slurm: partitions).
    states : "finished", "completed" or collection of str
        Final states kept: every final state (default: a cancelled or failed job also held
        its GPUs for its recorded time), only ``completed``, or any of
        :data:`~fastsched.sim.inputs.logs.FINISHED_STATES`.
    gpu_only : bool
        Drop jobs that used no GPU (default).
    tasks : str or path, optional
        PAI only: ``pai_task_table.csv`` when it is not beside the job table.
    on_error : {"raise", "drop"}
        A malformed row raises ``ValueError`` (default), or is counted as ``"malformed row"``
        with its message kept in :attr:`LogRead.errors` (the first ten).

    Returns
    -------
    LogRead
        ``jobs`` (a :class:`~fastsched.sim.inputs.logs.LogJobs`, submission times from the
        first kept one), ``dropped`` (reason -> count), ``format``, ``origin``, ``rows``.

    Raises
    ------
    FileNotFoundError
        The log (or PAI's task table) is missing.
    ValueError
        A malformed row or header: ``path:line:column: field ...``.
    TypeError
        A filter of the wrong type (the message names it).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "cluster_log.csv"
    >>> _ = p.write_text(
    ...     "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
    ...     "1,u1,vcA,8,16,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 19:41:01,3600,0\n"
    ...     "2,u2,vcA,0,4,1,COMPLETED,2020-06-09 18:42:00,2020-06-09 18:42:00,2020-06-09 18:43:00,60,0\n"
    ...     "3,u1,vcB,2,8,1,FAILED,2020-06-09 18:45:01,2020-06-09 18:46:01,2020-06-09 18:50:01,240,60\n")
    >>> r = read_log(p)
    >>> r.format, len(r.jobs), r.dropped
    ('helios', 2, {'no GPUs': 1})
    >>> [(j.name, j.submit, j.duration, j.gpus, j.state) for j in r.jobs]
    [('1', 0.0, 3600.0, 8, 'completed'), ('3', 240.0, 240.0, 2, 'failed')]
    >>> read_log(p, states="completed", vcs=["vcA"]).dropped
    {'state not kept': 1, 'no GPUs': 1}
    """
    path = Path(path)
    filters = check_filters(window, vcs, states, gpu_only)
    if format is None:
        format = detect_format(path)
    elif format not in LOG_FORMATS:
        raise ValueError(f"format must be one of {list(LOG_FORMATS)}, got {format!r}")
    if tasks is not None and format != "pai":
        raise ValueError(f"tasks= is for PAI logs only, not {format}")
    problems = Problems(on_error)
    if format == "helios":
        from fastsched.sim.inputs.logs.helios import read_helios_raw

        raw, drops, end_at = read_helios_raw(path, problems)
    elif format == "slurm":
        from fastsched.sim.inputs.logs.slurm import read_slurm_raw

        raw, drops, end_at = read_slurm_raw(path, problems)
    elif format == "philly":
        from fastsched.sim.inputs.logs.philly import read_philly_raw

        raw, drops, end_at = read_philly_raw(path, problems)
    else:
        from fastsched.sim.inputs.logs.pai import read_pai_raw

        jobs_path, task_path = _pai_files(path)
        if tasks is not None:
            task_path = Path(tasks)
        if task_path is None:
            raise FileNotFoundError(
                f"{path}: a PAI log needs pai_task_table.csv (GPUs, run times) beside it, or pass tasks="
            )
        raw, drops, end_at = read_pai_raw(jobs_path, task_path, problems)
    if problems.count:
        drops["malformed row"] += problems.count
    return finish(raw, drops, problems, format, path, filters, end_at=end_at)
