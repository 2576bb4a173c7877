"""Sphinx configuration of the fastsched documentation.

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (the ``docs`` extra).

Two pages are generated at build time, so that nothing has to be edited when the code or the
benchmark outputs change:

* the API reference (``api/_generated/*.rst``): one autosummary table per public package,
  listing the names of its ``__all__`` (a name re-exported by several packages is documented
  once, under the first package that exports it);
* the measured results (``results/_generated/*.md``): copies of ``benchmarks/RESULTS.md``,
  every ``benchmarks/results/*.md`` and every ``benchmarks/*/RESULTS.md``, rendered by MyST.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import fastsched  # noqa: E402  (after the path is set, so the checkout is documented)

project = "fastsched"
author = "the fastsched authors"
copyright = "the fastsched authors"  # noqa: A001  (Sphinx's name)
version = release = fastsched.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]
html_theme = "alabaster"
html_theme_options = {"description": "goodput scheduling, simulation and cost models, compiled with numba"}
html_static_path: list[str] = []

# No network in CI: intersphinx inventories are not fetched (cross-references to numpy and
# Python stay plain text rather than failing the build).
intersphinx_mapping: dict = {}

autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
autodoc_mock_imports = ["paddle", "cupy", "torch"]

numpydoc_show_class_members = False  # the class template lists members through autodoc
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_heading_anchors = 3
suppress_warnings = [
    # Benchmark result files are written by many hands as GitHub markdown: links between
    # them and to scripts are fine on GitHub but are not documents here; headings may skip
    # levels. Neither should fail the documentation build.
    "myst.xref_missing",
    "myst.header",
]

# -- generated pages -----------------------------------------------------------------------

#: Public packages whose ``__all__`` forms the API reference, in documentation order.
API_PACKAGES = [
    ("fastsched", "AdaptDL drop-in (goodput model, speedups, policy) and the lazily imported entry points"),
    ("fastsched.goodput", "goodput model, fitting and speedup tables"),
    ("fastsched.policy", "the Pollux policy, its inputs and the exact MILP oracle"),
    ("fastsched.sim", "the cluster simulator"),
    (
        "fastsched.sim.policies",
        "the simulator's policies: the SimPolicy interface, the registry, the built-in policies",
    ),
    ("fastsched.sweep", "sweeps and large grids on dask"),
    ("fastsched.costmodel", "static cost model of distributed training programs"),
    ("fastsched.catalog", "GPU and model catalogues, and the throughput oracle"),
    ("fastsched.cuda", "optional CUDA target"),
]


def _write_if_changed(path: Path, text: str) -> None:
    # Rewriting an identical file would make Sphinx re-read it on every build.
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _api_pages() -> None:
    out = DOCS / "api" / "_generated"
    seen: set = set()
    names = []
    for package, blurb in API_PACKAGES:
        try:
            module = importlib.import_module(package)
        except ImportError as exc:  # an optional package that cannot be imported here
            print(f"docs: skipping {package}: {exc}", file=sys.stderr)
            continue
        entries = []
        for name in getattr(module, "__all__", []):
            if name.startswith("__"):
                continue
            obj = getattr(module, name)
            # Documented once: where a package re-exports a name documented earlier, link to it.
            key = id(obj) if callable(obj) else f"{package}.{name}"
            if key in seen:
                continue
            seen.add(key)
            entries.append(name)
        title = f"``{package}``"
        lines = [title, "=" * len(title), "", f".. automodule:: {package}", "   :no-members:", ""]
        lines += [f"Public names ({blurb}).", ""]
        if entries:
            lines += [f".. currentmodule:: {package}", "", ".. autosummary::", "   :toctree: .", ""]
            lines += [f"   {name}" for name in entries]
        _write_if_changed(out / f"{package}.rst", "\n".join(lines) + "\n")
        names.append(package)
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    index += [f"   {name}" for name in names]
    _write_if_changed(out / "index.rst", "\n".join(index) + "\n")


def _result_pages() -> None:
    out = DOCS / "results" / "_generated"
    bench = ROOT / "benchmarks"
    sources = []
    if (bench / "RESULTS.md").is_file():
        sources.append((bench / "RESULTS.md", "RESULTS.md"))
    sources += [(p, f"results/{p.name}") for p in sorted((bench / "results").glob("*.md"))]
    sources += [(p, f"areas/{p.parent.name}.md") for p in sorted(bench.glob("*/RESULTS.md"))]
    wanted = {rel for _, rel in sources}
    if out.exists():
        for old in out.rglob("*.md"):
            if str(old.relative_to(out)) not in wanted:
                old.unlink()
        for old in out.rglob("*.svg"):
            if not (bench / "results" / old.name).is_file():
                old.unlink()
    for src, rel in sources:
        _write_if_changed(out / rel, src.read_text())
    # Charts the result files show beside their tables (``![...](name.svg)``).
    for chart in sorted((bench / "results").glob("*.svg")):
        _write_if_changed(out / "results" / chart.name, chart.read_text())
    # The toctree is written here too: a glob that matches nothing would be a warning.
    toc = [".. toctree::", "   :maxdepth: 1", ""]
    toc += [f"   _generated/{rel[:-3]}" for _, rel in sources]
    if not sources:
        toc = ["No benchmark results have been recorded in this checkout."]
    _write_if_changed(out / "toc.rst.inc", "\n".join(toc) + "\n")


_api_pages()
_result_pages()
