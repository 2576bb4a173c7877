"""Program IO, comm costing, and the ``fastsched cost`` command."""

import json

import pytest

from fastsched.cli import main
from fastsched.costmodel import Program, estimate_cost, load_case, transformer_stack
from fastsched.costmodel.graph import DEFAULT_BANDWIDTH

from ._shared import CASES


def test_roundtrip(tmp_path):
    p = transformer_stack(2)
    f = tmp_path / "p.json"
    p.save(f)
    q = Program.load(f)
    assert q == p
    assert estimate_cost(q).to_dict() == estimate_cost(p).to_dict()


def test_comm_costs_and_bwd_comm():
    ranks = []
    for _r in range(4):
        ranks.append(
            {
                "vars": [{"name": "g@GRAD", "shape": [1024]}, {"name": "a", "shape": [1024]}],
                "ops": [
                    {
                        "id": "fill_constant_0",
                        "type": "fill_constant",
                        "outputs": [["Out", ["g@GRAD"]]],
                        "cost": 0.0,
                        "op_role": 1,
                    },
                    {
                        "id": "all_reduce_1",
                        "type": "all_reduce",
                        "ring_id": 3,
                        "inputs": [["x", ["g@GRAD"]]],
                        "outputs": [["out", ["g@GRAD"]]],
                    },
                    {"id": "recv_v2_2", "type": "recv_v2", "peer": 1, "outputs": [["Out", ["a"]]]},
                ],
            }
        )
    c = estimate_cost(ranks)
    ar = 4096 * 2 * 3 / (4 * DEFAULT_BANDWIDTH)  # ring of 4 ranks (B11)
    rv = 4096 / DEFAULT_BANDWIDTH  # recv costed from its output (B11)
    assert c.bwd_time[0] == pytest.approx(ar)  # gradient all_reduce is backward (B3)
    assert c.fwd_time[0] == pytest.approx(rv)
    one = estimate_cost(ranks[:1])  # a one-rank ring costs 0 (no division by zero)
    assert one.bwd_time == (0.0,)
    fast = estimate_cost(ranks, cluster={"bandwidth": 2 * DEFAULT_BANDWIDTH})
    assert fast.bwd_time[0] == pytest.approx(ar / 2)


def test_standalone_cost_keys():
    p = {"vars": [{"name": "x"}], "ops": [{"id": "relu_0", "type": "relu", "desc_id": 7, "outputs": [["Out", ["x"]]]}]}
    for key in (7, "relu_0", "relu"):  # B14
        assert estimate_cost(p, standalone_cost_data=[{key: 0.25}]).runtime == 0.25


def test_overhead_once_per_op():
    p = transformer_stack(1)
    a = estimate_cost(p)
    b = estimate_cost(p, opcall_overhead=1 / 64)
    assert b.runtime == a.runtime + p.n_ops / 64


def test_cli_table_and_json(capsys, tmp_path):
    if not CASES.is_dir():
        pytest.skip("shared cases absent")
    path = str(CASES / "pp_tfm_S2_dp2.json")
    assert main(["cost", path]) == 0
    out = capsys.readouterr().out
    assert "runtime" in out and "pipeline time by microbatches" in out
    want = load_case(path).results["pipeline_time_stage_mapped_by_microbatch"]
    assert main(["cost", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pipeline_time_by_microbatch"]["4"] == want["4"]
    assert main(["cost", path, "--json", "--microbatches", "16", "--mem-unit", "elements"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["runtime"] == want["16"]
    assert d["pipeline_time_by_microbatch"] == {"16": want["16"]}  # --microbatches replaces the list
    assert d["static_mem"] == load_case(path).results["static_mem"]


def test_cli_errors(capsys, tmp_path):
    assert main(["cost", str(tmp_path / "missing.json")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"ranks": [{"vars": [], "ops": [{"id": "a", "type": "relu", "inputs": [["X", ["nope"]]]}]}]})
    )
    assert main(["cost", str(bad)]) == 2
    assert "unknown variable" in capsys.readouterr().err
    assert main(["cost", str(bad), "--microbatches", "0"]) == 2


def test_cli_timeline(tmp_path):
    pytest.importorskip("matplotlib")
    if not CASES.is_dir():
        pytest.skip("shared cases absent")
    out = tmp_path / "t.png"
    assert main(["cost", str(CASES / "pp_tfm_S2_dp2.json"), "--timeline", str(out)]) == 0
    assert out.stat().st_size > 1000


def test_cli_schedules_units_and_deviations(capsys, tmp_path):
    if not CASES.is_dir():
        pytest.skip("shared cases absent")
    path = str(CASES / "ut_dist_dp_mp_pp.json")
    assert main(["cost", path, "--schedule", "1f1b", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["pipeline"]["schedule"] == "1f1b" and 0 < d["pipeline"]["bubble_fraction"] < 1
    assert {"B3", "B7", "B11", "units"} <= set(d["deviations"])
    seed_units = d["runtime"]
    # the seed's constant divides bytes: real units (GB/s) make communication 1e6-ish cheaper
    assert main(["cost", path, "--bandwidth", "32.768", "--json"]) == 0
    real = json.loads(capsys.readouterr().out)
    assert "units" not in real["deviations"]
    assert real["runtime"] < seed_units / 1000
    cl = tmp_path / "c.json"
    cl.write_text(json.dumps({"gpus": 8, "gpus_per_node": 2, "inter_bandwidth": 1.0}))
    assert main(["cost", path, "--cluster", str(cl), "--json"]) == 0
    slow_inter = json.loads(capsys.readouterr().out)
    assert slow_inter["runtime"] > real["runtime"]  # rings cross nodes of 2 GPUs on a slow link
    assert main(["cost", path, "--microbatches", "1000000000"]) == 2
    assert "simulation limit" in capsys.readouterr().err
    assert main(["cost", path, "--schedule", "3f3b"]) == 2
    assert "schedule" in capsys.readouterr().err
    cl.write_text(json.dumps({"gpus": 8, "inter_bandwidth": 0}))
    assert main(["cost", path, "--cluster", str(cl)]) == 2
    assert "inter_bandwidth" in capsys.readouterr().err


def test_cluster_units_match_formula():
    from fastsched.costmodel.cluster import Cluster

    ranks = []
    for _ in range(4):
        ranks.append(
            {
                "vars": [{"name": "g@GRAD", "shape": [1 << 20]}],
                "ops": [{"id": "ar", "type": "c_allreduce_sum", "ring_id": 0, "inputs": [["X", ["g@GRAD"]]]}],
            }
        )
    c = Cluster(gpus=4, gpus_per_node=2, intra_bandwidth=100.0, inter_bandwidth=10.0, inter_latency_us=20.0)
    got = estimate_cost(ranks, cluster=c).bwd_time[0]
    nbytes = 4 * (1 << 20)
    # ring of 4 across 2 nodes: inter link, 2(n-1)/n of the bytes in 2(n-1) steps, in ms
    assert got == pytest.approx(nbytes * 2 * 3 / 4 / (10.0e9) * 1e3 + 2 * 3 * 20e-3)
    one_node = Cluster(gpus=4, gpus_per_node=4, intra_bandwidth=100.0, intra_latency_us=0.0)
    assert estimate_cost(ranks, cluster=one_node).bwd_time[0] == pytest.approx(nbytes * 1.5 / 100e9 * 1e3)
