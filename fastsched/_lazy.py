"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package lists ``name -> defining module`` and gets a module ``__getattr__`` that imports the
module on first use of the name, so importing the package (or any module inside it) loads
nothing else. Imports nothing above it.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: dict):
    """Return ``(__getattr__, __dir__)`` for ``package`` re-exporting ``names`` lazily.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : dict
        Public name -> the module (absolute name) that defines it. A name must not also be a
        submodule of ``package`` (importing that submodule would shadow it).

    Examples
    --------
    >>> getattr_, dir_ = lazy_exports("fastsched", {"version_of": "importlib.metadata"})
    >>> getattr_("version_of") is None
    Traceback (most recent call last):
    ...
    AttributeError: module 'importlib.metadata' has no attribute 'version_of'
    >>> "version_of" in dir_()
    True
    """

    def __getattr__(name: str):
        source = names.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
