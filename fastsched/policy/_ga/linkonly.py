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
``@jit`` helpers). Calling such a helper from Python raises ``TypeError``. This relies on two
methods of numba's ``CPUCodeLibrary`` (``_optimize_final_module``, ``_finalize_final_module``),
numba 0.68; the policy tests exercise it.

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
>>> twice(np.arange(4.0), 1)
Traceback (most recent call last):
...
TypeError: twice is a numba helper that only other kernels can call
"""

from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as llvmir
import numba
from numba.core import cgutils, codegen, compiler, typed_passes
from numba.core.compiler_machinery import register_pass
from numba.core.registry import CPUDispatcher

__all__ = ["inner", "leaf"]


class _LinkOnlyLibrary(codegen.JITCodeLibrary):
    """A code library that is only ever linked into other libraries."""

    def _optimize_final_module(self):
        # The callers run the module passes on the linked module; running them here as well
        # repeats them once per level of the call tree.
        pass

    def _finalize_final_module(self):
        # No machine code: nothing calls this library's symbols except through a caller's copy.
        # numba still stores the function's environment pointer in its global after lowering,
        # so that global (alone) goes to the execution engine.
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        envs = self._codegen._create_empty_module(self.name + ".env")
        for gv in self._final_module.global_variables:
            if gv.name.startswith("_ZN08NumbaEnv"):
                env = llvmir.GlobalVariable(envs, cgutils.voidptr_t, name=gv.name)
                env.linkage = "common"
                env.initializer = cgutils.get_null_value(cgutils.voidptr_t)
        self._codegen._add_module(llvm.parse_assembly(str(envs)))
        self._finalized = True


@register_pass(mutates_CFG=False, analysis_only=False)
class _LinkOnlyLowering(typed_passes.NativeLowering):
    _name = "fastsched_link_only_lowering"

    def run_pass(self, state):
        if state.library is None:
            state.library = _LinkOnlyLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
        return super().run_pass(state)


class _LinkOnlyCompiler(compiler.CompilerBase):
    """numba's nopython pipeline with :class:`_LinkOnlyLowering` as its lowering pass."""

    def define_pipelines(self):
        pm = compiler.DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.passes = [(_LinkOnlyLowering, d) if p is typed_passes.NativeLowering else (p, d) for p, d in pm.passes]
        pm.finalize()
        return [pm]


class _LinkOnlyDispatcher(CPUDispatcher):
    """A helper's dispatcher: callable from kernels only (it has no machine code to run)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__} is a numba helper that only other kernels can call")


def _link_only(**options):
    def decorate(fn):
        dispatcher = numba.njit(**_OPTIONS, **options)(fn)
        dispatcher.__class__ = _LinkOnlyDispatcher
        return dispatcher

    return decorate


_OPTIONS = {
    "nogil": True,
    "error_model": "numpy",
    "pipeline_class": _LinkOnlyCompiler,
    "no_cpython_wrapper": True,
    "no_cfunc_wrapper": True,
}

#: Helper decorator (see the module docstring).
inner = _link_only()

#: :func:`inner` without numba's runtime, for helpers that never allocate: an array argument
#: then costs no reference-count pair per call (a per-call cost that dominated small problems).
leaf = _link_only(_nrt=False)
