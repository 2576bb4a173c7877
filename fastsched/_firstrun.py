"""The first run: detect an empty numba cache, say so before compiling, compile ahead (warm-up).

fastsched's kernels are compiled with ``cache=True``: the first process compiles them (about a
minute for a simulation on a small machine) and writes machine code to numba's cache
(``__pycache__`` beside the sources, numba's user-wide cache when that is read-only, or
``NUMBA_CACHE_DIR``); later processes load it in well under a second. :func:`cache_state`
asks numba's own cache objects which kernels of the loaded modules have a usable index
(present and matching the source), which costs a file open per kernel, not a compilation.
"""

from __future__ import annotations

import importlib
import sys
import time
from dataclasses import dataclass

__all__ = ["CacheState", "cache_state", "compile_notice", "warmup", "COMPILE_ESTIMATE_S"]

#: Rough compile time of a cold first run, by command, in seconds, on a small (2-core) machine;
#: the measurements behind it are in benchmarks/results/cli.md. Only ever shown as "about N s".
COMPILE_ESTIMATE_S = {"simulate": 25, "sweep": 25, "warmup": 40}

# Packages whose kernels a simulation compiles; imported (not compiled) to look at their cache.
_SIM_PACKAGES = ("fastsched.goodput", "fastsched.policy", "fastsched.sim")


@dataclass(frozen=True)
class CacheState:
    """How many compiled kernels of the loaded fastsched modules have a usable cache entry.

    Attributes
    ----------
    kernels : int
        Cached (``cache=True``) kernels found in the loaded modules of the packages inspected.
    cached : int
        Of which have an index numba would use (present, same source, same numba).
    cache_dirs : tuple of str
        Folders numba reads and writes them in.
    """

    kernels: int
    cached: int
    cache_dirs: tuple

    @property
    def cold(self) -> bool:
        """No kernel cached at all: the next run compiles everything.

        That is a first run, or a cache made stale by new sources or another numba.
        """
        return self.kernels > 0 and self.cached == 0


def _dispatchers(packages):
    try:
        from numba.core.dispatcher import Dispatcher
    except ImportError:  # pragma: no cover - numba is a dependency
        return
    prefixes = tuple(packages)
    for name, module in list(sys.modules.items()):
        if module is None or not any(name == p or name.startswith(p + ".") for p in prefixes):
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, Dispatcher) and getattr(obj, "__module__", None) == name:
                yield obj


def cache_state(packages=_SIM_PACKAGES) -> CacheState:
    """Inspect numba's cache for the kernels of ``packages`` (imported, not compiled).

    Parameters
    ----------
    packages : iterable of str
        Packages whose kernels are counted (imported first; their submodules that are loaded
        count too). Another command's kernels, e.g. the cost model's, do not make a simulation
        warm.

    Returns
    -------
    CacheState
        ``kernels == 0`` when numba's cache cannot be inspected (e.g. under
        ``NUMBA_DISABLE_JIT`` or the CUDA simulator): never reported cold.

    Examples
    --------
    >>> state = cache_state()
    >>> 0 <= state.cached <= state.kernels
    True
    """
    for pkg in packages:
        importlib.import_module(pkg)
    kernels = cached = 0
    dirs = []
    for disp in _dispatchers(packages):
        cache = getattr(disp, "_cache", None)
        index = getattr(cache, "_cache_file", None)
        if index is None:
            continue  # not a caching dispatcher
        kernels += 1
        try:
            cached += bool(index._load_index())
        except Exception:  # noqa: BLE001 - numba internals: an unreadable index is "not cached"
            pass
        path = getattr(cache, "_cache_path", None)
        if path and path not in dirs:
            dirs.append(path)
    return CacheState(kernels, cached, tuple(dirs))


def compile_notice(command="simulate", *, stream=None, packages=_SIM_PACKAGES) -> bool:
    """Print a one-line notice on stderr when the next run will compile every kernel.

    Parameters
    ----------
    command : str
        Key of :data:`COMPILE_ESTIMATE_S` for the time estimate.
    stream : file object, optional
        Default ``sys.stderr``.
    packages : iterable of str
        As in :func:`cache_state`.

    Returns
    -------
    bool
        Whether the notice was printed.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> shown = compile_notice(stream=out)
    >>> shown == out.getvalue().startswith("fastsched: compiling kernels, first run only")
    True
    """
    try:
        state = cache_state(packages)
    except Exception:  # noqa: BLE001 - a notice must never stop a run
        return False
    if not state.cold:
        return False
    stream = sys.stderr if stream is None else stream
    est = COMPILE_ESTIMATE_S.get(command, 60)
    where = state.cache_dirs[0] if state.cache_dirs else "numba's cache"
    stream.write(
        f"fastsched: compiling kernels, first run only: about {est} s (cached in {where}; "
        "'fastsched warmup' does this ahead of time)\n"
    )
    stream.flush()
    return True


def warmup(*, policies=("pollux", "tiresias", "optimus"), costmodel=True, stream=None) -> dict:
    """Compile (or load from numba's cache) every CPU kernel a command can use.

    Runs a tiny simulation under each policy (goodput model, fitting, the Pollux search and
    the baselines) and, when ``costmodel``, a tiny cost-model estimate. Useful when building
    a container image: later processes start warm.

    Parameters
    ----------
    policies : iterable of str
        Simulator policies to run once.
    costmodel : bool
        Also compile the cost model's kernels.
    stream : file object, optional
        Where to report each step (default: nowhere).

    Returns
    -------
    dict
        Seconds per step (``"simulate:pollux"``, ..., ``"costmodel"``).

    Examples
    --------
    >>> times = warmup(costmodel=False)  # doctest: +SKIP
    >>> sorted(times)  # doctest: +SKIP
    ['simulate:optimus', 'simulate:pollux', 'simulate:tiresias']
    """
    # Imported here: the simulator imports this module (through its progress bar) at start-up.
    from fastsched.sim.api import simulate
    from fastsched.sim.builtin import builtin_workload

    jobs = [j for j in builtin_workload() if j.num_replicas <= 8][:2]
    out = {}
    for policy in policies:
        t0 = time.perf_counter()
        opts = {"pop_size": 8, "generations": 2} if policy == "pollux" else None
        simulate(jobs, policy=policy, nodes=2, gpus=4, seed=0, policy_options=opts, max_time=900)
        out[f"simulate:{policy}"] = time.perf_counter() - t0
        if stream is not None:
            stream.write(f"  simulate ({policy}): {out[f'simulate:{policy}']:.1f} s\n")
    if costmodel:
        t0 = time.perf_counter()
        try:
            from fastsched.costmodel import estimate_cost, transformer_stack
        except ImportError:
            pass
        else:
            estimate_cost(transformer_stack(1))
            out["costmodel"] = time.perf_counter() - t0
            if stream is not None:
                stream.write(f"  cost model: {out['costmodel']:.1f} s\n")
    return out
