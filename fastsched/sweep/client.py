"""The dask client of a sweep: a given one, one connected to an address, or a local cluster."""

from __future__ import annotations

import contextlib
import logging
import math
import numbers
import os
import signal
import threading

__all__ = [
    "client_for",
    "default_workers",
    "check_timeout",
    "check_workers",
    "check_dask",
    "WORKER_ENV",
    "CONNECT_TIMEOUT_S",
    "MAX_CONNECT_TIMEOUT_S",
    "MAX_WORKERS",
]

#: Environment of worker processes: one thread per worker for numba and BLAS (no oversubscription).
WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
#: Seconds to wait for a scheduler given by address before giving up.
CONNECT_TIMEOUT_S = 10.0
#: Longest wait for a scheduler: a day (dask reads the timeout as a duration string, and an
#: infinite one is not a duration).
MAX_CONNECT_TIMEOUT_S = 86400.0
#: Most worker processes of a local cluster: each is an interpreter with the kernels loaded
#: (~200 MB), so more than this on one machine is a typing slip, not a plan.
MAX_WORKERS = 1024


def check_timeout(timeout) -> float:
    """Return ``timeout`` as seconds in ``(0, MAX_CONNECT_TIMEOUT_S]``, or raise ``ValueError`` naming it.

    Examples
    --------
    >>> check_timeout(2)
    2.0
    >>> check_timeout(float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: --connect-timeout must be a number of seconds in (0, 86400], got inf
    """
    ok = isinstance(timeout, numbers.Real) and not isinstance(timeout, bool)
    if not ok or not math.isfinite(timeout) or not 0 < timeout <= MAX_CONNECT_TIMEOUT_S:
        raise ValueError(
            f"--connect-timeout must be a number of seconds in (0, {MAX_CONNECT_TIMEOUT_S:g}], got {timeout!r}"
        )
    return float(timeout)


def check_workers(workers, scheduler) -> None:
    """Check ``--workers`` (in range, not with ``--scheduler``): ``fastsched sweep``'s and ``sweep bands``'s.

    Examples
    --------
    >>> check_workers(4, None)
    >>> check_workers(2, "tcp://host:8786")
    Traceback (most recent call last):
    ...
    ValueError: --workers sizes the local cluster; it cannot be combined with --scheduler
    """
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers must be in [1, {MAX_WORKERS}], got {workers}")
    if scheduler and workers is not None:
        raise ValueError("--workers sizes the local cluster; it cannot be combined with --scheduler")


def check_dask(what: str, instead: str) -> None:
    """Raise ``ImportError`` naming how to install dask.distributed or do without (``instead``), where it is missing.

    Checked before any run, without importing dask: ``what`` says what needs it.

    Examples
    --------
    >>> try:
    ...     check_dask("fastsched sweep runs", "pass --serial")
    ... except ImportError as exc:  # without dask.distributed
    ...     print(str(exc).startswith("fastsched sweep runs on dask.distributed, which is not installed"))
    ... else:
    ...     print(True)
    True
    """
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise ImportError(f"{what} on dask.distributed, which is not installed: pip install 'fastsched[dask]', "
                          f"or {instead}")  # fmt: skip


def default_workers() -> int:
    """Worker processes of the default ``LocalCluster``: the CPUs this process may use.

    Examples
    --------
    >>> default_workers() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def _sigint_ignored():
    """Ignore Ctrl-C while worker processes start, so they inherit ignoring it.

    Ctrl-C reaches every process of the terminal's process group; the workers would each print
    a traceback. Ignoring it there leaves the interrupt to this process, which shuts the cluster
    down cleanly.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def client_for(client=None, workers=None, *, timeout=CONNECT_TIMEOUT_S):
    """Yield a dask Client: the given one, one connected to an address, or a new LocalCluster.

    Parameters
    ----------
    client : distributed.Client or str, optional
        A client (yielded as is) or a scheduler address.
    workers : int, optional
        Worker processes of the local cluster (default :func:`default_workers`).
    timeout : float
        Seconds to wait for a scheduler given by address.

    Raises
    ------
    ImportError
        Without dask.distributed.
    ValueError
        ``workers < 1``, or an address that cannot be reached within ``timeout``.

    Examples
    --------
    >>> with client_for("tcp://127.0.0.1:9", timeout=0.5) as c:  # doctest: +SKIP
    ...     pass
    Traceback (most recent call last):
    ...
    ValueError: cannot reach the dask scheduler at tcp://127.0.0.1:9 within 0.5 s (...)
    """
    timeout = check_timeout(timeout)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("fastsched sweep needs dask.distributed: pip install 'fastsched[dask]'") from None
    if client is not None and not isinstance(client, str):
        yield client
        return
    if isinstance(client, str):
        try:
            c = Client(client, timeout=f"{timeout}s")
        except (OSError, TimeoutError) as exc:
            raise ValueError(
                f"cannot reach the dask scheduler at {client} within {timeout:g} s ({type(exc).__name__}: {exc})"
            ) from None
        with c:
            yield c
        return
    n = default_workers() if workers is None else int(workers)
    if not 1 <= n <= MAX_WORKERS:
        raise ValueError(f"workers must be in [1, {MAX_WORKERS}], got {workers}")
    with _sigint_ignored():
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            # CRITICAL, not ERROR: at shutdown a worker's heartbeat can race the closing scheduler and
            # log "Failed to communicate with scheduler" with a "Stream is closed" traceback (dask
            # issues 3384, 7105), noise in the one-line Ctrl-C message. A task's own error still
            # reaches the sweep through its future, and a dead worker as KilledWorker.
            silence_logs=logging.CRITICAL,
            env=dict(WORKER_ENV),
        )
    with cluster, Client(cluster) as c:
        yield c
