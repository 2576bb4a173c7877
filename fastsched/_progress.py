"""Progress of the command line: bars on a terminal (tqdm), plain throttled lines elsewhere.

A bar goes to stderr, and only when stderr is a terminal (tqdm's ``disable=None``), so logs,
pipes and captured output never fill with carriage returns; ``quiet`` turns it off
everywhere. Where stderr is not a terminal (a batch job's log, ``nohup``), a simulation reports
in plain lines instead (:class:`ProgressLines`): at most one per :data:`LINE_SECONDS` of wall
time (``$FASTSCHED_PROGRESS_SECONDS``), none for a run shorter than that. A bar that will not be shown is a stand-in that draws nothing: tqdm is then not
imported (~25 ms, most of it ``importlib.metadata`` for tqdm's version) and starts no monitor
thread.
"""

from __future__ import annotations

import os
import sys
import time

from fastsched import _interrupt  # a base module too

__all__ = ["progress_bar", "NoBar", "JobsBar", "ProgressLines", "progress_callback", "LINE_SECONDS", "line_seconds"]

#: Wall seconds between two progress lines (stderr not a terminal), unless ``$FASTSCHED_PROGRESS_SECONDS``.
LINE_SECONDS = 30.0


def line_seconds() -> float:
    """Return the seconds between progress lines: ``$FASTSCHED_PROGRESS_SECONDS``, else :data:`LINE_SECONDS`.

    Examples
    --------
    >>> line_seconds() >= 0
    True
    """
    text = os.environ.get("FASTSCHED_PROGRESS_SECONDS", "")
    try:
        value = float(text)
    except ValueError:
        return LINE_SECONDS
    return value if value >= 0 else LINE_SECONDS


class ProgressLines:
    """A ``progress(done, total, sim_time)`` callback writing plain lines, at most one per ``every`` seconds.

    For a stream that is not a terminal (a log file, a pipe), and for each run of a comparison
    (the runs' processes share the terminal, where bars would overwrite each other). The first
    line comes ``every`` seconds after the first call, so a short run prints nothing.

    Parameters
    ----------
    prefix : str
        Start of each line (``"fastsched simulate"``, ``"fastsched simulate: sia"``).
    every : float, optional
        Wall seconds between lines (default :func:`line_seconds`).
    file : file object, optional
        Default ``sys.stderr``.
    clock : callable, optional
        Seconds, monotonic (default :func:`time.monotonic`).

    Examples
    --------
    >>> import io
    >>> out, now = io.StringIO(), [0.0]
    >>> lines = ProgressLines("fastsched simulate", every=10, file=out, clock=lambda: now[0])
    >>> lines(0, 48, 0.0); now[0] = 4.0; lines(3, 48, 3600.0)   # 4 s: too soon
    >>> now[0] = 12.0; lines(7, 48, 7200.0); now[0] = 15.0; lines(9, 48, 9000.0)
    >>> print(out.getvalue(), end="")
    fastsched simulate: 7/48 jobs done, 2.0 h simulated (12 s)
    """

    def __init__(self, prefix, *, every=None, file=None, clock=None):
        self.prefix = prefix
        self.every = line_seconds() if every is None else float(every)
        self.file = file
        self.clock = time.monotonic if clock is None else clock
        self._start = self._last = None
        self.lines = 0

    def __call__(self, done, total, sim_time):
        _interrupt.check()
        now = self.clock()
        if self._start is None:
            self._start = self._last = now
            return
        if now - self._last < self.every:
            return
        self._last = now
        stream = sys.stderr if self.file is None else self.file
        stream.write(
            f"{self.prefix}: {done}/{total} jobs done, {sim_time / 3600:.1f} h simulated ({now - self._start:.0f} s)\n"
        )
        stream.flush()
        self.lines += 1

    def close(self):
        """Nothing to finish (every line is whole)."""


def progress_bar(total, *, desc, unit, quiet=False, initial=0, file=None):
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
    tqdm.tqdm or NoBar
        Use ``update(n)``, ``set_postfix_str(s)`` and ``close()`` (or ``with``). A bar that
        would not be shown (``quiet``, or a stream that is not a terminal) is a :class:`NoBar`.

    Examples
    --------
    A stream that is not a terminal gets no bar at all:

    >>> import io
    >>> with progress_bar(3, desc="demo", unit="run", file=io.StringIO()) as bar:
    ...     _ = bar.update(3)
    >>> bar.disable, type(bar).__name__
    (True, 'NoBar')
    """
    stream = sys.stderr if file is None else file
    # tqdm's own rule for disable=None: hidden when the stream says it is not a terminal.
    if quiet or (hasattr(stream, "isatty") and not stream.isatty()):
        return NoBar()
    from tqdm import tqdm  # only for a bar that is drawn

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


class NoBar:
    """The bar of :func:`progress_bar` when it is not shown: its methods do nothing.

    Examples
    --------
    >>> with NoBar() as bar:
    ...     bar.set_postfix_str("t=1.0 h", refresh=False)
    ...     bar.update(2)
    >>> bar.disable
    True
    """

    disable = True

    def update(self, n=1):
        """Count ``n`` more items (nothing to draw)."""

    def set_postfix_str(self, s="", refresh=True):
        """Set the text after the bar (nothing to draw)."""

    def close(self):
        """Nothing to finish."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


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
        self._lines = None

    def __call__(self, done, total, sim_time):
        _interrupt.check()  # after each round: a Ctrl-C whose raise was lost in a finalizer
        if self._bar is None:
            if self.notice is not None and not self.quiet:
                self.notice(stream=self.file)
            self._bar = progress_bar(total, desc="simulate", unit="job", quiet=self.quiet, file=self.file)
            if isinstance(self._bar, NoBar) and not self.quiet:  # not a terminal: plain lines instead
                self._lines = ProgressLines("fastsched simulate", file=self.file)
        if self._lines is not None:
            self._lines(done, total, sim_time)
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
