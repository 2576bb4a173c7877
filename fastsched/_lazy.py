"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package lists ``name -> defining module`` and gets a module ``__getattr__`` that imports the
module on first use of the name, so importing the package (or any module inside it) loads
nothing else. Imports nothing above it.
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["lazy_exports", "moved_modules"]


def _shadowing_class(shadowed: frozenset):
    """Return a module type on which a re-exported name wins over the submodule of that name.

    Importing submodule ``P.m`` ends with ``setattr(P, "m", module)``; for a name in
    ``shadowed`` the package binds ``module.m`` instead, so ``P.m`` is the function ``m``
    whichever of the two was imported first (what an eager ``from P.m import m`` gives).
    """

    class Package(types.ModuleType):
        def __setattr__(self, name, value):
            if name in shadowed and isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}":
                value = getattr(value, name)
            super().__setattr__(name, value)

    return Package


def lazy_exports(package: str, names: dict):
    """Return ``(__getattr__, __dir__)`` for ``package`` re-exporting ``names`` lazily.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : dict
        Public name -> the module (absolute name) that defines it. A name defined in the
        package's submodule of the same name (``"encode": "P.encode"``) stays bound to the
        name, not to the submodule, also after that submodule is imported.

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
    shadowed = frozenset(n for n, source in names.items() if source == f"{package}.{n}")
    if shadowed:
        sys.modules[package].__class__ = _shadowing_class(shadowed)

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


class _MovedModules:
    """Import finder and loader that answers a module's old path with the module now elsewhere.

    ``import P.old`` gives the very module object ``P.new`` (``sys.modules`` holds it under
    both names), so its classes, private names and pickles are the same; ``python -m P.old``
    runs ``P.new``'s code. Consulted only after the regular finders found nothing.
    """

    def __init__(self, table: dict):
        self.table = table

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.table:
            return None
        from importlib.machinery import ModuleSpec
        from importlib.util import find_spec

        # The new file as origin: ``python -m`` names it in ``sys.argv[0]`` and tracebacks.
        return ModuleSpec(fullname, self, origin=find_spec(self.table[fullname]).origin)

    def create_module(self, spec):
        return importlib.import_module(self.table[spec.name])

    def exec_module(self, module):
        pass  # the module ran under its new name

    def get_code(self, fullname):  # what ``python -m`` runs
        from importlib.util import find_spec

        new = self.table[fullname]
        return find_spec(new).loader.get_code(new)


def moved_modules(package: str, moved: dict) -> None:
    """Keep ``package.OLD`` importable for each ``OLD -> NEW`` of ``moved`` (both relative to ``package``).

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    moved : dict
        Old submodule path -> the submodule path that now holds it.

    Examples
    --------
    >>> import importlib
    >>> old = importlib.import_module("fastsched.sim.workload")  # moved to fastsched.sim.inputs
    >>> old is importlib.import_module("fastsched.sim.inputs.workload")
    True
    """
    table = {f"{package}.{old}": f"{package}.{new}" for old, new in moved.items()}
    if not any(isinstance(f, _MovedModules) and f.table == table for f in sys.meta_path):
        sys.meta_path.append(_MovedModules(table))
