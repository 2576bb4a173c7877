"""Cluster descriptions: strings, files, errors."""

from __future__ import annotations

import json

import pytest

from fastsched.sim.inputs.cluster_spec import GPU_TYPES, ClusterSpec, homogeneous_cluster, parse_cluster


def test_string_spec_types_and_node_ids():
    spec = parse_cluster("6xaws,3xrtx,2xdgx-ext")
    assert spec.gpus_by_type == {"aws": 24, "rtx": 24, "dgx-ext": 16}
    assert spec.total_gpus == 64 and spec.num_nodes == 11
    assert spec.node_types[:6] == ("aws",) * 6 and spec.node_types[6:9] == ("rtx",) * 3
    assert spec.nodes_by_type["dgx-ext"] == [9, 10]
    assert spec.nodes() == {i: g for i, g in enumerate([4] * 6 + [8] * 5)}
    assert str(spec) == "6xaws,3xrtx,2xdgx-ext"
    for t, g in GPU_TYPES.items():
        assert parse_cluster(f"1x{t}").total_gpus == g


def test_explicit_gpus_per_node_and_homogeneous():
    assert parse_cluster("2xslow:2, 1xfast:4").gpus_by_type == {"slow": 4, "fast": 4}
    assert homogeneous_cluster(16, 4).is_homogeneous


@pytest.mark.parametrize(
    "bad, quoted",
    [("6xaws,3rtx", "'3rtx'"), ("6xaws,,1xrtx", "''"), ("x4", "'x4'"), ("0xaws", "'0xaws'"), ("2xaws:0", "'2xaws:0'")],
)
def test_malformed_spec_quotes_the_part(bad, quoted):
    with pytest.raises(ValueError) as err:
        parse_cluster(bad)
    assert quoted in str(err.value)


def test_unknown_type_names_it_and_the_known_types():
    with pytest.raises(ValueError, match=r"unknown GPU type 'zz100'.*known types: \[.*'aws'"):
        parse_cluster("2xaws,1xzz100")


def test_toml_and_json_files(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text('[[group]]\ntype = "aws"\ncount = 2\n\n[[group]]\ntype = "mine"\ncount = 1\ngpus_per_node = 2\n')
    assert parse_cluster(toml) == ClusterSpec([("aws", 2, 4), ("mine", 1, 2)])
    js = tmp_path / "c.json"
    js.write_text(json.dumps({"groups": [{"type": "rtx", "count": 3}]}))
    assert parse_cluster(str(js)).gpus_by_type == {"rtx": 24}


@pytest.mark.parametrize(
    "content, match",
    [
        ('[[group]]\ntype = "aws"\n', "needs 'type' and 'count'"),
        ('[[group]]\ntype = "aws"\ncount = 1\ncolor = "red"\n', r"unknown key\(s\) \['color'\]"),
        ('[[group]]\ntype = "zz"\ncount = 1\n', "unknown GPU type 'zz'"),
        ('[[group]]\ntype = "aws"\ncount = -1\n', "count must be an integer >= 1, got -1"),
        ("group = 3\n", "non-empty list"),
        ("[[group\n", "not valid TOML"),
    ],
)
def test_bad_files(tmp_path, content, match):
    path = tmp_path / "c.toml"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        parse_cluster(path)


def test_missing_file_and_conflicting_group_sizes(tmp_path):
    with pytest.raises(FileNotFoundError, match="cluster file not found"):
        parse_cluster(tmp_path / "nope.json")
    with pytest.raises(ValueError, match="appears with 4 and 8 GPUs per node"):
        ClusterSpec([("aws", 1, 4), ("aws", 1, 8)])


def test_node_infos_carry_gpu_types():
    spec = parse_cluster("2xaws,1xdgx-ext")
    infos = spec.node_infos()
    assert [infos[i].gpu_type for i in sorted(infos)] == ["aws", "aws", "dgx-ext"]
    assert {i: n.resources["nvidia.com/gpu"] for i, n in infos.items()} == spec.nodes()
    assert not any(n.preemptible for n in infos.values())
