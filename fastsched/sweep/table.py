"""The result tables of a sweep: one row per run, one summary row per configuration."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from fastsched.sweep.spec import RunConfig
from fastsched.sweep.task import FIELD_METRICS, METRICS

__all__ = ["SweepResult", "make_row", "summarize", "cell", "unfinished", "SUMMARY_METRICS", "row_header",
           "summary_header"]  # fmt: skip

#: Figures aggregated in ``summary.csv`` (mean and standard deviation over repetitions).
SUMMARY_METRICS = ("avg_jct_s", "p99_jct_s", "makespan_s", "gpu_utilization", "wall_s", *FIELD_METRICS)


def cell(v) -> str:
    """Format a table cell: JSON for mappings and lists, empty for ``None``.

    Examples
    --------
    >>> cell(None), cell(3), cell({"b": 1, "a": 2})
    ('', '3', '{"a": 2, "b": 1}')
    """
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return "" if v is None else str(v)


def unfinished(row) -> bool:
    """Whether a run's row is of a run that ended without error and left jobs unfinished.

    Examples
    --------
    >>> unfinished({"completed": 1, "jobs": 2}), unfinished({"completed": 2, "jobs": 2}), unfinished({"error": "x"})
    (True, False, False)
    """
    return not row.get("error") and (row.get("completed") or 0) < (row.get("jobs") or 0)


def make_row(run: RunConfig, columns, out: dict) -> dict:
    """Return the table row of ``run``: id, configuration columns, repetition, seed, figures, wall time, error.

    Examples
    --------
    >>> from fastsched.sweep.spec import load_spec
    >>> run = load_spec({"workloads": "builtin", "policy": ["tiresias"], "seed": 7}).runs()[0]
    >>> row = make_row(run, ["workload", "policy"], {"avg_jct_s": 10.0, "wall_s": 0.5, "error": None})
    >>> row["workload"], row["policy"], row["seed"], row["avg_jct_s"], row["makespan_s"], row["wall_s"]
    ('builtin', 'tiresias', 1944921588, 10.0, None, 0.5)
    """
    row = {"run_id": run.run_id}
    row.update({c: run.config.get(c) for c in columns})
    row["repetition"] = run.repetition
    row["seed"] = run.seed
    row.update({k: out.get(k) for k in METRICS})
    row["wall_s"] = out.get("wall_s")
    row["error"] = out.get("error")
    return row


def row_header(columns) -> list:
    """Columns of ``runs.csv``.

    Examples
    --------
    >>> header = row_header(["workload", "policy"])
    >>> header[:5], header[-2:]
    (['run_id', 'workload', 'policy', 'repetition', 'seed'], ['wall_s', 'error'])
    """
    return ["run_id", *columns, "repetition", "seed", *METRICS, "wall_s", "error"]


def summary_header(columns) -> list:
    """Columns of ``summary.csv``.

    Examples
    --------
    >>> header = summary_header(["policy"])
    >>> header[:6], "avg_jct_s_mean" in header, "avg_jct_s_std" in header
    (['policy', 'runs', 'errors', 'incomplete_runs', 'completed', 'jobs'], True, True)
    """
    stats = [f"{m}_{s}" for m in SUMMARY_METRICS for s in ("mean", "std")]
    return [*columns, "runs", "errors", "incomplete_runs", "completed", "jobs", *stats]


def _mean_std(values):
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None, None
    mean = sum(vals) / len(vals)
    if len(vals) < 2:
        return mean, None
    var = sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)
    return mean, math.sqrt(var)


def summarize(rows, columns) -> list:
    """Group rows by configuration: counts, and mean and sample std of each figure.

    ``completed`` and ``jobs`` are summed over the successful runs of the configuration and
    ``incomplete_runs`` counts those that stopped with jobs unfinished, so an average over a
    few completed jobs is never mistaken for the full run's.

    Examples
    --------
    >>> rows = [{"policy": "a", "avg_jct_s": 10.0, "completed": 2, "jobs": 2, "error": None},
    ...         {"policy": "a", "avg_jct_s": 20.0, "completed": 1, "jobs": 2, "error": None}]
    >>> s = summarize(rows, ["policy"])[0]
    >>> s["runs"], s["incomplete_runs"], s["completed"], s["jobs"], s["avg_jct_s_mean"]
    (2, 1, 3, 4, 15.0)
    """
    groups = {}
    for r in rows:
        key = json.dumps([r.get(c) for c in columns], sort_keys=True)
        groups.setdefault(key, []).append(r)
    out = []
    for members in groups.values():
        s = {c: members[0].get(c) for c in columns}
        ok = [r for r in members if not r.get("error")]
        s["runs"] = len(members)
        s["errors"] = len(members) - len(ok)
        s["incomplete_runs"] = sum(map(unfinished, ok))
        s["completed"] = sum(r.get("completed") or 0 for r in ok)
        s["jobs"] = sum(r.get("jobs") or 0 for r in ok)
        for m in SUMMARY_METRICS:
            s[f"{m}_mean"], s[f"{m}_std"] = _mean_std([r.get(m) for r in ok])
        out.append(s)
    return out


@dataclass
class SweepResult:
    """Outcome of a sweep.

    Attributes
    ----------
    rows : list of dict
        One per run, in spec order: ``run_id``, the configuration, ``repetition``, ``seed``,
        :data:`~fastsched.sweep.task.METRICS`, ``wall_s``, ``error``.
    summary : list of dict
        One per configuration (see :func:`summarize`).
    output_dir : Path or None
    elapsed_s : float
        Wall-clock seconds of the sweep (submission to last row), without cluster start-up.
    skipped : int
        Runs taken from an earlier sweep in ``output_dir``.
    columns : list of str
        Configuration columns (``workload`` and the gridded keys).

    Examples
    --------
    >>> r = SweepResult(rows=[{"policy": "a", "error": None, "completed": 1, "jobs": 2}],
    ...                 summary=summarize([{"policy": "a", "avg_jct_s": 5.0, "completed": 1, "jobs": 2}], ["policy"]),
    ...                 columns=["policy"])
    >>> len(r.incomplete), len(r.errors)
    (1, 0)
    >>> print(r.table())  # doctest: +NORMALIZE_WHITESPACE
    policy  runs  err  done  avg_jct_s  p99_jct_s  makespan_s  util
    ------  ----  ---  ----  ---------  ---------  ----------  ----
    a       1     0    1/2!  5          -          -           -
    """

    rows: list
    summary: list
    output_dir: Path | None = None
    elapsed_s: float = 0.0
    skipped: int = 0
    columns: list = field(default_factory=list)

    @property
    def errors(self) -> list:
        """Rows whose run failed."""
        return [r for r in self.rows if r.get("error")]

    @property
    def incomplete(self) -> list:
        """Rows of runs that stopped with jobs unfinished."""
        return [r for r in self.rows if unfinished(r)]

    def table(self) -> str:
        """Render the summary as an aligned plain-text table (``done``: completed / jobs, ``!`` when short).

        Times in seconds, named so (``avg_jct_s``): mean over the repetitions, ``±`` their standard
        deviation.

        Examples
        --------
        >>> rows = [{"policy": "a", "avg_jct_s": 4.0, "completed": 2, "jobs": 2},
        ...         {"policy": "a", "avg_jct_s": 6.0, "completed": 2, "jobs": 2}]
        >>> r = SweepResult(rows=rows, summary=summarize(rows, ["policy"]), columns=["policy"])
        >>> print(r.table().splitlines()[2])
        a       2     0    4/4   5 ±1       -          -           -
        """
        head = [*self.columns, "runs", "err", "done", "avg_jct_s", "p99_jct_s", "makespan_s", "util"]
        lines = []
        for s in self.summary:
            short = "!" if s["completed"] < s["jobs"] else ""
            cells = [cell(s[c]) for c in self.columns] + [str(s["runs"]), str(s["errors"])]
            cells.append(f"{s['completed']}/{s['jobs']}{short}")
            for m in ("avg_jct_s", "p99_jct_s", "makespan_s"):
                mean, std = s[f"{m}_mean"], s[f"{m}_std"]
                cells.append("-" if mean is None else f"{mean:.0f}" + ("" if std is None else f" ±{std:.0f}"))
            u = s["gpu_utilization_mean"]
            cells.append("-" if u is None else f"{100 * u:.1f}%")
            lines.append(cells)
        widths = [max(len(h), *(len(r[i]) for r in lines)) if lines else len(h) for i, h in enumerate(head)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in lines])
