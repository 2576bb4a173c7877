"""Tell a production log's format from its first bytes (light: imported before the engine, by the command line)."""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["detect_format", "LOG_FORMATS"]

#: Formats :func:`read_log` reads.
LOG_FORMATS = ("philly", "helios", "pai", "slurm")

_PAI_JOB_HEADER = ["job_name", "inst_id", "user", "status", "start_time", "end_time"]
_PAI_STATUSES = {"Terminated", "Failed", "Running", "Waiting"}


def detect_format(path) -> str:
    r"""Tell a log's format from its first bytes.

    * ``philly``: JSON (the first character is ``[`` or ``{``): ``cluster_job_log``;
    * ``slurm``: a ``|``-separated header naming ``JobID`` (``sacct --parsable2``);
    * ``helios``: a CSV header with ``job_id``, ``gpu_num`` and ``submit_time``;
    * ``pai``: a folder holding ``pai_job_table.csv``, or a CSV whose header or first row is
      ``pai_job_table``'s six columns (the published files have no header row).

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        None of these; the message lists what each format starts with.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.txt"
    >>> _ = p.write_text("JobID|JobName|State|Submit|Start|End|AllocTRES\n")
    >>> detect_format(p)
    'slurm'
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"log file not found: {path}")
    if path.is_dir():
        if (path / "pai_job_table.csv").is_file():
            return "pai"
        raise ValueError(f"{path}: a folder is read only as a PAI log (with pai_job_table.csv and pai_task_table.csv)")
    with open(path, "rb") as f:
        head = f.read(4096)
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if text[:1] in ("[", "{"):
        return "philly"
    first = text.splitlines()[0] if text else ""
    if "|" in first and "jobid" in first.lower().replace(" ", ""):
        return "slurm"
    cells = next(csv.reader([first]), [])
    names = [c.strip() for c in cells]
    if {"job_id", "gpu_num", "submit_time"} <= set(names):
        return "helios"
    if names == _PAI_JOB_HEADER or path.name.startswith("pai_job_table"):
        return "pai"
    if len(names) == 6 and names[3] in _PAI_STATUSES:
        return "pai"
    raise ValueError(
        f"{path}: cannot tell the log format from its first line {first[:80]!r}: expected Philly JSON "
        "('[' or '{'), a Slurm sacct --parsable2 header (JobID|...), a Helios header (job_id,...,gpu_num,...,"
        "submit_time,...) or PAI's pai_job_table columns; pass format= one of " + ", ".join(LOG_FORMATS)
    )
