"""Several policies on one workload and cluster: run them (in parallel processes), one table, one figure.

The face of ``fastsched simulate W --policy a,b,c``. Every policy gets the same arguments of
:func:`~fastsched.sim.simulate`; each run is deterministic, so the results do not depend on
how many processes ran them or in which order they finished.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
import os
import signal

import numpy as np

from fastsched.sim.api import simulate

__all__ = ["run_policies", "comparison_table", "plot_comparison", "usable_cores"]

#: Columns of :func:`comparison_table`: (summary key, header, scale, format).
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


def usable_cores() -> int:
    """Return the CPU cores this process may run on.

    Examples
    --------
    >>> usable_cores() >= 1
    True
    """
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - not Linux
        return max(os.cpu_count() or 1, 1)


def _run_one(policy, kwargs):
    return simulate(policy=policy, **kwargs)


def run_policies(policies, *, workers=None, on_done=None, **kwargs) -> list:
    """Run :func:`~fastsched.sim.simulate` once per policy with the same ``kwargs``.

    Parameters
    ----------
    policies : sequence of str
        Policy names (built-in, ``module:Class`` or plugin names), at least one, no repeats.
    workers : int, optional
        Processes to use; default: one per policy up to the usable cores. ``1`` runs them here,
        one after the other.
    on_done : callable, optional
        Called as ``on_done(policy, result)`` as each run finishes (completion order).
    **kwargs
        Passed to every :func:`~fastsched.sim.simulate` call (not ``policy``, ``output`` or
        ``progress``: one log or bar per run would interleave).

    Returns
    -------
    list of SimulationResult
        In the order of ``policies``.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128), WorkloadJob("b", 30, "ncf", 1, 32768)]
    >>> results = run_policies(["fifo", "tiresias"], workers=1, workload=jobs, nodes=1, gpus=4)
    >>> [(r.policy, r.completed) for r in results]
    [('fifo', 2), ('tiresias', 2)]
    """
    policies = list(policies)
    if not policies:
        raise ValueError("policies must name at least one policy")
    if len(set(policies)) != len(policies):
        raise ValueError(f"policies must not repeat a name, got {policies}")
    for key in ("policy", "output", "progress"):
        if key in kwargs:
            raise ValueError(f"run_policies runs several policies: {key} cannot be given")
    if workers is None:
        workers = min(len(policies), usable_cores())
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    results: dict = {}
    if workers == 1 or len(policies) == 1:
        for p in policies:
            results[p] = _run_one(p, kwargs)
            if on_done is not None:
                on_done(p, results[p])
    else:
        # spawn, not fork: a forked child inherits the parent's thread pools (BLAS, numba) mid-state.
        ctx = multiprocessing.get_context("spawn")
        # The workers ignore Ctrl-C (the terminal sends it to them too, and an idle one would
        # print a traceback); the parent takes it and terminates them at once, as it does when
        # one run fails: nothing waits for the other runs to end. (Not multiprocessing.Pool:
        # its daemonic workers could not start processes of their own.)
        pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=min(workers, len(policies)), mp_context=ctx, initializer=_ignore_sigint
        )
        try:
            futures = {pool.submit(_run_one, p, kwargs): p for p in policies}
            for fut in concurrent.futures.as_completed(futures):
                p = futures[fut]
                results[p] = fut.result()
                if on_done is not None:
                    on_done(p, results[p])
        except BaseException:
            _terminate(pool)
            raise
        pool.shutdown()
    return [results[p] for p in policies]


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate(pool) -> None:
    # The other runs are not waited for (a policy of one's own may never end).
    stop = getattr(pool, "terminate_workers", None)  # Python 3.14
    if stop is not None:
        stop()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())  # shutdown drops the mapping
    for proc in procs:
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.join(5)


def _cell(value, scale, fmt):
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return fmt.format(value * scale)


def comparison_table(results) -> str:
    """Return one aligned text table: a row per result (policy), the field's metrics as columns.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128)]
    >>> print(comparison_table([simulate(jobs, policy="fifo", nodes=1, gpus=4)]))  # doctest: +ELLIPSIS
    policy  done  avg JCT (h)  p50 (h)  p99 JCT (h)  makespan (h)  GPU-h/job  util %  restarts/job  contention  max  FTF worst  wall (s)
    fifo       1        1.164    1.164         1.16          1.16       1.15    24.6          0.00         1.0    1       0.99  ...
    """
    header = ["policy"] + [h for _, h, _, _ in COLUMNS]
    rows = []
    for r in results:
        s = r.summary()
        rows.append([str(s["policy"])] + [_cell(s.get(k), scale, fmt) for k, _, scale, fmt in COLUMNS])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def plot_comparison(results, path) -> None:
    """Save a figure overlaying the results: GPUs in use over time, and the JCT distributions.

    Raises
    ------
    ImportError
        If matplotlib is not installed (``pip install fastsched[plot]``).

    Examples
    --------
    Needs matplotlib (the ``plot`` extra):

    >>> import pathlib, tempfile
    >>> from fastsched.sim import WorkloadJob
    >>> results = run_policies(["fifo", "srtf"], workers=1, workload=[WorkloadJob("a", 0, "cifar10", 1, 128)],
    ...                        nodes=1, gpus=4)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "compare.png"
    >>> plot_comparison(results, path)  # doctest: +SKIP
    >>> path.is_file()  # doctest: +SKIP
    True
    """
    from fastsched.sim.results.plot import pyplot

    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for r in results:
        line = ax1.step(r.times / 3600.0, r.used_gpus, where="post", lw=1, label=r.policy)[0]
        jcts = np.sort(r.jcts) / 3600.0
        if jcts.size:
            ax2.step(jcts, np.arange(1, jcts.size + 1) / jcts.size, where="post", color=line.get_color(),
                     label=f"{r.policy} (mean {r.avg_jct / 3600:.2f} h)")  # fmt: skip
    # The cluster under the run that lasts longest: drawn from the first run, it stopped where that run did.
    ran = [r for r in results if r.total_gpus.size]
    if ran:
        last = max(ran, key=lambda r: r.times[-1])
        ax1.step(last.times / 3600.0, last.total_gpus, where="post", color="k", lw=1, label="cluster GPUs")
    ax1.set_xlabel("time (h)")
    ax1.set_ylabel("GPUs allocated")
    ax1.set_title("GPUs in use")
    ax1.legend(loc="upper right")
    ax2.set_xscale("log")
    ax2.set_xlabel("job completion time (h)")
    ax2.set_ylabel("fraction of jobs")
    ax2.set_title("JCT distribution")
    if any(np.size(r.jcts) for r in results):
        ax2.legend(loc="lower right")
    else:  # matplotlib warns on stderr about a legend with nothing in it
        ax2.text(0.5, 0.5, "no job completed", ha="center", va="center", transform=ax2.transAxes)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
