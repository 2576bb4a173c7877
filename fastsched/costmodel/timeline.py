"""Gantt chart of a pipeline schedule (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

__all__ = ["plot_timeline"]


def plot_timeline(schedule, path, title=None) -> None:
    """Draw one row per stage: forward, backward and optimizer events, to ``path``.

    Parameters
    ----------
    schedule : PipelineSchedule
        From :meth:`CostModel.get_pipeline_schedule` or :func:`~fastsched.costmodel.schedules.pipeline_schedule`.
    path : str or Path
        Output image file.
    title : str, optional

    Examples
    --------
    Needs matplotlib (the ``plot`` extra):

    >>> from fastsched.costmodel.schedules import pipeline_schedule
    >>> import pathlib, tempfile
    >>> ev = pipeline_schedule([1.0, 1.0], [1.0, 1.0], [0.0, 0.0], 2, schedule="gpipe")
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "timeline.png"
    >>> plot_timeline(ev, path, title="gpipe")  # doctest: +SKIP
    >>> path.is_file()  # doctest: +SKIP
    True
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--timeline needs matplotlib (pip install fastsched[plot])") from None
    colors = {0: "tab:blue", 1: "tab:orange", 2: "tab:green", 3: "tab:purple"}  # F, B, optimizer, W
    n_st = int(schedule.stage.max()) + 1 if schedule.stage.size else 1
    fig, ax = plt.subplots(figsize=(10, 1 + 0.6 * n_st))
    for s, k, mb, a, b in zip(
        schedule.stage, schedule.kind, schedule.microbatch, schedule.start, schedule.end, strict=False
    ):
        ax.barh(int(s), b - a, left=a, color=colors[int(k)], edgecolor="black", linewidth=0.4)
        if mb >= 0 and b > a:
            ax.text((a + b) / 2, int(s), str(int(mb)), ha="center", va="center", fontsize=7)
    ax.set_yticks(range(n_st))
    ax.set_yticklabels([f"stage {s}" for s in range(n_st)])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(title or f"pipeline: {schedule.total:.6g} ms")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
