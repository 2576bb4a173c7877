"""Gantt chart of a pipeline schedule (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

__all__ = ["plot_timeline", "KIND_LABELS"]

#: Event kinds of :class:`~fastsched.costmodel.schedules.PipelineSchedule`: (legend label, colour).
KIND_LABELS = {
    0: ("forward", "tab:blue"),
    1: ("backward", "tab:orange"),
    3: ("weight gradient", "tab:purple"),
    2: ("optimizer", "tab:green"),
}


def plot_timeline(schedule, path, title=None) -> None:
    """Draw one row per stage: forward, backward, weight-gradient and optimizer events, to ``path``.

    A legend names the kinds of event drawn (:data:`KIND_LABELS`); the numbers on the bars are
    the microbatches.

    Parameters
    ----------
    schedule : PipelineSchedule
        From :meth:`CostModel.get_pipeline_schedule` or :func:`~fastsched.costmodel.schedules.pipeline_schedule`.
    path : str or Path
        Output image file.
    title : str, optional

    Raises
    ------
    ValueError
        ``schedule`` has no events (a program without a pipeline), or matplotlib is missing.

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
    if schedule.stage.size == 0:
        raise ValueError("no pipeline schedule to draw (the program has no pipeline stages)")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--timeline needs matplotlib (pip install fastsched[plot])") from None
    from matplotlib.patches import Patch

    n_st = int(schedule.stage.max()) + 1
    fig, ax = plt.subplots(figsize=(10, 1 + 0.6 * n_st))
    for s, k, mb, a, b in zip(
        schedule.stage, schedule.kind, schedule.microbatch, schedule.start, schedule.end, strict=False
    ):
        ax.barh(int(s), b - a, left=a, color=KIND_LABELS[int(k)][1], edgecolor="black", linewidth=0.4)
        if mb >= 0 and b > a:
            ax.text((a + b) / 2, int(s), str(int(mb)), ha="center", va="center", fontsize=7)
    ax.set_yticks(range(n_st))
    ax.set_yticklabels([f"stage {s}" for s in range(n_st)])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(title or f"pipeline: {schedule.total:.6g} ms")
    present = {int(k) for k in schedule.kind}
    handles = [Patch(facecolor=c, edgecolor="black", label=lab) for k, (lab, c) in KIND_LABELS.items() if k in present]
    # outside the axes, so it never hides a bar
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title="event")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
