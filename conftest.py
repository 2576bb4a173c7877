"""Root pytest configuration: what ``--doctest-modules`` may import.

``python -m pytest`` collects ``tests/``, the package (its docstring examples) and ``docs/`` (the
``>>>`` examples of the pages). A module that needs an optional dependency is not collected when
that dependency is absent, so a plain ``pip install -e ".[test]"`` still passes.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# module file (relative to this folder) -> the import it cannot do without
_OPTIONAL = {
    # The kernel modules import numba.cuda at import time; the launchers (cuda/goodput.py,
    # cuda/fitness.py, cuda/batch.py) import without it and their examples' CPU lines run anywhere.
    # numba < 0.69 still ships a deprecated numba.cuda, so the package is what is checked.
    "fastsched/cuda/_batch_kernels.py": "numba_cuda",
    "fastsched/cuda/_device.py": "numba_cuda",
    "fastsched/cuda/_fitness_kernels.py": "numba_cuda",
    "fastsched/cuda/_goodput_kernels.py": "numba_cuda",
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


_ROOT = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path, config):
    """Skip helper modules of ``tests/`` and ``benchmarks/`` (naive references, scripts).

    ``--doctest-modules`` would import every ``.py`` file it is given; outside the package only
    test files are collected (a helper script run at import, such as ``tests/cuda/ptx_compile.py``,
    must not run during collection). Tests still import the helpers they use.
    """
    path = Path(collection_path)
    if path.suffix != ".py" or path.name == "conftest.py" or path.name.startswith("test_"):
        return None
    try:
        top = path.resolve().relative_to(_ROOT).parts[0]
    except ValueError:
        return None
    return True if top in ("tests", "benchmarks") else None


def pytest_runtest_logreport(report):
    """Record each skipped test's id in ``$FASTSCHED_SKIPPED_LOG`` when that variable is set.

    CI runs the README's test command on the base install first, then installs the extras and
    reruns exactly the tests that skipped (``.ci/run``): each test runs once, in the setting it
    needs, and a test that skips without an extra is still run with it.
    """
    import os

    log = os.environ.get("FASTSCHED_SKIPPED_LOG")
    if log and report.skipped:
        with open(log, "a", encoding="utf-8") as f:
            f.write(report.nodeid + "\n")
