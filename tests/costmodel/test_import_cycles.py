"""No import circles inside the cost model and the catalogue, and one direction between them.

Static (AST): every ``import`` of every file of ``fastsched/costmodel``, ``fastsched/catalog`` and
the GPU table ``fastsched/_gpus.py`` counts, at module level, inside functions or under
``TYPE_CHECKING``: a lazy import that closes a circle is still a circle (issue 36 listed
``cost_model`` <-> ``model`` through a module ``__getattr__`` and ``_packed`` <-> ``encode``
through ``TYPE_CHECKING``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "fastsched"
AREAS = ("fastsched.costmodel", "fastsched.catalog", "fastsched._gpus")


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict:
    return {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, name: str) -> set:
    """Absolute names imported anywhere in ``path`` (``from a import b`` gives ``a`` and ``a.b``)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*head, base]).strip(".")
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def _graph() -> dict:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        if not name.startswith(AREAS):
            continue
        own = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 2)}
        graph[name] = {t for t in _imports(path, name) if t in modules and t.startswith(AREAS)} - own
    return graph


def _cycles(graph) -> list:
    state: dict = {}
    found = []

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    return found


def test_no_import_circle_in_costmodel_and_catalog():
    assert _cycles(_graph()) == []


def test_the_checker_sees_lazy_and_type_checking_imports(tmp_path):
    # the check itself: a two-module circle is found, and imports inside functions and under
    # TYPE_CHECKING are edges
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
    f = tmp_path / "probe.py"
    f.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fastsched.costmodel.encode import X\n"
        "def g():\n    from . import cost_model\n"
    )
    found = _imports(f, "fastsched.costmodel.probe")
    assert {"fastsched.costmodel.encode", "fastsched.costmodel.cost_model"} <= found


def test_costmodel_never_imports_the_catalogue_and_the_table_imports_neither():
    graph = _graph()
    up = {n: sorted(t for t in ts if t.startswith("fastsched.catalog")) for n, ts in graph.items()}
    assert {n: ts for n, ts in up.items() if n.startswith("fastsched.costmodel") and ts} == {}
    assert graph["fastsched._gpus"] == set()
    # the catalogue reads the same table: its face re-exports fastsched._gpus
    assert "fastsched._gpus" in graph["fastsched.catalog.gpus"]
