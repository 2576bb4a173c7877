"""Decorators for kernels that only other kernels call (helpers): compiled once, linked, never emitted alone.

numba compiles every ``@njit`` function into its own LLVM module, optimises that module at
``-O3`` with all its callees linked in, and emits machine code for it; a caller then links the
callee's module into its own and optimises and emits everything again. A helper ``d`` calls
deep is thus optimised and emitted about ``d`` times, and the machine code of a helper that
Python never calls is never run. For the genetic search's helpers that was over half of the
first round's compile time (LLVM's module passes and code emission).

:func:`inner` and :func:`leaf` compile a helper with numba's usual pipeline except:

* its module gets the per-function passes only; its callers' ``-O3`` pass, which runs on the
  linked code anyway, optimises it together with the caller (inlining and all), once per
  kernel that Python calls;
* no machine code, no Python/C-callable wrappers and no on-disk cache entry of its own (the
  calling kernel's cache entry holds the helper's code).

The machine code of the kernels Python calls is what ``-O3`` makes of the same IR, so
results are identical (the policy's allocations are bit-identical to those of the plain
``@jit`` helpers). Calling such a helper from Python raises ``TypeError``.

Entry kernels
-------------
:func:`entry` compiles a large kernel that Python calls (the serial search round) with
numba's pipeline except that its final module's ``-O3`` pass runs without LLVM's loop and
SLP vectorisers (numba's defaults: loop vectorisation on, SLP off). The kernel's loops are
short (over resource types, a row's few nodes), so vectorised copies only grew the code:
without them the module is optimised and emitted faster and the kernel runs a little faster.
The vectorisers do not reassociate floating-point arithmetic without fast-math flags (numba
sets none here), so results are the same.

>>> from fastsched.policy._ga.search import search_serial
>>> (search_serial._compiler.pipeline_class.__name__ == "_EntryCompiler") == LINK_ONLY
True

Other numba versions
--------------------
This overrides private parts of numba (written against 0.68): two methods of
``CPUCodeLibrary`` (``_optimize_final_module``, ``_finalize_final_module``) and the helpers
they call, the ``NativeLowering`` pass and the nopython pipeline builder, and the
``_ZN08NumbaEnv`` prefix of environment globals; for :func:`entry`, the codegen's module
pass-manager helper and NRT's reference-count pruning. At import, :func:`link_only_support` checks
that every one of them exists with the expected kind. When one does not, or when the
environment variable ``FASTSCHED_LINK_ONLY=0`` is set (before fastsched is imported),
:data:`LINK_ONLY` is ``False`` and :func:`inner` / :func:`leaf` fall back to ordinary cached
``@jit`` functions with the same options (and :func:`entry` kernels plain ``@jit`` ones):
the same results, a slower first round (each helper is then optimised and emitted on its
own), and helpers callable from Python.

Examples
--------
>>> import numba
>>> import numpy as np
>>> from fastsched.policy._ga.linkonly import leaf
>>> @leaf
... def twice(a, i):
...     return 2.0 * a[i]
>>> @numba.njit
... def total(a):
...     s = 0.0
...     for i in range(a.shape[0]):
...         s += twice(a, i)
...     return s
>>> float(total(np.arange(4.0)))
12.0
"""

from __future__ import annotations

import inspect
import os

import llvmlite.binding as llvm
import llvmlite.ir as llvmir
import numba
from numba.core import cgutils, codegen, compiler, compiler_machinery, funcdesc, registry, typed_passes
from numba.core.runtime import nrtopt

from fastsched._jit import jit

__all__ = ["entry", "inner", "leaf", "LINK_ONLY", "link_only_support"]

#: The prefix numba's mangler gives the global holding a function's environment pointer.
_ENV_PREFIX = "_ZN08NumbaEnv"

# (owner, attribute, kind) for every private part of numba this module relies on; "method" is a
# plain function in the class's namespace (looked up along the MRO), "static" a staticmethod.
_REQUIRED = (
    (codegen, "JITCodeLibrary", "class"),
    (codegen, "JITCPUCodegen", "class"),
    ("JITCodeLibrary", "_optimize_final_module", "method"),
    ("JITCodeLibrary", "_finalize_final_module", "method"),
    ("JITCodeLibrary", "_finalize_dynamic_globals", "method"),
    ("JITCodeLibrary", "_verify_declare_only_symbols", "method"),
    ("JITCodeLibrary", "enable_object_caching", "method"),
    ("JITCPUCodegen", "_module_pass_manager", "method"),
    (nrtopt, "remove_redundant_nrt_refct", "function"),
    ("JITCPUCodegen", "_create_empty_module", "method"),
    ("JITCPUCodegen", "_add_module", "method"),
    (typed_passes, "NativeLowering", "class"),
    ("NativeLowering", "run_pass", "method"),
    (compiler, "CompilerBase", "class"),
    (compiler, "DefaultPassBuilder", "class"),
    ("DefaultPassBuilder", "define_nopython_pipeline", "static"),
    (compiler_machinery, "register_pass", "function"),
    (registry, "CPUDispatcher", "class"),
    (funcdesc, "default_mangler", "function"),
    (cgutils, "voidptr_t", "object"),
    (cgutils, "get_null_value", "function"),
)


def _lookup(cls, name):
    for klass in inspect.getmro(cls):
        if name in vars(klass):
            return vars(klass)[name]
    return None


def link_only_support() -> str | None:
    """Why the link-only pipeline cannot be used with this numba, or ``None`` when it can.

    Checks that every private part of numba that :func:`inner` / :func:`leaf` override or
    call exists with the kind this module expects (a method, a class, ...), and that numba
    still names environment globals with the prefix the module looks for.

    Returns
    -------
    str or None
        The first missing or changed part, in words; ``None`` when all are there.

    Examples
    --------
    >>> link_only_support() is None or isinstance(link_only_support(), str)
    True
    """
    classes = {}
    for owner, name, kind in _REQUIRED:
        if isinstance(owner, str):
            value = _lookup(classes[owner], name)
        else:
            value = getattr(owner, name, None)
        where = f"{owner if isinstance(owner, str) else owner.__name__}.{name}"
        if kind == "class":
            if not isinstance(value, type):
                return f"{where} is not a class"
            classes[name] = value
        elif kind == "method":
            if not inspect.isfunction(value):
                return f"{where} is not a method"
        elif kind == "static":
            if not isinstance(value, staticmethod):
                return f"{where} is not a staticmethod"
        elif kind == "function":
            if not callable(value):
                return f"{where} is not callable"
        elif value is None:
            return f"{where} is missing"
    # The overrides take no arguments besides self; NativeLowering must still create the
    # library only when the pipeline has not (that is where the link-only library goes in).
    for name in ("_optimize_final_module", "_finalize_final_module"):
        if len(inspect.signature(_lookup(codegen.JITCodeLibrary, name)).parameters) != 1:
            return f"JITCodeLibrary.{name} takes arguments"
    try:
        source = inspect.getsource(typed_passes.NativeLowering.run_pass)
        env = funcdesc.default_mangler(".NumbaEnv.m.f", (), abi_tags=(), uid=1)
    except (OSError, TypeError) as err:
        return f"numba's sources or mangler cannot be inspected ({err})"
    if "state.library is None" not in source:
        return "NativeLowering.run_pass no longer takes a library made by the pipeline"
    if not env.startswith(_ENV_PREFIX):
        return f"numba's environment globals are no longer named {_ENV_PREFIX}..."
    return None


_WHY_NOT = link_only_support()

#: Whether helpers are compiled link-only (``False``: ordinary cached ``@jit`` functions; see
#: "Other numba versions" above).
LINK_ONLY = os.environ.get("FASTSCHED_LINK_ONLY", "1").strip() != "0" and _WHY_NOT is None


def _pipeline_with(library_class, pass_name, object_caching):
    """Return numba's nopython compiler with a lowering pass that puts functions in ``library_class``."""

    @compiler_machinery.register_pass(mutates_CFG=False, analysis_only=False)
    class _Lowering(typed_passes.NativeLowering):
        _name = pass_name

        def run_pass(self, state):
            if state.library is None:
                state.library = library_class(state.targetctx.codegen(), state.func_id.func_qualname)
                if object_caching:  # as numba does, so that the kernel can be cached
                    state.library.enable_object_caching()
            return super().run_pass(state)

    class _Compiler(compiler.CompilerBase):
        """numba's nopython pipeline with ``_Lowering`` as its lowering pass."""

        def define_pipelines(self):
            pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.passes = [(_Lowering, d) if p is typed_passes.NativeLowering else (p, d) for p, d in pm.passes]
            pm.finalize()
            return [pm]

    _Compiler.__name__ = _Compiler.__qualname__ = library_class.__name__.replace("Library", "Compiler")
    return _Compiler


def _link_only_options():
    """Return the numba options that compile a helper link-only (the classes need numba's private parts)."""

    class _LinkOnlyLibrary(codegen.JITCodeLibrary):
        """A code library that is only ever linked into other libraries."""

        def _optimize_final_module(self):
            # The callers run the module passes on the linked module; running them here as
            # well repeats them once per level of the call tree.
            pass

        def _finalize_final_module(self):
            # No machine code: nothing calls this library's symbols except through a caller's
            # copy. numba still stores the function's environment pointer in its global after
            # lowering, so that global (alone) goes to the execution engine.
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            envs = self._codegen._create_empty_module(self.name + ".env")
            for gv in self._final_module.global_variables:
                if gv.name.startswith(_ENV_PREFIX):
                    env = llvmir.GlobalVariable(envs, cgutils.voidptr_t, name=gv.name)
                    env.linkage = "common"
                    env.initializer = cgutils.get_null_value(cgutils.voidptr_t)
            self._codegen._add_module(llvm.parse_assembly(str(envs)))
            self._finalized = True

    compiler_class = _pipeline_with(_LinkOnlyLibrary, "fastsched_link_only_lowering", object_caching=False)
    return {"pipeline_class": compiler_class, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def _entry_options():
    """Return the numba options that compile an entry kernel without LLVM's vectorisers."""

    class _EntryLibrary(codegen.JITCodeLibrary):
        """numba's code library with its final ``-O3`` module pass run without loop / SLP vectorisation."""

        def _optimize_final_module(self):
            # numba's two steps (a cheap inlining pass, NRT reference-count pruning, then the
            # full pass), the full one with the vectorisers off: they blew the tiny loops over
            # resource types up about 4x, which cost emission time and made the kernel slower.
            cg = self._codegen
            cheap, cheap_pb = cg._module_pass_manager(
                loop_vectorize=cg._loopvect, slp_vectorize=False, opt=cg._opt_level, cost="cheap"
            )
            with self._recorded_timings.record("Module passes (cheap optimization for refprune)", cheap_pb):
                cheap.run(self._final_module, cheap_pb)
            if not numba.core.config.LLVM_REFPRUNE_PASS:
                self._final_module = nrtopt.remove_redundant_nrt_refct(self._final_module)
            full, full_pb = cg._module_pass_manager(loop_vectorize=False, slp_vectorize=False)
            with self._recorded_timings.record("Module passes (full optimization)", full_pb):
                full.run(self._final_module, full_pb)

    return {"pipeline_class": _pipeline_with(_EntryLibrary, "fastsched_entry_lowering", object_caching=True)}


class _LinkOnlyDispatcher(registry.CPUDispatcher if _WHY_NOT is None else object):
    """A helper's dispatcher: callable from kernels only (it has no machine code to run)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__} is a numba helper that only other kernels can call")


def _decorator(link_only: bool, **options):
    if not link_only:
        # Ordinary cached kernels with the same options (fastsched._jit's: cache, nogil, numpy
        # error model): each helper is optimised and emitted on its own and callable from Python.
        return jit(**options)
    pipeline = _link_only_options()

    def decorate(fn):
        dispatcher = numba.njit(nogil=True, error_model="numpy", **pipeline, **options)(fn)
        dispatcher.__class__ = _LinkOnlyDispatcher
        return dispatcher

    return decorate


def _entry(link_only: bool):
    if not link_only:
        return jit
    return jit(**_entry_options())


#: Decorator of a large kernel that Python calls (see "Entry kernels" in the module docstring).
entry = _entry(LINK_ONLY)

#: Helper decorator (see the module docstring).
inner = _decorator(LINK_ONLY)

#: :func:`inner` without numba's runtime, for helpers that never allocate: an array argument
#: then costs no reference-count pair per call (a per-call cost that dominated small problems).
leaf = _decorator(LINK_ONLY, _nrt=False)
