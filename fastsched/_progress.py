"""Progress bars of the command line (tqdm), one convention for every command.

A bar goes to stderr, and only when stderr is a terminal (tqdm's ``disable=None``), so logs,
pipes and captured output never fill with carriage returns; ``quiet`` turns it off
everywhere.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

from fastsched import _interrupt  # a base module too

__all__ = ["progress_bar", "JobsBar", "progress_callback"]


def progress_bar(total, *, desc, unit, quiet=False, initial=0, file=None) -> tqdm:
    """Make a tqdm bar on stderr, shown only on a terminal and never when ``quiet``.

    Parameters
    ----------
    total : int
        Number of items.
    desc, unit : str
        Label and unit name (``"sweep"``, ``"run"``).
    quiet : bool
        Never show the bar.
    initial : int
        Items already done (e.g. resumed runs).
    file : file object, optional
        Default ``sys.stderr``.

    Returns
    -------
    tqdm.tqdm
        Use ``update(n)`` and ``close()`` (or ``with``).

    Examples
    --------
    A stream that is not a terminal gets no bar at all:

    >>> import io
    >>> with progress_bar(3, desc="demo", unit="run", file=io.StringIO()) as bar:
    ...     _ = bar.update(3)
    >>> bar.disable
    True
    """
    stream = sys.stderr if file is None else file
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        initial=initial,
        file=stream,
        disable=True if quiet else None,
        dynamic_ncols=True,
        mininterval=0.2,
    )


class JobsBar:
    """A ``progress(done, total, sim_time)`` callback of :func:`fastsched.sim.simulate` drawing a tqdm bar.

    Parameters
    ----------
    quiet : bool
        Never show the bar.
    file : file object, optional
        Default ``sys.stderr`` (shown only when it is a terminal).
    notice : callable, optional
        Called as ``notice(stream=file)`` once, on the first call (before the first round, every
        input checked), unless ``quiet``: the command line passes
        :func:`fastsched._firstrun.compile_notice` (this base module imports no module above it).

    Examples
    --------
    >>> import io
    >>> bar = JobsBar(file=io.StringIO())
    >>> bar(1, 4, 3600.0)
    >>> bar(4, 4, 7200.0)
    >>> bar.done
    4
    >>> bar.close()
    """

    def __init__(self, *, quiet=False, file=None, notice=None):
        if notice is not None and not callable(notice):
            raise TypeError(f"notice must be a callable or None, got {type(notice).__name__}")
        self.quiet = quiet
        self.file = file
        self.notice = notice
        self.done = 0
        self._bar = None

    def __call__(self, done, total, sim_time):
        _interrupt.check()  # after each round: a Ctrl-C whose raise was lost in a finalizer
        if self._bar is None:
            if self.notice is not None and not self.quiet:
                self.notice(stream=self.file)
            self._bar = progress_bar(total, desc="simulate", unit="job", quiet=self.quiet, file=self.file)
        self._bar.set_postfix_str(f"t={sim_time / 3600:.1f} h", refresh=False)
        self._bar.update(done - self.done)
        self.done = done

    def close(self):
        """Finish the bar's line (idempotent)."""
        if self._bar is not None:
            self._bar.close()


def progress_callback(progress):
    """Resolve a ``progress`` argument as ``(callable or None, owned)``; ``owned`` bars are closed by the caller.

    ``None``/``False``: nothing; ``True``: a :class:`JobsBar` on stderr; a callable: itself.

    Examples
    --------
    >>> progress_callback(False)
    (None, False)
    >>> fn, owned = progress_callback(True)
    >>> type(fn).__name__, owned
    ('JobsBar', True)
    >>> progress_callback("yes")
    Traceback (most recent call last):
    ...
    TypeError: progress must be a bool or a callable, got str
    """
    if progress is None or progress is False:
        return None, False
    if progress is True:
        return JobsBar(), True
    if not callable(progress):
        raise TypeError(f"progress must be a bool or a callable, got {type(progress).__name__}")
    return progress, False
