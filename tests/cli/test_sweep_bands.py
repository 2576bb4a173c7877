"""``fastsched sweep bands``: uncertainty bands of a study on profiled jobs, from the command line."""

from __future__ import annotations

import csv
import json

import pytest

from fastsched.catalog.profile import write_profile
from fastsched.cli import main, route_argv
from fastsched.sweep import uncertainty_bands

from ._helpers import HEADER, write


@pytest.fixture
def study(tmp_path, monkeypatch):
    """A profile folder of two applications and a two-job workload; the current folder is ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    write_profile("cifar10", ["t4"], tmp_path / "prof")
    write_profile("bert", ["t4"], tmp_path / "prof")
    wl = write(tmp_path, "w.csv", HEADER + "j0,0,cifar10,1,128\nj1,60,bert,1,12\n")
    return wl, str(tmp_path / "prof")


def _args(wl, prof, *more):
    return ["sweep", "bands", wl, "--profiles", prof, "--policy", "tiresias,fifo", "--draws", "2", "--seed", "1",
            "--cluster", "1xt4", "--max-time", "10d", "-q", *more]  # fmt: skip


def test_bands_print_write_and_match_the_python_call(study, tmp_path, capsys):
    wl, prof = study
    assert main(_args(wl, prof, "--json", "--out", "b")) == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads((tmp_path / "b" / "bands.json").read_text())
    assert printed == written and printed["draws"] == 2 and printed["seed"] == 1
    ref = uncertainty_bands(wl, prof, policies=["tiresias", "fifo"], draws=2, seed=1, cluster="1xt4",
                            max_time=10 * 86400)  # fmt: skip
    for p in ("tiresias", "fifo"):
        got, b = printed["policies"][p], ref.bands[p]
        assert (got["central_s"], got["median_s"], got["p10_s"], got["p90_s"]) == (b.central, b.median, b.p10, b.p90)
        assert got["p10_s"] <= got["median_s"] <= got["p90_s"]
    assert printed["order"] == list(ref.order) and printed["order_holds"] == ref.order_holds
    with open(tmp_path / "b" / "bands.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["policy"] for r in rows] == ["tiresias", "fifo"]
    assert float(rows[0]["p90_s"]) == printed["policies"]["tiresias"]["p90_s"]
    runs = (tmp_path / "b" / "runs" / "runs.csv").read_text().splitlines()
    assert len(runs) == 1 + 2 * (2 + 1)  # one run per draw and policy, the central run included


def test_the_table_names_the_band_and_the_order(study, capsys):
    wl, prof = study
    assert main(_args(wl, prof)) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["policy", "central_s", "median_s", "p10-p90_s", "width"]
    assert "order of the central run:" in out and "of 2 draws" in out


def test_an_earlier_call_is_refused_resumed_or_replaced(study, tmp_path, capsys):
    wl, prof = study
    assert main(_args(wl, prof)) == 0  # default --out: w-bands here
    first = (tmp_path / "w-bands" / "bands.json").read_text()
    capsys.readouterr()
    assert main(_args(wl, prof)) == 2
    err = capsys.readouterr().err
    assert err.startswith("fastsched sweep bands: error: --out:") and "--resume" in err
    log = tmp_path / "w-bands" / "runs" / "runs.jsonl"
    before = log.read_text()
    assert main(_args(wl, prof, "--resume")) == 0
    assert log.read_text() == before  # every run came from the earlier call
    assert (tmp_path / "w-bands" / "bands.json").read_text() == first
    assert main(_args(wl, prof, "--force")) == 0


@pytest.mark.parametrize(
    ("more", "flag"),
    [
        (["--draws", "0"], "--draws"),
        (["--draws", "many"], "--draws"),
        (["--seed", "-1"], "--seed"),
        (["--run-seed", "-2"], "--run-seed"),
        (["--vary", "noise,heat"], "--vary"),
        (["--policy", "siaa"], "--policy"),
        (["--workers", "0"], "--workers"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "--workers"),
        (["--nodes", "2"], "--nodes"),  # no such flag: profiles need a cluster of GPU types
        (["--step-dist", "cauchy"], "--step-dist"),
        (["--max-time", "soon"], "--max-time"),
    ],
)
def test_bad_flags_are_named_in_one_line(study, capsys, more, flag):
    wl, prof = study
    try:
        status = main(_args(wl, prof, *more))
    except SystemExit as exc:  # the parser's own refusals (a value of the wrong type) exit there
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastsched sweep bands: error: ") and flag in err, err


def test_missing_inputs_are_named(study, tmp_path, capsys):
    wl, prof = study
    assert main(["sweep", "bands", wl, "--profiles", str(tmp_path / "none"), "-q"]) == 2
    assert "--profiles" in capsys.readouterr().err
    assert main(["sweep", "bands", str(tmp_path / "none.csv"), "--profiles", prof, "-q"]) == 2
    assert "WORKLOAD" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["sweep", "bands", wl, "--profiles", str(tmp_path / "empty"), "-q"]) == 2
    assert "profile.json" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "bands", wl, "-q"])
    assert exc.value.code == 2 and "--profiles" in capsys.readouterr().err


def test_only_sweep_bands_is_routed():
    assert route_argv(["sweep", "bands", "w.csv"])[0] == "sweep-bands"
    assert route_argv(["sweep", "bands.json"]) == ["sweep", "bands.json"]
    assert route_argv(["simulate", "bands"]) == ["simulate", "bands"]


@pytest.mark.parametrize("vary", ["noise", "step"])
def test_vary_moves_only_what_it_names(study, tmp_path, vary):
    # the flags as `sweep bands` reads them, drawn as it draws them: the other figure stays central
    from fastsched.catalog.profile import read_profile_info
    from fastsched.cli import build_parser
    from fastsched.sweep._bands_cli import _check
    from fastsched.sweep.uncertainty import draw_profiles

    wl, prof = study
    kw = _check(build_parser().parse_args(route_argv(_args(wl, prof, "--vary", vary))))
    folders = draw_profiles(prof, tmp_path / "d", 3, **{k: kw[k] for k in ("seed", "noise", "step_sigma",
                                                                           "step_dist", "noise_by")})  # fmt: skip
    central = read_profile_info(folders[0] / "cifar10")
    for f in folders[1:]:
        drawn = read_profile_info(f / "cifar10")
        noise_moved = drawn["spec"]["noise_scale"] != central["spec"]["noise_scale"]
        step_moved = drawn["types"]["aws"]["adjust"]["gpu_scale"] != central["types"]["aws"]["adjust"]["gpu_scale"]
        assert (noise_moved, step_moved) == (vary == "noise", vary == "step")


@pytest.mark.parametrize("shape", [[], ["--preset", "osdi21"]])
def test_a_cluster_without_gpu_types_is_refused_before_any_draw(study, tmp_path, capsys, shape):
    # a profile folder holds placements-<type>.csv only: a cluster without types could run none of it
    wl, prof = study
    assert main(["sweep", "bands", wl, "--profiles", prof, "--draws", "1", "-q", "--out", "b", *shape]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastsched sweep bands: error: --cluster:"), err
    assert not (tmp_path / "b").exists()  # refused before the draws were written


@pytest.mark.parametrize("cluster", ["1xv100", "1xt4,1xv100"])
def test_a_gpu_type_the_profiles_lack_is_refused_before_any_draw(study, tmp_path, capsys, cluster):
    # the workload's applications are profiled on t4 only: every run on a v100 would fail
    wl, prof = study
    assert (
        main(["sweep", "bands", wl, "--profiles", prof, "--cluster", cluster, "--draws", "1", "-q", "--out", "b"]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastsched sweep bands: error: --cluster:"), err
    assert "v100" in err and "t4" in err
    assert not (tmp_path / "b").exists()


def test_profiles_the_workload_does_not_use_do_not_need_the_cluster_types(study, tmp_path):
    wl, prof = study
    write_profile("gpt-125m", ["v100"], tmp_path / "prof")  # in the folder, not in the workload
    assert main(_args(wl, prof, "--out", "b")) == 0


def test_a_workload_application_without_a_profile_is_refused_before_any_draw(study, tmp_path, capsys):
    _, prof = study  # cifar10 and bert; the builtin workload also runs deepspeech2, ncf and yolov3
    assert main(_args("builtin", prof, "--out", "b")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastsched sweep bands: error: --profiles:"), err
    assert "yolov3" in err and "cifar10" not in err and not (tmp_path / "b").exists()


def test_the_refusal_names_the_preset_that_gave_the_cluster(study, tmp_path, capsys):
    wl, prof = study  # profiled on t4 only; --preset sia's cluster has rtx and A100 nodes too
    assert main(["sweep", "bands", wl, "--profiles", prof, "--preset", "sia", "--draws", "1", "-q", "--out", "b"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fastsched sweep bands: error: --preset sia:"), err
    assert "a100-40gb" in err and "rtx2080ti" in err and not (tmp_path / "b").exists()
