"""One run of a sweep as a task: simulate, keep the figures, never raise."""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from fastsched.sweep.spec import clean_number

__all__ = ["run_task", "row_figures", "METRICS", "FIELD_METRICS", "COUNTS"]

#: The scalar figures of :data:`fastsched.sim.results.metrics.METRIC_KEYS` (heterogeneous-cluster study).
FIELD_METRICS = (
    "p50_jct",
    "gpu_hours_per_job",
    "restarts_per_job",
    "contention_mean",
    "contention_max",
    "ftf_worst",
    "ftf_unfair_fraction",
)
#: Per-run figures taken from ``SimulationResult.summary()``.
METRICS = (
    "avg_jct",
    "p99_jct",
    "makespan",
    "gpu_utilization",
    "jobs",
    "completed",
    "incomplete",
    "restarts",
    "rounds",
    "profiles",
    *FIELD_METRICS,
)
#: Of which integer counts.
COUNTS = ("jobs", "completed", "restarts", "rounds")


def row_figures(summary: dict) -> dict:
    """Extract the :data:`METRICS` of one ``SimulationResult.summary()``, JSON-ready (NaN -> ``None``).

    Examples
    --------
    >>> summary = {"avg_jct": float("nan"), "p99_jct": 1.0, "makespan": 2.0, "gpu_utilization": 0.5, "jobs": 2,
    ...            "completed": 0, "incomplete": {"running at the end": 2}, "restarts": 0, "rounds": 3,
    ...            "profiles": "builtin", **dict.fromkeys(FIELD_METRICS, 0.0)}
    >>> row = row_figures(summary)
    >>> row["avg_jct"], row["completed"], row["incomplete"]
    (None, 0, {'running at the end': 2})
    """
    out = {}
    for key in METRICS:
        value = summary[key]
        if key in COUNTS:
            out[key] = int(value)
        elif key in ("incomplete", "profiles"):
            out[key] = value
        else:
            out[key] = clean_number(value)
    return out


def run_task(kwargs: dict, simulate_fn=None) -> dict:
    """Run one simulation and return its figures; never raises.

    Parameters
    ----------
    kwargs : dict
        Keyword arguments of ``simulate_fn`` (``workload`` included).
    simulate_fn : callable, optional
        Default :func:`fastsched.sim.simulate`.

    Returns
    -------
    dict
        :data:`METRICS`, ``wall_s`` and ``error`` (``None``, or the exception as text).

    Examples
    --------
    >>> row = run_task({"workload": "no-such-file.csv"})
    >>> row["error"]  # doctest: +ELLIPSIS
    'FileNotFoundError: workload file not found: no-such-file.csv (at ...)'
    """
    t0 = time.perf_counter()
    try:
        if simulate_fn is None:
            # imported here: a dask worker unpickles this function before the simulator is loaded
            from fastsched.sim import simulate as simulate_fn
        row = row_figures(simulate_fn(**kwargs).summary())
        row["error"] = None
    except Exception as exc:  # noqa: BLE001 - a failing run is a row, not a failed sweep
        row = dict.fromkeys(METRICS)
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
        row["error"] = f"{type(exc).__name__}: {exc}{where}"
    row["wall_s"] = time.perf_counter() - t0
    return row
