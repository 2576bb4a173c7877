"""The GPU catalogue: names, aliases, user types, and the places that read it."""

import json

import pytest

from fastsched.catalog import GPUS, canonical_name, gpu_type, known_names, trace_name, with_types
from fastsched.costmodel.cluster import Cluster
from fastsched.sim.inputs.cluster_spec import parse_cluster

REQUIRED = ["t4", "v100", "a100-40gb", "a100-80gb", "rtx2080ti", "quadro-rtx6000", "l4", "l40s", "h100", "h200",
            "b200", "mi300x"]  # fmt: skip
SIA = {"aws": "t4", "azure": "v100", "dgx-ext": "a100-40gb", "rtx": "rtx2080ti", "quad": "quadro-rtx6000"}


def test_the_issue_types_are_there_with_sane_numbers():
    for name in REQUIRED:
        g = GPUS[name]
        assert g.bf16_tflops >= g.tf32_tflops >= g.fp32_tflops > 0
        assert g.memory_gib > 0 and g.memory_gbps > 0 and g.intra_gbps > 0 and g.network_gbps > 0
        assert g.gpus_per_node >= 1


def test_datasheet_orderings():
    # Newer generations are faster and bigger: properties of the datasheets, not of our numbers.
    order = ["v100", "a100-40gb", "h100", "b200"]
    assert [GPUS[n].bf16_tflops for n in order] == sorted(GPUS[n].bf16_tflops for n in order)
    assert (
        GPUS["h200"].memory_gib > GPUS["h100"].memory_gib
        and GPUS["a100-80gb"].memory_gbps > GPUS["a100-40gb"].memory_gbps
    )


@pytest.mark.parametrize("suffix, name", sorted(SIA.items()))
def test_sia_suffixes_are_aliases_and_trace_names(suffix, name):
    assert canonical_name(suffix) == name and canonical_name(name.upper()) == name
    assert trace_name(name) == suffix and trace_name(suffix) == suffix


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown GPU type 'h800'; known types: \[.*'h100'.*'t4'"):
        gpu_type("h800")
    with pytest.raises(TypeError):
        gpu_type(3)
    assert set(REQUIRED) | set(SIA) <= set(known_names())


def test_user_types_add_and_override():
    cat = with_types({"aws": {"gpus_per_node": 8}, "tpu-ish": {"base": "h100", "bf16_tflops": 1000.0}})
    assert cat["t4"].gpus_per_node == 8 and GPUS["t4"].gpus_per_node == 4  # the built-ins stay untouched
    assert cat["tpu-ish"].bf16_tflops == 1000.0 and cat["tpu-ish"].trace_name == "tpu-ish"
    full = {f: 1.0 for f in ("bf16_tflops", "tf32_tflops", "fp32_tflops", "memory_gib", "memory_gbps", "intra_gbps",
                             "network_gbps")}  # fmt: skip
    assert with_types({"new": {**full, "gpus_per_node": 2}})["new"].gpus_per_node == 2
    with pytest.raises(ValueError, match="needs"):
        with_types({"new": {"bf16_tflops": 1.0}})
    with pytest.raises(ValueError, match=r"gpu_types.h100.memory_gib must be a positive"):
        with_types({"h100": {"memory_gib": -1}})
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['colour'\]"):
        with_types({"h100": {"colour": "green"}})
    with pytest.raises(ValueError, match="base: unknown GPU type"):
        with_types({"x": {"base": "nope"}})


def test_simulator_cluster_reads_catalogue_names_as_trace_suffixes():
    spec = parse_cluster("6xt4,3xrtx2080ti,2xa100-40gb")
    assert spec == parse_cluster("6xaws,3xrtx,2xdgx-ext") and str(spec) == "6xaws,3xrtx,2xdgx-ext"
    h = parse_cluster("4xh100")
    assert h.types == ("h100",) and h.total_gpus == 32 and str(h) == "4xh100"
    assert parse_cluster("1xa100").types == ("dgx-ext",)


def test_cluster_file_user_types(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[gpu_types.mygpu]\nbase = "l4"\ngpus_per_node = 2\n\n[[group]]\ntype = "mygpu"\ncount = 3\n'
                 '\n[[group]]\ntype = "t4"\ncount = 1\n')  # fmt: skip
    spec = parse_cluster(f)
    assert spec.gpus_by_type == {"mygpu": 6, "aws": 4}
    j = tmp_path / "c.json"
    j.write_text(json.dumps({"gpu_types": {"h100": {"gpus_per_node": 4}}, "groups": [{"type": "h100", "count": 2}]}))
    assert parse_cluster(j).total_gpus == 8


def test_costmodel_cluster_from_catalogue():
    c = Cluster.from_dict({"gpu": "h200", "gpus": 16})
    assert c.memory_gib == 141.0 and c.gpus_per_node == 8 and c.inter_bandwidth == 400.0 / 8
    assert Cluster.from_dict({"gpu": "h200", "gpus": 16, "memory_gib": 100}).memory_gib == 100
    with pytest.raises(ValueError, match="unknown GPU type 'nope'"):
        Cluster.from_dict({"gpu": "nope"})


def test_plan_reads_the_catalogue(tmp_path, capsys):
    from fastsched.cli import main

    model = tmp_path / "m.json"
    model.write_text('{"layers": 4, "hidden": 256, "heads": 4, "seq": 256, "vocab": 1024, "global_batch": 16}')
    assert main(["plan", str(model), "--gpus", "8", "--gpu", "h200", "--top", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cluster"]["memory_gib"] == 141.0 and out["cluster"]["gpus_per_node"] == 8
    assert main(["plan", str(model), "--gpus", "8", "--gpu", "h800"]) == 2
    assert "unknown GPU type 'h800'" in capsys.readouterr().err


def test_gemm_model_constants_of_the_table():
    for name in REQUIRED:
        g = GPUS[name]
        assert g.sms > 0
        # a measured ceiling is below the datasheet peak; unmeasured types take a share of it
        assert 0 < g.matmul_ceiling_tflops("bf16") < g.bf16_tflops
        assert g.matmul_ceiling_tflops("fp32") < g.fp32_tflops
    assert GPUS["h100"].matmul_ceiling_tflops("bf16") == 794.5 and GPUS["a100-80gb"].sms == 108


def test_user_types_and_the_gemm_model_constants():
    full = {f: 10.0 for f in ("bf16_tflops", "tf32_tflops", "fp32_tflops", "memory_gib", "memory_gbps", "intra_gbps",
                              "network_gbps")}  # fmt: skip
    new = with_types({"new": {**full, "gpus_per_node": 2}})["new"]
    assert new.sms == 0 and new.matmul_tflops == 0.0  # optional: unknown
    # a new peak on a known base drops the base's measured ceiling (it was measured on the old peak)
    faster = with_types({"x": {"base": "h100", "bf16_tflops": 2000.0}})["x"]
    assert faster.matmul_tflops == 0.0 and faster.sms == 132
    assert with_types({"x": {"base": "h100", "matmul_tflops": 700}})["x"].matmul_tflops == 700.0
    with pytest.raises(ValueError, match=r"gpu_types.x.matmul_tflops must be in \[0, bf16_tflops"):
        with_types({"x": {"base": "h100", "matmul_tflops": 5000.0}})
    with pytest.raises(ValueError, match=r"gpu_types.x.sms must be an integer"):
        with_types({"x": {"base": "h100", "sms": 1.5}})
    c = Cluster.from_gpu(new)
    assert c.sms == 0 and c.matmul_flops == pytest.approx(8e12)  # MATMUL_FRACTION of the peak


def test_the_attention_ceiling_of_the_table_and_of_user_types():
    # published FlashAttention-2 figures (Dao 2023): A100 204.6, H100 335; H200 shares H100's SMs
    assert GPUS["a100-80gb"].attention_tflops == GPUS["a100-40gb"].attention_tflops == 204.6
    assert GPUS["h100"].attention_tflops == GPUS["h200"].attention_tflops == 335.0
    for name in REQUIRED:
        g = GPUS[name]
        assert 0 < g.attention_ceiling_tflops("bf16") < g.matmul_ceiling_tflops("bf16")
        if g.attention_tflops == 0:  # unpublished: A100's ratio of the matmul ceiling
            ratio = g.attention_ceiling_tflops("bf16") / g.matmul_ceiling_tflops("bf16")
            assert ratio == pytest.approx(204.6 / 271.2)
    new = with_types({"new": {"base": "h100", "memory_gib": 96}})["new"]
    assert new.attention_tflops == 335.0  # kept: the compute did not change
    faster = with_types({"x": {"base": "h100", "bf16_tflops": 2000.0}})["x"]
    assert faster.attention_tflops == 0.0  # measured on the old peak: dropped, like matmul_tflops
    assert with_types({"x": {"base": "h100", "attention_tflops": 400}})["x"].attention_tflops == 400.0
    for bad in (-1.0, 5000.0, True, "fast"):
        with pytest.raises(ValueError, match=r"gpu_types.x.attention_tflops must be in \[0, bf16_tflops"):
            with_types({"x": {"base": "h100", "attention_tflops": bad}})
