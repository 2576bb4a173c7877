"""numba intrinsic: a view of an array that takes no part in reference counting.

Every array value numba handles carries a reference-counted memory record; each slice,
each call argument and each temporary view is an atomic increment and decrement of it.
On a program of a few ops the estimate kernel did little else (a profile put ~90% of its
time in the two atomic helpers). A *borrowed* view has the same data, shape and strides but
no memory record, so numba skips the updates (its increment is a null check).

The caller must keep the original array alive for as long as the view is used: take
views of the kernel's arguments (the Python caller holds them for the whole call) or of
arrays that a calling kernel passed in (the caller's variable lives across the call).
Never return a borrowed view, store it, or borrow an array the kernel allocates and then
drops.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["borrow"]


@intrinsic
def borrow(typingctx, arr):
    """Return a view of ``arr`` without a memory record (see the module docstring)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, value=args[0])
        dst = make_array(sig.return_type)(context, builder)
        populate_array(
            dst, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize, meminfo=None, parent=None
        )
        return dst._getvalue()

    return arr(arr), codegen
