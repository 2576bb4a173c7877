"""The freshness stamp of a kernel's cache: every fastsched source it compiles in.

numba reuses a cached kernel while the kernel's own file is unchanged (it hashes the
file's content). fastsched kernels also compile in code from other files: the goodput
formulas (``goodput/_formulas.py``) are inlined into the CPU and CUDA kernels, the genetic
search's link-only helpers into their callers, and the options of :mod:`fastsched._jit`
into all of them. An edit there used to leave the old machine code in every dependent cache
until the ``__pycache__`` files were deleted by hand.

:func:`kernel_stamp` lists, for a kernel's module, the content hash of every fastsched
module it refers to at module level (``import``, ``from ... import``), directly or
through those modules' own references. :func:`fastsched._numba_private.stamp_caches` makes
numba keep it beside its own stamp in the cache index, so a change to any of those files
invalidates the kernel's cache, as a change to its own file does.

The references are read from the modules' namespaces, not parsed from their source: what a
kernel can call is what its module holds. A module still being imported (a kernel decorated
before its module's later imports) is read again on each request until its import is done.
Packages are not followed (their namespaces depend on what else was imported), so the same
sources give the same stamp in every process.

Examples
--------
>>> import fastsched.goodput._kernels as kernels
>>> "fastsched.goodput._formulas" in dependencies(kernels.__name__)
True
>>> stamp = kernel_stamp(kernels.fill_table_kernel.py_func)
>>> [entry[0] for entry in stamp] == dependencies(kernels.__name__)
True
>>> kernel_stamp(len) is None  # not a fastsched function: numba's own stamp applies
True
"""

from __future__ import annotations

import hashlib
import os
import sys
import types

#: Top-level packages whose kernels are stamped with their dependencies (tests add their own).
PACKAGES = {"fastsched"}

# Module name -> names of the package's modules it refers to; only for fully imported modules.
_REFERENCES: dict[str, frozenset] = {}
# (path, modification time, size) -> SHA-256 of the file's bytes.
_DIGESTS: dict[tuple, str] = {}


def _package_of(name: str) -> str:
    return name.partition(".")[0]


def _is_source(name: str) -> bool:
    # Packages are left out: their namespaces gain a submodule whenever one is imported, so
    # following them would make the stamp depend on import order (and their __init__ files
    # only re-export).
    module = sys.modules.get(name)
    return module is not None and not hasattr(module, "__path__")


def _references(name: str) -> frozenset:
    """Return the same-package modules that module ``name`` holds, or holds objects from."""
    if name in _REFERENCES:
        return _REFERENCES[name]
    module = sys.modules.get(name)
    if module is None:
        return frozenset()
    package = _package_of(name)
    found = set()
    for value in list(vars(module).values()):
        if isinstance(value, types.ModuleType):
            ref = value.__name__
        else:
            # Functions, numba dispatchers (which copy their function's __module__) and classes.
            ref = getattr(value, "__module__", None)
        if isinstance(ref, str) and ref != name and _package_of(ref) == package and _is_source(ref):
            found.add(ref)
    refs = frozenset(found)
    # A module whose import is still running may gain references: do not remember it yet.
    if not getattr(getattr(module, "__spec__", None), "_initializing", False):
        _REFERENCES[name] = refs
    return refs


def dependencies(module_name: str) -> list[str]:
    """Modules of the same package that ``module_name`` refers to, directly or transitively.

    Parameters
    ----------
    module_name : str
        An imported module's name.

    Returns
    -------
    list of str
        Sorted names, ``module_name`` itself excluded.

    Examples
    --------
    >>> "fastsched._jit" in dependencies("fastsched.goodput._formulas")
    True
    """
    seen = {module_name}
    stack = [module_name]
    while stack:
        for ref in _references(stack.pop()):
            if ref not in seen:
                seen.add(ref)
                stack.append(ref)
    seen.discard(module_name)
    return sorted(seen)


def _file_stamp(name: str) -> tuple:
    # The file's content, as numba stamps a kernel's own file: a checkout that restores the
    # same text (a new modification time) keeps the cache.
    path = getattr(sys.modules.get(name), "__file__", None)
    try:
        st = os.stat(path) if path else None
    except OSError:
        st = None
    if st is None:
        return (name, None)
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _DIGESTS:
        try:
            with open(path, "rb") as f:
                _DIGESTS[key] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            return (name, None)
    return (name, _DIGESTS[key])


def kernel_stamp(py_func) -> tuple | None:
    """Return the dependency part of ``py_func``'s cache stamp (``None`` outside :data:`PACKAGES`).

    Parameters
    ----------
    py_func : function
        A kernel's Python function (a dispatcher's ``py_func``).

    Returns
    -------
    tuple or None
        ``(module, SHA-256 of its file)`` for each module in :func:`dependencies` of
        ``py_func``'s module, in that order.

    Examples
    --------
    >>> from fastsched.goodput._formulas import grid_candidate
    >>> names = [name for name, _ in kernel_stamp(grid_candidate.py_func)]
    >>> "fastsched._jit" in names
    True
    """
    module = getattr(py_func, "__module__", None)
    if not isinstance(module, str) or _package_of(module) not in PACKAGES:
        return None
    return tuple(_file_stamp(name) for name in dependencies(module))
