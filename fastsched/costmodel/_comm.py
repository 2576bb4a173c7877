"""Collective and point-to-point costs (ms), one definition for every kernel.

``bw`` is in bytes per ms and ``lat`` in ms per message step. Ring algorithms: an
all-reduce moves ``2(n-1)/n`` of the bytes in ``2(n-1)`` steps, an all-gather or a
reduce-scatter ``(n-1)/n`` in ``n-1`` steps, a broadcast or a send the bytes once. A
one-rank ring costs nothing (the reference divided by zero, B11). With ``lat = 0`` these
are the seed's formulas, operation for operation.
"""

from __future__ import annotations

from fastsched._jit import jit

__all__ = ["allreduce_ms", "allgather_ms", "p2p_ms", "comm_ms"]

# communication classes (graph.C_*)
_C_ALLREDUCE, _C_ALLGATHER, _C_BROADCAST, _C_P2P, _C_REDUCE_SCATTER = 1, 2, 3, 4, 5


@jit(inline="always")
def allreduce_ms(nbytes, n, bw, lat):
    """Ring all-reduce of ``nbytes`` over ``n`` ranks."""
    if n <= 1:
        return 0.0
    return nbytes * 2.0 * (n - 1) / (n * bw) + 2.0 * (n - 1) * lat


@jit(inline="always")
def allgather_ms(nbytes, n, bw, lat):
    """Ring all-gather (or reduce-scatter) of ``nbytes`` in total over ``n`` ranks."""
    if n <= 1:
        return 0.0
    return nbytes * (n - 1) / (n * bw) + (n - 1) * lat


@jit(inline="always")
def p2p_ms(nbytes, bw, lat):
    """Return the cost of a send (or broadcast) of ``nbytes``."""
    return nbytes / bw + lat


@jit(inline="always")
def comm_ms(cls, nbytes, n, bw, lat):
    """Cost of a communication op of class ``cls`` (graph.C_*); 0 for unknown classes."""
    if cls == _C_ALLREDUCE:
        return allreduce_ms(nbytes, n, bw, lat)
    if cls == _C_ALLGATHER or cls == _C_REDUCE_SCATTER:
        return allgather_ms(nbytes, n, bw, lat)
    if cls == _C_BROADCAST or cls == _C_P2P:
        return p2p_ms(nbytes, bw, lat)
    return 0.0
