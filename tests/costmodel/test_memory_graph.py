"""Op graph construction and memory kernels vs the plain references."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel import Program, encode, estimate_cost
from fastsched.costmodel._edges import op_edges_and_ranges
from fastsched.costmodel._memory import static_and_peak

from . import naive


@st.composite
def programs(draw):
    nv = draw(st.integers(1, 10))
    pers = draw(st.lists(st.booleans(), min_size=nv, max_size=nv))
    n_ops = draw(st.integers(0, 12))
    reads, writes = [], []
    written = set()
    for _ in range(n_ops):
        # read only persistable vars, never-written feeds, or vars already written
        ok = [v for v in range(nv) if pers[v] or v in written]
        rd = draw(st.lists(st.sampled_from(ok), max_size=3)) if ok else []
        wr = draw(st.lists(st.integers(0, nv - 1), max_size=2))
        wr = [v for v in wr if v in written or pers[v] or v not in rd]
        written.update(wr)
        reads.append(rd)
        writes.append(wr)
    size = draw(st.lists(st.integers(1, 100), min_size=nv, max_size=nv))
    return nv, pers, reads, writes, [float(s) for s in size]


def csr(lists):
    ptr = np.zeros(len(lists) + 1, np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    idx = np.array([v for x in lists for v in x], np.int64)
    return ptr, idx


@settings(max_examples=120, deadline=None)
@given(programs())
def test_edges_ranges_memory_match_oracle(p):
    nv, pers, reads, writes, size = p
    ip, ii = csr(reads)
    op_, oi = csr(writes)
    src, dst, first, last, bad, _ = op_edges_and_ranges(len(reads), nv, ip, ii, op_, oi, np.array(pers, np.bool_))
    edges, f2, l2 = naive.op_graph(reads, writes, pers)
    assert bad == -1
    assert set(zip(src.tolist(), dst.tolist(), strict=False)) == edges
    assert first.tolist() == f2 and last.tolist() == l2
    got = static_and_peak(first, last, np.array(size), np.array(pers, np.bool_), len(reads))
    assert got == naive.memory(f2, l2, size, pers, len(reads))


def chain_program():
    return {
        "vars": [
            {"name": "x", "shape": [256], "dtype": "float32"},
            {"name": "w", "shape": [256], "dtype": "float16", "persistable": True},
            {"name": "a", "shape": [256], "dtype": "float32"},
            {"name": "b", "shape": [256], "dtype": "float32"},
            {"name": "c", "shape": [256], "dtype": "int64"},
        ],
        "ops": [
            {
                "id": "mul_0",
                "type": "mul",
                "inputs": [["X", ["x"]], ["Y", ["w"]]],
                "outputs": [["Out", ["a"]]],
                "cost": 1.0,
            },
            {"id": "relu_1", "type": "relu", "inputs": [["X", ["a"]]], "outputs": [["Out", ["b"]]], "cost": 1.0},
            {"id": "cast_2", "type": "cast", "inputs": [["X", ["b"]]], "outputs": [["Out", ["c"]]], "cost": 1.0},
        ],
    }


def test_liveness_frees_on_last_use():
    cost = estimate_cost(chain_program(), mem_unit="bytes")
    assert cost.static_mem == (512.0,)  # float16 parameter (B9)
    # peak at op 0: x + a live (x is freed after op 0), then a+b, then b+c (c is int64)
    assert cost.peak_mem == (512.0 + max(2048, 2048, 1024 + 2048),)
    el = estimate_cost(chain_program(), mem_unit="elements")
    assert el.static_mem == (256.0,) and el.peak_mem == (256.0 + 512,)


def test_all_slot_variables_connected():
    # B10: "sum" reads two variables; both producers are predecessors
    prog = {
        "vars": [{"name": n, "shape": [4]} for n in ("a", "b", "s")],
        "ops": [
            {"id": "fa", "type": "fill_constant", "outputs": [["Out", ["a"]]], "cost": 1.0},
            {"id": "fb", "type": "fill_constant", "outputs": [["Out", ["b"]]], "cost": 2.0},
            {"id": "sum_2", "type": "sum", "inputs": [["X", ["a", "b"]]], "outputs": [["Out", ["s"]]], "cost": 1.0},
        ],
    }
    for p in (prog, Program.from_dict(prog)):  # dicts and Program objects encode alike
        g = encode(p)
        assert sorted(zip(g.edge_src.tolist(), g.edge_dst.tolist(), strict=False)) == [(0, 2), (1, 2)]
