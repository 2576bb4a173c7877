"""Errors of issue 28.7: one line naming the file and the field, exit status 2."""

from __future__ import annotations

import pytest

from fastsched.cli import main
from fastsched.sim.inputs.cluster_spec import parse_cluster

from ._helpers import TINY, tiny_args, write


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    return err


def test_missing_trace_file_with_output_names_the_trace_file(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    traces = tmp_path / "traces"
    for app in ("ncf", "yolov3"):
        (traces / app).mkdir(parents=True)
        write(traces / app, "placements.csv", "x\n")  # scalability.csv missing
    assert main([*tiny_args(w), "--traces", str(traces), "--output", str(tmp_path / "x.jsonl")]) == 2
    err = _one_line(capsys)
    assert "Errno None" not in err and "x.jsonl" not in err and "traces" in err
    assert not (tmp_path / "x.jsonl").exists()


def test_cluster_type_list_names_the_field(tmp_path, capsys):
    c = write(tmp_path, "c.toml", "[[group]]\ntype = ['aws']\ncount = 1\n")
    assert main(["simulate", write(tmp_path, "w.csv", TINY), "--cluster", c, "-q"]) == 2
    err = _one_line(capsys)
    assert "c.toml" in err and "type" in err and "unhashable" not in err


@pytest.mark.parametrize("command", ["simulate", "cost"])
def test_deeply_nested_json_is_one_error(tmp_path, capsys, command):
    deep = write(tmp_path, "deep.json", "[" * 200_000 + "]" * 200_000)
    if command == "simulate":
        args = ["simulate", write(tmp_path, "w.csv", TINY), "--cluster", deep, "-q"]
    else:
        args = ["cost", deep]
    assert main(args) == 2
    err = _one_line(capsys)
    assert "deep.json" in err and "Recursion" not in err


def test_cost_empty_json_names_the_file(tmp_path, capsys):
    empty = write(tmp_path, "empty.json", "")
    assert main(["cost", empty]) == 2
    assert "empty.json" in _one_line(capsys)


def test_cluster_json_with_a_byte_order_mark_is_read(tmp_path):
    p = tmp_path / "c.json"
    p.write_bytes(b'\xef\xbb\xbf{"groups": [{"type": "aws", "count": 2}]}')
    assert parse_cluster(str(p)).total_gpus == 8
    t = tmp_path / "c.toml"
    t.write_bytes(b"\xef\xbb\xbf" + b'[[group]]\ntype = "rtx"\ncount = 1\n')
    assert parse_cluster(str(t)).total_gpus == 8
