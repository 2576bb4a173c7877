"""One place for numba compilation options and for the parallel-region lock.

Every kernel in fastsched is compiled through :func:`jit` (serial) or :func:`pjit`
(``parallel=True``), so cache, error-model and fastmath choices are made once:

* ``cache=True``: compiled machine code is written next to the module (or, when
  site-packages is read-only, to numba's user-wide cache directory / ``NUMBA_CACHE_DIR``)
  so a fresh process pays loading, not compilation.
* ``error_model="numpy"``: division by zero yields inf/nan instead of raising inside the
  kernel; every face validates its inputs first, so this only removes a branch per division.
* no ``fastmath``: results must agree with the plain references to 1e-12 and NaN handling
  must stay IEEE.
* ``nogil=True``: kernels release the GIL so a controller thread keeps running.
* cache stamps: a kernel's cache goes stale when any fastsched file it compiles in changes,
  not only its own (:mod:`fastsched._cache_stamp`).

Thread safety
-------------
fastsched selects numba's ``workqueue`` threading layer (unless ``NUMBA_THREADING_LAYER`` is
set): it is always available and fork-safe, whereas GNU OpenMP, which numba would otherwise
prefer, aborts a process that forks after using it. workqueue in turn aborts when two Python
threads enter parallel regions at once, so fastsched serialises *parallel* kernel launches with one process-wide lock, :data:`PARALLEL_LOCK`,
used through :func:`parallel_region`. Serial kernels need no lock. ``os.fork`` waits for
the lock (``os.register_at_fork``), so no parallel region is in flight when a process forks,
and the child starts with a fresh lock.
"""

from __future__ import annotations

import contextlib
import os
import threading

import numba

__all__ = ["jit", "pjit", "parallel_region", "PARALLEL_LOCK"]

_COMMON = {"cache": True, "nogil": True, "error_model": "numpy"}

# numba would pick GNU OpenMP when it is present, and GNU OpenMP aborts a process that forks
# after using it. workqueue is always available and fork-safe; its one weakness (concurrent
# parallel regions) is covered by PARALLEL_LOCK. A user's explicit choice is respected.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"


_STAMPED = []


def _stamp_caches() -> None:
    # A kernel's cache must go stale when a file it compiles in changes, not only its own
    # (see fastsched._cache_stamp). Installed before the first kernel is decorated; imported
    # here, not at module level, so this base module imports nothing above it.
    if not _STAMPED:
        from fastsched._cache_stamp import kernel_stamp
        from fastsched._numba_private import stamp_caches

        _STAMPED.append(stamp_caches(kernel_stamp))


def jit(*args, **kwargs):
    """``numba.njit`` with fastsched's options (serial kernel)."""
    _stamp_caches()
    opts = dict(_COMMON)
    opts.update(kwargs)
    return numba.njit(*args, **opts)


def pjit(*args, **kwargs):
    """``numba.njit(parallel=True)`` with fastsched's options.

    Call kernels made with this decorator inside :func:`parallel_region`.
    """
    _stamp_caches()
    opts = dict(_COMMON)
    opts["parallel"] = True
    opts.update(kwargs)
    return numba.njit(*args, **opts)


PARALLEL_LOCK = threading.RLock()


def _hold_lock_across_fork() -> None:
    # A fork taken while another thread is inside a parallel region would leave the child
    # with the thread pool's bookkeeping half-updated (its worker threads do not survive the
    # fork), so the forking thread waits until no parallel region is in flight.
    PARALLEL_LOCK.acquire()


def _release_lock_in_parent() -> None:
    PARALLEL_LOCK.release()


def _reset_lock_in_child() -> None:
    global PARALLEL_LOCK
    PARALLEL_LOCK = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_hold_lock_across_fork,
        after_in_parent=_release_lock_in_parent,
        after_in_child=_reset_lock_in_child,
    )


@contextlib.contextmanager
def parallel_region():
    """Serialise launches of ``parallel=True`` kernels across Python threads."""
    lock = PARALLEL_LOCK
    with lock:
        yield
