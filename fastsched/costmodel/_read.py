"""Reading and validating a program (case dicts or :class:`~.program.Program`) into per-rank lists.

The encoder's first step (:mod:`.encode`): every rank becomes a :class:`_RankLists` of
plain lists, checked as the ``Var``/``Op`` constructors would (types, names, dtypes, costs)
and range-checked (:data:`INT_RANGES`), with errors naming the rank, the op or variable and
the field. Nothing here resolves names or builds arrays beyond the costs.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from itertools import chain, compress, repeat
from operator import itemgetter, not_
from typing import NamedTuple

import numpy as np

from fastsched.costmodel.program import DTYPE_SIZES, Program, Rank, _check_flag, _norm_dtype

__all__ = ["INT_RANGES", "MAX_VAR_BYTES"]


# Ranges of the integer fields of a case, checked once at encoding (the arrays below are int64
# and numba does not bounds-check). Paddle stores op_role, ring_id and the ranks as int32 attrs
# and desc ids as int64; -1 is "none" for ring_id and peer. Dimensions go up to 2**53 (exact
# as float64, the sizes' type) and a variable's static size up to 2**63 bytes.
INT_RANGES = {
    "rank": (0, 2**31 - 1),
    "op_role": (0, 2**31 - 1),
    "ring_id": (-1, 2**31 - 1),
    "peer": (-1, 2**31 - 1),
    "desc_id": (-(2**63), 2**63 - 1),
    "shape": (-1, 2**53),
}


MAX_VAR_BYTES = 2.0**63


_BOOL = {bool}


def _check_str(what, value):
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a non-empty str, got {value!r}")


def _slot_lists(where, slots):
    # Normalise [[slot, [names]], ...] (or {slot: [names]}) to [(slot, [names])], checked.
    if not slots:
        return ()
    if not isinstance(slots, (Mapping, Sequence)) or isinstance(slots, (str, bytes)):
        raise TypeError(f"{where} must be [slot, [var names]] pairs, got {slots!r}")
    if type(slots) is list:
        # the JSON layout: checked with C-level passes (type sets), no per-name Python code
        try:
            out = [(slot, names) for slot, names in slots]
        except (TypeError, ValueError):
            out = None
        if out is not None and all(
            type(slot) is str and type(names) is list and (not names or set(map(type, names)) == _STR)
            for slot, names in out
        ):
            return out
    items = slots.items() if isinstance(slots, Mapping) else slots
    out = []
    for item in items:
        try:
            slot, names = item
        except (TypeError, ValueError):
            raise TypeError(f"{where} must be [slot, [var names]] pairs, got {item!r}") from None
        if isinstance(names, str):
            names = [names]
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{where} slot {slot!r}: variable names must be str, got {n!r}")
        out.append((str(slot), names))
    return out


_STR = {str}


_SEQ = {list, tuple}


_NONE = type(None)


class _Flat(NamedTuple):
    # Every op's slots flattened: names in program order, per-slot name counts, per-op slot
    # counts, the slot names, and each op's normalised [(slot, [names])] (read only for
    # communication ops). The per-op name counts are summed by the encoder's kernel.
    names: list
    pair_len: np.ndarray
    nslots: np.ndarray
    slot_names: list
    raw: list

    @property
    def cnt(self) -> np.ndarray:
        """Names per op."""
        owner = np.repeat(np.arange(self.nslots.shape[0]), self.nslots)
        return np.bincount(owner, weights=self.pair_len, minlength=self.nslots.shape[0]).astype(np.int64)


def _flat_slots(kind, ids, raw):
    # C-level passes (map, chain, type sets) over the JSON layout or Op tuples; on anything
    # unusual (dict slots, a bare name, a wrong type) the per-op checker normalises it or
    # raises the precise error, and the fast path runs again on the normalised lists.
    n = len(raw)
    types = set(map(type, raw))
    if types <= {list, tuple, _NONE}:
        norm = [x or () for x in raw] if _NONE in types else raw
        pairs = list(chain.from_iterable(norm))
        if set(map(type, pairs)) <= _SEQ and (not pairs or set(map(len, pairs)) == {2}):
            slot_names = list(map(itemgetter(0), pairs))
            lists = list(map(itemgetter(1), pairs))
            if set(map(type, slot_names)) <= _STR and set(map(type, lists)) <= _SEQ:
                names = list(chain.from_iterable(lists))
                if set(map(type, names)) <= _STR:
                    nslots = np.fromiter(map(len, norm), np.int64, n)
                    per_pair = np.fromiter(map(len, lists), np.int64, len(lists))
                    return _Flat(names, per_pair, nslots, slot_names, norm)
    norm = [_slot_lists(f"Op {oid!r} {kind}", x) for oid, x in zip(ids, raw, strict=True)]
    return _flat_slots(kind, ids, [[[p[0], list(p[1])] for p in x] for x in norm])


class _RankLists(NamedTuple):
    rank: int
    stage: object
    var_names: list
    var_shapes: list
    var_dtypes: list
    var_pers: list
    op_ids: list
    op_types: list
    op_inputs: _Flat
    op_outputs: _Flat
    op_roles: list
    op_rings: list
    op_costs: list
    op_desc: list
    op_peers: list


def _lists_from_rank(r: Rank) -> _RankLists:
    # Rank objects are validated by their constructors.
    vs, ops = r.vars, r.ops
    return _RankLists(
        r.rank,
        r.stage,
        [v.name for v in vs],
        [v.shape for v in vs],
        [v.dtype for v in vs],
        [v.persistable for v in vs],
        [o.id for o in ops],
        [o.type for o in ops],
        _flat_slots("inputs", [o.id for o in ops], [o.inputs for o in ops]),
        _flat_slots("outputs", [o.id for o in ops], [o.outputs for o in ops]),
        [o.op_role for o in ops],
        [o.ring_id for o in ops],
        [o.cost for o in ops],
        [o.desc_id for o in ops],
        [o.peer for o in ops],
    )


def _int_or_none(where, v, allow_none=True):
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{where} must be an int, got {v!r}")
    return int(v)


_INT = {int}


_INT_NONE = {int, type(None)}


_NUM_NONE = {int, float, type(None)}


def _col(items, key, default=None):
    # one field of every dict, at C level (items are all dicts, checked by the caller)
    return list(map(dict.get, items, repeat(key), repeat(default)))


def _columns(items, fields):
    # Several fields of every dict: one C-level pass over the dicts when every dict has every
    # key (each dict is visited once instead of once per field: on large programs the dicts
    # no longer fit the caches), else one pass per field with defaults.
    try:
        rows = list(map(itemgetter(*(k for k, _ in fields)), items))
    except KeyError:
        return [_col(items, k, d) for k, d in fields]
    return [list(map(itemgetter(j), rows)) for j in range(len(fields))]


def _ints(ops, key, vals, allow_none):
    # One C-level type pass; the per-item check (and its message) only when it fails.
    if set(map(type, vals)) <= (_INT_NONE if allow_none else _INT):
        return vals
    return [_int_or_none(f"Op {o['id']!r}: {key}", v, allow_none) for o, v in zip(ops, vals, strict=True)]


_OP_FIELDS = (
    ("id", None),
    ("type", None),
    ("inputs", None),
    ("outputs", None),
    ("op_role", 0),
    ("ring_id", None),
    ("desc_id", None),
    ("peer", None),
    ("cost", None),
)


def _lists_from_dict(i: int, r: Mapping) -> _RankLists:
    # The case JSON layout, validated as the Var/Op constructors would (type sets first).
    if not isinstance(r, Mapping):
        raise TypeError(f"ranks[{i}] must be a Rank or a dict, got {type(r).__name__}")
    rank_no = _int_or_none(f"ranks[{i}]: rank", r.get("rank", i), allow_none=False)
    raw_vars = list(r.get("vars") or ())
    ops = list(r.get("ops") or ())
    for what, items in (("a variable", raw_vars), ("an op", ops)):
        if set(map(type, items)) - {dict}:
            for x in items:
                if not isinstance(x, Mapping):
                    kind = "Var" if what == "a variable" else "Op"
                    raise TypeError(f"{what} must be a {kind} or a dict, got {type(x).__name__}")
            # other Mapping types: as plain dicts (read only)
            if what == "a variable":
                raw_vars = [dict(x) for x in items]
            else:
                ops = [dict(x) for x in items]
    added = _col(raw_vars, "added_by_reference")
    vs = list(compress(raw_vars, map(not_, added))) if any(added) else raw_vars
    names, shapes, dtypes, pers = _columns(
        vs, (("name", None), ("shape", ()), ("dtype", "float32"), ("persistable", False))
    )
    if set(map(type, names)) - {str} or "" in names:
        for n in names:
            _check_str("Var.name", n)
    shape_types = set(map(type, shapes))
    flat = list(chain.from_iterable(shapes)) if shape_types <= _SEQ else None
    if flat is None or set(map(type, flat)) - _INT or (flat and min(flat) < -1):
        for n, s in zip(names, shapes, strict=True):
            if not isinstance(s, Sequence) or isinstance(s, (str, bytes)):
                raise TypeError(f"Var {n!r}: shape must be a sequence of ints")
            for d in s:
                if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                    raise TypeError(f"Var {n!r}: shape entries must be ints, got {d!r}")
                if d < -1:
                    raise ValueError(f"Var {n!r}: shape entries must be >= -1, got {d}")
        shapes = [list(map(int, s)) for s in shapes]
    if not set(dtypes) <= DTYPE_SIZES.keys():
        for k, (n, dt) in enumerate(zip(names, dtypes, strict=True)):
            if dt not in DTYPE_SIZES:
                nd = _norm_dtype(dt)
                if nd not in DTYPE_SIZES:
                    raise ValueError(f"Var {n!r}: unknown dtype {dt!r}")
                dtypes[k] = nd
    if set(map(type, pers)) - _BOOL:
        for n, p in zip(names, pers, strict=True):
            _check_flag(f"Var {n!r}: persistable", p)
    pers = list(map(bool, pers))
    ids, types, ins, outs, roles, rings, desc, peers, costs = _columns(ops, _OP_FIELDS)
    if set(map(type, ids)) - {str} or set(map(type, types)) - {str} or "" in ids or "" in types:
        for oid, t in zip(ids, types, strict=True):
            _check_str("Op.id", oid)
            _check_str(f"Op {oid!r}: type", t)
    ins = _flat_slots("inputs", ids, ins)
    outs = _flat_slots("outputs", ids, outs)
    roles = _ints(ops, "op_role", roles, True)
    if None in roles:
        roles = [0 if x is None else x for x in roles]
    rings = _ints(ops, "ring_id", rings, True)
    desc = _ints(ops, "desc_id", desc, True)
    peers = _ints(ops, "peer", peers, True)
    if set(map(type, costs)) - _NUM_NONE:
        for o, c in zip(ops, costs, strict=True):
            if c is not None and (isinstance(c, bool) or not isinstance(c, numbers.Real)):
                raise TypeError(f"Op {o['id']!r}: cost must be a real number, got {c!r}")
    if None in costs:
        costs = [0.0 if c is None else c for c in costs]
    base = np.array(costs, np.float64) if costs else np.empty(0, np.float64)
    bad = ~((base >= 0.0) & (base != math.inf))
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"Op {ids[k]!r}: cost must be finite and >= 0, got {float(base[k])!r}")
    return _RankLists(
        rank_no, r.get("stage"), names, shapes, dtypes, pers, ids, types, ins, outs, roles, rings, base, desc, peers
    )


def _rank_lists(program) -> list:
    if isinstance(program, Program):
        return [_lists_from_rank(r) for r in program.ranks]
    if isinstance(program, Mapping):
        if "ranks" in program:
            ranks = program["ranks"]
            if ranks is None:
                raise ValueError("this program has no ranks (ranks omitted)")
        elif "ops" in program or "vars" in program:
            ranks = [program]
        else:
            raise ValueError("program dict needs 'ranks' or 'ops'/'vars'")
    elif isinstance(program, Sequence) and not isinstance(program, (str, bytes)):
        ranks = list(program)
    else:
        raise TypeError(f"cannot build a Program from {type(program).__name__}")
    if not isinstance(ranks, Sequence) or isinstance(ranks, (str, bytes)):
        raise TypeError(f"ranks must be a list of rank programs, got {type(ranks).__name__}")
    out = []
    for i, r in enumerate(ranks):
        out.append(_lists_from_rank(r) if isinstance(r, Rank) else _lists_from_dict(i, r))
    return out


def _cost_table(data, stage):
    # One mapping per stage (or one for all); None where no data applies.
    if data is None:
        return None
    if isinstance(data, Mapping):
        return data
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        if len(data) == 0:
            return None
        idx = 0 if stage is None else stage
        if idx >= len(data):
            raise ValueError(f"standalone_cost_data has {len(data)} entries, stage {idx} needs one")
        table = data[idx]
        if table is not None and not isinstance(table, Mapping):
            raise TypeError("standalone_cost_data entries must be mappings")
        return table
    raise TypeError("standalone_cost_data must be a mapping or a list of mappings")


def _out_of_range(vals, field):
    # index of the first value outside INT_RANGES[field] (None entries skipped), or -1
    lo, hi = INT_RANGES[field]
    if not vals:
        return -1
    try:
        if lo <= min(vals) and max(vals) <= hi:
            return -1
    except TypeError:  # None entries: the slow pass below
        pass
    for k, v in enumerate(vals):
        if v is not None and not lo <= v <= hi:
            return k
    return -1


def _check_ranges(rl: _RankLists) -> None:
    """Range-check every integer field of one rank (``ValueError`` naming rank, op or variable, field)."""
    lo, hi = INT_RANGES["rank"]
    if not lo <= rl.rank <= hi:
        raise ValueError(f"rank {rl.rank}: rank must be in [{lo}, {hi}]")
    for field, vals in (
        ("op_role", rl.op_roles),
        ("ring_id", rl.op_rings),
        ("peer", rl.op_peers),
        ("desc_id", rl.op_desc),
    ):
        k = _out_of_range(vals, field)
        if k >= 0:
            lo, hi = INT_RANGES[field]
            raise ValueError(f"rank {rl.rank}: op {rl.op_ids[k]!r}: {field} must be in [{lo}, {hi}], got {vals[k]}")
    lo, hi = INT_RANGES["shape"]
    dims = list(chain.from_iterable(rl.var_shapes))
    if dims and max(dims) > hi:
        k = next(k for k, s in enumerate(rl.var_shapes) if s and max(s) > hi)
        raise ValueError(
            f"rank {rl.rank}: variable {rl.var_names[k]!r}: shape entries must be in [{lo}, {hi}], "
            f"got {list(rl.var_shapes[k])}"
        )


def _check_sizes(rank, var_names, var_fixed, var_dsize) -> None:
    """Check that every variable's static size stays below ``MAX_VAR_BYTES`` (sizes stay finite)."""
    if var_fixed.size:
        nbytes = var_fixed * var_dsize
        if not nbytes.max() < MAX_VAR_BYTES:
            k = int(np.argmax(~(nbytes < MAX_VAR_BYTES)))
            raise ValueError(
                f"rank {rank}: variable {var_names[k]!r}: shape holds {float(nbytes[k]):.4g} bytes without the "
                "batch dimensions, more than MAX_VAR_BYTES = 2**63"
            )
