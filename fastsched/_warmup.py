"""The warm-up record and the compile-rate probe (a base module: imports nothing above :mod:`fastsched._cache`).

:func:`fastsched._warmup_run.warmup` writes a record beside numba's cache (:func:`record_path`):
the kernels each command used, and the seconds per kernel this machine took to compile them,
which :func:`fastsched._firstrun.compile_notice` multiplies by the kernels still to compile.
Before any warm-up, :func:`probe_rate` estimates the rate. The simulator keeps its cached
triangulations in the same folder.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from fastsched._cache import ALL_PACKAGES, SIM_PACKAGES, cache_state

__all__ = ["load_record", "record_path", "write_record", "probe_rate", "COMMAND_PACKAGES", "PROBE_RATIO", "MIN_TIMED"]

#: Packages whose kernels each command compiles.
COMMAND_PACKAGES = {
    "simulate": SIM_PACKAGES,
    # a production log replayed as rigid jobs compiles the event loop only
    "simulate-log": ("fastsched.sim.engine._rigid_kernels",),
    "sweep": SIM_PACKAGES,
    "sweep bands": SIM_PACKAGES,  # the draws are ordinary simulations
    "cost": ("fastsched.costmodel",),
    "plan": ("fastsched.costmodel",),
    "warmup": ALL_PACKAGES,
}
#: Cold compile time of a command over (kernels the record-less notice counts x the probe's time),
#: measured on the development machine: 13.6 and 5.3 in two runs under heavy load (the probe is
#: noisy there), so 9 (benchmarks/results/cli.md). Used only before the first warm-up.
PROBE_RATIO = 9.0


def probe_rate() -> float:
    """Seconds per kernel on this machine, estimated from compiling a small fixed function.

    Compiles (never caches) a loop over an array with a branch twice and times the second
    (the first also starts numba's compiler up): the machine's compile speed, scaled by
    :data:`PROBE_RATIO`. Costs about a second.

    Examples
    --------
    >>> probe_rate() > 0
    True
    """
    import numba
    import numpy as np

    def probe(x, k):  # a fresh function each call: compiled, never taken from a cache
        total = 0.0
        for i in range(x.shape[0]):
            v = x[i] * k
            if v > 1.0:
                total += np.sqrt(v)
            else:
                total -= v * v
        return total

    numba.njit(cache=False)(probe)(np.ones(4), 2.0)  # the first compile of a process also starts numba up
    t0 = time.perf_counter()
    numba.njit(cache=False)(probe)(np.ones(4), 2.0)  # a new dispatcher: compiled again
    return (time.perf_counter() - t0) * PROBE_RATIO


# Fewer newly compiled kernels than this: too little to time a rate from (the record keeps its old one).
MIN_TIMED = 5
_RECORD = "fastsched-warmup.json"


def record_path() -> Path | None:
    """Where the warm-up record lives: beside numba's cache of the goodput kernels (``None``: no cache).

    Examples
    --------
    >>> p = record_path()
    >>> p is None or p.name == "fastsched-warmup.json"
    True
    """
    dirs = cache_state(("fastsched.goodput",)).cache_dirs
    return Path(dirs[0]) / _RECORD if dirs else None


def load_record() -> dict | None:
    """Return the last warm-up's record on this machine, or ``None`` (none, unreadable, another numba).

    Returns
    -------
    dict or None
        ``rate_s`` (seconds per kernel compiled), ``kernels`` (command -> kernel names),
        ``compiled``, ``seconds``, ``numba``.

    Examples
    --------
    >>> rec = load_record()
    >>> rec is None or rec["rate_s"] > 0
    True
    """
    import numba

    path = record_path()
    try:
        rec = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("numba") != numba.__version__:
        return None
    rate = rec.get("rate_s")
    if not isinstance(rate, (int, float)) or not rate > 0 or not isinstance(rec.get("kernels"), dict):
        return None
    return rec


def write_record(rec) -> None:
    """Write the warm-up record ``rec`` (a JSON object) beside numba's cache; nothing when there is none or it is read-only.

    Examples
    --------
    >>> callable(write_record)
    True
    """
    path = record_path()
    if path is None:
        return
    from fastsched._atomic import atomic_path

    # A read-only cache: the estimates fall back to the probe. atomic_path's temporary file has a
    # unique name and is removed on failure (a second OSError from removing it cannot escape).
    with contextlib.suppress(OSError, ValueError), atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n", encoding="utf-8")
