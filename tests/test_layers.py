"""The package's layering floors: who imports what, and what a command loads.

Static checks read the module-level imports of every file of ``fastsched/`` (imports inside
functions are lazy on purpose and are not edges); the load checks run a fresh interpreter
and count the ``fastsched`` modules in ``sys.modules``.
"""

from __future__ import annotations

import ast
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fastsched"

# numba's private packages: only fastsched/_numba_private.py may import them.
NUMBA_PRIVATE = ("numba.core", "numba.np", "numba.cpython")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_level_imports(path: Path):
    """Absolute names imported at module level (``from a import b`` gives ``a`` and ``a.b``)."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    out = []

    def visit(nodes):
        for node in nodes:
            if isinstance(node, ast.Import):
                out.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
                out.append(base)
                out.extend(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                is_type_checking = "TYPE_CHECKING" in ast.dump(node.test)
                if not is_type_checking:
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return out


def _all_modules():
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _any_private_numba(path: Path) -> list[str]:
    """numba private packages a file names, imported anywhere or reached as attributes."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "numba":
            names = [f"numba.{node.attr}"]
        found += [n for n in names if any(n == p or n.startswith(p + ".") for p in NUMBA_PRIVATE)]
    return found


def test_numba_private_parts_only_in_one_module():
    bad = {}
    for name, path in _all_modules().items():
        if name == "fastsched._numba_private":
            continue
        found = _any_private_numba(path)
        if found:
            bad[name] = found
    assert bad == {}


def _count_loaded(code: str, *args: str) -> list[str]:
    snippet = (
        code
        + "\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m == 'fastsched' or m.startswith('fastsched.'))))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", snippet, *args], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


# The base modules import nothing above them (only one another).
BASE = {
    "fastsched._jit",
    "fastsched._validate",
    "fastsched._device",
    "fastsched._atomic",
    "fastsched._progress",
    "fastsched._version",
    "fastsched._lazy",
    "fastsched._interrupt",  # Ctrl-C handling, imports nothing of fastsched
}


def _fastsched_edges(name: str, path: Path) -> set[str]:
    """Modules of fastsched that ``name`` imports at module level (``from P import m`` gives ``P.m`` when a module)."""
    modules = _all_modules()
    # ``from P import name`` records both P and P.name; P.name counts only when it is a module.
    out = {target for target in _module_level_imports(path) if target in modules}
    # A module's own packages are imported before it anyway (``from fastsched.cuda import
    # _memory`` inside fastsched.cuda is no edge to fastsched.cuda's __init__).
    parts = name.split(".")
    out -= {".".join(parts[:k]) for k in range(1, len(parts) + 1)}
    return out


def test_base_modules_import_nothing_above_them():
    modules = _all_modules()
    bad = []
    for name in sorted(BASE):
        for target in _fastsched_edges(name, modules[name]):
            if target not in BASE and target != "fastsched":
                bad.append((name, target))
    assert bad == []


def test_cuda_imports_no_goodput_face():
    modules = _all_modules()
    bad = []
    for name, path in modules.items():
        if not name.startswith("fastsched.cuda"):
            continue
        for target in _fastsched_edges(name, path):
            if target.startswith("fastsched.goodput.") and not target.rsplit(".", 1)[1].startswith("_"):
                bad.append((name, target))
    assert bad == []
    # ... nor does it load one.
    loaded = _count_loaded("import fastsched.cuda")
    assert [m for m in loaded if m.startswith("fastsched.goodput.") and not m.rsplit(".", 1)[1].startswith("_")] == []


def _all_imports(path: Path, name: str) -> set[str]:
    """Every absolute name a file imports, at module level or inside a function (lazily).

    ``import_module("literal")`` and imports under ``TYPE_CHECKING`` count (a circle closed by a
    type annotation is still two modules that need each other); doctests (strings) do not.
    """
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.add(node.args[0].value)
    return out


def _full_graph(root: Path = ROOT) -> dict:
    """Module -> the fastsched modules it may import (lazily too), with the packages each import runs."""
    modules = {}
    for path in sorted((root / "fastsched").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        edges = set()
        for target in _all_imports(path, name):
            parts = target.split(".")
            # Importing a.b.c runs a.b's __init__ first: an edge to each package on the way.
            edges.update(p for p in (".".join(parts[:k]) for k in range(2, len(parts) + 1)) if p in modules)
        own = name.split(".")
        graph[name] = edges - {".".join(own[:k]) for k in range(1, len(own) + 1)}
    return graph


def _cycles(graph) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


# Import circles still allowed (none: the cost model's were removed; issue 36). Delete an entry
# when its circle is gone (the test fails on a stale entry too).
KNOWN_CYCLES: list = []


def test_no_import_cycle_counting_lazy_imports():
    # Lazy imports (inside functions) hide a circle from the interpreter, not from a reader:
    # a module that needs its importer back is one module in two files.
    cycles = _cycles(_full_graph())
    assert all(name.startswith(("fastsched.costmodel", "fastsched.catalog")) for c in KNOWN_CYCLES for name in c)
    assert cycles == KNOWN_CYCLES


def test_cycle_finder_finds_a_lazy_circle(tmp_path):
    # The finder itself: a circle closed by a lazy import and one through a package's __init__.
    pkg = tmp_path / "fastsched"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("def f():\n    from fastsched import b\n")
    (pkg / "b.py").write_text("import fastsched.sub.c\n")
    (pkg / "sub" / "__init__.py").write_text("from fastsched.a import f\n")
    (pkg / "sub" / "c.py").write_text("")
    (pkg / "d.py").write_text("import importlib\n\ndef g():\n    importlib.import_module('fastsched.e')\n")
    (pkg / "e.py").write_text("from fastsched import d\n")
    (pkg / "f.py").write_text("from fastsched import e\n")  # on no circle
    (pkg / "g.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from . import h\n")
    (pkg / "h.py").write_text("from fastsched.g import TYPE_CHECKING\n")
    # a -> b (lazily) -> sub (the package ``import fastsched.sub.c`` runs) -> a; d <-> e by name;
    # g -> h under TYPE_CHECKING, h -> g.
    assert _cycles(_full_graph(tmp_path)) == [
        ["fastsched.a", "fastsched.b", "fastsched.sub"],
        ["fastsched.d", "fastsched.e"],
        ["fastsched.g", "fastsched.h"],
    ]


# The layers, lowest first: a module imports (even lazily) only modules of its layer or below.
# Patterns are matched in order; the first that matches names the layer.
_LAYER_RULES = [
    # (layer, module-name regex)
    (0, r"fastsched\._(?!_main__$|backend$|warmup_run$|info_cli$)[a-z_]+"),  # base modules
    # the CPU kernels and formulas that cuda compiles for the device
    (1, r"fastsched\.goodput\._(formulas|types|kernels|batch_kernels|fit_kernels)|fastsched\.policy\._ga(\..*)?"),
    (2, r"fastsched\.cuda(\..*)?"),
    (3, r"fastsched\._backend"),  # the backend switch: asks cuda's probe
    (4, r"fastsched\.(goodput|policy)(\..*)?"),
    # the cost model never imports the catalogue (whose oracle calls it); both read the GPU
    # table fastsched._gpus, a base module
    (5, r"fastsched\.costmodel(\..*)?"),
    (6, r"fastsched\.catalog(\..*)?"),
    (7, r"fastsched\.sim\.inputs(\..*)?"),
    (8, r"fastsched\.sim\.truth(\..*)?"),
    (9, r"fastsched\.sim\.engine(\..*)?"),
    (10, r"fastsched\.sim\.policies(\..*)?"),
    (11, r"fastsched\.sim\.results(\..*)?"),
    (12, r"fastsched\.sim(\..*)?"),  # the faces: simulate(), the study, the commands
    (13, r"fastsched\.(sweep(\..*)?|_warmup_run)"),
    (14, r"fastsched\.(cli|__main__|_info_cli)"),
    (15, r"fastsched"),  # the package's lazy re-exports
]


def _layer(name: str) -> int:
    import re

    for layer, pattern in _LAYER_RULES:
        if re.fullmatch(pattern, name):
            return layer
    raise AssertionError(f"{name} is in no layer of tests/test_layers.py")


def test_no_lower_layer_imports_a_higher_one():
    # Importing a kernel module runs its package's __init__ (which only re-exports lazily): an
    # edge to a package is left to the cycle test when a module inside it is imported too; a
    # name taken from the package itself (``from fastsched.catalog import x``) is an edge.
    modules = _all_modules()
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    graph = _full_graph()
    bad = []
    for name, edges in sorted(graph.items()):
        on_the_way = {p for p in edges & packages if any(e.startswith(p + ".") for e in edges)}
        for target in sorted(edges - on_the_way):
            if _layer(target) > _layer(name):
                bad.append((name, target))
    assert bad == []
    # Not vacuous: the catalogue's face and the cost model's clusters read the one GPU table.
    assert {"fastsched._gpus"} <= graph["fastsched.catalog.gpus"] & graph["fastsched.costmodel.cluster"]


def test_every_module_has_a_layer_and_the_simulator_its_roles():
    assert {_layer(name) for name in _all_modules()} == set(range(16))
    roles = {p.name for p in (PACKAGE / "sim").iterdir() if (p / "__init__.py").is_file()}
    assert roles == {"inputs", "truth", "engine", "policies", "results"}


def test_no_module_over_600_lines():
    long_files = {
        str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600
    }
    assert long_files == {}


def test_no_long_files_in_policy_cuda_goodput():
    long_files = {}
    for area in ("policy", "cuda", "goodput"):
        for path in (PACKAGE / area).rglob("*.py"):
            lines = len(path.read_text().splitlines())
            if lines > 600:
                long_files[str(path.relative_to(ROOT))] = lines
    assert long_files == {}


def test_import_backend_loads_few_modules():
    loaded = _count_loaded("import fastsched._backend")
    assert len(loaded) <= 8, loaded


def test_import_policy_loads_no_simulator_nor_cost_model():
    loaded = _count_loaded("from fastsched import PolluxPolicy")
    assert [m for m in loaded if m.startswith(("fastsched.sim", "fastsched.costmodel", "fastsched.sweep"))] == []


def test_loading_one_policy_imports_no_other_policy():
    # The registry names its classes by module: a run pays for its own policy's imports only.
    loaded = _count_loaded("from fastsched.sim.policies.registry import load_policy\nload_policy('tiresias')")
    policy_modules = {m for m in loaded if m.startswith("fastsched.sim.policies.") and not m.endswith("._lazy")}
    assert "fastsched.sim.policies.baselines" in policy_modules
    others = ("gavel", "sia", "pollux", "themis", "shockwave", "gandiva", "queue", "gavel_objectives")
    assert [m for m in policy_modules if m.rsplit(".", 1)[1] in others] == []


def test_every_builtin_name_loads_its_policy_class():
    from fastsched.sim.policies import SimPolicy, names, registry

    for name in names.POLICY_NAMES:
        cls = registry.load_policy(name)
        assert isinstance(cls, type) and issubclass(cls, SimPolicy), name
        assert registry.make_policy(name).name == name


def test_simulate_help_loads_few_modules():
    code = "from fastsched.cli import main\ntry:\n    main(['simulate', '--help'])\nexcept SystemExit:\n    pass"
    loaded = _count_loaded(code)
    assert len(loaded) <= 25, len(loaded)


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _refused(argv, cwd) -> tuple:
    """Run ``fastsched ARGV`` in a fresh interpreter: (exit status, fastsched modules, heavy packages loaded)."""
    code = (
        "import json, sys\nfrom fastsched.cli import main\n"
        "try:\n    rc = main(json.loads(sys.argv[1]))\nexcept SystemExit as exc:\n    rc = exc.code\n"
        "mods = [m for m in sys.modules if m == 'fastsched' or m.startswith('fastsched.')]\n"
        "heavy = [m for m in ('numba', 'scipy', 'matplotlib', 'distributed') if m in sys.modules]\n"
        "print(json.dumps([rc, sorted(mods), heavy]))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # A count that is not refused may allocate without end (--scale 10**12 did): bounded here.
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
        preexec_fn=_limit_memory,
    )
    assert out.returncode == 0, out.stderr
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))


BIG = str(10**12)


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--nodes", BIG, "-q"],
        ["simulate", "--gpus", BIG, "-q"],
        ["simulate", "--max-nodes", BIG, "-q"],
        ["simulate", "--interval", BIG, "-q"],
        ["simulate", "--cluster", f"{BIG}xaws", "-q"],
        ["simulate", "--cluster", "c.toml", "-q"],
        ["simulate", "--seed", str(10**30), "-q"],
        ["simulate", "w.csv", "--scale", BIG, "-q"],
        ["sweep", "seeds.json", "--serial", "-q"],
        ["sweep", "nodes.json", "--serial", "-q"],
        ["sweep", "plain.json", "-q", "--workers", BIG],
        ["plan", "gpt.json", "--gpus", BIG],
        ["plan", "deep.json", "--gpus", "8"],
        ["cost", "gpt.json", "--microbatches", BIG],
        ["profile", "deep.json", "--gpu", "h100", "--output", "o", "-q"],
    ],
    ids=lambda argv: " ".join(a for a in argv if a != "-q"),
)
def test_a_count_of_10_to_the_12_is_refused_before_the_engine_loads(tmp_path, argv):
    # Issue 28's floor (refuse in <= 1 s) needs the refusal to come before numba, scipy and the
    # simulator are imported: seconds of a process's start.
    (tmp_path / "w.csv").write_text("name,time,application,num_replicas,batch_size\nj,0,cifar10,1,128\n")
    (tmp_path / "c.toml").write_text(f'[[group]]\ntype = "aws"\ncount = {BIG}\n')
    for name, extra in (("seeds", {"seeds": 10**12}), ("nodes", {"nodes": 10**12}), ("plain", {})):
        (tmp_path / f"{name}.json").write_text(json.dumps({"workloads": "w.csv", "policy": "fifo", **extra}))
    gpt = {"layers": 24, "hidden": 2048, "heads": 16, "seq": 1024, "vocab": 50257, "global_batch": 512}
    (tmp_path / "gpt.json").write_text(json.dumps(gpt))
    (tmp_path / "deep.json").write_text(json.dumps({**gpt, "layers": 10**9}))
    status, modules, heavy = _refused(argv, tmp_path)
    assert status == 2
    # The parser imports each command's module (the log replay and workload-from-log are the newest).
    assert heavy == [] and len(modules) <= 38, (heavy, modules)
    engines = (
        "fastsched.sim.api",
        "fastsched.sim.policies.registry",
        "fastsched.sweep.runner",
        "fastsched.goodput.model",
        "fastsched.costmodel.search",
        "fastsched.costmodel.case",
        "fastsched.sim.truth.oracle",
    )
    assert not set(engines) & set(modules)


def test_version_loads_no_command_engine():
    status, modules, heavy = _refused(["--version"], ROOT)
    assert status == 0 and heavy == [] and len(modules) <= 25, modules


def test_light_name_modules_agree_with_the_engines():
    # The command line reads the names from data modules that import nothing; the engines
    # must define the same ones.
    from fastsched.sim import api
    from fastsched.sim.policies import names, registry
    from fastsched.sim.presets import PRESETS

    assert names.POLICY_NAMES == tuple(registry._REGISTRY)
    assert set(names.POLICY_OPTIONS) <= set(names.POLICY_NAMES)
    assert api.PRESETS is PRESETS
    assert all(PRESETS[p]["policy"] in names.POLICY_NAMES for p in PRESETS)


def test_lazy_names_stay_bound_over_their_same_named_submodules():
    # costmodel's search, encode and deviations are functions and submodules: importing the
    # submodule (first or after) must leave the package attribute the function, as an eager
    # ``from .search import search`` did.
    code = (
        "import fastsched.costmodel.search, fastsched.costmodel.encode\n"
        "import fastsched.costmodel as c\n"
        "from fastsched.costmodel import deviations, search\n"
        "import fastsched.costmodel.deviations\n"
        "print(all(callable(f) and not isinstance(f, type(c)) for f in (c.search, c.encode, c.deviations, search, deviations)))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.stdout.strip() == "True", out.stderr
