"""Op classification shared by the encoder: node kinds, phases, communication classes.

:func:`comm_class` says which op types are communication (and which collective),
:func:`uses_ring` which of them define a ring. The seed's ring formulas are in
:mod:`._estimate` (``_comm_cost``).
"""

from __future__ import annotations

import functools

__all__ = [
    "comm_class",
    "COMPUTATION",
    "COMMUNICATION",
    "VARIABLE",
    "MERGED",
    "FWD",
    "BWD",
    "OPTIM",
    "DEFAULT_BANDWIDTH",
]

# node kinds (as the seed's CostNodeType)
COMPUTATION, COMMUNICATION, VARIABLE, MERGED = 1, 2, 3, 4
# phases
FWD, BWD, OPTIM = 0, 1, 2
# communication classes
C_NONE, C_ALLREDUCE, C_ALLGATHER, C_BROADCAST, C_P2P, C_REDUCE_SCATTER, C_OTHER = range(7)

#: The seed's constant: 32 * 1024 / 1000 (V100 PCIe), applied to bytes, giving ms.
DEFAULT_BANDWIDTH = 32 * 1024 / 1000

# Paddle 3.x collective op names without the legacy ``c_`` prefix (B11).
_COLLECTIVES_3X = {
    "all_reduce": C_ALLREDUCE,
    "all_gather": C_ALLGATHER,
    "broadcast": C_BROADCAST,
    "reduce_scatter": C_REDUCE_SCATTER,
    "reduce": C_ALLREDUCE,
    "all_to_all": C_ALLGATHER,
    "p_send": C_P2P,
    "p_recv": C_P2P,
    "partial_send": C_P2P,
    "partial_recv": C_P2P,
    "barrier": C_OTHER,
}


@functools.lru_cache(maxsize=4096)
def comm_class(op_type: str) -> int:
    """Communication class of an op type (0 = computation).

    The reference treats ``c_*``, ``send*`` and ``recv*`` as communication; we also know
    the Paddle 3.x names (``all_reduce``, ``all_gather``, ``reduce_scatter``, ...; B11).
    ``c_embedding*`` is a computation op; ``c_sync_*`` streams cost nothing.
    """
    t = op_type
    if t.startswith("c_embedding"):
        return C_NONE
    if t in _COLLECTIVES_3X:
        return _COLLECTIVES_3X[t]
    if t.startswith("send") or t.startswith("recv"):
        return C_P2P
    if t.startswith("c_"):
        if "allreduce" in t or "all_reduce" in t or t.startswith("c_reduce_"):
            return C_ALLREDUCE
        if "reducescatter" in t or "reduce_scatter" in t:
            return C_REDUCE_SCATTER
        if "gather" in t or "alltoall" in t:
            return C_ALLGATHER
        if "broadcast" in t:
            return C_BROADCAST
        return C_OTHER
    return C_NONE


def uses_ring(op_type: str) -> bool:
    """Whether the op's ``ring_id`` defines a ring (collectives, not p2p or sync)."""
    c = comm_class(op_type)
    return c in (C_ALLREDUCE, C_ALLGATHER, C_BROADCAST, C_REDUCE_SCATTER, C_OTHER) and not (
        op_type.startswith("c_sync")
    )
