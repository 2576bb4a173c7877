"""A sweep's figure: the average JCT of every configuration, its repetitions (seeds) as error bars and points."""

from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["plot_sweep", "config_labels"]


def config_labels(result) -> list:
    """Return one label per configuration of a sweep: the columns that differ between configurations.

    A workload is named by its file name; a column that has one value in the whole sweep is left
    out (it says nothing about the difference).

    Examples
    --------
    >>> from fastsched.sweep.table import SweepResult, summarize
    >>> rows = [{"workload": "a/w.csv", "policy": p, "avg_jct_s": 1.0} for p in ("fifo", "sia")]
    >>> config_labels(SweepResult(rows, summarize(rows, ["workload", "policy"]), columns=["workload", "policy"]))
    ['policy=fifo', 'policy=sia']
    """

    def shown(column, value):
        if column == "workload" and isinstance(value, str):
            return Path(value).name
        return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)

    columns = [c for c in result.columns if len({shown(c, s.get(c)) for s in result.summary}) > 1]
    if not columns:
        return ["all runs" if len(result.summary) == 1 else f"configuration {i}" for i in range(len(result.summary))]
    return [", ".join(f"{c}={shown(c, s.get(c))}" for c in columns) for s in result.summary]


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def plot_sweep(result, path) -> None:
    """Save a figure of a sweep: per configuration, the mean of the runs' average JCT (hours).

    The error bar is the standard deviation over the configuration's repetitions (seeds), and each
    repetition is a point, so the spread is visible with two seeds as with twenty. Failed runs and
    configurations without a completed job are left out; a configuration with runs that left jobs
    unfinished is marked ``(incomplete)``, as the sweep's table marks it with ``!``.

    Parameters
    ----------
    result : SweepResult
    path : str or path
        The image file; the suffix picks the format.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install fastsched[plot]``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from fastsched.sweep.table import SweepResult, summarize
    >>> rows = [{"policy": "a", "avg_jct_s": 3600.0 * (1 + s), "completed": 2, "jobs": 2} for s in range(3)]
    >>> result = SweepResult(rows, summarize(rows, ["policy"]), columns=["policy"])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "sweep.png"
    >>> plot_sweep(result, path)  # doctest: +SKIP
    >>> path.is_file()  # doctest: +SKIP
    True
    """
    from fastsched.sim.results.plot import pyplot  # matplotlib, an optional extra

    plt = pyplot()
    labels = config_labels(result)
    key = lambda r: json.dumps([r.get(c) for c in result.columns], sort_keys=True)  # noqa: E731 - as summarize groups
    runs = {}
    for r in result.rows:
        if not r.get("error") and _finite(r.get("avg_jct_s")):
            runs.setdefault(key(r), []).append(r["avg_jct_s"] / 3600.0)
    n = len(result.summary)
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.45 * n + 1.5)))
    ys, names = [], []
    for i, (s, label) in enumerate(zip(result.summary, labels, strict=True)):
        y = n - 1 - i  # the first configuration on top, as in the table
        mean, std = s.get("avg_jct_s_mean"), s.get("avg_jct_s_std")
        short = " (incomplete)" if s.get("completed", 0) < s.get("jobs", 0) else ""
        ys.append(y)
        names.append(label + short)
        if not _finite(mean):
            ax.text(0, y, "  no completed job", va="center", fontsize=8, color="0.4")
            continue
        ax.errorbar(mean / 3600.0, y, xerr=std / 3600.0 if _finite(std) else None, fmt="o", color="C0", ms=7,
                    capsize=4, zorder=3)  # fmt: skip
        seeds = runs.get(key(s), [])
        ax.scatter(seeds, [y] * len(seeds), marker="|", s=120, color="C1", zorder=4)
    ax.set_yticks(ys, names, fontsize=8)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel("average job completion time (h)")
    reps = max((s.get("runs", 0) for s in result.summary), default=0)
    ax.set_title(f"{n} configuration(s), up to {reps} repetition(s) each: mean ± std (dot, bar), each seed (|)")
    ax.set_xlim(left=0)  # from zero: the gaps between configurations in proportion
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
