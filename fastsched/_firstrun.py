"""The first run: say so before compiling, with an estimate measured on this machine.

A command about to compile kernels prints one line: how many kernels and about how long, the
product of the kernels to compile (those of the command missing from numba's cache, see
:mod:`fastsched._cache`) and a rate calibrated on this machine:

* after ``fastsched warmup``: the seconds per kernel that warm-up measured, and the kernels it
  found each command to use (:func:`fastsched._warmup.load_record`); a later run that would
  compile any of them (say, a new policy's after an upgrade) is announced, as far as the
  modules it has loaded when it starts show (a run does not import every policy's modules
  to count their kernels);
* before any warm-up: a probe, the time to compile one small fixed function here, times
  :data:`PROBE_RATIO` (measured, see ``benchmarks/results/cli.md``); the notice is then shown
  only when nothing is cached at all, since which kernels a command uses is not yet known.

:func:`probe_rate` and :func:`cache_state` are re-exported from :mod:`fastsched._warmup` and
:mod:`fastsched._cache`.
"""

from __future__ import annotations

import sys

from fastsched._cache import CacheState, cache_state
from fastsched._warmup import COMMAND_PACKAGES, PROBE_RATIO, load_record, probe_rate

__all__ = ["CacheState", "cache_state", "compile_notice", "compile_estimate", "probe_rate", "PROBE_RATIO"]


def compile_estimate(command="simulate") -> tuple:
    """Kernels ``command`` would compile now, and about how many seconds that takes here.

    Parameters
    ----------
    command : str
        A key of :data:`~fastsched._warmup.COMMAND_PACKAGES`: ``"simulate"``, ``"simulate-log"``
        (a production log replayed as rigid jobs: the event loop's kernels only), ``"sweep"``,
        ``"sweep bands"``, ``"cost"``, ``"plan"`` or ``"warmup"``; another name counts every package's kernels, as
        ``"warmup"`` does.

    Returns
    -------
    (int, float, CacheState)
        Kernels to compile (0: none), estimated seconds (0.0 when none), and the cache state
        of the command's packages.

    Examples
    --------
    >>> n, seconds, state = compile_estimate("simulate")
    >>> n >= 0 and seconds >= 0 and (n == 0) == (seconds == 0)
    True
    """
    packages = COMMAND_PACKAGES.get(command, COMMAND_PACKAGES["warmup"])
    state = cache_state(packages)
    record = load_record()
    if record is not None and command in record["kernels"]:
        n = len(set(state.missing) & set(record["kernels"][command]))
        rate = record["rate_s"]
    else:
        n = state.kernels - state.cached if state.cold else 0
        rate = probe_rate() if n else 0.0
    return n, n * rate, state


def _nothing_to_announce(command) -> bool:
    """Whether the modules loaded so far already show that :func:`compile_notice` has nothing to say.

    For ``simulate``, whose notice comes once the run is set up (the simulator's and its
    policy's modules loaded), it looks only at the kernels of the modules this process has
    loaded, so a warm run does not import every other policy's modules to count theirs
    (~0.1 s). Without a warm-up record for the command this is exact: one of them cached means
    the cache is not cold. With one, the notice lists the record's kernels still missing;
    those of modules the run has not loaded yet are left out here. Other commands (a sweep
    announces before its workers load anything) always take the full count.
    """
    if command != "simulate":
        return False
    loaded = cache_state(COMMAND_PACKAGES[command], load=False)
    if not loaded.kernels:
        return False
    record = load_record()
    if record is not None and command in record["kernels"]:
        return not set(loaded.missing) & set(record["kernels"][command])
    return loaded.cached > 0


def compile_notice(command="simulate", *, stream=None) -> bool:
    """Print a one-line notice on stderr when the next run will compile kernels.

    Parameters
    ----------
    command : str
        As in :func:`compile_estimate`.
    stream : file object, optional
        Default ``sys.stderr``.

    Returns
    -------
    bool
        Whether the notice was printed.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> shown = compile_notice(stream=out)
    >>> shown == out.getvalue().startswith("fastsched: compiling ")
    True
    """
    try:
        if _nothing_to_announce(command):
            return False
        n, seconds, state = compile_estimate(command)
    except Exception:  # noqa: BLE001 - a notice must never stop a run
        return False
    if not n:
        return False
    stream = sys.stderr if stream is None else stream
    where = state.cache_dirs[0] if state.cache_dirs else "numba's cache"
    stream.write(
        f"fastsched: compiling {n} kernels, once per machine: about {max(1, round(seconds))} s (cached in "
        f"{where}; 'fastsched warmup' does this ahead of time)\n"
    )
    stream.flush()
    return True
