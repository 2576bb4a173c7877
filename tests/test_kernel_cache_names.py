"""No two kernels compiled from one function with different options share numba's cache entries.

numba keys a kernel's on-disk cache by its function's name and source line, not by the options
it was compiled with. Two dispatchers of one function (a serial and a ``parallel=True`` twin)
therefore load each other's machine code: the parallel Pollux repair and child builder ran the
serial code whenever that was cached first. Every twin must be a renamed copy
(``fastsched._numba_private.copy_function``).
"""

from __future__ import annotations

import importlib
import pkgutil

import numba.core.registry
import pytest

import fastsched


def _modules():
    for info in pkgutil.walk_packages(fastsched.__path__, "fastsched."):
        if ".cuda" in info.name or info.name.endswith("__main__"):  # device kernels: their own target
            continue
        try:
            yield importlib.import_module(info.name)
        except ImportError:  # an extra's module without the extra
            continue


def _kernels():
    """Every CPU dispatcher reachable as a module global, each once, with its cache key."""
    seen = {}
    for module in _modules():
        for value in vars(module).values():
            if isinstance(value, numba.core.registry.CPUDispatcher) and id(value) not in seen:
                code = value.py_func.__code__
                seen[id(value)] = ((code.co_filename, code.co_firstlineno, value.py_func.__qualname__), value)
    return list(seen.values())


def test_kernels_of_one_function_share_their_options():
    kernels = _kernels()
    assert len(kernels) > 50  # the walk found the package's kernels
    by_key: dict = {}
    for key, dispatcher in kernels:
        by_key.setdefault(key, []).append(dispatcher)
    clashes = {
        f"{key[2]} ({key[0]}:{key[1]})": [str(sorted(d.targetoptions.items())) for d in group]
        for key, group in by_key.items()
        if len({str(sorted(d.targetoptions.items())) for d in group}) > 1
    }
    assert not clashes, f"kernels sharing a cache entry with different options: {clashes}"


@pytest.mark.parametrize(
    ("serial", "parallel"), [("repair_serial", "repair_parallel"), ("offspring_serial", "offspring_parallel")]
)
def test_search_twins_have_cache_entries_of_their_own(serial, parallel):
    from fastsched.policy import _ga as G

    one, other = getattr(G, serial), getattr(G, parallel)
    assert other.targetoptions.get("parallel") is True and not one.targetoptions.get("parallel")
    assert one.py_func.__qualname__ != other.py_func.__qualname__
