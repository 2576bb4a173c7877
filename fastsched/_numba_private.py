"""Every private part of numba that fastsched uses, in one module, checked at import.

fastsched's kernels are ordinary ``@jit`` functions. The speed-ups and the cache stamps below
reach into numba's internals (written against numba 0.68); they all live here, so a numba
release that changes them breaks one file, at import, with a fallback:

* **link-only helpers** (:func:`link_only_options`, :func:`link_only_dispatcher`): a helper
  only other kernels call is lowered into a library that is never optimised or emitted on its
  own; its callers' ``-O3`` pass optimises it with them (numba otherwise does it once per
  level of the call tree above it: over half of the genetic search's first compile).
* **entry kernels** (:func:`entry_options`): the final ``-O3`` pass without LLVM's loop and
  SLP vectorisers (short loops only grew the code).
* **no reference counting** (:data:`NO_NRT`) for helpers that never allocate.
* **borrowed views** (:func:`borrow`): an array view without a memory record.
* **compiled entry points** (:func:`compiled_for`): skip the dispatcher for known types.
* **cache stamps** (:func:`stamp_caches`): a kernel's cache is stale when a file it compiles
  in changes, not only its own.
* **the dispatcher class** (:data:`Dispatcher`); :func:`copy_function` (one source compiled
  as several kernels) needs no private part but belongs with the tricks above.

What is checked
---------------
:func:`link_only_support` checks every module, class, method, function, instance attribute
and keyword argument that the link-only and entry pipelines and :data:`NO_NRT` use (kind,
signature, and that numba's source still sets or reads the attributes and ``**kwargs``
options). When a check fails, or ``FASTSCHED_LINK_ONLY=0`` is set before import,
:data:`LINK_ONLY` is ``False``: :mod:`fastsched.policy._ga.linkonly` makes ordinary cached
kernels and :data:`NO_NRT` is empty, so nothing private reaches numba (same results, a slower
first compile). :func:`borrow`, :func:`compiled_for` and :func:`stamp_caches` fall back to
the array, the dispatcher and numba's own stamps when their parts are missing.

Examples
--------
>>> link_only_support() is None or isinstance(link_only_support(), str)
True
>>> NO_NRT == ({"_nrt": False} if LINK_ONLY else {})
True
"""

from __future__ import annotations

import importlib
import inspect
import os
import types as pytypes

import numba

from fastsched._numba_probe import check_parts, check_uses
from fastsched._numba_probe import lookup as _lookup
from fastsched._numba_probe import source as _source

__all__ = [
    "LINK_ONLY",
    "NO_NRT",
    "Dispatcher",
    "borrow",  # noqa: F822 - made on first use (module __getattr__ below)
    "compiled_for",
    "copy_function",
    "entry_options",
    "link_only_dispatcher",
    "link_only_options",
    "link_only_support",
]


def _module(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# numba's modules this file uses (None where a numba release dropped one; the probe says so).
_MODULES = {
    name: _module(name)
    for name in (
        "llvmlite.binding",
        "llvmlite.ir",
        "numba.core.cgutils",
        "numba.core.codegen",
        "numba.core.compiler",
        "numba.core.compiler_machinery",
        "numba.core.config",
        "numba.core.cpu",
        "numba.core.dispatcher",
        "numba.core.funcdesc",
        "numba.core.registry",
        "numba.core.runtime.nrtopt",
        "numba.core.typed_passes",
        "numba.core.types",
        "numba.misc.llvm_pass_timings",
    )
}
_M = pytypes.SimpleNamespace(**{k.rsplit(".", 1)[1]: v for k, v in _MODULES.items()})

#: The prefix numba's mangler gives the global holding a function's environment pointer.
_ENV_PREFIX = "_ZN08NumbaEnv"


def link_only_support() -> str | None:
    """Why numba's private parts cannot be used here, or ``None`` when they can.

    Checks every private part that the link-only and entry pipelines and :data:`NO_NRT` use
    (see "What is checked" in the module docstring).

    Returns
    -------
    str or None
        The first missing or changed part, in words; ``None`` when all are there.

    Examples
    --------
    >>> link_only_support() is None or isinstance(link_only_support(), str)
    True
    """
    classes: dict = {}
    why = check_parts(_MODULES, classes) or check_uses(classes)
    if why is not None:
        return why
    # The overrides take no arguments besides self; NativeLowering must still create the
    # library only when the pipeline has not (that is where the link-only library goes in).
    for name in ("_optimize_final_module", "_finalize_final_module"):
        if len(inspect.signature(_lookup(classes["JITCodeLibrary"], name)).parameters) != 1:
            return f"JITCodeLibrary.{name} takes arguments"
    source = _source(classes["NativeLowering"], "run_pass")
    try:
        env = _M.funcdesc.default_mangler(".NumbaEnv.m.f", (), abi_tags=(), uid=1)
    except TypeError as err:
        return f"numba's mangler cannot be called as expected ({err})"
    if source is None or "state.library is None" not in source:
        return "NativeLowering.run_pass no longer takes a library made by the pipeline"
    if not env.startswith(_ENV_PREFIX):
        return f"numba's environment globals are no longer named {_ENV_PREFIX}..."
    return None


_WHY_NOT = link_only_support()

#: Whether numba's private parts are used (``False`` when :func:`link_only_support` found a
#: change, or ``FASTSCHED_LINK_ONLY=0``): the link-only and entry pipelines and :data:`NO_NRT`.
LINK_ONLY = os.environ.get("FASTSCHED_LINK_ONLY", "1").strip() != "0" and _WHY_NOT is None

#: ``numba.njit`` options that compile a kernel without numba's runtime (for kernels that never
#: allocate); empty when :data:`LINK_ONLY` is ``False``.
NO_NRT = {"_nrt": False} if LINK_ONLY else {}


# --------------------------------------------------------------------------------------
# The link-only and entry pipelines
# --------------------------------------------------------------------------------------
def _pipeline_with(library_class, pass_name, object_caching):
    """Return numba's nopython compiler with a lowering pass that puts functions in ``library_class``."""
    compiler, typed_passes = _M.compiler, _M.typed_passes

    @_M.compiler_machinery.register_pass(mutates_CFG=False, analysis_only=False)
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


def link_only_options() -> dict:
    """``numba.njit`` options that compile a helper link-only (needs :data:`LINK_ONLY`).

    Returns
    -------
    dict
        ``pipeline_class`` and the two wrapper switches: no machine code, no Python/C-callable
        wrappers and no cache entry of the helper's own (its callers' entries hold its code).

    Examples
    --------
    >>> sorted(link_only_options()) if LINK_ONLY else ["no_cfunc_wrapper", "no_cpython_wrapper", "pipeline_class"]
    ['no_cfunc_wrapper', 'no_cpython_wrapper', 'pipeline_class']
    """
    llvm, llvmir, cgutils = _M.binding, _M.ir, _M.cgutils

    class _LinkOnlyLibrary(_M.codegen.JITCodeLibrary):
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


def entry_options() -> dict:
    """``numba.njit`` options that compile an entry kernel without LLVM's vectorisers (needs :data:`LINK_ONLY`).

    The vectorisers do not reassociate floating-point arithmetic without fast-math flags
    (numba sets none here), so results are the same as numba's own pipeline's.

    Returns
    -------
    dict
        ``pipeline_class``.

    Examples
    --------
    >>> list(entry_options()) if LINK_ONLY else ["pipeline_class"]
    ['pipeline_class']
    """
    config, nrtopt = _M.config, _M.nrtopt

    class _EntryLibrary(_M.codegen.JITCodeLibrary):
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
            if not config.LLVM_REFPRUNE_PASS:
                self._final_module = nrtopt.remove_redundant_nrt_refct(self._final_module)
            full, full_pb = cg._module_pass_manager(loop_vectorize=False, slp_vectorize=False)
            with self._recorded_timings.record("Module passes (full optimization)", full_pb):
                full.run(self._final_module, full_pb)

    return {"pipeline_class": _pipeline_with(_EntryLibrary, "fastsched_entry_lowering", object_caching=True)}


class _LinkOnlyDispatcher(_M.registry.CPUDispatcher if LINK_ONLY else object):
    """A helper's dispatcher: callable from kernels only (it has no machine code to run)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__} is a numba helper that only other kernels can call")


def link_only_dispatcher(dispatcher):
    """Make the dispatcher of a helper compiled with :func:`link_only_options` refuse Python calls.

    Parameters
    ----------
    dispatcher : numba CPU dispatcher
        Compiled with :func:`link_only_options` (needs :data:`LINK_ONLY`).

    Returns
    -------
    The same dispatcher, whose ``__call__`` now raises ``TypeError``.

    Examples
    --------
    >>> import numba
    >>> if LINK_ONLY:
    ...     helper = link_only_dispatcher(numba.njit(**link_only_options())(lambda x: x))
    ...     try:
    ...         helper(1)
    ...     except TypeError as err:
    ...         print("refused")
    ... else:
    ...     print("refused")
    refused
    """
    dispatcher.__class__ = _LinkOnlyDispatcher
    return dispatcher


# --------------------------------------------------------------------------------------
# Dispatchers, copies, compiled entry points
# --------------------------------------------------------------------------------------
#: The class of numba's dispatchers (``@jit`` functions), for ``isinstance`` checks.
Dispatcher = getattr(_M.dispatcher, "Dispatcher", None) or type(numba.njit(lambda: None))


def copy_function(fn, name: str | None = None, replace: dict | None = None, *, share_globals: bool = False):
    """Copy the plain function ``fn``, to compile one source as several kernels.

    Parameters
    ----------
    fn : function
        A plain Python function (a dispatcher's ``py_func``).
    name : str, optional
        The copy's name and qualified name: numba keys its on-disk cache entries by them, so a
        copy compiled with other globals or options needs its own. ``None`` keeps ``fn``'s.
    replace : dict, optional
        Global names to replace in the copy (e.g. a helper by its serial or device twin).
    share_globals : bool
        Use ``fn``'s module globals themselves (names defined later in the module stay
        visible) instead of a copy of them; only without ``replace``.

    Returns
    -------
    function
        The copy; module and docstring as ``fn``'s.

    Examples
    --------
    >>> def f(x):
    ...     return g(x) + 1
    >>> copy = copy_function(f, "f_twice", {"g": lambda x: 2 * x})
    >>> copy.__qualname__, copy(3)
    ('f_twice', 7)
    """
    if share_globals and replace:
        raise ValueError("copy_function: share_globals and replace cannot be combined")
    env = fn.__globals__ if share_globals else {**fn.__globals__, **(replace or {})}
    out = pytypes.FunctionType(fn.__code__, env, name or fn.__name__, fn.__defaults__, fn.__closure__)
    if name is not None:
        out.__qualname__ = name
    out.__module__ = fn.__module__
    out.__doc__ = fn.__doc__
    return out


def compiled_for(kernel, *args):
    """``kernel``'s compiled entry point for the numba types of ``args`` (else ``kernel``).

    Call ``kernel`` with such arguments first (else there is nothing compiled to find and
    ``kernel`` itself is returned). The entry point skips the dispatcher's type resolution
    (~0.1 us a call) and checks nothing: call it only with arrays of exactly these types, e.g.
    the same arrays again and fresh ones made the same way.

    Examples
    --------
    >>> import numba, numpy as np
    >>> head_sum = numba.njit(lambda a, n: a[:n].sum())
    >>> head_sum(np.ones(3), 3)
    3.0
    >>> f = compiled_for(head_sum, np.ones(3), 3)
    >>> f is not head_sum, f(np.ones(4), 4)
    (True, 4.0)
    """
    try:
        return kernel.overloads[tuple(map(numba.typeof, args))].entry_point
    except (AttributeError, KeyError, TypeError):  # another numba's internals: dispatch
        return kernel


# --------------------------------------------------------------------------------------
# Cache stamps
# --------------------------------------------------------------------------------------
def stamp_caches(extra_stamp) -> bool:
    """Keep ``extra_stamp(py_func)`` beside numba's own source stamp in each cache index.

    A kernel compiling in code from other files needs their stamps too (see
    :mod:`fastsched._cache_stamp`). A locator put first in numba's list wraps the one numba
    would choose (same cache files), adding ``extra_stamp``'s value, or steps aside where
    that is ``None``. Installed once per process.

    Returns
    -------
    bool
        Whether the stamps are in use; ``False`` (numba's own stamps) when numba's cache
        classes are not as expected.

    Examples
    --------
    >>> from fastsched._cache_stamp import kernel_stamp
    >>> stamp_caches(kernel_stamp) in (True, False)
    True
    """
    caching = _module("numba.core.caching")
    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not isinstance(classes, list):
        return False
    if not any(getattr(cls, "_fastsched_stamp", None) is not None for cls in classes):
        classes.insert(0, _stamped_locator(extra_stamp, list(classes)))
    return True


def _stamped_locator(extra_stamp, numba_classes):
    class _StampedLocator:
        _fastsched_stamp = staticmethod(extra_stamp)

        def __init__(self, inner, extra):
            self._inner, self._extra = inner, extra

        def __getattr__(self, name):  # the cache folder, file names, ...: numba's locator's
            return getattr(self._inner, name)

        def get_source_stamp(self):
            return (self._inner.get_source_stamp(), self._extra)

        @classmethod
        def from_function(cls, py_func, py_file):
            extra = extra_stamp(py_func)
            for other in numba_classes if extra is not None else ():
                inner = other.from_function(py_func, py_file)
                if inner is not None:
                    return cls(inner, extra)
            return None

    return _StampedLocator


# --------------------------------------------------------------------------------------
# Borrowed views
# --------------------------------------------------------------------------------------
def _borrow_intrinsic():
    from numba.extending import intrinsic

    types = _M.types
    arrayobj = _module("numba.np.arrayobj")
    make_array = getattr(arrayobj, "make_array", None)
    populate_array = getattr(arrayobj, "populate_array", None)
    if types is None or make_array is None or populate_array is None:
        return None

    @intrinsic
    def borrow(typingctx, arr):
        """Return a view of ``arr`` without a memory record (see :func:`borrow`)."""
        if not isinstance(arr, types.Array):
            return None

        def codegen(context, builder, sig, args):
            src = make_array(sig.args[0])(context, builder, value=args[0])
            dst = make_array(sig.return_type)(context, builder)
            populate_array(
                dst,
                data=src.data,
                shape=src.shape,
                strides=src.strides,
                itemsize=src.itemsize,
                meminfo=None,
                parent=None,
            )
            return dst._getvalue()

        return arr(arr), codegen

    return borrow


def _borrow_plain(arr):
    """``arr`` itself: the borrowed view's stand-in where numba's array internals changed."""
    return arr


_BORROW_DOC = """A view of an array that takes no part in reference counting (inside kernels only).

Every array value numba handles carries a reference-counted memory record; each slice, each
call argument and each temporary view is an atomic increment and decrement of it. On a
program of a few ops the cost model's estimate kernel did little else (a profile put ~90% of
its time in the two atomic helpers). A *borrowed* view has the same data, shape and strides
but no memory record, so numba skips the updates (its increment is a null check).

The caller must keep the original array alive for as long as the view is used: take views of
the kernel's arguments (the Python caller holds them for the whole call) or of arrays that a
calling kernel passed in (the caller's variable lives across the call). Never return a
borrowed view, store it, or borrow an array the kernel allocates and then drops.

Where numba's array internals changed, ``borrow`` returns the array itself (same results,
the reference counting stays).

Examples
--------
>>> import numba, numpy as np
>>> from fastsched._numba_private import borrow
>>> @numba.njit
... def total(a):
...     v = borrow(a)
...     return v.sum()
>>> float(total(np.arange(4.0)))
6.0
"""

__test__ = {"borrow": _BORROW_DOC}


def __getattr__(name):
    # borrow is built on first import of the name: numba's array module takes a few tenths of
    # a second to import, and only the cost model's kernels need it.
    if name != "borrow":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _borrow_intrinsic() or numba.njit(inline="always")(_borrow_plain)
    value.__doc__ = _BORROW_DOC
    globals()["borrow"] = value
    return value
