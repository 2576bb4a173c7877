"""Per-job results: one row per job (times in seconds, GPU-seconds by type), as rows, a file or a DataFrame.

The table a researcher compares job by job with another simulator's: ``name``, ``application``,
``category``, ``submit_s``, ``first_start_s`` (when the job first held GPUs; empty if never),
``finish_s`` and ``jct_s`` (empty if unfinished), ``wait_s`` (first start - submission),
``gpu_s`` (GPU-seconds held) and on a cluster of GPU types ``gpu_s_<type>`` per type,
``restarts``, ``epochs``, ``final_gpus`` (GPUs held in the job's last round with GPUs),
``final_gpu_type`` (typed clusters) and ``final_batch_size``. Seconds in the data; every
column of a duration says ``_s``. A rigid-job replay (:class:`~fastsched.sim.results.rigid.RigidResult`)
has no rounds: its first starts and GPUs are its own per-job fields, and its times are float seconds
(written as whole numbers where they are).

Files (:func:`write_jobs`): ``.csv``, its provenance on ``#`` comment lines before the header
(``pandas.read_csv(path, comment="#")``), or ``.parquet`` (needs pyarrow), its provenance in the
file's key-value metadata under ``fastsched.provenance``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import numpy as np

__all__ = [
    "job_columns",
    "job_rows",
    "write_jobs",
    "jobs_frame",
    "summary_frame",
    "jobs_path",
    "jobs_paths",
    "JOB_FORMATS",
]

#: Suffixes :func:`write_jobs` writes.
JOB_FORMATS = (".csv", ".parquet")


def _types(result) -> list:
    if not result.config.get("cluster"):
        return []  # one unnamed GPU type (a policy built for types sees it as "gpu": not the user's)
    by_type = result.config.get("gpus_by_type") or {}
    seen = list(by_type)
    for j in result.jobs:
        for t in j.gpu_seconds_by_type or {}:
            if t not in seen:
                seen.append(t)
    return seen


def job_columns(result) -> list:
    """Return the columns of :func:`job_rows` for ``result`` (``gpu_s_<type>`` on a typed cluster).

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> r = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], policy="fifo", nodes=1, gpus=4)
    >>> job_columns(r)[:8]
    ['name', 'application', 'category', 'submit_s', 'first_start_s', 'finish_s', 'jct_s', 'wait_s']
    """
    typed = [f"gpu_s_{t}" for t in _types(result)]
    head = ["name", "application", "category", "submit_s", "first_start_s", "finish_s", "jct_s", "wait_s"]
    tail = ["restarts", "epochs", "final_gpus", *(["final_gpu_type"] if typed else []), "final_batch_size"]
    return [*head, "gpu_s", *typed, *tail]


def _event_driven(result) -> bool:
    """Tell whether ``result`` is a rigid-job replay: no rounds, float times, first starts and GPUs of its own."""
    return getattr(result, "event_driven", False) is True


def _first_and_final(result):
    """Per job: the time it first held GPUs, and the GPUs it held in its last round with GPUs."""
    n = len(result.jobs)
    if _event_driven(result):  # its allocations stay empty: each job ran once on its recorded GPUs
        started = np.isfinite(result.first_start).tolist()
        first = [t if s else None for t, s in zip(result.first_start.tolist(), started, strict=True)]
        final = [g if s else 0 for g, s in zip(result.gpus.tolist(), started, strict=True)]
        return first, final
    alloc = result.allocations
    first = [None] * n
    final = [0] * n
    if alloc.size == 0 or alloc.shape[0] != result.times.size:
        return first, final
    held = alloc > 0
    any_held = held.any(axis=0)
    first_row = np.argmax(held, axis=0)
    last_row = alloc.shape[0] - 1 - np.argmax(held[::-1], axis=0)
    for j in np.flatnonzero(any_held).tolist():
        # row r: the allocation decided at times[r], held from then on (see SimulationResult)
        first[j] = int(result.times[first_row[j]])
        final[j] = int(alloc[last_row[j], j])
    return first, final


def job_rows(result) -> list:
    """Return one dict per job, in workload order, with the columns of :func:`job_columns`.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> r = simulate([WorkloadJob("a", 0, "cifar10", 2, 256), WorkloadJob("b", 60, "ncf", 1, 256)],
    ...              policy="fifo", nodes=1, gpus=4)
    >>> row = job_rows(r)[0]
    >>> row["name"], row["submit_s"], row["first_start_s"], row["jct_s"] == row["finish_s"] - row["submit_s"]
    ('a', 0, 60, True)
    >>> row["final_gpus"], row["final_batch_size"], row["gpu_s"] > 0
    (2, 256, True)
    """
    first, final = _first_and_final(result)
    sec = float if _event_driven(result) else int  # rounds fall on whole seconds; events need not
    types = _types(result)
    typed = bool(types)
    rows = []
    for i, j in enumerate(result.jobs):
        by_type = j.gpu_seconds_by_type or {}
        row = {
            "name": j.name,
            "application": j.application,
            "category": getattr(j, "category", None),
            "submit_s": sec(j.submission_time),
            "first_start_s": first[i],
            "finish_s": None if j.completion_time is None else sec(j.completion_time),
            "jct_s": j.jct,
            "wait_s": None if first[i] is None else first[i] - sec(j.submission_time),
            "gpu_s": float(j.attained_service),
        }
        for t in types:
            row[f"gpu_s_{t}"] = float(by_type.get(t, 0.0))
        row["restarts"] = int(j.num_restarts)
        row["epochs"] = int(j.epochs)
        row["final_gpus"] = final[i]
        if typed:
            row["final_gpu_type"] = getattr(j, "final_gpu_type", None)
        row["final_batch_size"] = getattr(j, "final_batch_size", None)
        rows.append(row)
    return rows


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, float) and v == int(v) and abs(v) < 2**53:
        return str(int(v))
    return str(v)


def _csv_text(result, provenance) -> str:
    buf = io.StringIO()
    if provenance is not None:
        buf.write("# fastsched per-job results: one row per job, times in seconds (read with comment='#')\n")
        buf.write(f"# provenance: {json.dumps(provenance, sort_keys=True)}\n")
    w = csv.writer(buf, lineterminator="\n")
    columns = job_columns(result)
    w.writerow(columns)
    for row in job_rows(result):
        w.writerow([_cell(row[c]) for c in columns])
    return buf.getvalue()


def _int_times(result) -> tuple:
    """Return the time columns held as integers: all for rounds (whole seconds), none for events."""
    return () if _event_driven(result) else ("submit_s", "first_start_s", "finish_s", "wait_s")


def _arrow_table(result, provenance):
    import pyarrow as pa

    columns = job_columns(result)
    rows = job_rows(result)
    ints = {*_int_times(result), "restarts", "epochs", "final_gpus", "final_batch_size"}
    strings = {"name", "application", "category", "final_gpu_type"}
    arrays = {}
    for c in columns:
        kind = pa.string() if c in strings else (pa.int64() if c in ints else pa.float64())
        arrays[c] = pa.array([r[c] for r in rows], type=kind)
    meta = {b"fastsched.units": b"seconds (columns ending _s); GPU-seconds (gpu_s*)"}
    if provenance is not None:
        meta[b"fastsched.provenance"] = json.dumps(provenance, sort_keys=True).encode()
    return pa.table(arrays).replace_schema_metadata(meta)


def write_jobs(result, path, *, provenance=None) -> None:
    """Write the per-job table of ``result`` to ``path`` (``.csv``, or ``.parquet`` with pyarrow), whole or not at all.

    Parameters
    ----------
    result : SimulationResult
    path : str or path
        The suffix picks the format (:data:`JOB_FORMATS`).
    provenance : dict, optional
        Written with the table: ``#`` comment lines before a CSV's header, key-value metadata
        (``fastsched.provenance``) in a Parquet file. Default: the result's own
        (``result.provenance``), if any.

    Raises
    ------
    ValueError
        An unknown suffix.
    ImportError
        ``.parquet`` without pyarrow (``pip install 'fastsched[frames]'``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> r = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], policy="fifo", nodes=1, gpus=4)
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "jobs.csv"
    >>> write_jobs(r, p, provenance={"command": "fastsched simulate"})
    >>> p.read_text().splitlines()[2].split(",")[:4]
    ['name', 'application', 'category', 'submit_s']
    """
    from pathlib import Path

    from fastsched._atomic import atomic_open, atomic_path

    suffix = Path(path).suffix.lower()
    if suffix not in JOB_FORMATS:
        raise ValueError(f"--jobs {path}: the suffix picks the format: {', '.join(JOB_FORMATS)}")
    if provenance is None:
        provenance = getattr(result, "provenance", None)
    if suffix == ".csv":
        with atomic_open(path) as f:
            f.write(_csv_text(result, provenance))
        return
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            "--jobs FILE.parquet needs pyarrow: pip install 'fastsched[frames]' (or write .csv)"
        ) from None
    table = _arrow_table(result, provenance)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "DataFrames need pandas, an optional extra: pip install 'fastsched[frames]' "
            "(job_rows() gives the same table as a list of dicts)"
        ) from None
    return pd


def jobs_frame(result):
    """Return the per-job table of ``result`` as a pandas DataFrame (one row per job, see :func:`job_rows`).

    Integer columns that may be empty (``first_start_s``, ``finish_s``, ``wait_s``) use pandas'
    nullable ``Int64`` (a rigid-job replay's times stay float). ``frame.attrs["provenance"]`` holds the result's provenance, if any.

    Raises
    ------
    ImportError
        Without pandas (``pip install 'fastsched[frames]'``).

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> r = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], policy="fifo", nodes=1, gpus=4)
    >>> frame = jobs_frame(r)  # doctest: +SKIP
    >>> frame.loc[0, "jct_s"] == r.jobs[0].jct  # doctest: +SKIP
    True
    """
    pd = _pandas()
    frame = pd.DataFrame(job_rows(result), columns=job_columns(result))
    for c in (*_int_times(result), "restarts", "epochs", "final_gpus"):
        frame[c] = frame[c].astype("Int64")
    frame["final_batch_size"] = frame["final_batch_size"].astype("Int64")
    if getattr(result, "provenance", None) is not None:
        frame.attrs["provenance"] = result.provenance
    return frame


def summary_frame(results):
    """Return the summaries of one result or several (a comparison) as a DataFrame, one row each.

    Columns are :meth:`SimulationResult.summary`'s keys (seconds in the data, as named there);
    the provenance goes to ``frame.attrs["provenance"]`` (a list, one per row), not a column.

    Raises
    ------
    ImportError
        Without pandas (``pip install 'fastsched[frames]'``).

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> r = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], policy="fifo", nodes=1, gpus=4)
    >>> summary_frame(r).loc[0, "policy"]  # doctest: +SKIP
    'fifo'
    """
    from fastsched import _provenance

    pd = _pandas()
    results = [results] if not isinstance(results, (list, tuple)) else list(results)
    rows, prov = [], []
    for r in results:
        s = dict(r.summary())
        prov.append(s.pop(_provenance.KEY, None))
        rows.append(s)
    frame = pd.DataFrame(rows)
    frame.attrs["provenance"] = prov
    return frame


def jobs_path(path, policy, several: bool) -> str:
    """Return where ``policy``'s per-job table goes (``--jobs``): ``path``, or ``STEM-<policy>SUFFIX`` for several.

    Examples
    --------
    >>> jobs_path("out/jobs.csv", "sia", False), jobs_path("out/jobs.csv", "my_mod:Fifo", True)
    ('out/jobs.csv', 'out/jobs-my_mod-Fifo.csv')
    """
    if not several:
        return str(path)
    p = Path(path)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(policy)).strip("-") or "policy"
    return str(p.with_name(f"{p.stem}-{safe}{p.suffix}"))


def jobs_paths(path, policies) -> list:
    """Return where each of ``policies`` writes its per-job table, after checking ``path``'s format.

    Raises
    ------
    ValueError
        The suffix is not one of :data:`JOB_FORMATS`, or ``.parquet`` without pyarrow.

    Examples
    --------
    >>> jobs_paths("jobs.csv", ["fifo", "sjf"])
    ['jobs-fifo.csv', 'jobs-sjf.csv']
    >>> jobs_paths("jobs.txt", ["fifo"])
    Traceback (most recent call last):
    ...
    ValueError: --jobs jobs.txt: the suffix picks the format: .csv, .parquet
    """
    import importlib.util

    suffix = Path(path).suffix.lower()
    if suffix not in JOB_FORMATS:
        raise ValueError(f"--jobs {path}: the suffix picks the format: {', '.join(JOB_FORMATS)}")
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ValueError("--jobs FILE.parquet needs pyarrow: pip install 'fastsched[frames]' (or write .csv)")
    return [jobs_path(path, p, len(policies) > 1) for p in policies]
