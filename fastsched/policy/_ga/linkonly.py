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

>>> from fastsched.policy._ga.search import search_serial
>>> (search_serial._compiler.pipeline_class.__name__ == "_EntryCompiler") == LINK_ONLY
True

Other numba versions
--------------------
The pipelines override private parts of numba; they live, with the check of every part they
use, in :mod:`fastsched._numba_private`. When a part is missing or changed, or when the
environment variable ``FASTSCHED_LINK_ONLY=0`` is set (before fastsched is imported),
:data:`LINK_ONLY` is ``False`` and :func:`inner` / :func:`leaf` / :func:`entry` are ordinary
cached ``@jit`` functions with the same public options and nothing private: the same
results, a slower first round (each helper is then optimised and emitted on its own), and
helpers callable from Python.

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

import numba

from fastsched import _numba_private as NP
from fastsched._jit import jit
from fastsched._numba_private import LINK_ONLY, link_only_support

__all__ = ["entry", "inner", "leaf", "LINK_ONLY", "link_only_support"]


def _decorator(link_only: bool, nrt: bool = True):
    if not link_only:
        # Ordinary cached kernels with fastsched._jit's options (cache, nogil, numpy error
        # model) and no private one: each helper is optimised and emitted on its own and
        # callable from Python.
        return jit
    options = {**NP.link_only_options(), **({} if nrt else NP.NO_NRT)}

    def decorate(fn):
        return NP.link_only_dispatcher(numba.njit(nogil=True, error_model="numpy", **options)(fn))

    return decorate


def _entry(link_only: bool):
    if not link_only:
        return jit
    return jit(**NP.entry_options())


#: Decorator of a large kernel that Python calls (see "Entry kernels" in the module docstring).
entry = _entry(LINK_ONLY)

#: Helper decorator (see the module docstring).
inner = _decorator(LINK_ONLY)

#: :func:`inner` without numba's runtime, for helpers that never allocate: an array argument
#: then costs no reference-count pair per call (a per-call cost that dominated small problems).
leaf = _decorator(LINK_ONLY, nrt=False)
