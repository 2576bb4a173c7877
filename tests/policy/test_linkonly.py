"""The link-only helper decorators: feature check of numba's private parts and the plain-jit fallback.

That the fallback gives the same allocations as the link-only helpers over whole policy rounds is
checked by ``benchmarks/policy/linkonly_fallback.py`` (it compiles the genetic search twice).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from numba.core import codegen, compiler, cpu
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

from fastsched.policy._ga import linkonly

ROOT = Path(__file__).resolve().parents[2]


def test_mode_follows_environment_and_feature_check():
    wanted = os.environ.get("FASTSCHED_LINK_ONLY", "1").strip() != "0"
    assert linkonly.LINK_ONLY == (wanted and linkonly.link_only_support() is None)


def test_feature_check_names_a_missing_method(monkeypatch):
    monkeypatch.delattr(codegen.CPUCodeLibrary, "_optimize_final_module")
    why = linkonly.link_only_support()
    assert why is not None and "_optimize_final_module" in why


def test_feature_check_names_a_changed_kind(monkeypatch):
    # A staticmethod turned into a plain function still works when called on the class, so
    # numba keeps working; the check must still notice that the part changed.
    raw = compiler.DefaultPassBuilder.__dict__["define_nopython_pipeline"].__func__
    monkeypatch.setattr(compiler.DefaultPassBuilder, "define_nopython_pipeline", raw)
    why = linkonly.link_only_support()
    assert why is not None and "define_nopython_pipeline" in why


def test_fallback_helpers_are_plain_cached_kernels():
    helper = linkonly._decorator(False, nrt=False)(lambda a, i: 2.0 * a[i])
    assert type(helper) is CPUDispatcher
    assert isinstance(helper._cache, FunctionCache)
    # The fallback passes nothing private to numba.
    assert not {"pipeline_class", "_nrt"} & set(helper.targetoptions)
    assert helper(np.arange(3.0), 2) == 4.0


def test_feature_check_names_an_instance_attribute(monkeypatch):
    # The entry pipeline reads ``codegen._loopvect``, set in ``_init``: an ``_init`` that no
    # longer sets it must be noticed at import, not at the first compile.
    monkeypatch.setattr(codegen.CPUCodegen, "_init", lambda self, llvm_module: None)
    why = linkonly.link_only_support()
    assert why is not None and "_loopvect" in why


def test_feature_check_names_a_keyword_argument(monkeypatch):
    def pass_builder(self, **kwargs):
        return kwargs

    monkeypatch.setattr(codegen.CPUCodegen, "_pass_builder", pass_builder)
    why = linkonly.link_only_support()
    assert why is not None and "_pass_builder" in why and "keyword argument" in why


def test_feature_check_names_a_private_option(monkeypatch):
    owner = next(k for k in cpu.CPUTargetOptions.__mro__ if "_nrt" in vars(k))
    monkeypatch.delattr(owner, "_nrt")
    why = linkonly.link_only_support()
    assert why is not None and "_nrt" in why


def _run(snippet: str, **env) -> str:
    # A file, not ``-c``: numba caches only functions defined in files.
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "kernel.py"
        script.write_text(snippet)
        full = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(Path(tmp) / "cache"), **env)
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


KERNEL = """
import numba, numpy as np
from numba.core.registry import CPUDispatcher
from fastsched.policy._ga import linkonly
from fastsched.policy._ga.fitness import fair_term
from fastsched.policy._ga.evolve import gather
from fastsched.policy._ga.offspring import _children
@linkonly.leaf
def twice(a, i):
    return 2.0 * a[i]
@numba.njit
def total(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += twice(a, i)
    return s
print(linkonly.LINK_ONLY, type(twice) is CPUDispatcher, type(fair_term) is CPUDispatcher, total(np.arange(4.0)),
      twice(np.arange(4.0), 3) if not linkonly.LINK_ONLY else "-",
      "_nrt" in gather.targetoptions, "_nrt" in _children.targetoptions)
"""


def test_environment_variable_selects_the_fallback():
    # ... and then nothing private reaches numba (no ``_nrt`` either).
    assert _run(KERNEL, FASTSCHED_LINK_ONLY="0") == ["False", "True", "True", "12.0", "6.0", "False", "False"]


def test_failed_feature_check_selects_the_fallback():
    # The same changed kind as above, made before fastsched is imported.
    snippet = (
        "from numba.core import compiler as c\n"
        "c.DefaultPassBuilder.define_nopython_pipeline = c.DefaultPassBuilder.define_nopython_pipeline\n"
        + KERNEL
        + "print(linkonly.link_only_support())\n"
    )
    out = _run(snippet, FASTSCHED_LINK_ONLY="1")
    assert out[:7] == ["False", "True", "True", "12.0", "6.0", "False", "False"]
    assert "define_nopython_pipeline" in " ".join(out[7:])


@pytest.mark.skipif(not linkonly.LINK_ONLY, reason="link-only helpers are off here")
def test_link_only_helpers_refuse_python_calls():
    out = _run(KERNEL, FASTSCHED_LINK_ONLY="1")
    assert out == ["True", "False", "False", "12.0", "-", "True", "True"]
    with pytest.raises(TypeError, match="only other kernels"):
        linkonly.leaf(lambda a: a[0])(np.zeros(1))
