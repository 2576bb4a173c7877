"""A sweep's output folder: the streamed run log, the final tables, resuming from them.

``runs.jsonl`` gets one JSON line per finished run, flushed as it arrives, so an
interrupted sweep loses at most the runs in flight; re-running into the same folder skips
the runs logged there without an error. ``runs.csv``, ``runs.json``, ``summary.csv`` and
``spec.json`` are written through temporary files renamed into place (see
:mod:`fastsched._atomic`).

A folder is a sweep's when it holds a ``runs.jsonl`` that is empty or starts with a run's row
(a sweep creates it before anything else). Any other folder is written into only with
``force``, so a user's own ``runs.csv`` or ``spec.json`` is never replaced silently; and no
file of a sweep is ever written over one of the sweep's inputs (its spec file, a workload, a
cluster file, a file in a traces folder), ``force`` or not.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from pathlib import Path

from fastsched._atomic import atomic_open, output_target
from fastsched.sweep.table import SweepResult, cell, row_header, summary_header

__all__ = [
    "atomic_write",
    "write_tables",
    "load_done",
    "check_output",
    "create_output",
    "is_sweep_folder",
    "RowLog",
    "LOG_NAME",
    "PROVENANCE_NAME",
    "SWEEP_FILES",
    "provenance",
]

LOG_NAME = "runs.jsonl"
#: What made the sweep's results (:func:`provenance`).
PROVENANCE_NAME = "provenance.json"
#: Files a sweep writes in its folder.
SWEEP_FILES = (LOG_NAME, "runs.csv", "runs.json", "summary.csv", "spec.json", PROVENANCE_NAME)


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, renamed into place.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> atomic_write(p, "hello")
    >>> p.read_text(), sorted(x.name for x in p.parent.iterdir())
    ('hello', ['a.txt'])
    """
    with atomic_open(path) as f:
        f.write(text)


def _csv_text(rows, header) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([cell(r.get(h)) for h in header])
    return buf.getvalue()


def write_tables(result: SweepResult, output_dir) -> None:
    """Write ``runs.csv``, ``runs.json`` and ``summary.csv`` of ``result`` into ``output_dir``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from fastsched.sweep.table import SweepResult, summarize
    >>> rows = [{"policy": "a", "avg_jct_s": 5.0, "completed": 2, "jobs": 2, "error": None}]
    >>> result = SweepResult(rows=rows, summary=summarize(rows, ["policy"]), columns=["policy"])
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "sweep"
    >>> write_tables(result, out)
    >>> sorted(p.name for p in out.iterdir())
    ['runs.csv', 'runs.json', 'summary.csv']
    >>> (out / "summary.csv").read_text().splitlines()[1].startswith("a,1,0,0,2,2,5.0,")
    True
    """
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "runs.csv", _csv_text(result.rows, row_header(result.columns)))
    atomic_write(out / "runs.json", json.dumps(result.rows, indent=1) + "\n")
    atomic_write(out / "summary.csv", _csv_text(result.summary, summary_header(result.columns)))


def load_done(out: Path | None) -> dict:
    r"""Read the successful rows of earlier sweeps in ``out``, by run id (unreadable lines are skipped).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "runs.jsonl").write_text('{"run_id": "a", "error": null}\n{"run_id": "b", "error": "x"}\n{"run_')
    >>> list(load_done(d))
    ['a']
    """
    done = {}
    if out is None:
        return done
    log = out / LOG_NAME
    rows = []
    if log.is_file():
        for line in log.read_text().splitlines():
            with contextlib.suppress(ValueError):
                rows.append(json.loads(line))
    elif (out / "runs.json").is_file():
        with contextlib.suppress(ValueError):
            rows = json.loads((out / "runs.json").read_text())
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and row.get("run_id") and not row.get("error"):
            done[row["run_id"]] = _with_units(row)
    return done


def _with_units(row: dict) -> dict:
    """Return a row logged before the tables named their seconds (``avg_jct``) with the names of today."""
    from fastsched.sweep.task import SECONDS, row_key

    return {(row_key(k) if k in SECONDS and row_key(k) not in row else k): v for k, v in row.items()}


def provenance(sweep, runs, *, call=None) -> dict:
    """Return the sweep's provenance record (see :mod:`fastsched._provenance`).

    fastsched's version, the command line (or the Python call), the sweep's base seed and every
    run's seed by run id, and the SHA-256 of each input: the spec file, the workloads, the traces
    folders (content hash over names and bytes) and the clusters.

    Examples
    --------
    >>> from fastsched.sweep.spec import load_spec
    >>> spec = load_spec({"workloads": "builtin", "policy": ["tiresias"], "seeds": 2, "seed": 7})
    >>> rec = provenance(spec, spec.runs(), call="run_serial(spec)")
    >>> rec["seeds"]["seed"], len(rec["seeds"]["runs"]), rec["inputs"]["workloads"][0]["value"]
    (7, 2, 'builtin')
    """
    from fastsched import _provenance

    seeds = {"seed": sweep.seed, "seeds": sweep.seeds, "runs": {r.run_id: r.seed for r in runs}}
    workloads = [w if w == "builtin" else str(sweep._resolve(w)) for w in sweep.workloads]
    clusters = [
        str(sweep._resolve(c)) if str(c).lower().endswith((".toml", ".json")) else str(c)
        for c in sweep.grid.get("cluster", [])
    ]
    inputs = {
        "spec": str(sweep.source) if sweep.source is not None else dict(sweep.raw),
        "workloads": workloads,
        "traces": [str(sweep._resolve(t)) for t in sweep.grid.get("traces", [])] or None,
        "cluster": clusters or None,
    }
    return _provenance.record(call=call, seeds=seeds, inputs={k: v for k, v in inputs.items() if v is not None})


def is_sweep_folder(out: Path) -> bool:
    r"""Tell whether ``out`` is a sweep's folder: its ``runs.jsonl`` is empty or starts with a run's row.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> is_sweep_folder(d)
    False
    >>> _ = (d / "runs.jsonl").write_text('{"run_id": "a", "error": null}\n')
    >>> is_sweep_folder(d)
    True
    """
    log = Path(out) / LOG_NAME
    if not log.is_file():
        return False
    with open(log, "rb") as f:
        first = f.readline(1 << 20)
    if not first.strip():
        return True
    try:
        row = json.loads(first)
    except ValueError:
        return False
    return isinstance(row, dict) and "run_id" in row


def _same(a: Path, b: Path) -> bool:
    ra, rb = os.path.realpath(a), os.path.realpath(b)
    if ra == rb:
        return True
    try:
        return os.path.samefile(ra, rb)
    except OSError:
        return False


def check_output(out, *, resume: bool, force: bool, inputs=()) -> Path:
    """Check a sweep's output folder before any run, without creating anything.

    A folder that does not exist must be creatable (its nearest existing parent writable); an
    existing one must be a folder, and either empty, or a sweep folder (see
    :func:`is_sweep_folder`; resumed, or with ``force`` started afresh), or ``force`` must be
    given. Starting afresh (``resume=False``) over logged runs also needs ``force``. None of
    :data:`SWEEP_FILES` may be one of ``inputs`` (nor lie in an input folder), nor a
    non-regular file.

    Raises
    ------
    ValueError
        ``out`` is a file, a non-sweep folder with files in it, or holds results that
        ``resume=False`` would discard, without ``force``; one of its tables would replace an
        input; or it cannot be written.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "notes.txt").write_text("mine")
    >>> check_output(d / "sweep", resume=True, force=False).name
    'sweep'
    >>> (d / "sweep").exists()
    False
    >>> check_output(d / "notes.txt", resume=True, force=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --output ...notes.txt is a file; a sweep writes a folder of tables
    """
    out = Path(out).expanduser()
    if out.exists() and not out.is_dir():
        raise ValueError(f"--output {out} is a file; a sweep writes a folder of tables")
    ours = out.is_dir() and is_sweep_folder(out)
    for name in SWEEP_FILES:  # never over an input, --force or not (a spec named spec.json in "." ...)
        f = out / name
        for src in inputs:
            s = Path(src).expanduser()
            # in an input folder (traces): an existing file that is not this sweep's own
            inside = s.is_dir() and f.exists() and not ours
            if _same(f, s) or (inside and os.path.realpath(f).startswith(os.path.realpath(s) + os.sep)):
                raise ValueError(
                    f"--output {out}: the sweep would write {f}, which is an input of this sweep ({src}); "
                    "choose another output folder"
                )
        try:
            output_target(f)
        except ValueError as exc:
            raise ValueError(f"--output {out}: {exc}") from None
    if out.is_dir():
        names = {p.name for p in out.iterdir()}
        if names and not ours and not force:
            mine = sorted(names & set(SWEEP_FILES))
            clash = f" (a sweep would replace {', '.join(mine)})" if mine else ""
            raise ValueError(
                f"--output {out} is a folder with other files in it, not a sweep's{clash}; "
                "choose a new folder or use --force to write the tables there"
            )
        if ours and not resume and not force and load_done(out):
            raise ValueError(
                f"--output {out} holds results of an earlier sweep that --no-resume would discard; "
                "use --force to discard them, or drop --no-resume to resume"
            )
    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        if not existing.is_dir():
            raise NotADirectoryError(20, "not a folder", str(existing))
        tempfile.TemporaryFile(dir=existing).close()
    except OSError as exc:
        raise ValueError(f"--output {out}: cannot write there ({exc.strerror or exc})") from None
    return out


def create_output(out: Path, *, resume: bool) -> Path:
    """Create a checked output folder (see :func:`check_output`); without ``resume``, drop its run log.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> create_output(pathlib.Path(tempfile.mkdtemp()) / "a" / "b", resume=True).is_dir()
    True
    """
    out.mkdir(parents=True, exist_ok=True)
    if not resume:
        with contextlib.suppress(FileNotFoundError):
            (out / LOG_NAME).unlink()
    open(out / LOG_NAME, "a").close()  # first: what marks the folder as a sweep's (is_sweep_folder)
    return out


class RowLog:
    r"""Append rows to ``runs.jsonl``, one flushed line each (``None``: keeps nothing).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with RowLog(d) as log:
    ...     log.add({"run_id": "a", "error": None})
    >>> (d / "runs.jsonl").read_text()
    '{"run_id": "a", "error": null}\n'
    """

    def __init__(self, out: Path | None):
        self._f = None
        if out is not None:
            path = Path(out) / LOG_NAME
            torn = path.is_file() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
            self._f = open(path, "a")  # noqa: SIM115 - closed in close()
            if torn:  # a line cut short by a crash: end it, so the next row starts a line of its own
                self._f.write("\n")

    def add(self, row: dict) -> None:
        """Append one row (a whole line, flushed)."""
        if self._f is not None:
            self._f.write(json.dumps(row) + "\n")
            self._f.flush()

    def close(self) -> None:
        """Close the log (idempotent)."""
        if self._f is not None:
            self._f.close()
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
