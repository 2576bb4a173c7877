"""Sweep safety (issue 28.2, 28.3, 28.6): no user file overwritten, results keyed by content, bounded sizes."""

from __future__ import annotations

import json
import os
import stat

import pytest

from fastsched.cli import main
from fastsched.sweep import run_serial
from fastsched.sweep.spec import MAX_RUNS, MAX_SPEC_NODES, load_spec

from ._helpers import HEADER

ONE = HEADER + "ncf-2,255,ncf,1,32768\n"
THREE = ONE + "ncf-17,300,ncf,1,32768\nncf-33,400,ncf,1,32768\n"


def _spec(folder, **extra):
    (folder / "w.csv").write_text(ONE)
    spec = {"workloads": "w.csv", "policy": "tiresias", "nodes": 1, "gpus": 4, "max_time": 20000, **extra}
    p = folder / "sweep.json"
    p.write_text(json.dumps(spec))
    return p


@pytest.mark.parametrize("name", ["runs.csv", "runs.json", "summary.csv", "spec.json"])
def test_user_file_with_a_sweep_name_is_not_overwritten(tmp_path, capsys, name):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("mine")
    assert main(["sweep", str(spec), "--serial", "-q", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and name in err and err.count("\n") == 1
    assert (out / name).read_text() == "mine" and sorted(os.listdir(out)) == [name]


def test_spec_named_spec_json_never_rewrites_itself(tmp_path, capsys):
    (tmp_path / "w.csv").write_text(ONE)
    spec = tmp_path / "spec.json"
    text = json.dumps({"workloads": "w.csv", "policy": "tiresias", "nodes": 1, "gpus": 4, "output": "."})
    spec.write_text(text)
    for force in ([], ["--force"]):
        assert main(["sweep", str(spec), "--serial", "-q", *force]) == 2
        assert spec.read_text() == text
    assert "input" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["spec.json", "w.csv"]


def test_edited_workload_reruns_and_stale_rows_are_not_reported(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    first = run_serial(spec, output_dir=out)
    assert first.rows[0]["jobs"] == 1
    (tmp_path / "w.csv").write_text(THREE)  # edited in place: same path, new contents
    second = run_serial(spec, output_dir=out)
    assert second.skipped == 0 and [r["jobs"] for r in second.rows] == [3]
    assert [r["jobs"] for r in json.loads((out / "runs.json").read_text())] == [3]
    third = run_serial(spec, output_dir=out)  # unchanged since: resumed
    assert third.skipped == 1 and third.rows[0]["jobs"] == 3


def test_run_ids_depend_on_traces_and_options(tmp_path):
    spec = {"workloads": "builtin", "policy": "tiresias", "max_time": 100}
    base = load_spec(spec).runs()[0].run_id
    assert load_spec({**spec, "max_time": 101}).runs()[0].run_id != base
    assert load_spec(dict(spec)).runs()[0].run_id == base


def test_two_spellings_of_one_workload_are_one_workload(tmp_path):
    (tmp_path / "w.csv").write_text(ONE)
    a = load_spec({"workloads": "w.csv"}, base_dir=tmp_path).runs()
    b = load_spec({"workloads": "./w.csv"}, base_dir=tmp_path).runs()
    assert [r.run_id for r in a] == [r.run_id for r in b] and a[0].config == b[0].config
    with pytest.raises(ValueError, match="same workload twice"):
        load_spec({"workloads": ["w.csv", "./w.csv"]}, base_dir=tmp_path)


def test_a_sweep_folder_is_resumed_without_force(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    run_serial(spec, output_dir=out)
    again = run_serial(spec, output_dir=out)
    assert again.skipped == 1


def test_tables_get_the_permissions_of_a_plain_open(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        run_serial(spec, output_dir=out)
    finally:
        os.umask(old)
    for name in ("runs.csv", "runs.json", "summary.csv", "spec.json", "runs.jsonl"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"seeds": 1_000_000_000}, "seeds"),
        ({"seeds": 1e308}, "seeds"),
        ({"seeds": [2**70]}, "seeds"),
        ({"seed": 2**70}, "seed"),
        ({"max_time": 1e30}, "max_time"),
        ({"nodes": 1e7}, "nodes"),
        ({"nodes": 10_000, "gpus": 8}, "nodes"),
        ({"policy": "pollux", "policy_options": {"pop_size": 1e9}}, "pop_size"),
        ({"interval": list(range(1, 400)), "seeds": 300}, "runs"),
    ],
)
def test_sizes_beyond_the_stated_bounds_are_refused_up_front(extra, key):
    spec = {"workloads": "builtin", "policy": "tiresias", **extra}
    with pytest.raises(ValueError, match=key):
        load_spec(spec)


def test_billion_laughs_yaml_is_refused(tmp_path):
    pytest.importorskip("yaml")
    lines = ["workloads: builtin", "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    lines.append("seeds: *a8")
    p = tmp_path / "laughs.yaml"
    p.write_text("\n".join(lines) + "\n")
    assert len(p.read_bytes()) < 1000
    with pytest.raises(ValueError, match=f"limit of {MAX_SPEC_NODES}"):
        load_spec(p)


def test_deeply_nested_spec_is_one_error(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text('{"workloads": "builtin", "policy_options": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ValueError, match="deep.json"):
        load_spec(p)


def test_connect_timeout_inf_is_bad_input(tmp_path, capsys):
    spec = _spec(tmp_path)
    assert main(["sweep", str(spec), "-q", "--connect-timeout", "inf", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "--connect-timeout" in err and "KeyError" not in err and err.count("\n") == 1


def test_max_runs_is_what_the_message_says():
    with pytest.raises(ValueError, match=str(MAX_RUNS)):
        load_spec({"workloads": "builtin", "seeds": MAX_RUNS + 1})


def test_spec_output_outside_its_folder_needs_force(tmp_path, capsys):
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    spec = _spec(sub, output="../../x/a/b")
    assert main(["sweep", str(spec), "--serial", "-q"]) == 2
    err = capsys.readouterr().err
    assert "outside the spec's folder" in err and not (tmp_path / "x").exists()
    assert main(["sweep", str(spec), "--serial", "-q", "--force"]) == 0
    assert (tmp_path / "x" / "a" / "b" / "runs.csv").is_file()
    inside = _spec(sub, output="results")  # inside: no question asked
    assert main(["sweep", str(inside), "--serial", "-q"]) == 0
