"""The encoder's column passes against plain per-item Python."""

import functools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel._edges import FACT_B4, FACT_B8, FACT_B9_DTYPE, FACT_B10, rank_columns
from fastsched.costmodel._read import _flat_slots
from fastsched.costmodel.encode import _contains, _shape_arrays, encode

dims = st.integers(-1, 9) | st.sampled_from([1 << 21, 3 << 20, (1 << 19) - 1, 1000003])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(dims, max_size=6), max_size=8))
def test_shape_arrays(shapes):
    fixed, ndyn = _shape_arrays(shapes)
    assert fixed.tolist() == [float(math.prod(d for d in s if d != -1)) for s in shapes]
    assert ndyn.tolist() == [sum(d == -1 for d in s) for s in shapes]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab@GRD\n", max_size=8), max_size=8))
def test_contains(names):
    assert _contains(names, "@GRAD").tolist() == ["@GRAD" in n for n in names]


names = st.lists(st.sampled_from(["x", "y", "z"]), max_size=3)
slot = st.sampled_from(["X", "Y", "LearningRate"])
as_lists = st.lists(st.tuples(slot, names).map(list), max_size=3)
as_dicts = st.dictionaries(slot, names, max_size=3)


@settings(max_examples=60, deadline=None)
@given(st.lists(as_lists | as_dicts | st.none(), max_size=6))
def test_flat_slots(raw):
    f = _flat_slots("inputs", [f"op{i}" for i in range(len(raw))], raw)
    norm = [list(r.items()) if isinstance(r, dict) else (r or []) for r in raw]
    assert f.names == [n for r in norm for _, ns in r for n in ns]
    assert f.cnt.tolist() == [sum(len(ns) for _, ns in r) for r in norm]
    assert f.nslots.tolist() == [len(r) for r in norm]
    assert f.slot_names == [s for r in norm for s, _ in r]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(dims, max_size=6), min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, 2), st.booleans(), st.booleans()), max_size=6),
    st.data(),
)
def test_rank_columns(shapes, ops, data):
    # the one-call kernel of the encoder against plain per-item Python
    nv = len(shapes)
    reads = [data.draw(st.lists(st.integers(0, nv - 1), max_size=3)) for _ in ops]
    grad = data.draw(st.lists(st.booleans(), min_size=nv, max_size=nv))
    dsize = data.draw(st.lists(st.sampled_from([2.0, 4.0]), min_size=nv, max_size=nv))
    role = np.array([r for r, _, _ in ops], np.int64)
    comm = np.array([int(c) for _, c, _ in ops], np.int64)
    optim = np.array([o for _, _, o in ops], np.bool_)
    cnt = np.array([len(r) for r in reads], np.int64)
    idx = np.array([v for r in reads for v in r], np.int64)
    zeros = np.zeros(len(ops), np.int64)
    res = rank_columns(
        cnt,
        idx,
        np.ones(len(ops), np.int64),
        zeros,
        np.zeros(0, np.int64),
        np.ones(len(ops), np.int64),
        np.ones(nv, np.bool_),
        np.array([len(s) for s in shapes], np.int64),
        np.array([d for s in shapes for d in s], np.int64),
        np.array(dsize),
        np.array(grad),
        role,
        comm,
        optim,
    )
    phase, fixed, ndyn, facts = res[2], res[3], res[4], res[11]
    # float64 products left to right (exact below 2**53; the encoder recomputes larger ones exactly)
    assert fixed.tolist() == [
        functools.reduce(lambda a, d: a * float(d), (d for d in s if d != -1), 1.0) for s in shapes
    ]
    assert ndyn.tolist() == [sum(d == -1 for d in s) for s in shapes]
    g = [any(grad[v] for v in r) for r in reads]
    assert phase.tolist() == [2 if o else 1 if (r == 1 or gi) else 0 for (r, _, o), gi in zip(ops, g, strict=True)]
    assert bool(facts & FACT_B4) == any(gi and r != 1 and not c for (r, c, _), gi in zip(ops, g, strict=True))
    assert bool(facts & FACT_B10) == any(len(r) > 1 for r in reads)
    assert bool(facts & FACT_B8) == any(-1 in s for s in shapes)
    assert bool(facts & FACT_B9_DTYPE) == any(x != 4.0 for x in dsize)


def test_encode_exact_products_past_2_53():
    # the kernel's float64 product rounds here; the encoder recomputes it exactly
    shape = [524287, 1000003, 1000003, 3]
    enc = encode({"vars": [{"name": "x", "shape": shape}], "ops": []})
    assert enc.var_fixed.tolist() == [float(math.prod(shape))]
