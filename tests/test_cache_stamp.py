"""A kernel's cache goes stale when a file it compiles in changes (fastsched._cache_stamp)."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from fastsched import _cache_stamp
from fastsched._numba_private import stamp_caches

HELPER = """
from fastsched._jit import jit


@jit
def helper(x):
    return x + {add}
"""

KERNEL = """
from fastsched._jit import jit
from {package}.helper import helper


@jit
def kernel(x):
    return helper(x) * 2.0
"""


def _import_fresh(package):
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]
        _cache_stamp._REFERENCES.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(f"{package}.kernel")


@pytest.fixture
def package(tmp_path, monkeypatch):
    name = "fastsched_stamp_probe"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "helper.py").write_text(textwrap.dedent(HELPER.format(add="1.0")))
    (root / "kernel.py").write_text(textwrap.dedent(KERNEL.format(package=name)))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_cache_stamp, "PACKAGES", {*_cache_stamp.PACKAGES, name})
    yield name, root
    for mod in [n for n in sys.modules if n.startswith(name)]:
        del sys.modules[mod]


def test_a_changed_helper_file_invalidates_its_callers_cache(package):
    name, root = package
    first = _import_fresh(name)
    assert first.kernel(1.0) == 4.0
    # Same sources, a new process's view: the kernel is loaded from the cache.
    again = _import_fresh(name)
    assert again.kernel(1.0) == 4.0
    assert sum(again.kernel.stats.cache_hits.values()) == 1
    # Only the helper's file changes (a new length too, so no stale bytecode is reused).
    (root / "helper.py").write_text(textwrap.dedent(HELPER.format(add="25.0")))
    changed = _import_fresh(name)
    assert changed.kernel(1.0) == 52.0  # numba's own stamp alone would load 4.0 from the cache
    assert sum(changed.kernel.stats.cache_hits.values()) == 0


def test_the_stamp_lists_the_inlined_formulas_and_ignores_import_order():
    import fastsched.goodput._kernels as kernels

    before = _cache_stamp.kernel_stamp(kernels.fill_table_kernel.py_func)
    assert "fastsched.goodput._formulas" in [entry[0] for entry in before]
    importlib.import_module("fastsched.sim.api")  # many more modules, packages gain attributes
    importlib.import_module("fastsched.costmodel")
    _cache_stamp._REFERENCES.clear()
    assert _cache_stamp.kernel_stamp(kernels.fill_table_kernel.py_func) == before
    assert kernels.fill_table_kernel._cache._cache_file._source_stamp[1] == before


def test_installing_twice_keeps_one_locator():
    import numba.core.caching as caching

    assert stamp_caches(_cache_stamp.kernel_stamp)
    assert stamp_caches(_cache_stamp.kernel_stamp)
    stamped = [c for c in caching.CacheImpl._locator_classes if getattr(c, "_fastsched_stamp", None)]
    assert len(stamped) == 1
