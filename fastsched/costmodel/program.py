"""Framework-free description of a distributed program: ranks, variables, ops.

This is what the cost model reads. It holds no Paddle objects, so a program can be
loaded from the ``paddle-cost-model-case/1`` JSON format, built from plain dicts, or
produced by :mod:`fastsched.costmodel.paddle`, and saved back. Everything is an
immutable dataclass: the model never mutates the caller's program (seed bug B13).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Var", "Op", "Rank", "Program", "DTYPE_SIZES"]

#: Bytes per element of each dtype name understood by the memory model (B9).
DTYPE_SIZES = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "complex64": 8,
    "complex128": 16,
}


def _norm_dtype(dtype) -> str:
    # Accept "paddle.float32", "VarType.FP32"-free spellings and numpy dtypes.
    s = str(dtype).lower()
    for prefix in ("paddle.", "torch.", "numpy.", "np."):
        if s.startswith(prefix):
            s = s[len(prefix) :]
    return s


@dataclass(frozen=True)
class Var:
    """A variable of one rank's program.

    Parameters
    ----------
    name : str
        Unique name within the rank.
    shape : tuple of int
        Dimensions; ``-1`` is a dynamic (batch) dimension, ``()`` a scalar.
    dtype : str
        Element type name, e.g. ``"float32"`` (see :data:`DTYPE_SIZES`).
    persistable : bool
        Parameters and optimizer state: counted in static memory.

    Examples
    --------
    >>> v = Var("w", (4, 8), "float32", persistable=True)
    >>> v.name, v.shape, v.dtype, v.persistable
    ('w', (4, 8), 'float32', True)
    """

    name: str
    shape: tuple = ()
    dtype: str = "float32"
    persistable: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"Var.name must be a non-empty str, got {self.name!r}")
        try:
            shape = tuple(self.shape)
        except TypeError:
            raise TypeError(f"Var {self.name!r}: shape must be a sequence of ints") from None
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                raise TypeError(f"Var {self.name!r}: shape entries must be ints, got {d!r}")
            if d < -1:
                raise ValueError(f"Var {self.name!r}: shape entries must be >= -1, got {d}")
        object.__setattr__(self, "shape", tuple(int(d) for d in shape))
        dt = _norm_dtype(self.dtype)
        if dt not in DTYPE_SIZES:
            raise ValueError(f"Var {self.name!r}: unknown dtype {self.dtype!r}")
        object.__setattr__(self, "dtype", dt)
        _check_flag(f"Var {self.name!r}: persistable", self.persistable)
        object.__setattr__(self, "persistable", bool(self.persistable))

    def to_dict(self) -> dict:
        """Return the JSON form of this variable.

        Examples
        --------
        >>> Var("w", (4, 8), "float32", persistable=True).to_dict()
        {'name': 'w', 'shape': [4, 8], 'dtype': 'float32', 'persistable': True}
        """
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "persistable": self.persistable,
        }


def _check_flag(what, value) -> None:
    # A bool (numpy's too), 0/1, or None (not given: false); the string "false" or -1 were
    # read as true.
    if value is None or isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        return
    if not (isinstance(value, numbers.Integral) and value in (0, 1)):
        raise TypeError(f"{what} must be a bool, got {value!r}")


def _slots(name: str, value) -> tuple:
    # Slots are ((slot, (var, ...)), ...); a mapping {slot: [vars]} is accepted too.
    if value is None:
        return ()
    if not isinstance(value, (Mapping, Sequence)) or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be [slot, [var names]] pairs, got {value!r}")
    items = value.items() if isinstance(value, Mapping) else value
    out = []
    for item in items:
        try:
            slot, names = item
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be [slot, [var names]] pairs, got {item!r}") from None
        if isinstance(names, str):
            names = [names]
        names = tuple(names)
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{name} slot {slot!r}: variable names must be str, got {n!r}")
        out.append((str(slot), names))
    return tuple(out)


@dataclass(frozen=True)
class Op:
    """One operator, in program order.

    Parameters
    ----------
    id : str
        Node id (``"{type}_{idx}"`` in the reference).
    type : str
        Operator type, e.g. ``"matmul_v2"`` or ``"send_v2"``.
    inputs, outputs : tuple of (slot, tuple of var names)
        Every name of every slot is connected (the reference kept only the first, B10).
    op_role : int
        Paddle ``OpRole`` bits (0 forward, 1 backward, 2 optimize, 256 loss, ...).
    ring_id, peer : int or None
        Communication attributes.
    cost : float
        Standalone time in ms for computation ops. Communication ops are re-costed from
        their tensor and ring size unless the model is told to keep given costs.
    desc_id : int or None
        Key of ``standalone_cost_data`` lookups (``op.desc.id()`` in Paddle).

    Examples
    --------
    >>> op = Op("relu_0", "relu", inputs=(("X", ("x",)),), outputs=(("Out", ("y",)),), cost=1.5)
    >>> op.input_names(), op.output_names(), op.cost
    (['x'], ['y'], 1.5)
    """

    id: str
    type: str
    inputs: tuple = ()
    outputs: tuple = ()
    op_role: int = 0
    ring_id: int | None = None
    peer: int | None = None
    cost: float = 0.0
    desc_id: int | None = None

    def __post_init__(self):
        if not isinstance(self.id, str) or not self.id:
            raise TypeError(f"Op.id must be a non-empty str, got {self.id!r}")
        if not isinstance(self.type, str) or not self.type:
            raise TypeError(f"Op {self.id!r}: type must be a non-empty str")
        object.__setattr__(self, "inputs", _slots(f"Op {self.id!r} inputs", self.inputs))
        object.__setattr__(self, "outputs", _slots(f"Op {self.id!r} outputs", self.outputs))
        for attr in ("op_role", "ring_id", "peer", "desc_id"):
            v = getattr(self, attr)
            if v is None and attr != "op_role":
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Op {self.id!r}: {attr} must be an int, got {v!r}")
            object.__setattr__(self, attr, int(v))
        c = self.cost
        if isinstance(c, bool) or not isinstance(c, numbers.Real):
            raise TypeError(f"Op {self.id!r}: cost must be a real number, got {c!r}")
        c = float(c)
        if not c >= 0.0 or c == float("inf"):  # also rejects NaN
            raise ValueError(f"Op {self.id!r}: cost must be finite and >= 0, got {c!r}")
        object.__setattr__(self, "cost", c)

    def input_names(self) -> list:
        """All input variable names, slot by slot.

        Examples
        --------
        >>> Op("add_0", "elementwise_add", inputs=(("X", ("a",)), ("Y", ("b",)))).input_names()
        ['a', 'b']
        """
        return [n for _, names in self.inputs for n in names]

    def output_names(self) -> list:
        """All output variable names, slot by slot.

        Examples
        --------
        >>> Op("split_0", "split", outputs=(("Out", ("y0", "y1")),)).output_names()
        ['y0', 'y1']
        """
        return [n for _, names in self.outputs for n in names]

    def to_dict(self) -> dict:
        """Return the JSON form of this op.

        Examples
        --------
        >>> d = Op("relu_0", "relu", inputs=(("X", ("x",)),), cost=1.5).to_dict()
        >>> d["id"], d["inputs"], d["outputs"], d["cost"]
        ('relu_0', [['X', ['x']]], [], 1.5)
        """
        return {
            "id": self.id,
            "desc_id": self.desc_id,
            "type": self.type,
            "inputs": [[s, list(n)] for s, n in self.inputs],
            "outputs": [[s, list(n)] for s, n in self.outputs],
            "op_role": self.op_role,
            "ring_id": self.ring_id,
            "peer": self.peer,
            "cost": self.cost,
        }


@dataclass(frozen=True)
class Rank:
    """The program of one rank: its variables and its ops in program order.

    Variables and ops may be given as :class:`Var` / :class:`Op` or as plain dicts.

    Examples
    --------
    >>> r = Rank(vars=[Var("x", (4,)), {"name": "y", "shape": [4]}],
    ...          ops=[{"id": "relu_0", "type": "relu", "inputs": {"X": ["x"]}, "outputs": {"Out": ["y"]}}])
    >>> r.var_index(), r.ops[0].type
    ({'x': 0, 'y': 1}, 'relu')
    """

    vars: tuple = ()
    ops: tuple = ()
    rank: int = 0
    stage: int | None = None
    _index: dict = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        vs = tuple(v if isinstance(v, Var) else Var(**_var_kwargs(v)) for v in self.vars)
        ops = tuple(o if isinstance(o, Op) else Op(**_op_kwargs(o)) for o in self.ops)
        index = {}
        for i, v in enumerate(vs):
            if v.name in index:
                raise ValueError(f"rank {self.rank}: duplicate variable {v.name!r}")
            index[v.name] = i
        seen = set()
        for o in ops:
            if o.id in seen:
                raise ValueError(f"rank {self.rank}: duplicate op id {o.id!r}")
            seen.add(o.id)
        object.__setattr__(self, "vars", vs)
        object.__setattr__(self, "ops", ops)
        object.__setattr__(self, "_index", index)

    def var_index(self) -> dict:
        """Map each variable name to its position in :attr:`vars`.

        Examples
        --------
        >>> Rank(vars=[Var("x", (4,)), Var("y", (4,))]).var_index()
        {'x': 0, 'y': 1}
        """
        return self._index

    def to_dict(self) -> dict:
        """Return the JSON form of this rank.

        Examples
        --------
        >>> d = Rank(vars=[Var("x", (4,))], ops=[Op("relu_0", "relu")], rank=1).to_dict()
        >>> d["rank"], d["stage"], [v["name"] for v in d["vars"]], [o["id"] for o in d["ops"]]
        (1, None, ['x'], ['relu_0'])
        """
        return {
            "rank": self.rank,
            "stage": self.stage,
            "vars": [v.to_dict() for v in self.vars],
            "ops": [o.to_dict() for o in self.ops],
        }


_VAR_KEYS = {"name", "shape", "dtype", "persistable"}
_OP_KEYS = {"id", "type", "inputs", "outputs", "op_role", "ring_id", "peer", "cost", "desc_id"}


def _var_kwargs(d) -> dict:
    if not isinstance(d, Mapping):
        raise TypeError(f"a variable must be a Var or a dict, got {type(d).__name__}")
    if "name" not in d:
        raise ValueError(f"variable dict without 'name': {dict(d)!r}")
    return {k: v for k, v in d.items() if k in _VAR_KEYS}


def _op_kwargs(d) -> dict:
    if not isinstance(d, Mapping):
        raise TypeError(f"an op must be an Op or a dict, got {type(d).__name__}")
    for k in ("id", "type"):
        if k not in d:
            raise ValueError(f"op dict without {k!r}: {dict(d)!r}")
    kw = {k: v for k, v in d.items() if k in _OP_KEYS}
    if kw.get("cost") is None:
        kw["cost"] = 0.0
    return kw


@dataclass(frozen=True)
class Program:
    """A distributed program: one :class:`Rank` per sub-program, in rank order.

    Examples
    --------
    >>> p = Program([Rank(vars=[Var("x", (4,))], ops=[Op("relu_0", "relu", cost=1.0)])])
    >>> len(p.ranks), p.n_ops, Program.from_dict(p.to_dict()) == p
    (1, 1, True)
    """

    ranks: tuple = ()

    def __post_init__(self):
        ranks = []
        for i, r in enumerate(self.ranks):
            if isinstance(r, Rank):
                ranks.append(r)
            elif isinstance(r, Mapping):
                ranks.append(
                    Rank(
                        vars=[
                            v
                            for v in r.get("vars", ())
                            # the reference adds this variable itself (B13); we do not
                            if not (isinstance(v, Mapping) and v.get("added_by_reference"))
                        ],
                        ops=r.get("ops", ()),
                        rank=int(r.get("rank", i)),
                        stage=r.get("stage"),
                    )
                )
            else:
                raise TypeError(f"ranks[{i}] must be a Rank or a dict, got {type(r).__name__}")
        object.__setattr__(self, "ranks", tuple(ranks))

    @property
    def n_ops(self) -> int:
        """Total number of ops over all ranks."""
        return sum(len(r.ops) for r in self.ranks)

    @classmethod
    def from_dict(cls, data) -> Program:
        """Build from ``{"ranks": [...]}``, a list of rank dicts, or a single rank dict.

        Parameters
        ----------
        data : dict or list
            Rank dicts hold ``vars`` (dicts with ``name, shape, dtype, persistable``) and
            ``ops`` (dicts with ``id, type, inputs, outputs, op_role, ring_id, peer, cost,
            desc_id``), as in the case JSON format.

        Returns
        -------
        Program
        """
        if isinstance(data, Program):
            return data
        if isinstance(data, Mapping):
            if "ranks" in data:
                ranks = data["ranks"]
                if ranks is None:
                    raise ValueError("this file has no ranks (ranks_omitted)")
            elif "ops" in data or "vars" in data:
                ranks = [data]
            else:
                raise ValueError("program dict needs 'ranks' or 'ops'/'vars'")
        elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
            ranks = list(data)
        else:
            raise TypeError(f"cannot build a Program from {type(data).__name__}")
        return cls(ranks=tuple(ranks))

    def to_dict(self) -> dict:
        """Return ``{"ranks": [...]}`` in the case JSON layout.

        Examples
        --------
        >>> p = Program([Rank(vars=[Var("x", (4,))], ops=[Op("relu_0", "relu", cost=1.0)])])
        >>> d = p.to_dict()
        >>> list(d), d["ranks"][0]["ops"][0]["cost"]
        (['ranks'], 1.0)
        """
        return {"ranks": [r.to_dict() for r in self.ranks]}

    @classmethod
    def load(cls, path) -> Program:
        """Read a program (or a whole case file) from JSON."""
        with open(Path(path), encoding="utf-8") as fh:
            return cls.from_dict(json.load(fh))

    def save(self, path) -> None:
        """Write the program as compact JSON (readable back by :meth:`load`).

        Examples
        --------
        >>> import os, tempfile
        >>> p = Program([Rank(vars=[Var("x", (4,))], ops=[Op("relu_0", "relu", cost=1.0)])])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     p.save(os.path.join(tmp, "p.json"))
        ...     Program.load(os.path.join(tmp, "p.json")) == p
        True
        """
        with open(Path(path), "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, separators=(",", ":"))
