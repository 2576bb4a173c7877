"""Parallel-strategy search: the kernel's best equals a brute-force loop; bad input."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.cli import main
from fastsched.costmodel._search import config_cost
from fastsched.costmodel.cluster import Cluster
from fastsched.costmodel.search import RECOMPUTE, Transformer, enumerate_configs, search
from fastsched.costmodel.search import SCHEDULE_NAMES as SCHEDULES

from . import naive


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([4, 6, 8, 12, 16]),
    st.sampled_from([256, 512, 1024]),
    st.sampled_from([4, 8, 16]),
    st.sampled_from([8, 16, 32, 64]),
    st.sampled_from([16, 24, 48, 80]),
    st.sampled_from([2.0, 25.0, 300.0]),
)
def test_best_equals_brute_force(layers, hidden, heads, gpus, mem, inter):
    model = Transformer(layers=layers, hidden=hidden * 4, heads=heads, seq=1024, vocab=32000, global_batch=64)
    cluster = Cluster(gpus=gpus, gpus_per_node=8, memory_gib=mem, flops=100e12, inter_bandwidth=inter)
    n, best, t_best, n_fit = naive.search_brute_force(model, cluster, config_cost.py_func)
    assert enumerate_configs(model, cluster).shape[0] == n
    if best is None:
        with pytest.raises(ValueError, match="fits no configuration"):
            search(model, cluster)
        return
    r = search(model, cluster)
    assert r.n_evaluated == n and len(r) == n_fit
    assert tuple(r.configs[0].tolist()) == best
    assert r.costs[0, 0] == pytest.approx(t_best, rel=1e-12)
    assert (r.costs[1:, 0] >= r.costs[:-1, 0]).all()
    assert (r.costs[:, -1] <= cluster.memory_bytes).all()


def test_175b_on_1024_gpus():
    m = Transformer(layers=96, hidden=12288, heads=96, seq=2048, vocab=51200, global_batch=1536)
    r = search(m, Cluster(gpus=1024, memory_gib=80, flops=150e12))
    assert r.n_evaluated >= 10_000
    b = r.best
    assert b["tp"] * b["pp"] * b["dp"] == 1024
    # more memory never makes the best configuration slower
    assert search(m, Cluster(gpus=1024, memory_gib=160, flops=150e12)).best["time_ms"] <= b["time_ms"]
    assert b["time_ms"] == pytest.approx(
        b["compute_ms"] + b["bubble_ms"] + b["tp_comm_ms"] + b["pp_comm_ms"] + b["dp_comm_ms"]
    )


def test_breakdown_properties():
    m = Transformer(layers=8, hidden=1024, heads=8, seq=512, vocab=1000, global_batch=32)
    c = Cluster(gpus=8, memory_gib=1000)
    rows = search(m, c).rows()
    by = {
        (
            x["tp"],
            x["pp"],
            x["micro_batch"],
            x["schedule"],
            x["virtual_stages"],
            x["recompute"],
            x["zero"],
            x["sequence_parallel"],
        ): x
        for x in rows
    }
    a = by[(1, 8, 1, "1f1b", 1, "none", 0, False)]
    g = by[(1, 8, 1, "gpipe", 1, "none", 0, False)]
    assert a["time_ms"] == g["time_ms"] and g["activation_bytes"] > a["activation_bytes"]
    full = by[(1, 8, 1, "1f1b", 1, "full", 0, False)]
    assert full["compute_ms"] > a["compute_ms"] and full["activation_bytes"] < a["activation_bytes"]
    z3 = by[(1, 1, 4, "1f1b", 1, "none", 3, False)] if (1, 1, 4, "1f1b", 1, "none", 3, False) in by else None
    z0 = by.get((1, 1, 4, "1f1b", 1, "none", 0, False))
    if z3 and z0:
        assert z3["state_bytes"] < z0["state_bytes"] and z3["dp_comm_ms"] > z0["dp_comm_ms"]


def test_bad_input():
    m = dict(layers=96, hidden=12288, heads=96, seq=2048, vocab=51200, global_batch=1536)
    with pytest.raises(ValueError, match="fits no configuration.*GiB per GPU.*memory_gib"):
        search(m, Cluster(gpus=8, memory_gib=16))
    with pytest.raises(ValueError, match="virtual_stages=5 does not divide model.layers=96"):
        search(m, Cluster(gpus=64), virtual_stages=[5])
    with pytest.raises(ValueError, match="model.layers"):
        search(dict(m, layers=0), Cluster())
    with pytest.raises(ValueError, match="model.hidden"):
        search(dict(m, hidden=100), Cluster())
    with pytest.raises(ValueError, match="cluster.inter_bandwidth"):
        Cluster(inter_bandwidth=-1)
    with pytest.raises(ValueError, match="cluster.memory_gib"):
        Cluster(memory_gib=0)
    with pytest.raises(ValueError, match="schedules"):
        search(m, Cluster(gpus=64), schedules=["2f2b"])
    with pytest.raises(ValueError, match="unknown field"):
        search(dict(m, depth=3), Cluster())
    with pytest.raises(ValueError, match="no parallel configuration"):
        search(dict(m, global_batch=7, layers=7), Cluster(gpus=6, gpus_per_node=6))


def test_plan_cli(tmp_path, capsys):
    model = tmp_path / "m.json"
    model.write_text(json.dumps(dict(layers=24, hidden=2304, heads=24, seq=2048, vocab=51200, global_batch=512)))
    assert main(["plan", str(model), "--gpus", "32", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "tp" in out and "step ms" in out
    assert main(["plan", str(model), "--gpus", "32", "--json", "--top", "2"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["configs"]) == 2 and d["configs"][0]["time_ms"] <= d["configs"][1]["time_ms"]
    assert main(["plan", str(model), "--gpus", "8", "--memory-gib", "1"]) == 2
    assert "fits no configuration" in capsys.readouterr().err


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 48),
    st.sampled_from([1, 2, 4, 6, 8, 16, 32]),
    st.integers(1, 96),
    st.sampled_from([1, 4, 8]),
    st.integers(1, 200),
    st.integers(1, 20),
    st.lists(st.sampled_from(SCHEDULES), min_size=1, max_size=4, unique=True),
    st.one_of(st.none(), st.lists(st.integers(2, 6), max_size=3)),
    st.lists(st.sampled_from(["none", "selective", "full"]), min_size=1, max_size=3, unique=True),
    st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True),
)
def test_configuration_table_equals_plain_loops(layers, heads, gpus, gpn, batch, mb, scheds, vstages, rec, zero):
    m = Transformer(layers=layers, hidden=heads * 8, heads=heads, seq=16, vocab=100, global_batch=batch)
    c = Cluster(gpus=gpus, gpus_per_node=gpn)
    if vstages is not None:
        vstages = [v for v in vstages if layers % v == 0]
    got = enumerate_configs(m, c, schedules=scheds, virtual_stages=vstages, recompute=rec, zero=zero,
                            max_micro_batch=mb)  # fmt: skip
    want = naive.enumerate_configs_reference(
        m, c, [SCHEDULES.index(x) for x in scheds], vstages, [RECOMPUTE.index(x) for x in rec], zero, mb
    )
    assert got.dtype == np.int64 and [tuple(r) for r in got.tolist()] == want
