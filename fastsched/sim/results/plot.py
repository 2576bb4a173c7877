"""Figure of a simulation: allocation over time (per job; per GPU type too) and the JCT distribution.

Needs matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import numpy as np

__all__ = ["plot_result"]


def pyplot():
    """Return ``matplotlib.pyplot`` on the file-only Agg backend, or say how to install it.

    Examples
    --------
    >>> pyplot().__name__  # doctest: +SKIP
    'matplotlib.pyplot'
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'fastsched[plot]'") from None
    return plt


def plot_result(result, path) -> None:
    """Save a figure of ``result`` to ``path``.

    Left: GPUs held by each job over time (stacked), with the cluster size. Middle, on a
    cluster of GPU types only: GPUs held of each type over time (solid) against that type's
    GPUs (dashed, same colour). Right: the empirical CDF of job completion times.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install fastsched[plot]``).

    Examples
    --------
    Needs matplotlib (the ``plot`` extra):

    >>> import pathlib, tempfile
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> result = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], policy="tiresias", nodes=1, gpus=4)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.png"
    >>> plot_result(result, path)  # doctest: +SKIP
    >>> path.is_file()  # doctest: +SKIP
    True
    """
    plt = pyplot()
    by_type = getattr(result, "used_gpus_by_type", None)
    if by_type:
        fig, (ax1, axt, ax2) = plt.subplots(1, 3, figsize=(17, 4.5))
    else:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    hours = result.times / 3600.0
    alloc = result.allocations.astype(np.float64)
    if alloc.size:
        used = alloc[:, alloc.sum(axis=0) > 0]
        ax1.stackplot(hours, used.T, linewidth=0)
        ax1.step(hours, result.total_gpus, where="post", color="k", lw=1, label="cluster GPUs")
        ax1.legend(loc="upper right")
    ax1.set_xlabel("time (h)")
    ax1.set_ylabel("GPUs allocated (one colour per job)")
    ax1.set_title(f"{result.policy}: allocation over time")
    if by_type:
        _plot_types(axt, hours, by_type, result.config)
    jcts = np.sort(result.jcts) / 3600.0
    if jcts.size:
        ax2.step(jcts, np.arange(1, jcts.size + 1) / jcts.size, where="post")
        ax2.set_xscale("log")
        ax2.axvline(result.avg_jct / 3600.0, color="r", ls="--", label=f"mean {result.avg_jct / 3600:.2f} h")
        ax2.legend(loc="lower right")
    ax2.set_xlabel("job completion time (h)")
    ax2.set_ylabel("fraction of jobs")
    ax2.set_title("JCT distribution")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_types(ax, hours, by_type, config) -> None:
    from fastsched.sim.results.result import cluster_shape

    capacity = cluster_shape(config).get("gpus_by_type", {})
    for i, (gpu_type, used) in enumerate(by_type.items()):
        color = f"C{i % 10}"
        ax.step(hours, used, where="post", color=color, lw=1.2, label=f"{gpu_type} held")
        if gpu_type in capacity:
            ax.axhline(capacity[gpu_type], color=color, ls="--", lw=1, label=f"{gpu_type}: {capacity[gpu_type]} GPUs")
    ax.set_xlabel("time (h)")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("GPUs allocated")
    ax.set_title("GPUs per type")
    ax.legend(loc="best", fontsize=8)
