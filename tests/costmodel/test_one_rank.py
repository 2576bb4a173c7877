"""The encoder's one-pass path (one rank, no communication) against its general path.

``encode`` takes the one-pass path (``_one_rank``) whenever it accepts the program; the
general path (``encode._encode_general``) is the reference: every field, dtype, value and
flag must be the same, and input the one-pass path refuses must give the general path's
result or error.
"""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel._one_rank import one_rank
from fastsched.costmodel.encode import _encode_general, encode

from ._shared import case_paths, need_cases

NAMES = ["x", "y", "w", "x@GRAD", "lr"]


def _same(a, b):
    for f in a._fields:
        x, y = getattr(a, f), getattr(b, f)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and x.flags.writeable == y.flags.writeable, f
            assert np.array_equal(x, y), f
        elif f != "cache":
            assert x == y, f


@st.composite
def programs(draw):
    nv = draw(st.integers(0, 5))
    vs = []
    for name in NAMES[:nv]:
        v = {"name": name}
        if draw(st.booleans()):
            v["shape"] = draw(st.lists(st.integers(-1, 5), max_size=3))
        if draw(st.booleans()):
            v["dtype"] = draw(st.sampled_from(["float32", "float16", "int64", "bool"]))
        if draw(st.booleans()):
            v["persistable"] = draw(st.booleans())
        if draw(st.integers(0, 5)) == 0:
            v["added_by_reference"] = True
        vs.append(v)
    known = [v["name"] for v in vs if not v.get("added_by_reference")]
    ops = []
    for i in range(draw(st.integers(0, 6))):
        op = {"id": f"op{i}", "type": draw(st.sampled_from(["relu", "matmul", "adam"]))}
        for kind in ("inputs", "outputs"):
            if known and draw(st.booleans()):
                slots = st.sampled_from(["X", "Y", "LearningRate"])
                op[kind] = draw(
                    st.lists(st.tuples(slots, st.lists(st.sampled_from(known), max_size=2)).map(list), max_size=3)
                )
        for key in ("op_role", "ring_id", "desc_id", "peer"):
            if draw(st.booleans()):
                op[key] = draw(st.none() | st.integers(0, 2))
        if draw(st.booleans()):
            op["cost"] = draw(st.none() | st.integers(0, 3) | st.sampled_from([0.5, 0.125]))
        ops.append(op)
    return {"ranks": [{"vars": vs, "ops": ops}]}


def _both(prog):
    # (result or exception type and message) of the general path and of encode
    out = []
    for f in (lambda: _encode_general(prog, None, None), lambda: encode(prog)):
        try:
            out.append(f())
        except (TypeError, ValueError) as e:
            out.append(_Error(type(e), str(e)))
    return out


class _Error(tuple):
    # an exception's type and message (compared as a pair)
    def __new__(cls, kind, message):
        return super().__new__(cls, (kind, message))


@settings(max_examples=60, deadline=None)
@given(programs())
def test_one_pass_equals_general(prog):
    ref, got = _both(prog)
    if isinstance(ref, _Error):  # e.g. a cycle: the one-pass path declines, the error is the general path's
        assert one_rank(prog) is None and got == ref
    else:
        _same(got, ref)


BAD = [
    ("a non-str name", lambda r: r["vars"].__setitem__(0, {"name": 3})),
    ("an unknown variable", lambda r: r["ops"][0].__setitem__("inputs", [["X", ["nope"]]])),
    ("a duplicate variable", lambda r: r["vars"].append({"name": "x"})),
    ("a duplicate op id", lambda r: r["ops"].append(dict(r["ops"][0]))),
    ("a bool cost", lambda r: r["ops"][0].__setitem__("cost", True)),
    ("a negative cost", lambda r: r["ops"][0].__setitem__("cost", -1.0)),
    ("a nan cost", lambda r: r["ops"][0].__setitem__("cost", float("nan"))),
    ("a bool shape entry", lambda r: r["vars"][0].__setitem__("shape", [True])),
    ("a shape entry below -1", lambda r: r["vars"][0].__setitem__("shape", [-2])),
    ("an unknown dtype", lambda r: r["vars"][0].__setitem__("dtype", "float7")),
    ("a dtype alias", lambda r: r["vars"][0].__setitem__("dtype", "fp16")),
    ("a str op_role", lambda r: r["ops"][0].__setitem__("op_role", "1")),
    ("a bare slot name", lambda r: r["ops"][0].__setitem__("outputs", [["Out", "y"]])),
    ("dict slots", lambda r: r["ops"][0].__setitem__("outputs", {"Out": ["y"]})),
    ("a non-str slot", lambda r: r["ops"][0].__setitem__("outputs", [[1, ["y"]]])),
    ("an empty op type", lambda r: r["ops"][0].__setitem__("type", "")),
    ("a communication op", lambda r: r["ops"][0].__setitem__("type", "c_allreduce_sum")),
    ("a cycle", lambda r: r["ops"].insert(0, {"id": "r", "type": "relu", "inputs": [["X", ["y"]]]})),
    ("a product past 2**53", lambda r: r["vars"][0].__setitem__("shape", [1 << 30, 1 << 30])),
]


@pytest.mark.parametrize("what, change", BAD, ids=[b[0] for b in BAD])
def test_declined_input_gets_the_general_path(what, change):
    rank = {
        "vars": [{"name": "x", "shape": [2]}, {"name": "y", "shape": [-1, 2]}],
        "ops": [{"id": "a", "type": "relu", "inputs": [["X", ["x"]]], "outputs": [["Out", ["y"]]], "cost": 1.0}],
    }
    assert one_rank({"ranks": [rank]}) is not None
    change(rank)
    prog = {"ranks": [rank]}
    assert one_rank(prog) is None, what
    ref, got = _both(prog)
    if isinstance(ref, _Error):
        assert got == ref
    else:
        _same(got, ref)


def test_shared_cases_one_pass_equals_general():
    need_cases()
    taken = 0
    for p in case_paths():
        prog = {"ranks": json.loads(p.read_text())["ranks"]}
        taken += one_rank(prog) is not None
        _same(encode(prog), _encode_general(prog, None, None))
    assert taken >= 10  # the one-rank cases without communication take the one-pass path
