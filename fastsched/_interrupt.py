"""Ctrl-C that surfaced as another exception, or was swallowed (a base module: imports nothing of fastsched).

Python's SIGINT handler only sets a flag; the ``KeyboardInterrupt`` is raised at the next
check. When that check runs inside a C call that then returns a result anyway -- the boxing of
a compiled numba kernel's return value, for one -- the interpreter replaces the pending
``KeyboardInterrupt`` by ``SystemError: ... returned a result with an exception set`` whose
``__cause__`` is the interrupt. Code that catches ``Exception`` (a sweep recording a failed
run, the command line's "internal error") must treat that as the interrupt it is.

When the signal lands while Python runs a finalizer (a ``__del__``, a weakref callback), the
``KeyboardInterrupt`` is printed as "Exception ignored" and lost, and the run goes on. The
command line therefore installs :func:`sigint_handler`, which also remembers the signal:
:func:`check` raises it again at a safe point (after each simulated round), and the command
ends with status 130 even if every raise was swallowed.
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["Interrupted", "is_interrupt", "reraise_interrupt", "sigint_handler", "check", "received"]

_received = False


class Interrupted(Exception):
    """Raised by a command that caught Ctrl-C and cleaned up; its message says how to resume.

    Defined here, below every layer, so that a command's module raises it without importing
    the command line (:mod:`fastsched.cli` catches it and exits with status 130).

    Examples
    --------
    >>> str(Interrupted("rerun the same command to resume"))
    'rerun the same command to resume'
    """


def _on_sigint(signum, frame):
    global _received
    _received = True
    raise KeyboardInterrupt


def received() -> bool:
    """Whether SIGINT arrived while :func:`sigint_handler` was installed.

    Examples
    --------
    >>> with sigint_handler():
    ...     received()
    False
    """
    return _received


def check() -> None:
    """Raise ``KeyboardInterrupt`` if SIGINT arrived (the raise in the handler may have been lost).

    Examples
    --------
    >>> check()  # no signal: returns
    """
    if _received:
        raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_handler():
    """Install the remembering SIGINT handler for the block (main thread only; else a no-op).

    Examples
    --------
    >>> with sigint_handler():
    ...     pass
    """
    global _received
    _received = False
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        old = signal.signal(signal.SIGINT, _on_sigint)
    except (ValueError, OSError):  # an embedded interpreter without signals
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, a ``KeyboardInterrupt``.

    Follows ``__cause__`` and ``__context__`` (a bounded walk, cycles ignored).

    Parameters
    ----------
    exc : BaseException

    Returns
    -------
    bool

    Examples
    --------
    >>> is_interrupt(KeyboardInterrupt())
    True
    >>> wrapped = SystemError("f returned a result with an exception set")
    >>> wrapped.__cause__ = KeyboardInterrupt()
    >>> is_interrupt(wrapped), is_interrupt(ValueError("bad"))
    (True, False)
    """
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 32:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def reraise_interrupt(exc: BaseException) -> None:
    """Raise ``KeyboardInterrupt`` (from ``exc``) when ``exc`` is a disguised interrupt; else return.

    Call it first in an ``except Exception`` block that would otherwise record or swallow the
    error.

    Examples
    --------
    >>> reraise_interrupt(ValueError("bad"))  # not an interrupt: returns
    >>> wrapped = SystemError("returned a result with an exception set")
    >>> wrapped.__cause__ = KeyboardInterrupt()
    >>> try:  # (a doctest must not let a KeyboardInterrupt through: it would stop pytest)
    ...     reraise_interrupt(wrapped)
    ... except KeyboardInterrupt as exc:
    ...     print(type(exc.__cause__).__name__)
    SystemError
    """
    if not isinstance(exc, KeyboardInterrupt) and is_interrupt(exc):
        raise KeyboardInterrupt from exc
