"""The encoder's column passes against plain per-item Python."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel.encode import _contains, _flat_slots, _shape_arrays

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
