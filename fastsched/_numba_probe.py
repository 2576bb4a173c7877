"""What :func:`fastsched._numba_private.link_only_support` checks of numba's private parts.

The tables name every module attribute, class, method, instance attribute, keyword argument
and target option that the link-only and entry pipelines and ``NO_NRT`` use; the checks
compare them with what the installed numba has, by inspection only. The numba modules
themselves are imported by :mod:`fastsched._numba_private` (the one module that may) and
handed in.

Examples
--------
>>> lookup(bool, "__add__") is int.__add__  # found along the class's MRO
True
>>> check_parts({"numba.core.codegen": None}, {}).startswith("module numba.core.codegen")
True
"""

from __future__ import annotations

import inspect

# (owner, attribute, kind) for every private part the link-only and entry pipelines rely on.
# owner: a module name, or a class found earlier in the table. kind: "class", "method" (a plain
# function in the class's namespace, looked up along the MRO), "static" (a staticmethod),
# "function" (callable), "object" (present).
_REQUIRED = (
    ("numba.core.codegen", "CodeLibrary", "class"),
    ("numba.core.codegen", "JITCodeLibrary", "class"),
    ("numba.core.codegen", "CPUCodegen", "class"),
    ("numba.core.codegen", "JITCPUCodegen", "class"),
    ("JITCodeLibrary", "_optimize_final_module", "method"),
    ("JITCodeLibrary", "_finalize_final_module", "method"),
    ("JITCodeLibrary", "_finalize_dynamic_globals", "method"),
    ("JITCodeLibrary", "_verify_declare_only_symbols", "method"),
    ("JITCodeLibrary", "enable_object_caching", "method"),
    ("JITCPUCodegen", "_module_pass_manager", "method"),
    ("JITCPUCodegen", "_pass_builder", "method"),
    ("JITCPUCodegen", "_create_empty_module", "method"),
    ("JITCPUCodegen", "_add_module", "method"),
    ("JITCPUCodegen", "_init", "method"),
    ("CodeLibrary", "__init__", "method"),
    ("numba.misc.llvm_pass_timings", "PassTimingsCollection", "class"),
    ("PassTimingsCollection", "record", "method"),
    ("numba.core.runtime.nrtopt", "remove_redundant_nrt_refct", "function"),
    ("numba.core.config", "LLVM_REFPRUNE_PASS", "object"),
    ("numba.core.typed_passes", "NativeLowering", "class"),
    ("NativeLowering", "run_pass", "method"),
    ("numba.core.compiler", "CompilerBase", "class"),
    ("numba.core.compiler", "DefaultPassBuilder", "class"),
    ("DefaultPassBuilder", "define_nopython_pipeline", "static"),
    ("numba.core.compiler_machinery", "register_pass", "function"),
    ("numba.core.registry", "CPUDispatcher", "class"),
    ("numba.core.cpu", "CPUTargetOptions", "class"),
    ("numba.core.funcdesc", "default_mangler", "function"),
    ("numba.core.cgutils", "voidptr_t", "object"),
    ("numba.core.cgutils", "get_null_value", "function"),
    ("llvmlite.binding", "parse_assembly", "function"),
    ("llvmlite.ir", "GlobalVariable", "class"),
)

# Instance attributes the pipelines read, and the method whose source must still set them.
_ATTRIBUTES = (
    ("JITCPUCodegen", "_init", ("self._loopvect", "self._opt_level")),
    ("CodeLibrary", "__init__", ("self._recorded_timings",)),
)
# Keyword arguments passed to ``_module_pass_manager`` (it takes ``**kwargs`` and hands all but
# ``cost`` on to ``_pass_builder``), and the method whose source must still read each.
_KEYWORDS = (
    ("JITCPUCodegen", "_module_pass_manager", ("cost",)),
    ("JITCPUCodegen", "_pass_builder", ("opt", "loop_vectorize", "slp_vectorize")),
)
# Private options passed to ``numba.njit`` (attributes of the CPU target's option class).
_OPTIONS = ("_nrt",)


def lookup(cls, name):
    for klass in inspect.getmro(cls):
        if name in vars(klass):
            return vars(klass)[name]
    return None


def source(cls, name):
    try:
        return inspect.getsource(lookup(cls, name))
    except (OSError, TypeError):
        return None


def check_parts(modules, classes):
    """Return the first part of ``_REQUIRED`` that is missing or of another kind, in words (else None)."""
    for owner, name, kind in _REQUIRED:
        if owner in classes:
            value = lookup(classes[owner], name)
        elif owner in modules:
            if modules[owner] is None:
                return f"module {owner} is missing"
            value = getattr(modules[owner], name, None)
        else:
            return f"{owner} is missing"
        where = f"{owner}.{name}"
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
    return None


def check_uses(classes):
    """Return the first instance attribute, keyword argument or option numba no longer has (else None)."""
    for owner, method, names in _ATTRIBUTES:
        text = source(classes[owner], method)
        if text is None:
            return f"the source of {owner}.{method} cannot be read"
        for name in names:
            if name + " =" not in text:
                return f"{owner}.{method} no longer sets {name}"
    for owner, method, names in _KEYWORDS:
        fn = lookup(classes[owner], method)
        params = inspect.signature(fn).parameters
        text = source(classes[owner], method) or ""
        for name in names:
            if name in params:
                continue
            takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
            if not (takes_kwargs and (f"'{name}'" in text or f'"{name}"' in text)):
                return f"{owner}.{method} no longer takes the keyword argument {name}"
    for name in _OPTIONS:
        if not hasattr(classes["CPUTargetOptions"], name):
            return f"numba.njit no longer has the option {name}"
    return None
