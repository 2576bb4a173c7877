"""Warming dask workers: compile (or load) the simulator's kernels once per worker process."""

from __future__ import annotations

import contextlib
import time

from fastsched import _warmup_run

__all__ = ["warm_up", "warm_plugin"]


def warm_up(policies=("pollux", "tiresias", "optimus")) -> float:
    """Compile (or load from numba's cache) the simulator's kernels with tiny simulations.

    Returns the seconds it took; failures are ignored (the first real task then compiles).

    Examples
    --------
    >>> warm_up() >= 0  # doctest: +SKIP
    True
    """
    t0 = time.perf_counter()
    with contextlib.suppress(Exception):  # best effort: a real task reports real errors
        _warmup_run.warmup(policies=policies, costmodel=False)
    return time.perf_counter() - t0


def warm_plugin(policies=("pollux", "tiresias", "optimus")):
    """Build a dask ``WorkerPlugin`` that runs :func:`warm_up` for ``policies`` on each worker once, when it starts.

    Examples
    --------
    >>> warm_plugin().name  # doctest: +SKIP
    'fastsched-sweep-warmup'
    """
    from distributed.diagnostics.plugin import WorkerPlugin  # optional dependency (the dask extra)

    class SweepWarmUp(WorkerPlugin):
        name = "fastsched-sweep-warmup"

        def __init__(self, policies):
            self.policies = tuple(policies)

        def setup(self, worker):
            worker.fastsched_warmup_s = warm_up(self.policies)

    return SweepWarmUp(policies)
