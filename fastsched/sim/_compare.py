"""Several policies on one workload and cluster: check them all, then run them (in parallel processes).

The runner behind ``fastsched simulate W --policy a,b,c``. Every policy gets the same arguments of
:func:`~fastsched.sim.simulate`; each run is deterministic, so the results do not depend on how
many processes ran them or in which order they finished.

* :func:`check_policies` makes every check of every policy's run before any run starts (a bad
  batch size for one policy is refused before the others spend an hour);
* :func:`iter_policies` yields each run's outcome as it finishes (a result, or the exception
  that ended it): a failed run does not stop the others, and a consumer keeps every finished
  run when it is interrupted;
* :func:`run_policies` is the all-or-nothing form (a list in the given order; the first error
  stops the rest).

The table and the figure of a comparison are in :mod:`fastsched.sim.results.compare`.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal

from fastsched.sim.api import check_simulation, simulate
from fastsched.sim.results.compare import COLUMNS, comparison_table, plot_comparison

__all__ = [
    "check_policies",
    "iter_policies",
    "run_policies",
    "comparison_table",
    "plot_comparison",
    "usable_cores",
    "COLUMNS",
]


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


def _run_one(policy, kwargs, lines_every=None):
    progress = None
    if lines_every is not None:  # each run's progress as plain lines, prefixed by its policy
        from fastsched._progress import ProgressLines

        progress = ProgressLines(f"fastsched simulate: {policy}", every=lines_every)
    return simulate(policy=policy, progress=progress, **kwargs)


def _check_arguments(policies, kwargs, workers) -> tuple:
    policies = list(policies)
    if not policies:
        raise ValueError("policies must name at least one policy")
    if len(set(policies)) != len(policies):
        raise ValueError(f"policies must not repeat a name, got {policies}")
    for key in ("policy", "output", "progress"):
        if key in kwargs:
            raise ValueError(f"a comparison runs several policies: {key} cannot be given")
    if workers is None:
        workers = min(len(policies), usable_cores())
    if not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    return policies, workers


def check_policies(policies, **kwargs) -> None:
    """Make every check of every policy's run (:func:`~fastsched.sim.api.check_simulation`), running none.

    Raises
    ------
    ValueError, TypeError, OSError
        The first policy's refusal, its message led by the policy's name.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 2, 1)]
    >>> check_policies(["pollux", "tiresias"], workload=jobs, nodes=1, gpus=4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: tiresias: job 'a' (cifar10): batch_size 1 is below ...
    """
    for policy in policies:
        try:
            check_simulation(policy=policy, **kwargs)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"{policy}: {exc}") from None


def iter_policies(policies, *, workers=None, progress_every=None, **kwargs):
    """Run :func:`~fastsched.sim.simulate` once per policy; yield ``(policy, outcome)`` as each finishes.

    Parameters
    ----------
    policies : sequence of str
        Policy names (built-in, ``module:Class`` or plugin names), at least one, no repeats.
    workers : int, optional
        Processes to use; default: one per policy up to the usable cores. ``1`` runs them here,
        one after the other, in the given order.
    progress_every : float, optional
        Each run reports its progress as plain lines on stderr, one per this many wall seconds
        at most (:class:`fastsched._progress.ProgressLines`); default: none.
    **kwargs
        Passed to every :func:`~fastsched.sim.simulate` call (not ``policy``, ``output`` or
        ``progress``).

    Yields
    ------
    (str, SimulationResult or Exception)
        In finishing order. A run that raised yields its exception and the others go on; a
        Ctrl-C (also one that landed in a compiled kernel) is raised, never yielded.

    Notes
    -----
    Closing the generator early, or an exception in the consumer (Ctrl-C), terminates the runs
    still going at once: nothing waits for them.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128)]
    >>> [(p, r.completed) for p, r in iter_policies(["fifo", "srtf"], workers=1, workload=jobs, nodes=1, gpus=4)]
    [('fifo', 1), ('srtf', 1)]
    """
    from fastsched._interrupt import reraise_interrupt

    policies, workers = _check_arguments(policies, kwargs, workers)
    if workers == 1 or len(policies) == 1:
        for p in policies:
            try:
                outcome = _run_one(p, kwargs, progress_every)
            except Exception as exc:  # noqa: BLE001 - a failed run is an outcome; the others go on
                reraise_interrupt(exc)
                outcome = exc
            yield p, outcome
        return
    # spawn, not fork: a forked child inherits the parent's thread pools (BLAS, numba) mid-state.
    ctx = multiprocessing.get_context("spawn")
    # The workers ignore Ctrl-C (the terminal sends it to them too, and an idle one would print a
    # traceback); the parent takes it and terminates them at once. (Not multiprocessing.Pool: its
    # daemonic workers could not start processes of their own.)
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=min(workers, len(policies)), mp_context=ctx, initializer=_ignore_sigint
    )
    finished = False
    try:
        futures = {pool.submit(_run_one, p, kwargs, progress_every): p for p in policies}
        for fut in concurrent.futures.as_completed(futures):
            exc = fut.exception()
            if exc is not None:
                reraise_interrupt(exc)
            yield futures[fut], (fut.result() if exc is None else exc)
        finished = True
    finally:
        if finished:
            pool.shutdown()
        else:  # interrupted, closed early, or the consumer raised
            _terminate(pool)


def run_policies(policies, *, workers=None, on_done=None, **kwargs) -> list:
    """Run :func:`~fastsched.sim.simulate` once per policy with the same ``kwargs``; all or nothing.

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

    Raises
    ------
    Exception
        The first run's error; the runs still going are terminated (:func:`iter_policies`
        keeps the others instead).

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128), WorkloadJob("b", 30, "ncf", 1, 32768)]
    >>> results = run_policies(["fifo", "tiresias"], workers=1, workload=jobs, nodes=1, gpus=4)
    >>> [(r.policy, r.completed) for r in results]
    [('fifo', 2), ('tiresias', 2)]
    """
    policies, workers = _check_arguments(policies, kwargs, workers)
    results: dict = {}
    runs = iter_policies(policies, workers=workers, **kwargs)
    try:
        for p, outcome in runs:
            if isinstance(outcome, BaseException):
                raise outcome
            results[p] = outcome
            if on_done is not None:
                on_done(p, outcome)
    finally:
        runs.close()  # terminates what still runs, if anything raised
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
