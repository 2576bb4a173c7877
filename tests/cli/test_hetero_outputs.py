"""A run on a cluster of GPU types reads right (issue 26, item 6): JSON, per-round log, table, plot."""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim.inputs.cluster_spec import parse_cluster

from ._helpers import HEADER, write

CLUSTER = "6xaws,3xrtx,2xdgx-ext"
WORKLOAD = HEADER + "cifar10-0,0,cifar10,4,2048\ndeepspeech2-1,30,deepspeech2,6,320\ncifar10-2,60,cifar10,2,1024\n"


@pytest.fixture
def typed_run(shared_dir, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    w = write(tmp_path, "w.csv", WORKLOAD)
    log, fig = tmp_path / "rounds.jsonl", tmp_path / "run.svg"
    argv = ["simulate", w, "--traces", str(shared_dir / "sia-traces" / "traces"), "--cluster", CLUSTER]
    argv += ["--policy", "gavel", "--max-time", "20m", "--allow-incomplete", "-q", "--output", str(log)]
    assert main([*argv, "--json", "--plot", str(fig)]) == 0
    summary = json.loads(capsys.readouterr().out)
    return summary, log, fig


def test_json_gives_nodes_and_gpus_in_total_and_per_type(typed_run):
    s, _, _ = typed_run
    assert (s["nodes"], s["total_gpus"], s["gpus"]) == (11, 64, None)  # never "gpus": 8
    assert s["nodes_by_type"] == {"aws": 6, "rtx": 3, "dgx-ext": 2}
    assert s["gpus_by_type"] == {"aws": 24, "rtx": 24, "dgx-ext": 16}
    assert s["gpus_per_node_by_type"] == {"aws": 4, "rtx": 8, "dgx-ext": 8}


def test_round_log_names_each_jobs_gpu_type(typed_run):
    _, log, _ = typed_run
    node_types = parse_cluster(CLUSTER).node_types
    seen = 0
    for line in log.read_text().splitlines():
        rec = json.loads(line)
        for job in rec.get("jobs", []):
            if job["allocation"]:
                assert job["gpu_type"] == node_types[job["allocation"][0]]
                assert {node_types[n] for n in job["allocation"]} == {job["gpu_type"]}
                seen += 1
            else:
                assert job["gpu_type"] is None
    assert seen > 0


def test_plot_shows_gpus_per_type(typed_run):
    _, _, fig = typed_run
    svg = fig.read_text()  # matplotlib writes each text of an SVG as a comment too
    assert "<!-- GPUs per type -->" in svg
    for label in ("aws: 24 GPUs", "rtx: 24 GPUs", "dgx-ext: 16 GPUs"):
        assert f"<!-- {label} -->" in svg, label


def test_table_spells_out_the_cluster(shared_dir, tmp_path, capsys):
    w = write(tmp_path, "w.csv", WORKLOAD)
    argv = ["simulate", w, "--traces", str(shared_dir / "sia-traces" / "traces"), "--cluster", CLUSTER]
    assert main([*argv, "--policy", "gavel", "--max-time", "12m", "--allow-incomplete", "-q"]) == 0
    out = capsys.readouterr().out
    assert f"{CLUSTER} (11 nodes, 64 GPUs: aws 6x4, rtx 3x8, dgx-ext 2x8)" in out
