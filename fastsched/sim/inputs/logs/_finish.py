"""From a reader's raw columns to :class:`~._records.LogRead`: the shared checks, filters and drop counts.

Each reader fills a :class:`RawLog` (absolute submit/start/end seconds, one row per job, the
line each came from); :func:`finish` checks what only the whole log can tell (unique ids, no
end before start), applies the filters in :data:`~._records.DROP_REASONS` order, counting each
dropped job once, and rebases the kept jobs on their first submission.
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from typing import NamedTuple

import numpy as np

from fastsched.sim.inputs.logs._parse import Problems, count_drops, where
from fastsched.sim.inputs.logs._records import FINISHED_STATES, UNFINISHED_STATES, LogJobs, LogRead

__all__ = ["RawLog", "RawBuilder", "finish", "check_filters"]


class RawLog(NamedTuple):
    """One row per job as a reader found it; times in seconds since the epoch, NaN if absent."""

    name: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    gpus: np.ndarray
    nodes: np.ndarray
    gpu_type: np.ndarray
    state: np.ndarray
    vc: np.ndarray
    user: np.ndarray
    line: np.ndarray


_DTYPES = {
    f: (np.float64 if f in ("submit", "start", "end") else np.int64 if f in ("gpus", "nodes", "line") else object)
    for f in RawLog._fields
}


class RawBuilder:
    """Accumulates chunks of :class:`RawLog` columns (rows flagged bad are left out)."""

    def __init__(self):
        self._parts = {f: [] for f in RawLog._fields}

    def add(self, keep=None, **cols) -> None:
        for f in RawLog._fields:
            a = np.asarray(cols[f], dtype=_DTYPES[f]) if _DTYPES[f] is not object else cols[f]
            self._parts[f].append(a if keep is None else a[keep])

    def build(self) -> RawLog:
        out = {}
        for f in RawLog._fields:
            parts = self._parts.pop(f)  # each column's chunks freed as soon as it is joined
            if not parts:
                out[f] = np.empty(0, dtype=_DTYPES[f])
            else:
                out[f] = np.concatenate(parts) if len(parts) > 1 else np.asarray(parts[0], dtype=_DTYPES[f])
        return RawLog(**out)


def check_filters(window, vcs, states, gpu_only):
    """Validate the filter arguments; return ``(lo, hi, vcs set or None, kept states, gpu_only)``."""
    lo, hi = -math.inf, math.inf
    if window is not None:
        if isinstance(window, (str, bytes)) or not hasattr(window, "__len__") or len(window) != 2:
            raise TypeError(f"window must be a (start, end) pair of seconds, got {window!r}")
        for v, what in zip(window, ("start", "end"), strict=True):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or math.isnan(v):
                raise TypeError(f"window {what} must be a number of seconds, got {v!r}")
        lo, hi = float(window[0]), float(window[1])
        if not lo < hi:
            raise ValueError(f"window must have start < end, got {window!r}")
    if vcs is not None:
        if isinstance(vcs, str):
            vcs = (vcs,)
        vcs = frozenset(vcs)
        if not all(isinstance(v, str) for v in vcs):
            raise TypeError(f"vcs must be virtual-cluster names (str), got {sorted(map(repr, vcs))}")
    if states == "finished":
        kept = FINISHED_STATES
    elif states == "completed":
        kept = ("completed",)
    else:
        if isinstance(states, str) or not hasattr(states, "__iter__"):
            raise TypeError(f"states must be 'finished', 'completed' or a collection of states, got {states!r}")
        kept = tuple(states)
        bad = [s for s in kept if s not in FINISHED_STATES]
        if bad:
            raise ValueError(f"states: {bad} are not final states; choose among {list(FINISHED_STATES)}")
    if not isinstance(gpu_only, (bool, np.bool_)):
        raise TypeError(f"gpu_only must be True or False, got {gpu_only!r}")
    return lo, hi, vcs, kept, bool(gpu_only)


def _check_unique(raw: RawLog, path, problems: Problems) -> np.ndarray:
    """Bad mask of rows whose id appeared on an earlier row (the later one is the mistake)."""
    bad = np.zeros(raw.name.size, dtype=bool)
    if len(set(raw.name.tolist())) == raw.name.size:  # hashing, not sorting a million strings
        return bad
    first = {}
    for i, name in enumerate(raw.name):
        k = first.setdefault(name, i)
        if k != i:
            problems.report(f"{where(path, int(raw.line[i]))}: duplicate job id {name!r} (first on line {raw.line[k]})")
            bad[i] = True
    return bad


def _member(values: np.ndarray, members) -> np.ndarray:
    """``values[i] in members`` for an object array of a few distinct strings (no sort, no copy)."""
    table = {v: v in members for v in set(values.tolist())}
    return np.fromiter(map(table.__getitem__, values), dtype=bool, count=values.size)


def finish(raw: RawLog, drops: Counter, problems: Problems, fmt: str, path, filters, *, end_at) -> LogRead:
    """Check, filter and rebase ``raw`` into a :class:`LogRead`.

    ``end_at(row) -> str`` names where a row's end time is (``path:line[:col]: field``), for
    the "ends before it starts" message. ``filters`` comes from :func:`check_filters`.
    """
    lo, hi, vcs, kept_states, gpu_only = filters
    backwards = np.flatnonzero(raw.end < raw.start)  # NaN compares False: absent times pass
    bad = _check_unique(raw, path, problems)
    for i in backwards:
        if not bad[i]:
            problems.report(
                f"{end_at(i)} ends before the job starts ({raw.end[i] - raw.start[i]:+.0f} s after its start)"
            )
        bad[i] = True
    if bad.any():
        drops["malformed row"] += int(bad.sum())
        raw = RawLog(*(col[~bad] for col in raw))
    n = raw.name.size
    # Each reason in DROP_REASONS order; a job is counted under the first that applies.
    origin_all = float(np.min(raw.submit)) if n else math.nan
    offset = raw.submit - origin_all
    tests = (
        # No end after a start: still running when the log was taken. No start at all: never ran.
        ("unfinished", _member(raw.state, UNFINISHED_STATES) | (np.isnan(raw.end) & ~np.isnan(raw.start))),
        ("never started", np.isnan(raw.start)),
        ("outside window", (offset < lo) | (offset >= hi)),
        ("state not kept", ~_member(raw.state, kept_states)),
        ("other virtual cluster", ~_member(raw.vc, vcs) if vcs is not None else np.zeros(n, dtype=bool)),
        ("no GPUs", (raw.gpus == 0) if gpu_only else np.zeros(n, dtype=bool)),
    )
    keep = np.ones(n, dtype=bool)
    for reason, hit in tests:
        hit = hit & keep
        if hit.any():
            drops[reason] += int(hit.sum())
        keep &= ~hit
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(raw.submit[idx], kind="stable")]
    origin = float(raw.submit[idx[0]]) if idx.size else math.nan
    jobs = LogJobs._own(
        name=raw.name[idx],
        submit=raw.submit[idx] - origin,
        duration=raw.end[idx] - raw.start[idx],
        gpus=raw.gpus[idx],
        nodes=raw.nodes[idx],
        gpu_type=raw.gpu_type[idx],
        state=raw.state[idx],
        vc=raw.vc[idx],
        user=raw.user[idx],
        queued=raw.start[idx] - raw.submit[idx],
    )
    dropped = count_drops(drops)
    return LogRead(jobs, dropped, fmt, origin, len(jobs) + sum(dropped.values()), tuple(problems.messages))
