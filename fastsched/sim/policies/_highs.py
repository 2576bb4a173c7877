"""HiGHS's mixed-integer solver without its stray console output.

scipy's HiGHS (1.17) prints a debug line, ``HighsMipSolverData::transformNewIntegerFeasibleSolution
tmpSolver.run();``, straight to the process's standard output from C++ whenever it re-solves a
new integer solution, whatever ``disp`` says. On the command line that line lands in the
middle of a table or of ``--json`` output. :func:`quiet_milp` runs :func:`scipy.optimize.milp`
with file descriptor 1 pointed at the null device and puts it back afterwards (after flushing
C's buffers, so nothing printed during the solve leaks out later).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

__all__ = ["quiet_milp", "quiet_stdout"]

_LIBC = None


def _flush_c():
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None)
        except OSError:  # pragma: no cover - no C library to flush (not on Linux/macOS)
            _LIBC = False
    if _LIBC:
        _LIBC.fflush(None)


@contextlib.contextmanager
def quiet_stdout():
    r"""Send whatever is written to file descriptor 1 inside the block to the null device.

    Examples
    --------
    >>> with quiet_stdout():
    ...     _ = os.write(1, b"not shown\n")
    >>> print("shown")
    shown
    """
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
    except (AttributeError, ValueError, OSError):  # pragma: no cover - no real stdout (embedded)
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), fd)
            try:
                yield
            finally:
                _flush_c()
                os.dup2(saved, fd)
    finally:
        os.close(saved)


def quiet_milp(*args, **kwargs):
    """:func:`scipy.optimize.milp` with its console output suppressed (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> quiet_milp(np.array([-1.0]), integrality=np.ones(1), bounds=(0, 3)).x.tolist()
    [3.0]
    """
    from scipy.optimize import milp  # where used: a run that solves no program does not load scipy's solvers

    with quiet_stdout():
        return milp(*args, **kwargs)
