"""Shared parsing of log readers: chunked CSV columns, vectorised numbers and times, located errors.

Every message starts ``path:line:column: field ...`` (``path:line: field ...`` for JSON), the
style of :func:`fastsched.sim.inputs.workload.read_workload`. Columns are parsed a chunk at a time
(numpy does the numbers and the ISO times), so a million-row log never holds its text in
memory at once; a chunk that fails is parsed again value by value to find the row.
"""

from __future__ import annotations

import csv
import warnings
from collections import Counter
from itertools import islice
from operator import itemgetter
from pathlib import Path

import numpy as np

from fastsched.sim.inputs.logs._records import FINISHED_STATES, UNFINISHED_STATES

# Text that means "no value" in the logs: empty cells, Philly's "None", Slurm's "Unknown".
MISSING = frozenset({"", "None", "none", "NONE", "Unknown", "unknown", "NaT", "nan", "NaN", "NULL", "null"})
CHUNK = 1 << 15
# Times outside these years are typing mistakes (numpy reads "12345" as the year 12345).
_YEAR_LO, _YEAR_HI = 1970, 2200
_T_LO = float(np.datetime64(f"{_YEAR_LO}-01-01", "s").astype(np.int64))
_T_HI = float(np.datetime64(f"{_YEAR_HI}-01-01", "s").astype(np.int64))

#: Slurm's state names (also Helios', which is Slurm) -> canonical lower-case name: the records'
#: vocabulary of final and unfinished states, upper-cased as sacct prints them.
SLURM_STATES = {s.upper(): s for s in (*FINISHED_STATES, *UNFINISHED_STATES)}


class Problems:
    """Collects malformed-row messages: raises the first (``on_error="raise"``) or counts them."""

    KEEP = 10  # messages kept when dropping

    def __init__(self, on_error: str):
        if on_error not in ("raise", "drop"):
            raise ValueError(f"on_error must be 'raise' or 'drop', got {on_error!r}")
        self.raising = on_error == "raise"
        self.messages: list[str] = []
        self.count = 0

    def report(self, message: str) -> None:
        if self.raising:
            raise ValueError(message)
        self.count += 1
        if len(self.messages) < self.KEEP:
            self.messages.append(message)


class Strings:
    """Interns repeated strings (users, VCs, states), so a million rows hold each once."""

    def __init__(self):
        self._pool: dict[str, str] = {}

    def __call__(self, values, *, strip=False) -> np.ndarray:
        """Object array of ``values`` (stripped if asked), each distinct string held once."""
        pool = self._pool
        # Work on the distinct values, then map every row in C: a million rows, a few users.
        table = {v: pool.setdefault(v.strip(), v.strip()) if strip else pool.setdefault(v, v) for v in set(values)}
        out = np.empty(len(values), dtype=object)
        out[:] = list(map(table.__getitem__, values))
        return out


def where(path, line, col=None) -> str:
    """``path:line:col`` (1-based column) or ``path:line``."""
    return f"{path}:{line}" if col is None else f"{path}:{line}:{col + 1}"


def _scan(values, convert, bad_message):
    """Parse ``values`` one by one: (converted list with None for failures, messages by index)."""
    out, problems = [], {}
    for i, v in enumerate(values):
        try:
            out.append(convert(v))
        except (ValueError, TypeError, OverflowError):
            out.append(None)
            problems[i] = bad_message(v)
    return out, problems


def parse_floats(values, field: str, *, blank=np.nan):
    """Strings -> float64 array; blanks become ``blank``; returns (array, {row: problem}).

    A non-number or an infinite value is a problem; NaN only comes from a blank cell.
    """
    problems = {}
    try:  # a clean column (the usual case) converts in one call
        a = np.array(values, dtype=np.float64)
        a[np.isnan(a)] = blank  # "nan" cells are blanks too
    except (ValueError, TypeError):
        cells = [blank if v.strip() in MISSING else v for v in values]
        try:
            a = np.array(cells, dtype=np.float64)
        except (ValueError, TypeError):
            conv, problems = _scan(cells, float, lambda v: f"{field} must be a number, got {v!r}")
            a = np.array([np.nan if c is None else c for c in conv], dtype=np.float64)
    inf = np.flatnonzero(np.isinf(a))
    for i in inf:
        problems.setdefault(int(i), f"{field} must be finite, got {values[i]!r}")
    return a, problems


def parse_times(values, field: str):
    """ISO date-time strings -> float64 seconds since the epoch (NaN if missing); (array, problems)."""
    problems = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a trailing "Z": numpy warns that it ignores time zones
        try:  # a clean column ("" and "NaT" are absent times to numpy too) converts in one call
            t = np.array(values, dtype="datetime64[ms]")
        except (ValueError, TypeError, OverflowError):
            cells = ["NaT" if v.strip() in MISSING else v.strip() for v in values]
            try:
                t = np.array(cells, dtype="datetime64[ms]")
            except (ValueError, TypeError, OverflowError):
                t = None
        if t is None:
            conv, problems = _scan(
                cells,
                lambda v: np.datetime64(v, "ms"),
                lambda v: f"{field} must be a date and time (YYYY-MM-DD HH:MM:SS), got {v!r}",
            )
            t = np.array([np.datetime64("NaT") if c is None else c for c in conv], dtype="datetime64[ms]")
    secs = t.astype(np.int64).astype(np.float64) / 1000.0
    nat = np.isnat(t)
    secs[nat] = np.nan
    odd = np.flatnonzero(~nat & ((secs < _T_LO) | (secs >= _T_HI)))
    for i in odd:
        problems.setdefault(int(i), f"{field} must be a date between {_YEAR_LO} and {_YEAR_HI}, got {values[i]!r}")
        secs[i] = np.nan
    return secs, problems


def open_text(path: Path):
    """Open a log as UTF-8 text (BOM tolerated), naming the file in the error of a binary one."""
    if not path.exists():
        raise FileNotFoundError(f"log file not found: {path}")
    if path.is_dir():
        raise ValueError(f"{path}: is a folder, not a log file")
    return open(path, newline="", encoding="utf-8-sig")


def header_index(path: Path, header, wanted: dict, *, fold_case=False):
    """Map canonical field -> column index. ``wanted``: field -> (aliases, required)."""
    names = [h.strip() for h in header]
    keyed = [n.lower() for n in names] if fold_case else names
    out, missing = {}, []
    for field, (aliases, required) in wanted.items():
        for a in aliases:
            a = a.lower() if fold_case else a
            if a in keyed:
                out[field] = keyed.index(a)
                break
        else:
            if required:
                missing.append(aliases[0])
    if missing:
        raise ValueError(f"{path}:1: missing column(s) {missing}; found {names}")
    return out


def _spans(rows) -> np.ndarray:
    """Physical lines each parsed row took (a quoted field may hold line breaks)."""

    def lines(row):
        return 1 + sum(f.count("\n") + f.count("\r") - f.count("\r\n") for f in row)

    return np.fromiter(map(lines, rows), dtype=np.int64, count=len(rows))


def csv_chunks(path: Path, reader, index: dict, *, problems: Problems, ncols: int):
    """Yield ``(lines, {field: list of str})`` chunks of the rows of ``reader``.

    ``index`` maps field -> column. Blank lines are skipped; a row with too few fields is
    reported (and skipped when dropping). Rows are taken ``CHUNK`` at a time and split into
    columns in C (``map``/``itemgetter``): the per-row Python work of a million-row log is what
    this avoids.
    """
    need = max(index.values()) + 1
    getters = {f: itemgetter(c) for f, c in index.items()}
    while True:
        first = reader.line_num
        try:
            rows = list(islice(reader, CHUNK))
        except csv.Error as exc:
            raise ValueError(f"{where(path, reader.line_num)}: malformed CSV: {exc}") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
        if not rows:
            return
        if reader.line_num - first == len(rows):  # one line per row: no quoted line breaks
            lines = np.arange(first + 1, reader.line_num + 1, dtype=np.int64)
        else:
            lines = first + np.cumsum(_spans(rows))
        lens = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        short = np.flatnonzero(lens < need)
        if short.size:
            for i in short:
                if any(c.strip() for c in rows[i]):
                    problems.report(f"{where(path, int(lines[i]))}: too few fields ({lens[i]} of {ncols})")
            keep = np.flatnonzero(lens >= need)
            rows = [rows[i] for i in keep]
            lines = lines[keep]
            if not rows:
                continue
        yield lines, {f: list(map(g, rows)) for f, g in getters.items()}


def locate(path, lines, col, found: dict, problems: Problems, bad: np.ndarray) -> None:
    """Report ``found`` ({row: message}) at ``path:line:col`` and mark those rows bad."""
    for i in sorted(found):
        if not bad[i]:
            problems.report(f"{where(path, int(lines[i]), col)}: {found[i]}")
        bad[i] = True


def count_drops(reasons) -> dict:
    """Reasons in :data:`~._records.DROP_REASONS` order, only those that occurred."""
    from fastsched.sim.inputs.logs._records import DROP_REASONS

    c = Counter(reasons) if not isinstance(reasons, Counter) else reasons
    return {r: int(c[r]) for r in DROP_REASONS if c.get(r)}


def whole(a: np.ndarray, field: str, values, *, low=0, blank_ok=False) -> dict:
    """Problems of a float array that must hold whole numbers >= ``low`` (NaN: blank)."""
    problems = {}
    blank = np.isnan(a)
    if not blank_ok:
        for i in np.flatnonzero(blank):
            problems[int(i)] = f"{field} must not be empty"
    with np.errstate(invalid="ignore"):
        frac = ~blank & (a != np.floor(a))
        small = ~blank & (a < low)
        big = ~blank & (a > 2**31 - 1)
    for i in np.flatnonzero(frac):
        problems.setdefault(int(i), f"{field} must be a whole number, got {values[i]!r}")
    for i in np.flatnonzero(small):
        problems.setdefault(int(i), f"{field} must be >= {low}, got {values[i]!r}")
    for i in np.flatnonzero(big):
        problems.setdefault(int(i), f"{field} must be <= {2**31 - 1}, got {values[i]!r}")
    return problems


def states(values, field: str, table: dict, strings: Strings):
    """Map state strings through ``table`` (keys upper case); return (object array, problems).

    Slurm's ``CANCELLED by 123`` reads as ``CANCELLED``.
    """
    # Each distinct text once (a log has a handful of states), then every row by lookup.
    known = {v: table.get(v.strip().split(" ", 1)[0].upper(), "") for v in set(values)}
    out = strings(list(map(known.__getitem__, values)))
    problems = {}
    if any(not s for s in known.values()):
        choices = sorted(table)
        for i, v in enumerate(values):
            if not known[v]:
                problems[i] = f"{field} must be one of {choices}, got {v!r}"
    return out, problems


def required_text(values, field: str, strings: Strings | None = None):
    """Strip strings that must not be empty, interned by ``strings`` if given; return (array, problems)."""
    stripped = list(map(str.strip, values))
    problems = {}
    if "" in stripped:
        problems = {i: f"{field} must not be empty" for i, v in enumerate(stripped) if not v}
    if strings is not None:
        return strings(stripped), problems
    out = np.empty(len(stripped), dtype=object)
    out[:] = stripped
    return out, problems


def merge(into: dict, more: dict) -> dict:
    """Add ``more``'s problems to ``into`` where a row has none yet (the first one found wins)."""
    for k, v in more.items():
        into.setdefault(k, v)
    return into
