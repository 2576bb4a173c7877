"""Inspect numba's cache: which compiled kernels of fastsched's loaded modules a process would load.

fastsched's kernels are compiled with ``cache=True``: the first process compiles them and
writes machine code to numba's cache (``__pycache__`` beside the sources, numba's user-wide
cache when that is read-only, or ``NUMBA_CACHE_DIR``); later processes load it in well under a
second. :func:`cache_state` asks numba's own cache objects which kernels have a usable index
(present and matching the source), which costs a file open per kernel, not a compilation.
Functions jitted with ``inline="always"`` are compiled only into their callers and are not
counted. Nothing here compiles or runs a kernel.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass

__all__ = ["CacheState", "cache_state", "written_since", "SIM_PACKAGES", "ALL_PACKAGES"]

#: Packages whose kernels a simulation (or a sweep) compiles. The policies are named apart: the
#: simulator imports only the policy a run asks for, and their kernels count all the same.
SIM_PACKAGES = ("fastsched.goodput", "fastsched.policy", "fastsched.sim", "fastsched.sim.policies")
#: Every package with CPU kernels (cuda's are compiled for the device, on first use).
ALL_PACKAGES = (*SIM_PACKAGES, "fastsched.costmodel")


@dataclass(frozen=True)
class CacheState:
    """Which compiled kernels of the loaded fastsched modules have a usable cache entry.

    Attributes
    ----------
    kernels : int
        Cached (``cache=True``) kernels found in the loaded modules of the packages inspected.
    cached : int
        Of which have an index numba would use (present, same source, same numba).
    cache_dirs : tuple of str
        Folders numba reads and writes them in.
    missing : tuple of str
        ``module.function`` of the kernels without a usable entry.
    present : tuple of str
        ``module.function`` of the kernels with one.

    Examples
    --------
    >>> s = CacheState(3, 1, ("/tmp",), ("m.a", "m.b"), ("m.c",))
    >>> s.cold, s.complete
    (False, False)
    """

    kernels: int
    cached: int
    cache_dirs: tuple
    missing: tuple = ()
    present: tuple = ()

    @property
    def cold(self) -> bool:
        """No kernel cached at all: a first run, or a cache made stale by new sources or another numba."""
        return self.kernels > 0 and self.cached == 0

    @property
    def complete(self) -> bool:
        """Every kernel counted is cached."""
        return self.cached == self.kernels


def _dispatchers(packages):
    from numba.extending import is_jitted  # public: no numba.core import needed

    prefixes = tuple(packages)
    for name, module in list(sys.modules.items()):
        if module is None or not any(name == p or name.startswith(p + ".") for p in prefixes):
            continue
        for obj in list(vars(module).values()):
            if is_jitted(obj) and getattr(obj, "__module__", None) == name:
                if obj.targetoptions.get("inline", "never") == "always":
                    continue  # compiled into its callers only, never cached on its own
                yield obj


def cache_state(packages=SIM_PACKAGES, *, load=True) -> CacheState:
    """Inspect numba's cache for the kernels of ``packages`` (imported, not compiled).

    Parameters
    ----------
    packages : iterable of str
        Packages whose kernels are counted (imported first; their submodules that are loaded
        count too). Another command's kernels, e.g. the cost model's, do not make a simulation
        warm.
    load : bool
        Import the packages and their lazy re-exports first (what a complete count needs:
        about 0.1 s for the simulator's). ``False`` counts the kernels of the modules this
        process has already loaded, for a file check each.

    Returns
    -------
    CacheState
        ``kernels == 0`` when numba's cache cannot be inspected (e.g. under
        ``NUMBA_DISABLE_JIT`` or the CUDA simulator): never reported cold.

    Examples
    --------
    >>> state = cache_state()
    >>> 0 <= state.cached <= state.kernels, len(state.missing) == state.kernels - state.cached
    (True, True)
    >>> cache_state(load=False).kernels <= state.kernels  # the modules loaded so far only
    True
    """
    for pkg in packages if load else ():
        module = importlib.import_module(pkg)
        for name in getattr(module, "__all__", ()):
            getattr(module, name, None)  # a lazy re-export loads its module (and its kernels)
    dirs, missing, present = [], [], []
    for disp in _dispatchers(packages):
        cache = getattr(disp, "_cache", None)
        index = getattr(cache, "_cache_file", None)
        if index is None:
            continue  # not a caching dispatcher
        try:
            ok = bool(index._load_index())
        except Exception:  # noqa: BLE001 - numba internals: an unreadable index is "not cached"
            ok = False
        name = f"{disp.__module__}.{disp.py_func.__qualname__}"
        (present if ok else missing).append(name)
        path = getattr(cache, "_cache_path", None)
        if path and path not in dirs:
            dirs.append(path)
    return CacheState(len(missing) + len(present), len(present), tuple(dirs), tuple(missing), tuple(present))


def written_since(packages, t0) -> int:
    """Kernels of ``packages`` whose cache index was written at or after ``t0`` (``time.time()``).

    That is, compiled (and saved) since then by this process or another: how warm-up counts
    what it compiled, including kernels of modules imported while it ran.

    Examples
    --------
    >>> import time
    >>> written_since(("fastsched.goodput",), time.time() + 3600)
    0
    """
    import os

    cache_state(packages)  # imports the packages
    n = 0
    for disp in _dispatchers(packages):
        path = getattr(getattr(getattr(disp, "_cache", None), "_cache_file", None), "_index_path", None)
        try:
            n += path is not None and os.stat(path).st_mtime >= t0
        except OSError:
            pass
    return n
