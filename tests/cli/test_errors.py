"""One error style for every command: one line, exit status 2 for bad input, --debug for the traceback."""

from __future__ import annotations

import json
import time

import pytest

from fastsched.cli import main
from fastsched.sim import api

from ._helpers import TINY, tiny_args, write
from ._helpers import record_and_stop as _record_and_stop


def _one_line(err: str, command: str) -> None:
    assert err.count("\n") == 1, err
    assert err.startswith(f"fastsched {command}: error: ") and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (TINY.replace("32768\n", "nan\n", 1), ":2:5:", "finite"),
        (TINY.replace("255", "inf", 1), ":2:2:", "finite"),
        (TINY.replace("255", "-1e400", 1), ":2:2:", "finite"),
        (TINY.replace(",4,64", ",1e999,64", 1), ":3:4:", "finite"),
        (TINY.replace(",4,64", ",2.5,64", 1), ":3:4:", "integer"),
        (TINY.replace(",4,64", ",99999999999,64", 1), ":3:4:", "<="),
        (TINY + "x,0,ncf\n", ":4", "too few fields"),
        (TINY + "ncf-2,0,ncf,1,32768\n", ":4:1:", "duplicate"),
        ("name,time\n", ":1", "missing column"),
        ("", "", "empty file"),
        (b"name,time,application,num_replicas,batch_size\n\xff\xfe,0,ncf,1,1\n", "", "UTF-8"),
    ],
)
def test_bad_workload_rows_name_file_line_column(tmp_path, capsys, text, where, what):
    w = write(tmp_path, "w.csv", text)
    assert main(tiny_args(w)) == 2
    err = capsys.readouterr().err
    _one_line(err, "simulate")
    assert f"w.csv{where}" in err and what in err


def test_bom_header_and_fractional_times_are_accepted(tmp_path, capsys):
    w = write(tmp_path, "w.csv", "\ufeff" + TINY.replace("255", "255.5", 1))
    assert main([*tiny_args(w), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["completed"] == out["jobs"] == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--nodes", "0"],
        ["simulate", "--interference", "nan"],
        ["simulate", "--interference", "1"],
        ["simulate", "--seed", "-1"],
        ["simulate", "--max-nodes", "1"],
        ["simulate", "--nodes", "1000000000"],
        ["simulate", "--max-nodes", "100000"],
        ["simulate", "--interval", "100000000"],
        ["simulate", "--interval", "120", "--max-time", "60"],
        ["simulate", "missing.csv"],
        ["simulate", "--traces", "nowhere"],
    ],
)
def test_bad_options_fail_before_the_first_round(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    ran = []
    monkeypatch.setattr(api.Cluster, "step", _record_and_stop(ran))
    assert main([*argv, "-q"]) == 2
    _one_line(capsys.readouterr().err, "simulate")
    assert ran == []


@pytest.mark.parametrize("value", ["soon", "0", "-5", "1e400"])
def test_bad_max_time_is_an_argparse_error(value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--max-time", value])
    assert exc.value.code == 2 and "--max-time" in capsys.readouterr().err


def test_workload_folder_is_an_error(tmp_path, capsys):
    assert main(["simulate", str(tmp_path), "-q"]) == 2
    assert "folder" in capsys.readouterr().err


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(ValueError, match="nodes"):
        main(["simulate", "--nodes", "0", "--debug"])
    with pytest.raises(ValueError, match="nodes"):
        main(["--debug", "simulate", "--nodes", "0"])


def test_internal_error_is_one_line_with_status_1(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)

    def broken(*a, **k):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(api.Cluster, "step", broken)
    assert main(tiny_args(w)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "RuntimeError: kaboom" in err and "--debug" in err


def test_cost_on_a_folder_is_one_line(tmp_path, capsys):
    rc = main(["cost", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err


# -- sweep -----------------------------------------------------------------------------------
def _spec(tmp_path, **extra):
    spec = {"workloads": [write(tmp_path, "w.csv", TINY)], "policy": "tiresias", "nodes": 2, "gpus": 4}
    spec.update(extra)
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(spec))
    return str(p)


def test_sweep_output_that_is_a_file(tmp_path, capsys):
    spec = _spec(tmp_path)
    f = write(tmp_path, "out.txt", "mine")
    assert main(["sweep", spec, "--serial", "--output", f, "-q"]) == 2
    assert "is a file" in capsys.readouterr().err
    assert (tmp_path / "out.txt").read_text() == "mine"


def test_sweep_output_foreign_folder_needs_force(tmp_path, capsys):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["sweep", spec, "--serial", "--output", str(out), "-q"]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["sweep", spec, "--serial", "--output", str(out), "-q", "--force"]) == 0
    assert (out / "notes.txt").read_text() == "mine" and (out / "runs.csv").is_file()
    # --no-resume would discard those results: refused without --force
    assert main(["sweep", spec, "--serial", "--output", str(out), "-q", "--no-resume"]) == 2
    assert "discard" in capsys.readouterr().err


@pytest.mark.parametrize("policy", ["pollux", "tiresias", "optimus"])
def test_sweep_unknown_policy_option_fails_up_front(tmp_path, capsys, monkeypatch, policy):
    ran = []
    monkeypatch.setattr(api.Cluster, "step", _record_and_stop(ran))
    spec = _spec(tmp_path, policy=policy, policy_options={"no_such_option": 1})
    assert main(["sweep", spec, "--serial", "--output", str(tmp_path / "o"), "-q"]) == 2
    err = capsys.readouterr().err
    _one_line(err, "sweep")
    assert "policy_options" in err and ran == []
    assert not (tmp_path / "o").exists()


def test_sweep_malformed_spec_names_the_file(tmp_path, capsys):
    p = tmp_path / "broken.json"
    p.write_text('{"workloads": ["a.csv",]')
    assert main(["sweep", str(p), "-q"]) == 2
    err = capsys.readouterr().err
    _one_line(err, "sweep")
    assert "broken.json" in err


def test_sweep_unreachable_scheduler_fails_fast(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.chdir(tmp_path)  # the default output folder, SPEC-sweep, would go here
    spec = _spec(tmp_path)
    t0 = time.perf_counter()
    rc = main(["sweep", spec, "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1", "-q"])
    elapsed = time.perf_counter() - t0
    err = capsys.readouterr().err
    assert rc == 2 and "cannot reach the dask scheduler" in err and err.count("\n") == 1
    assert elapsed < 15  # not dask's 30 s default
    assert not (tmp_path / "spec-sweep").exists()  # nothing written for a sweep that never started
