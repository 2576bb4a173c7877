"""A comparison of policies as data, text and a figure: one table row per policy (streamable), one plot.

:class:`ComparisonTable` formats rows one at a time, in fixed columns, so the command line prints
each policy's row as its run finishes (:mod:`fastsched.sim._compare` runs them);
:func:`comparison_table` is the whole table at once. Times in the table are hours, and every
such column says ``(h)``; the data (``summary()``, ``--json``) stays in seconds.
:func:`plot_comparison` overlays the runs, readable with all 14 built-in policies: each policy
has its own colour and marker, the same in every panel, and one legend outside the data.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["COLUMNS", "ComparisonTable", "comparison_table", "plot_comparison", "comparison_figure", "series_styles"]

#: Columns of the table: (summary key, header, scale, format).
COLUMNS = (
    ("completed", "done", 1.0, "{:.0f}"),
    ("avg_jct", "avg JCT (h)", 1 / 3600, "{:.3f}"),
    ("p50_jct", "p50 (h)", 1 / 3600, "{:.3f}"),
    ("p99_jct", "p99 JCT (h)", 1 / 3600, "{:.2f}"),
    ("makespan", "makespan (h)", 1 / 3600, "{:.2f}"),
    ("gpu_hours_per_job", "GPU-h/job", 1.0, "{:.2f}"),
    ("gpu_utilization", "util %", 100.0, "{:.1f}"),
    ("restarts_per_job", "restarts/job", 1.0, "{:.2f}"),
    ("contention_mean", "contention", 1.0, "{:.1f}"),
    ("contention_max", "max", 1.0, "{:.0f}"),
    ("ftf_worst", "FTF worst", 1.0, "{:.2f}"),
    ("wall_s", "wall (s)", 1.0, "{:.1f}"),
)


def _cell(value, scale, fmt):
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return fmt.format(value * scale)


class ComparisonTable:
    """Rows of the comparison table, one at a time, in columns fixed before the first row.

    Parameters
    ----------
    names : iterable of str
        Every policy name a row may carry (sizes the first column).
    widths : dict, optional
        Minimum width of a column by header; each is at least its header's and 7 characters,
        wide enough for the figures of a run of months on thousands of GPUs.

    Examples
    --------
    >>> t = ComparisonTable(["fifo", "tiresias"])
    >>> t.header().split()[:4]
    ['policy', 'done', 'avg', 'JCT']
    >>> t.row({"policy": "fifo", "completed": 2, "avg_jct": 5400.0}).split()[:3]
    ['fifo', '2', '1.500']
    """

    def __init__(self, names, widths=None):
        widths = dict(widths or {})
        self.first = max([len("policy"), *(len(str(n)) for n in names)])
        self.widths = [max(len(h), 7, widths.get(h, 0)) for _, h, _, _ in COLUMNS]

    def _line(self, first, cells) -> str:
        parts = [str(first).ljust(self.first)] + [c.rjust(w) for c, w in zip(cells, self.widths, strict=True)]
        return "  ".join(parts).rstrip()

    def header(self) -> str:
        """Return the header line."""
        return self._line("policy", [h for _, h, _, _ in COLUMNS])

    def row(self, summary: dict) -> str:
        """Return the row of one run's ``summary()``."""
        return self._line(summary["policy"], [_cell(summary.get(k), scale, fmt) for k, _, scale, fmt in COLUMNS])


def comparison_table(results) -> str:
    """Return one aligned text table: a row per result (policy), the field's metrics as columns.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128)]
    >>> print(comparison_table([simulate(jobs, policy="fifo", nodes=1, gpus=4)]))  # doctest: +ELLIPSIS
    policy  done  avg JCT (h)  p50 (h)  p99 JCT (h)  makespan (h)  GPU-h/job   util %  restarts/job  contention      max  FTF worst  wall (s)
    fifo          1        1.164    1.164         1.16          1.16       1.15     24.6          0.00         1.0        1       0.99  ...
    """
    summaries = [r.summary() for r in results]
    table = ComparisonTable([s["policy"] for s in summaries])
    return "\n".join([table.header(), *(table.row(s) for s in summaries)])


#: Markers cycled with the colours: with 20 colours and 10 markers, no two of 20 policies look alike.
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<")


def series_styles(n: int) -> list:
    """Return ``n`` distinct ``(colour, marker)`` pairs: matplotlib's tab20 colours, each with its own marker.

    Colours alone repeat after ten in matplotlib's default cycle (pollux and gandiva shared a blue);
    tab20's twenty colours and a marker per series keep 14 policies apart, also in grey print.

    Examples
    --------
    >>> styles = series_styles(14)
    >>> len(set(styles)) == 14 and len({c for c, _ in styles}) == 14
    True
    """
    palette = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
        "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
        "#dbdb8d", "#9edae5",
    ]  # fmt: skip  # matplotlib's tab20, darker tones first
    return [(palette[i % len(palette)], MARKERS[i % len(MARKERS)]) for i in range(n)]


def _every(n: int) -> int:
    return max(1, n // 12)  # about a dozen markers per line, whatever the run's length


def plot_comparison(results, path) -> None:
    """Save a figure overlaying the results.

    Panels: GPUs in use over time (with the cluster's GPUs), the JCT distributions, and on a
    cluster of GPU types one panel per type (GPUs held of that type, its size dashed). Each
    policy keeps one colour and one marker (:func:`series_styles`) in every panel; one legend,
    outside the panels on the right, names them with their mean JCT.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install fastsched[plot]``).

    Examples
    --------
    Needs matplotlib (the ``plot`` extra):

    >>> import pathlib, tempfile
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128)]
    >>> results = [simulate(jobs, policy=p, nodes=1, gpus=4) for p in ("fifo", "srtf")]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "compare.png"
    >>> plot_comparison(results, path)  # doctest: +SKIP
    >>> path.is_file()  # doctest: +SKIP
    True
    """
    from fastsched.sim.results.plot import pyplot

    plt = pyplot()
    fig = comparison_figure(results)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def comparison_figure(results):
    """Return the matplotlib figure :func:`plot_comparison` saves (for a notebook, or to adjust it).

    Examples
    --------
    Needs matplotlib (the ``plot`` extra):

    >>> from fastsched.sim import WorkloadJob, simulate
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128)]
    >>> fig = comparison_figure([simulate(jobs, policy=p, nodes=1, gpus=4) for p in ("fifo", "srtf")])  # doctest: +SKIP
    >>> len(fig.axes), len(fig.legends)  # doctest: +SKIP
    (2, 1)
    """
    from fastsched.sim.results.plot import pyplot
    from fastsched.sim.results.result import cluster_shape

    plt = pyplot()
    types = []
    for r in results:
        for t in getattr(r, "used_gpus_by_type", None) or {}:
            if t not in types:
                types.append(t)
    ncols = max(2, len(types))
    fig = plt.figure(figsize=(5.2 * ncols + 3.2, 4.2 * (2 if types else 1)))
    grid = fig.add_gridspec(2 if types else 1, ncols)
    ax1 = fig.add_subplot(grid[0, : ncols // 2])
    ax2 = fig.add_subplot(grid[0, ncols // 2 :])
    type_axes = [fig.add_subplot(grid[1, i]) for i in range(len(types))]
    styles = series_styles(len(results))
    for r, (color, marker) in zip(results, styles, strict=True):
        hours = r.times / 3600.0
        mean = f" (mean JCT {r.avg_jct / 3600:.2f} h)" if r.avg_jct is not None else " (no job completed)"
        ax1.step(hours, r.used_gpus, where="post", lw=1, color=color, marker=marker, ms=4,
                 markevery=_every(hours.size), label=f"{r.policy}{mean}")  # fmt: skip
        jcts = np.sort(r.jcts) / 3600.0
        if jcts.size:
            ax2.step(jcts, np.arange(1, jcts.size + 1) / jcts.size, where="post", lw=1, color=color, marker=marker,
                     ms=4, markevery=_every(jcts.size))  # fmt: skip
        for ax, t in zip(type_axes, types, strict=True):
            used = (getattr(r, "used_gpus_by_type", None) or {}).get(t)
            if used is not None and used.size == hours.size:
                ax.step(hours, used, where="post", lw=1, color=color, marker=marker, ms=3, markevery=_every(hours.size))
    # The cluster under the run that lasts longest: drawn from the first run, it stopped where that run did.
    ran = [r for r in results if r.total_gpus.size]
    if ran:
        last = max(ran, key=lambda r: r.times[-1])
        ax1.step(last.times / 3600.0, last.total_gpus, where="post", color="k", lw=1.5, ls="--", label="cluster GPUs")
        capacity = cluster_shape(last.config).get("gpus_by_type", {})
        for ax, t in zip(type_axes, types, strict=True):
            if t in capacity:
                ax.axhline(capacity[t], color="k", ls="--", lw=1.2)
            ax.set_title(f"{t}: GPUs held (dashed: its {capacity.get(t, '?')} GPUs)")
            ax.set_xlabel("time (h)")
            ax.set_ylabel("GPUs allocated")
            ax.set_ylim(bottom=0)
    ax1.set_xlabel("time (h)")
    ax1.set_ylabel("GPUs allocated")
    ax1.set_title("GPUs in use")
    ax2.set_xscale("log")
    ax2.set_xlabel("job completion time (h)")
    ax2.set_ylabel("fraction of jobs")
    ax2.set_title("JCT distribution")
    if not any(np.size(r.jcts) for r in results):
        ax2.text(0.5, 0.5, "no job completed", ha="center", va="center", transform=ax2.transAxes)
    # One legend for every panel, beside them: never over the data, however many policies.
    handles, labels = ax1.get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
