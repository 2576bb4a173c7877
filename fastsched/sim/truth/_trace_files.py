"""Reading and checking the trace files of an application (the Pollux artifact's trace format).

:func:`read_trace_folder` reads a folder once into the tables :class:`~fastsched.sim.truth.traces.TraceApplication`
answers from. Every file is checked as it is read (a :class:`ValueError` names the file, line
and column): numbers finite; step times in (0, :data:`MAX_STEP_TIME`]; ``0 <= sync_time <=
step_time``; positive batch sizes; placements of digits 1-9; ``num_replicas >= num_nodes >=
1``; progress positive and increasing, iterations not decreasing, ``grad_sqr >= 0``,
``grad_var > 0``; validation files named ``validation-<B>.csv`` with ``B`` a whole number.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched.sim.truth._rules import id_placement

__all__ = ["MAX_STEP_TIME", "TraceTables", "read_trace_folder", "read_min_replicas", "write_example_application"]


class TraceTables(NamedTuple):
    """What a trace folder holds, as read by :func:`read_trace_folder`."""

    #: Validated total batch sizes, ascending.
    bsz: list
    #: Per batch size, the validation curve's columns.
    valid: dict
    #: Per measured placement id: (per-GPU batch, step time, sync time) sorted by batch.
    by_placement: dict
    #: (nodes, GPUs, per-GPU batch) points and their (step, sync) for the 3-D interpolation.
    nd_points: np.ndarray
    nd_values: np.ndarray
    #: Every measured row as (nodes, GPUs, batch, step, sync, GPUs on the fullest node).
    rows: np.ndarray
    #: The placements file's per-GPU batch sizes.
    local_bsz: list


#: Longest plausible seconds per optimizer step in a trace: anything longer is no measurement
#: (a step of 1e308 s silently stalls every job).
MAX_STEP_TIME = 86400.0


def _read_csv(path: Path, required: tuple[str, ...]) -> dict[str, list[float]]:
    """Read a numeric CSV into columns, checking that ``required`` columns exist and hold finite numbers.

    The data rows' line numbers are returned under the key ``"_line"``. A plain file (what
    every trace is) is parsed by numpy (:func:`_read_plain_csv`, about 2.5 times faster); any
    other, and any file with a fault, by the row-by-row reader, which names the fault.
    """
    cols = _read_plain_csv(path, required)
    return cols if cols is not None else _read_csv_rows(path, required)


_OTHER_LINE_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _read_plain_csv(path: Path, required: tuple[str, ...]):
    """Read the columns of a plain numeric CSV with numpy's parser; ``None`` for anything else.

    numpy converts each field with CPython's own string-to-double routine, stricter than
    ``float()`` (no underscores, no non-ASCII digits) and with the same rounding, so a file it
    reads gives the bits :func:`_read_csv_rows` gives. Its answer is used only if the header is
    plain, nothing is quoted, every non-empty line is one row and every value is finite;
    otherwise ``None``, and the row-by-row reader decides (and names any fault).
    """
    try:
        with open(path, newline="") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    # str.splitlines also breaks at \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029, where the csv
    # module (and so the row reader's line numbers) does not: such a file goes to the row reader.
    if '"' in text or any(c in text for c in _OTHER_LINE_BREAKS):
        return None
    lines = text.splitlines()
    if not lines:
        return None
    header = [h.strip() for h in lines[0].split(",")]
    if any(c not in header for c in required):
        return None
    numbered = [n for n, line in enumerate(lines[1:], start=2) if line]
    if not numbered:
        return None
    try:
        arr = np.loadtxt(
            io.StringIO(text),
            delimiter=",",
            usecols=[header.index(c) for c in required],
            skiprows=1,
            comments=None,
            ndmin=2,
            dtype=np.float64,
        )
    except (ValueError, IndexError):
        return None
    if arr.shape[0] != len(numbered) or not np.isfinite(arr).all():
        return None
    cols = {c: arr[:, k].tolist() for k, c in enumerate(required)}
    cols["_line"] = numbered
    return cols


def _read_csv_rows(path: Path, required: tuple[str, ...]) -> dict[str, list[float]]:
    """:func:`_read_csv` row by row with ``csv`` and ``float()``: the reference, and the errors."""
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            try:
                header = [h.strip() for h in next(reader)]
            except StopIteration:
                raise ValueError(f"{path}: empty file") from None
            missing = [c for c in required if c not in header]
            if missing:
                raise ValueError(f"{path}: missing column(s) {missing}; found {header}")
            idx = [header.index(c) for c in required]
            cols: dict[str, list[float]] = {c: [] for c in (*required, "_line")}
            for lineno, row in enumerate(reader, start=2):
                if not row:
                    continue
                for c, i in zip(required, idx, strict=True):
                    try:
                        v = float(row[i])
                    except (ValueError, IndexError):
                        raise ValueError(f"{path}:{lineno}: malformed row {row!r}") from None
                    if not math.isfinite(v):
                        raise ValueError(f"{path}:{lineno}: column {c!r} must be a finite number, got {row[i]!r}")
                    cols[c].append(v)
                cols["_line"].append(lineno)
    except FileNotFoundError:
        raise FileNotFoundError(f"trace file not found: {path}") from None
    if not cols[required[0]]:
        raise ValueError(f"{path}: no data rows")
    return cols


def _reject(path, cols, column, bad, rule):
    """Raise naming the first row where ``bad`` (one bool per row) holds."""
    for i, b in enumerate(bad):
        if b:
            raise ValueError(f"{path}:{cols['_line'][i]}: column {column!r} must be {rule}, got {cols[column][i]!r}")


def _validate_throughput(path, cols):
    """Step times finite, positive and plausible; ``0 <= sync_time <= step_time``; sane batch and layout."""
    st, sy = cols["step_time"], cols["sync_time"]
    _reject(path, cols, "step_time", [not (0 < x <= MAX_STEP_TIME) for x in st], f"in (0, {MAX_STEP_TIME:g}] s")
    _reject(path, cols, "sync_time", [not (0 <= y <= x) for x, y in zip(st, sy, strict=True)], "in [0, step_time]")
    _reject(path, cols, "local_bsz", [not x > 0 for x in cols["local_bsz"]], "positive")
    if "placement" in cols:
        # One digit 1-9 per node: the GPUs used on it.
        _reject(
            path,
            cols,
            "placement",
            [not (p >= 1 and p == int(p) and 0 not in id_placement(p)) for p in cols["placement"]],
            "digits 1-9, one per node",
        )
    else:
        n, r = cols["num_nodes"], cols["num_replicas"]
        _reject(path, cols, "num_nodes", [not (x >= 1 and x == int(x)) for x in n], "a whole number >= 1")
        _reject(
            path,
            cols,
            "num_replicas",
            [not (y >= x and y == int(y)) for x, y in zip(n, r, strict=True)],
            "a whole number >= num_nodes",
        )


def _validate_curve(path, cols):
    """Progress strictly increasing and positive, iterations not decreasing, gradient statistics usable."""
    prog, it = cols["progress"], cols["iteration"]
    _reject(
        path,
        cols,
        "progress",
        [x <= (prog[i - 1] if i else 0.0) for i, x in enumerate(prog)],
        "positive and increasing",
    )
    _reject(
        path,
        cols,
        "iteration",
        [x < (it[i - 1] if i else 0.0) for i, x in enumerate(it)],
        "non-negative and not decreasing",
    )
    # A zero variance (and a zero squared gradient beside it) leaves the gain 0 / 0.
    _reject(path, cols, "grad_sqr", [x < 0 for x in cols["grad_sqr"]], "non-negative")
    _reject(path, cols, "grad_var", [x <= 0 for x in cols["grad_var"]], "positive")


#: Validation curve files: ``validation-<total batch size>.csv``.
_VALIDATION_NAME = re.compile(r"validation-([1-9][0-9]*)\.csv")


def read_trace_folder(trace_dir, gpu_type=None) -> TraceTables:
    """Read and check an application's trace folder.

    Parameters
    ----------
    trace_dir : path
        Folder with ``placements.csv``, ``scalability.csv`` and ``validation-<B>.csv``.
    gpu_type : str, optional
        Read ``placements-<gpu_type>.csv`` / ``scalability-<gpu_type>.csv`` (the Sia layout).

    Raises
    ------
    FileNotFoundError
        A missing file.
    ValueError
        A malformed file, naming the file, line and column.

    Examples
    --------
    >>> import tempfile
    >>> tables = read_trace_folder(write_example_application(tempfile.mkdtemp()))
    >>> tables.bsz, sorted(tables.by_placement), tables.rows.shape
    ([4, 8], [1, 2, 11, 12], (12, 6))
    """
    trace_dir = Path(trace_dir)
    # Validation curves, sorted by batch size.
    vfiles = {}
    for path in sorted(trace_dir.glob("validation-*.csv")):
        m = _VALIDATION_NAME.fullmatch(path.name)
        if m is None:
            raise ValueError(f"{path}: expected a name validation-<batch size>.csv (a whole number >= 1)")
        bsz = int(m.group(1))
        if bsz in vfiles:
            raise ValueError(f"{path}: batch size {bsz} already read from {vfiles[bsz]}")
        vfiles[bsz] = path
    if not vfiles:
        raise FileNotFoundError(f"{trace_dir}: no validation-<B>.csv files")
    vcols = ("progress", "iteration", "metric", "grad_sqr", "grad_var")
    bsz = sorted(vfiles)
    valid = {b: _read_csv(vfiles[b], vcols) for b in bsz}
    for b in bsz:
        _validate_curve(vfiles[b], valid[b])
    # Placement traces.
    # Per-GPU-type profiles (the Sia layout) are placements-<type>.csv / scalability-<type>.csv.
    suffix = f"-{gpu_type}" if gpu_type else ""
    ppath, spath = trace_dir / f"placements{suffix}.csv", trace_dir / f"scalability{suffix}.csv"
    pcols = _read_csv(ppath, ("placement", "local_bsz", "step_time", "sync_time"))
    scols = _read_csv(spath, ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"))
    _validate_throughput(ppath, pcols)
    _validate_throughput(spath, scols)
    by_placement: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    groups: dict[int, list[tuple[float, float, float]]] = {}
    triples: dict[tuple[int, int, float], list[tuple[float, float]]] = {}
    for p, a, st, sy in zip(
        pcols["placement"], pcols["local_bsz"], pcols["step_time"], pcols["sync_time"], strict=True
    ):
        pid = int(p)
        layout = id_placement(pid)
        groups.setdefault(pid, []).append((a, st, sy))
        triples.setdefault((len(layout), sum(layout), a), []).append((st, sy))
    for pid, rows in groups.items():
        order = sorted(range(len(rows)), key=lambda i: rows[i][0])  # stable, like a mergesort
        arr = np.array([rows[i] for i in order], dtype=np.float64)
        by_placement[pid] = (arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy())
    # 3-D interpolation points: per-triple means (sorted by key), then the scalability rows.
    pts, vals = [], []
    for key in sorted(triples):
        rows = triples[key]
        s0 = s1 = 0.0
        for st, sy in rows:
            s0 += st
            s1 += sy
        pts.append(key)
        vals.append((s0 / len(rows), s1 / len(rows)))
    for row in zip(
        *(scols[c] for c in ("num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time")), strict=True
    ):
        pts.append(row[:3])
        vals.append(row[3:])
    nd_points = np.array(pts, dtype=np.float64)
    nd_values = np.array(vals, dtype=np.float64)
    # Every measured row as (nodes, GPUs, batch, step, sync, GPUs on the fullest node): what
    # the model is fitted on. The scalability rows do not say how GPUs were spread: evenly.
    prow = [(len(q), sum(q), max(q)) for q in map(id_placement, pcols["placement"])]
    srow = [(n, r, math.ceil(r / n)) for n, r in zip(scols["num_nodes"], scols["num_replicas"], strict=True)]
    rows = np.array(
        [
            *(
                (n, r, b, st, sy, k)
                for (n, r, k), b, st, sy in zip(
                    prow, pcols["local_bsz"], pcols["step_time"], pcols["sync_time"], strict=True
                )
            ),
            *(
                (n, r, b, st, sy, k)
                for (n, r, k), b, st, sy in zip(
                    srow, scols["local_bsz"], scols["step_time"], scols["sync_time"], strict=True
                )
            ),
        ],
        dtype=np.float64,
    )
    return TraceTables(bsz, valid, by_placement, nd_points, nd_values, rows, pcols["local_bsz"])


def read_min_replicas(trace_dir, gpu_type=None) -> int:
    """Fewest GPUs the application runs on: ``min-replicas[-<gpu_type>].csv``, else 1.

    ``fastsched profile`` writes the file for a model whose memory needs several GPUs of the
    type (:attr:`fastsched.sim.truth.oracle.OracleApplication.min_replicas`); measured traces have none.

    Examples
    --------
    >>> import tempfile
    >>> read_min_replicas(write_example_application(tempfile.mkdtemp()))
    1
    """
    path = Path(trace_dir) / (f"min-replicas-{gpu_type}.csv" if gpu_type else "min-replicas.csv")
    if not path.is_file():
        return 1
    cols = _read_csv(path, ("min_replicas",))
    n = cols["min_replicas"]
    if len(n) != 1 or n[0] != int(n[0]) or n[0] < 1:
        raise ValueError(f"{path}: expected one row, column 'min_replicas' a whole number >= 1, got {n!r}")
    return int(n[0])


# A made-up two-node application in the traces layout: the data behind the examples of this
# module (and of fastsched.sim.truth.derive), written once instead of in every docstring.
_EXAMPLE_FILES = {
    "placements.csv": "placement,local_bsz,step_time,sync_time\n1,4,1.0,0.0\n1,8,2.0,0.0\n2,4,1.5,0.5\n"
    "2,8,2.5,0.5\n11,4,2.0,1.0\n11,8,3.0,1.0\n12,4,2.5,1.5\n12,8,3.5,1.5\n",
    "scalability.csv": "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
    "4,8,4,4.0,3.0\n4,8,8,5.0,3.0\n4,4,4,3.0,2.0\n4,4,8,4.0,2.0\n",
    "validation-4.csv": "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,1\n20,20,0.6,1,2\n30,30,0.7,1,3\n",
    "validation-8.csv": "progress,iteration,metric,grad_sqr,grad_var\n12,6,0.4,3,5\n18,12,0.65,3,6\n33,18,0.8,3,7\n",
}


def write_example_application(parent, name="toy") -> Path:
    """Write a tiny made-up application in the traces layout and return its folder.

    Two nodes, per-GPU batch sizes 4 and 8, three validated epochs: enough for
    :class:`TraceApplication` and :func:`load_application` to work on, for examples and tests
    that must not depend on the published traces.

    Parameters
    ----------
    parent : str or path
        Existing folder to create ``parent/name`` in.
    name : str
        The application's folder name (its name).

    Returns
    -------
    pathlib.Path
        ``parent/name``.

    Examples
    --------
    >>> import tempfile
    >>> app = write_example_application(tempfile.mkdtemp())
    >>> app.name, sorted(p.name for p in app.iterdir())
    ('toy', ['placements.csv', 'scalability.csv', 'validation-4.csv', 'validation-8.csv'])
    """
    folder = Path(parent) / name
    folder.mkdir()
    for file, text in _EXAMPLE_FILES.items():
        (folder / file).write_text(text)
    return folder
