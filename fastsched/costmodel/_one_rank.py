"""The encoder's one-pass path: a one-rank program without communication ops, JSON layout.

The general path (:mod:`.encode`) runs ~60 C-level passes and numpy calls per rank, a kernel
call with 14 arrays and 12 results, and a packing step. On a 9-op case file that is ~85 µs
of fixed cost; on large programs every pass touches every parsed object again, which costs
more per op once they no longer fit the caches (the encode growth slope). Here one Python
pass over the parsed dicts resolves every name and builds a single int64 array (and the
costs), and one kernel call (:func:`._edges.rank_packed`, which runs the general path's
:func:`._edges.rank_columns`) returns the packed layout itself.

The path only *accepts*: anything it does not recognise as plain, valid input (another
container type, a wrong type, an unknown name, a duplicate, a bad cost, a cycle, a
communication op, more than one rank) makes :func:`one_rank` return ``None``, and the
general path encodes the program or raises its precise error. Both give the same encoding
(``tests/costmodel/test_one_rank.py`` compares every field).
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from fastsched.costmodel._edges import PACKED_OK, rank_packed
from fastsched.costmodel.graph import comm_class
from fastsched.costmodel.program import DTYPE_SIZES

__all__ = ["one_rank"]

_INT_NONE = {int, type(None)}
_NUM_NONE = {int, float, type(None)}
_STR = {str}
_DICT = {dict}
_BOOL = {bool}


class _Fallback(Exception):
    pass


def one_rank(program):
    """``(packed, facts, var_names, stage)`` of a one-rank program without communication, or ``None``.

    ``program`` is ``{"ranks": [rank]}``, a rank dict or ``[rank]`` (plain dicts and lists
    as ``json.loads`` makes them); ``packed`` is the encoding's packed int64 array (see
    :func:`._edges.rank_packed`) and ``facts`` its ``FACT_*`` bits.

    Examples
    --------
    >>> rank = {"vars": [{"name": "x", "shape": [-1, 2]}], "ops": [
    ...     {"id": "a", "type": "relu", "outputs": [["Out", ["x"]]], "cost": 1.0}]}
    >>> packed, facts, names, stage = one_rank({"ranks": [rank]})
    >>> names, stage, facts  # facts: B8 (a batch dimension)
    (('x',), (None,), 4)
    >>> one_rank({"ranks": [rank, rank]}) is None  # two ranks: the general path
    True
    """
    try:
        return _one_rank(program)
    except (_Fallback, KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return None


def _rank_of(program):
    t = type(program)
    if t is dict:
        if "ranks" not in program:
            return program
        program = program["ranks"]
        t = type(program)
    if t is list and len(program) == 1 and type(program[0]) is dict:
        return program[0]
    raise _Fallback


def _slots(x, get, nslots, lens, idx, slots):
    # one op's [[slot, [names]], ...]: slot count, names per slot, variable indices, slot names
    if not x:
        nslots.append(0)
        return
    if type(x) is not list:
        raise _Fallback
    nslots.append(len(x))
    for s, ns in x:
        if type(ns) is not list:
            raise _Fallback
        slots.append(s)
        lens.append(len(ns))
        idx += map(get, ns)


def _within(vals, lo, hi):
    # every non-None value in [lo, hi] (C-level passes; None entries filtered only if present)
    if None in vals:
        vals = [v for v in vals if v is not None]
    return not vals or (lo <= min(vals) and max(vals) <= hi)


def _one_rank(program):
    r = _rank_of(program)
    rank = r.get("rank", 0)
    if type(rank) is not int or not 0 <= rank < 2**31:
        raise _Fallback
    vs = r.get("vars") or []
    ops = r.get("ops") or []
    if type(vs) is not list or type(ops) is not list:
        raise _Fallback
    if (vs and set(map(type, vs)) != _DICT) or (ops and set(map(type, ops)) != _DICT):
        raise _Fallback
    # variables: one pass (names, shapes, byte sizes, flags)
    names, pers, shape_len, dims, dsize, grad = [], [], [], [], [], []
    for v in vs:
        if v.get("added_by_reference"):
            continue
        name = v.get("name")
        shape = v.get("shape", ())
        if type(shape) is not list and type(shape) is not tuple:
            raise _Fallback
        names.append(name)
        shape_len.append(len(shape))
        dims += shape
        dsize.append(DTYPE_SIZES[v.get("dtype", "float32")])  # an alias: the general path normalises it
        pers.append(v.get("persistable", False))  # bools (checked below) pack as 0/1
        grad.append(1 if "@GRAD" in name else 0)  # a non-str name raises: general path
    nv = len(names)
    if (names and set(map(type, names)) != _STR) or "" in names or (pers and set(map(type, pers)) != _BOOL):
        raise _Fallback
    if dims and (set(map(type, dims)) != {int} or min(dims) < -1 or max(dims) > 2**53):
        raise _Fallback
    index = dict(zip(names, range(nv), strict=True))
    if len(index) != nv:
        raise _Fallback
    # ops: one pass (slots resolved to variable indices; an unknown name raises KeyError)
    n = len(ops)
    ids, types, costs, roles, others = [], [], [], [], []
    in_len, in_idx, in_ns, in_slots, out_len, out_idx, out_ns, out_slots = [], [], [], [], [], [], [], []
    get = index.__getitem__
    for o in ops:
        ids.append(o.get("id"))
        types.append(o.get("type"))
        costs.append(o.get("cost"))
        roles.append(o.get("op_role", 0))
        others += (o.get("ring_id"), o.get("desc_id"), o.get("peer"))
        _slots(o.get("inputs"), get, in_ns, in_len, in_idx, in_slots)
        _slots(o.get("outputs"), get, out_ns, out_len, out_idx, out_slots)
    optim = [0] * n  # an optimizer op: one of its input slots is LearningRate
    if "LearningRate" in in_slots:
        k = 0
        for i, c in enumerate(in_ns):
            optim[i] = 1 if "LearningRate" in in_slots[k : k + c] else 0
            k += c
    slots = in_slots + out_slots
    if n and (
        set(map(type, ids)) != _STR
        or set(map(type, types)) != _STR
        or "" in ids
        or "" in types
        or len(set(ids)) != n
        or not set(map(type, roles)) <= _INT_NONE
        or not set(map(type, others)) <= _INT_NONE
        or not set(map(type, costs)) <= _NUM_NONE
        or (slots and set(map(type, slots)) != _STR)
        or any(map(comm_class, set(types)))
    ):
        raise _Fallback
    if None in roles:
        roles = [0 if x is None else x for x in roles]
    # the general path's ranges (_read.INT_RANGES): anything outside gets its precise error there
    if (
        others
        and not (
            _within(roles, 0, 2**31 - 1)
            and _within(others[0::3], -1, 2**31 - 1)  # ring_id
            and _within(others[1::3], -(2**63), 2**63 - 1)  # desc_id
            and _within(others[2::3], -1, 2**31 - 1)  # peer
        )
    ):
        raise _Fallback
    if None in costs:
        costs = [0.0 if c is None else c for c in costs]
    head = (n, nv, len(in_len), len(out_len), len(in_idx), len(out_idx), len(dims))
    parts = (head, in_len, in_idx, in_ns, out_len, out_idx, out_ns, pers, shape_len, dims, dsize, grad, roles, optim)
    ints = np.fromiter(chain.from_iterable(parts), np.int64, sum(map(len, parts)))
    packed, status, facts = rank_packed(ints, np.array(costs, np.float64).reshape(n))
    if status != PACKED_OK:
        raise _Fallback
    return packed, facts, tuple(names), (r.get("stage"),)
