"""Array form of each rank's op graph, built once per rank (no dicts in the hot path).

:func:`build_rank_graph` turns one :class:`~fastsched.costmodel.program.Rank` into a
:class:`RankGraph`: per-op kind, communication class, phase and cost; the deduplicated
op-to-op edges in CSR form (predecessors and successors); and per-variable sizes and
live ranges for the memory model. Names are resolved to integer ids here, once.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from fastsched.costmodel._edges import op_edges_and_ranges
from fastsched.costmodel.program import DTYPE_SIZES, Rank

__all__ = [
    "RankGraph",
    "build_rank_graph",
    "comm_class",
    "csr_from_edges",
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

_OP_ROLE_BACKWARD = 1

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


def comm_tensor(op) -> str | None:
    """Name of the tensor a communication op moves.

    ``recv``-like ops have no input (the reference measured an empty shape, B11): their
    first output. Otherwise the first name of slot ``X``, else of the last non-empty input
    slot (the reference's choice), else the first output.
    """
    if "recv" in op.type:
        outs = op.output_names()
        return outs[0] if outs else None
    for slot, names in op.inputs:
        if slot == "X" and names:
            return names[0]
    last = None
    for _, names in op.inputs:
        if names:
            last = names[0]
    if last is not None:
        return last
    outs = op.output_names()
    return outs[0] if outs else None


def comm_cost(cls: int, nbytes: float, n_ranks: int, bandwidth: float) -> float:
    """The seed's ring formulas in ms; one-rank rings cost 0 (no division by zero)."""
    if cls == C_ALLREDUCE:
        return 0.0 if n_ranks <= 1 else nbytes * 2.0 * (n_ranks - 1) / (n_ranks * bandwidth)
    if cls in (C_ALLGATHER, C_REDUCE_SCATTER):
        return 0.0 if n_ranks <= 1 else nbytes * (n_ranks - 1) / (n_ranks * bandwidth)
    if cls in (C_BROADCAST, C_P2P):
        return nbytes / bandwidth
    return 0.0


def csr_from_edges(n: int, src: np.ndarray, dst: np.ndarray):
    """Return ``(ptr, idx)`` listing ``dst`` by ``src`` (stable in edge order)."""
    order = np.argsort(src, kind="stable")
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, np.ascontiguousarray(dst[order], dtype=np.int64)


@dataclass
class RankGraph:
    """Arrays describing one rank (all int64/float64, C-contiguous).

    Attributes
    ----------
    kind : int64[n_ops]          COMPUTATION or COMMUNICATION
    comm : int64[n_ops]          communication class (0 for computation)
    phase : int64[n_ops]         FWD, BWD or OPTIM
    is_bwd, is_optim : bool[n_ops]
    base_cost : float64[n_ops]   given cost (standalone data applied), before comm costing
    comm_bytes : float64[n_ops]  bytes moved by communication ops
    ring : int64[n_ops]          ring id of ring collectives, else -1
    edge_src, edge_dst : int64[m] distinct op-to-op edges (forward in program order)
    pred_ptr, pred_idx, succ_ptr, succ_idx : CSR adjacency
    var_elems, var_bytes : float64[n_vars]; persistable : bool[n_vars]
    first_use, last_use : int64[n_vars]  live range in op positions (-1 start, -2 unused)
    """

    n_ops: int
    op_ids: list
    kind: np.ndarray
    comm: np.ndarray
    phase: np.ndarray
    is_bwd: np.ndarray
    is_optim: np.ndarray
    base_cost: np.ndarray
    comm_bytes: np.ndarray
    ring: np.ndarray
    edge_src: np.ndarray
    edge_dst: np.ndarray
    pred_ptr: np.ndarray
    pred_idx: np.ndarray
    succ_ptr: np.ndarray
    succ_idx: np.ndarray
    var_elems: np.ndarray
    var_bytes: np.ndarray
    persistable: np.ndarray
    first_use: np.ndarray
    last_use: np.ndarray


def _numel(var, batch_size) -> float:
    if -1 not in var.shape:
        return float(math.prod(var.shape))
    p = 1
    for d in var.shape:
        if d == -1:
            if batch_size is None:
                raise ValueError(f"variable {var.name!r} has a dynamic (-1) dimension: give batch_size")
            d = batch_size
        p *= d
    return float(p)


def build_rank_graph(rank: Rank, *, batch_size=None, cost_lookup=None) -> RankGraph:
    """Resolve names, classify ops and build the op graph arrays of one rank.

    Parameters
    ----------
    rank : Rank
    batch_size : int or None
        Fills ``-1`` dimensions (B8). ``None`` makes such a dimension an error.
    cost_lookup : callable(op) -> float or None, optional
        Standalone cost of a computation op (``None`` keeps ``op.cost``).

    Returns
    -------
    RankGraph

    Raises
    ------
    ValueError
        An op names an unknown variable, reads a non-persistable variable before its first
        writer (a cycle), or a cost is negative.
    """
    index = rank.var_index()
    ops = rank.ops
    n = len(ops)
    nv = len(rank.vars)
    in_ptr = np.zeros(n + 1, np.int64)
    out_ptr = np.zeros(n + 1, np.int64)
    in_idx = []
    out_idx = []
    kind = np.empty(n, np.int64)
    comm = np.zeros(n, np.int64)
    phase = np.empty(n, np.int64)
    base = np.empty(n, np.float64)
    cbytes = np.zeros(n, np.float64)
    ring = np.full(n, -1, np.int64)
    elems = np.array([_numel(v, batch_size) for v in rank.vars], np.float64)
    dsize = np.array([DTYPE_SIZES[v.dtype] for v in rank.vars], np.float64)
    pers = np.array([v.persistable for v in rank.vars], np.bool_)
    for i, op in enumerate(ops):
        grad_in = False
        optim = False
        for slot, names in op.inputs:
            if slot == "LearningRate":
                optim = True
            for name in names:
                j = index.get(name)
                if j is None:
                    raise ValueError(f"rank {rank.rank}: op {op.id!r} reads unknown variable {name!r}")
                in_idx.append(j)
                if "@GRAD" in name:
                    grad_in = True
        in_ptr[i + 1] = len(in_idx)
        for _, names in op.outputs:
            for name in names:
                j = index.get(name)
                if j is None:
                    raise ValueError(f"rank {rank.rank}: op {op.id!r} writes unknown variable {name!r}")
                out_idx.append(j)
        out_ptr[i + 1] = len(out_idx)
        c = comm_class(op.type)
        if c != 0:
            comm[i] = c
            kind[i] = 2
            t = comm_tensor(op)
            # backward communication is backward (B3): gradient tensor or backward role
            bwd = op.op_role == _OP_ROLE_BACKWARD or (t is not None and "@GRAD" in t)
            phase[i] = BWD if bwd else FWD
            if t is not None and t in index:
                j = index[t]
                cbytes[i] = elems[j] * dsize[j]
            if uses_ring(op.type) and op.ring_id is not None:
                ring[i] = op.ring_id
            base[i] = op.cost
        else:
            kind[i] = 1
            # "@GRAD" as a substring of an input name, as the seed meant (B4)
            bwd = op.op_role == _OP_ROLE_BACKWARD or grad_in
            phase[i] = OPTIM if optim else (BWD if bwd else FWD)
            cost = op.cost if cost_lookup is None else cost_lookup(op)
            if cost is None:
                cost = op.cost
            cost = float(cost)
            if not (cost >= 0.0 and math.isfinite(cost)):
                raise ValueError(f"rank {rank.rank}: op {op.id!r}: cost must be finite and >= 0, got {cost!r}")
            base[i] = cost
    in_idx = np.asarray(in_idx, np.int64)
    out_idx = np.asarray(out_idx, np.int64)
    src, dst, first, last, bad_op, bad_var = op_edges_and_ranges(n, nv, in_ptr, in_idx, out_ptr, out_idx, pers)
    if bad_op >= 0:
        name = rank.vars[bad_var].name
        raise ValueError(
            f"rank {rank.rank}: cycle: op {ops[bad_op].id!r} reads non-persistable variable "
            f"{name!r} before the op that writes it"
        )
    if src.size:
        key = np.unique(src * max(n, 1) + dst)
        src = key // max(n, 1)
        dst = key % max(n, 1)
    pred_ptr, pred_idx = csr_from_edges(n, dst, src)
    succ_ptr, succ_idx = csr_from_edges(n, src, dst)
    return RankGraph(
        n_ops=n,
        op_ids=[o.id for o in ops],
        kind=kind,
        comm=comm,
        phase=phase,
        is_bwd=phase == BWD,
        is_optim=phase == OPTIM,
        base_cost=base,
        comm_bytes=cbytes,
        ring=ring,
        edge_src=np.ascontiguousarray(src, np.int64),
        edge_dst=np.ascontiguousarray(dst, np.int64),
        pred_ptr=pred_ptr,
        pred_idx=pred_idx,
        succ_ptr=succ_ptr,
        succ_idx=succ_idx,
        var_elems=elems,
        var_bytes=elems * dsize,
        persistable=pers,
        first_use=first,
        last_use=last,
    )
