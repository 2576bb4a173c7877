"""Issue 39, point 8 (the command line's side): one-line argparse errors naming the flag, "did you
mean", flags instead of Python arguments in errors, no stray blank line before "interrupted",
``info`` saying only what is true, units in ``plan``'s columns."""

from __future__ import annotations

import json
import re

import pytest

from fastsched.cli import main
from fastsched.sim import api

from ._helpers import TINY, tiny_args, write

MODEL = {"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and "usage:" not in err, err  # one line, no usage block first
    return err


@pytest.mark.parametrize(
    ("argv", "flag", "extra"),
    [
        (["simulate", "--max-time", "-5"], "--max-time", "duration"),
        (["simulate", "--preset", "siaa"], "--preset", "did you mean 'sia'?"),
        (["simulate", "--nodes", "abc"], "--nodes", "expected an integer, got 'abc'"),
        (["simulate", "--interference", "x"], "--interference", "expected a number"),
        (["simulate", "--polcy", "fifo"], "--polcy", "did you mean '--policy'?"),
        (["plan", "m.json"], "--gpus", "required"),
    ],
)
def test_argparse_errors_are_one_line_naming_the_flag(argv, flag, extra, capsys):
    err = _refused(argv, capsys)
    assert err.startswith(f"fastsched {argv[0]}: error: ") and flag in err and extra in err


def test_an_unknown_command_gets_the_closest_one(capsys):
    err = _refused(["simulat"], capsys)
    assert err.startswith("fastsched: error: unknown command") and "did you mean 'simulate'?" in err


def test_help_still_prints_the_usage(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--help"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("usage: fastsched simulate")


def test_plan_error_names_the_flag_and_python_keeps_its_wording(tmp_path, capsys):
    model = tmp_path / "m.json"
    model.write_text(json.dumps(MODEL))
    assert main(["plan", str(model), "--gpus", "-8"]) == 2
    err = capsys.readouterr().err
    assert "--gpus must be >= 1" in err and "cluster.gpus" not in err
    from fastsched.costmodel.cluster import Cluster

    with pytest.raises(ValueError, match=r"cluster\.gpus must be >= 1"):
        Cluster.from_dict({"gpus": -8})


def test_typed_cluster_without_traces_names_the_flag(tmp_path, capsys, monkeypatch):
    # an application outside the catalogue on a typed cluster needs per-type traces: the Python call
    # says "pass traces=", the command line "--traces DIR"
    monkeypatch.delenv("FASTSCHED_TRACES", raising=False)
    w = write(tmp_path, "w.csv", "name,time,application,num_replicas,batch_size\nt,0,toy,1,8\n")
    assert main(["simulate", w, "--cluster", "2xrtx", "--policy", "tiresias", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--traces DIR" in err and "traces=" not in err
    with pytest.raises(ValueError, match="pass traces="):
        api.simulate(w, cluster="2xrtx", policy="tiresias")


def test_both_cluster_and_nodes_name_the_flags(capsys):
    assert main(["simulate", "--cluster", "2xrtx", "--nodes", "2", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--cluster" in err and "--nodes" in err


def test_no_blank_line_before_interrupted_off_a_terminal(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)

    def step(self, seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(api.Cluster, "step", step)
    assert main(tiny_args(w)) == 130
    err = capsys.readouterr().err
    assert err.startswith("fastsched simulate: interrupted"), repr(err)


def test_info_never_calls_a_partly_cached_set_complete():
    from fastsched._info_cli import _cached_line

    # 75 of 79 cached, none of the 4 used by a command: the commands' kernels are complete, not all 79
    line = _cached_line({"kernels": 79, "kernels_cached": 75, "cache_complete": True, "kernels_missing": []})
    assert "75 of 79 cached" in line and "; complete" not in line and "the commands use" in line
    whole = _cached_line({"kernels": 79, "kernels_cached": 79, "cache_complete": True, "kernels_missing": []})
    assert whole.endswith("; complete")
    unknown = _cached_line({"kernels": 79, "kernels_cached": 75, "cache_complete": None, "kernels_missing": []})
    assert "complete" not in unknown.replace("compiles", "")


def test_info_line_matches_the_json(capsys):
    assert main(["info", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert main(["info"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("kernels cached"))
    assert f"{d['kernels_cached']} of {d['kernels']} cached" in line
    if d["kernels_cached"] < d["kernels"]:
        assert not re.search(r"; complete\b", line)


def test_plan_time_columns_carry_their_unit(tmp_path, capsys):
    model = tmp_path / "m.json"
    model.write_text(json.dumps(MODEL))
    assert main(["plan", str(model), "--gpus", "2", "--top", "1"]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    for column in ("step ms", "bubble ms", "tp comm ms", "pp comm ms", "dp comm ms", "mem GiB"):
        assert column in header


@pytest.mark.parametrize("value", ["1.5", "1.0", "1", "-0.1"])
def test_interference_has_one_bound_whatever_the_value(value, capsys):
    assert main(["simulate", "--interference", value, "-q"]) == 2
    err = capsys.readouterr().err
    assert "--interference must be in [0, 1)" in err and value in err


def test_a_misspelt_policy_gets_the_closest_name(capsys):
    assert main(["simulate", "--policy", "polux", "-q"]) == 2
    assert "did you mean 'pollux'?" in capsys.readouterr().err
    assert main(["simulate", "--policy", "fifo,tiresais", "-q"]) == 2
    assert "did you mean 'tiresias'?" in capsys.readouterr().err


def test_a_row_with_an_extra_field_is_refused_with_file_and_line(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY + "extra-1,300,ncf,1,32768,7\n")
    assert main(tiny_args(w)) == 2
    err = capsys.readouterr().err
    assert f"{w}:4: too many fields (6 under a header of 5 columns" in err
    from fastsched.sim.inputs.workload import read_workload

    with pytest.raises(ValueError, match=r"w\.csv:4: too many fields"):
        read_workload(w)
    # empty trailing fields (a spreadsheet's commas) are not extra values
    ok = write(tmp_path, "ok.csv", TINY.replace("32768\n", "32768,,\n"))
    assert len(read_workload(ok)) == 2
