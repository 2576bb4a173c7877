"""The benchmark scripts name fastsched modules and names that exist (they are not collected as tests).

A module moved or renamed in the package must be followed in ``benchmarks/`` (or keep an
alias, as ``fastsched.sim``'s old module names do): nothing else imports those scripts, and
several run their imports in a child process's script held in a string, checked here too.
Parsed, not run: the scripts need ``../shared`` and minutes of CPU.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").rglob("*.py") if "results" not in p.parts)


def _fastsched_imports(path):
    """``(line, module, name or None)`` of every ``fastsched`` import in ``path``, at any depth."""
    yield from _imports_in(path.read_text(), str(path), 0)


def _imports_in(source, name, offset):
    for node in ast.walk(ast.parse(source, name)):
        # A child process's script held in a string (scale and study scripts run one per case).
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "fastsched" in node.value:
            try:
                yield from _imports_in(node.value, name, offset + node.lineno - 1)
            except SyntaxError:
                pass  # prose, not a script
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "fastsched":
            for alias in node.names:
                yield offset + node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "fastsched":
                    yield offset + node.lineno, alias.name, None


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_benchmark_script_imports_resolve(path):
    for line, module, name in _fastsched_imports(path):
        where = f"{path.relative_to(ROOT)}:{line}"
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:  # (an optional extra missing is not a stale name)
            if getattr(exc, "name", "") and not exc.name.startswith("fastsched"):
                continue
            raise AssertionError(f"{where}: cannot import {module}: {exc}") from exc
        if name is None or name == "*" or hasattr(mod, name):
            continue
        try:
            importlib.import_module(f"{module}.{name}")
        except ImportError as exc:
            raise AssertionError(f"{where}: {module} has no {name!r}") from exc
