"""Strategy search over a program with per-op costs: partition and best configuration
against brute force; cases and the CLI; bad input."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.cli import main
from fastsched.costmodel import Cluster, search
from fastsched.costmodel._program_search import balanced_cuts, program_config_cost
from fastsched.costmodel.program_search import ProgramModel
from fastsched.costmodel.search import enumerate_program_configs

from . import naive

costs = st.integers(0, 40).map(lambda k: k / 8)


@settings(max_examples=60, deadline=None)
@given(st.lists(costs, min_size=1, max_size=9), st.integers(1, 9))
def test_balanced_cuts_is_optimal(w, p):
    p = min(p, len(w))
    ptr = balanced_cuts(np.array(w), p).tolist()
    best, ref_ptr = naive.balanced_partition(w, p)
    assert ptr[0] == 0 and ptr[-1] == len(w) and all(a < b for a, b in zip(ptr, ptr[1:], strict=False))
    assert max(sum(w[ptr[k] : ptr[k + 1]]) for k in range(p)) == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert ptr == ref_ptr


def _program(n_layers, costs, widths):
    # an MLP-like chain: forward matmul+relu per layer, backward ops, one sgd per weight
    vs = [{"name": "x0", "shape": [-1, widths[0]]}]
    ops = []
    for i in range(n_layers):
        w_in, w_out = widths[i], widths[i + 1]
        vs += [
            {"name": f"w{i}", "shape": [w_in, w_out], "persistable": True},
            {"name": f"h{i}", "shape": [-1, w_out]},
            {"name": f"x{i + 1}", "shape": [-1, w_out]},
        ]
        ops.append(
            {
                "id": f"mm{i}",
                "type": "matmul",
                "inputs": [["X", [f"x{i}"]], ["Y", [f"w{i}"]]],
                "outputs": [["Out", [f"h{i}"]]],
                "cost": costs[2 * i],
            }
        )
        ops.append(
            {
                "id": f"relu{i}",
                "type": "relu",
                "inputs": [["X", [f"h{i}"]]],
                "outputs": [["Out", [f"x{i + 1}"]]],
                "cost": costs[2 * i + 1],
            }
        )
    for i in reversed(range(n_layers)):
        vs.append({"name": f"w{i}@GRAD", "shape": widths[i : i + 2]})
        ops.append(
            {
                "id": f"mmg{i}",
                "type": "matmul_grad",
                "inputs": [["X", [f"x{i}"]]],
                "outputs": [["Y@GRAD", [f"w{i}@GRAD"]]],
                "cost": 2 * costs[2 * i],
                "op_role": 1,
            }
        )
    vs.append({"name": "lr", "shape": [1], "persistable": True})
    for i in range(n_layers):
        ops.append(
            {
                "id": f"sgd{i}",
                "type": "sgd",
                "inputs": [["Param", [f"w{i}"]], ["Grad", [f"w{i}@GRAD"]], ["LearningRate", ["lr"]]],
                "outputs": [["ParamOut", [f"w{i}"]]],
                "cost": 0.125,
                "op_role": 2,
            }
        )
    return {"vars": vs, "ops": ops}


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 4),
    st.data(),
    st.sampled_from([2, 4, 8]),
    st.sampled_from([4, 8, 16]),
    st.sampled_from([1e-4, 1e-3, 1.0]),
    st.sampled_from([2.0, 300.0]),
)
def test_best_equals_brute_force(n_layers, data, gpus, global_batch, mem_gib, inter):
    cs = data.draw(st.lists(costs, min_size=2 * n_layers, max_size=2 * n_layers))
    widths = data.draw(st.lists(st.sampled_from([8, 64, 256]), min_size=n_layers + 1, max_size=n_layers + 1))
    pm = ProgramModel(_program(n_layers, cs, widths), global_batch=global_batch, batch_size=2)
    cluster = Cluster(gpus=gpus, gpus_per_node=4, memory_gib=mem_gib, inter_bandwidth=inter)
    n, best, t_best, n_fit = naive.program_search_brute_force(pm, cluster, program_config_cost.py_func)
    assert enumerate_program_configs(pm, cluster).shape[0] == n
    if best is None:
        with pytest.raises(ValueError, match="fits no configuration"):
            search(pm, cluster)
        return
    r = search(pm, cluster)
    assert r.n_evaluated == n and len(r) == n_fit
    assert tuple(r.configs[0].tolist()) == best
    assert r.costs[0, 0] == pytest.approx(t_best, rel=1e-12)
    assert (r.costs[1:, 0] >= r.costs[:-1, 0]).all()


def test_program_model_reads_forward_ops_and_parameters():
    pm = ProgramModel(_program(3, [1.0] * 6, [4, 8, 8, 2]), global_batch=8, batch_size=2)
    assert pm.fwd_cost.tolist() == [1.0] * 6
    assert pm.param_elems.tolist() == [32.0, 0.0, 64.0, 0.0, 16.0, 0.0]  # first forward reader
    assert pm.act_bytes.tolist() == [64.0, 64.0, 64.0, 64.0, 16.0, 16.0]  # batch 2, float32
    assert pm.bwd_total == 6.0 and pm.optim_total == 0.375
    # one GPU: no pipeline, no data parallelism -> the whole program, m microbatches
    r = search(pm, Cluster(gpus=1))
    assert {row["pp"] for row in r.rows()} == {1}
    best = r.best
    assert best["time_ms"] == pytest.approx(
        8 / 2 * (6.0 + 6.0) / (8 / best["micro_batch"]) * best["microbatches"] + 0.375
    )


def test_shared_case_and_cli(shared_dir, tmp_path, capsys):
    path = shared_dir / "paddle-cases" / "mlp_L16.json"
    if not path.is_file():
        pytest.skip("mlp_L16.json not in ../shared")
    assert main(["plan", str(path), "--gpus", "8", "--global-batch", "64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["evaluated"] >= out["fit"] > 0 and out["configs"][0]["tp"] == 1
    assert main(["plan", str(path), "--gpus", "8", "--global-batch", "64"]) == 0
    assert "program" in capsys.readouterr().out


def test_bad_input():
    prog = _program(2, [1.0] * 4, [4, 4, 4])
    with pytest.raises(ValueError, match="global_batch"):
        ProgramModel(prog, global_batch=0)
    with pytest.raises(ValueError, match="rank"):
        ProgramModel(prog, global_batch=4, rank=3)
    pm = ProgramModel(prog, global_batch=4)
    with pytest.raises(ValueError, match="interleaved"):
        search(pm, Cluster(gpus=2), schedules=["interleaved"])
    with pytest.raises(ValueError, match="virtual_stages"):
        search(pm, Cluster(gpus=2), virtual_stages=[2])
    with pytest.raises(ValueError, match="recompute"):
        search(pm, Cluster(gpus=2), recompute=["selective"])
    with pytest.raises(ValueError, match="fits no configuration"):
        search(pm, Cluster(gpus=2, memory_gib=1e-9))
    with pytest.raises(ValueError, match="global_batch"):
        search(ProgramModel(prog, global_batch=3), Cluster(gpus=8))  # d = 8, 4, 2 (p <= 4 forward ops)
    with pytest.raises(ValueError, match="forward"):
        ProgramModel({"vars": [], "ops": []}, global_batch=1)
