"""Root pytest configuration: what ``--doctest-modules`` may import.

``python -m pytest`` collects ``tests/``, the package (its docstring examples) and ``docs/`` (the
``>>>`` examples of the pages). A module that needs an optional dependency is not collected when
that dependency is absent, so a plain ``pip install -e ".[test]"`` still passes.
"""

from __future__ import annotations

import importlib.util

# module file (relative to this folder) -> the import it cannot do without
_OPTIONAL = {
    "fastsched/cuda/_kernels.py": "numba.cuda",
    "fastsched/costmodel/paddle.py": "paddle",
}


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


collect_ignore = ["docs/conf.py", "setup.py"]
collect_ignore += [path for path, module in _OPTIONAL.items() if not _importable(module)]
# Benchmarks are run on purpose (``pytest benchmarks/...``), never by the default test command.
collect_ignore_glob = ["docs/_build/*"]
