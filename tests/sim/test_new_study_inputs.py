"""Inputs a new study gives that the published studies never did: larger models, user GPU types."""

import csv
import json

import pytest

from fastsched.catalog import gpus as gcat
from fastsched.catalog.profile import write_profile
from fastsched.cli import main
from fastsched.sim.inputs.llm_workload import llm_workload
from fastsched.sim.truth.oracle import OracleApplication
from fastsched.sim.truth.traces import TraceApplication


def _placements(path):
    with open(path, newline="") as f:
        return [r["placement"] for r in csv.DictReader(f)]


def test_a_decoder_larger_than_four_nodes_is_profiled_on_the_nodes_that_hold_it(tmp_path):
    # One 4 GiB GPU per node: gpt-1.3b's training state needs eight of them.
    cat = gcat.with_types({"small": {"base": "t4", "memory_gib": 4, "gpus_per_node": 1}})
    app = OracleApplication("gpt-1.3b", "small", catalog=cat)
    assert app.min_replicas == 8
    files = write_profile("gpt-1.3b", ["small"], tmp_path, catalog=cat)
    placements = _placements(files[0])
    assert placements and all(sum(map(int, p)) >= app.min_replicas for p in placements)
    read = TraceApplication(tmp_path / "gpt-1.3b", gpu_type="small")
    step, _ = read.throughput((1,) * 8, 1)
    assert step == app.throughput((1,) * 8, 1)[0]


def test_profile_of_a_model_larger_than_sixty_four_gpus(tmp_path, capsys):
    # gpt-175b needs more than 64 T4s: the summary prices it on the fewest whole nodes that hold it.
    assert main(["profile", "gpt-175b", "--gpu", "t4", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "gpt-175b: 4 files" in out and " aws " in out
    placements = _placements(tmp_path / "gpt-175b" / "placements-aws.csv")
    assert placements and all(sum(map(int, p)) > 64 for p in placements)


def test_a_profile_that_fails_on_one_type_writes_no_file(tmp_path):
    types = tmp_path / "types.json"
    types.write_text(json.dumps({"gpu_types": {"tiny": {"base": "t4", "memory_gib": 0.05}}}))
    out = tmp_path / "out"
    argv = ["profile", "cifar10", "--gpu", "t4,tiny", "--gpu-types", str(types), "--output", str(out), "-q"]
    assert main(argv) == 2  # cifar10 does not fit one tiny GPU
    assert not list(out.rglob("*.csv"))  # not t4's files either: a rerun needs no --force
    assert main(["profile", "cifar10", "--gpu", "t4", "--output", str(out), "-q"]) == 0


def test_a_fixed_batch_profile_runs_at_the_batch_its_gpus_can_hold(tmp_path, capsys):
    # A fixed batch on too few GPUs runs with gradient accumulation at a batch just below it
    # (gpt-1.3b's 512 on one A100: 17 x 29 = 493), outside the profile's one validated batch.
    prof = tmp_path / "prof"
    assert main(["profile", "gpt-1.3b", "--gpu", "a100-80gb", "--output", str(prof), "-q"]) == 0
    work = tmp_path / "w.csv"
    work.write_text("name,time,application,num_replicas,batch_size\nb,0,gpt-1.3b,4,512\n")
    argv = ["simulate", str(work), "--traces", str(prof), "--cluster", "1xa100-80gb", "-q", "--json"]
    assert main([*argv, "--policy", "sia"]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] == 1
    app = TraceApplication(prof / "gpt-1.3b", gpu_type="a100-80gb")
    assert app.grad_stats(493, 3) == app.grad_stats(512, 3)
    assert app.iteration(256, 3) == 2 * app.iteration(512, 3)


def test_calibrate_names_the_file_line_and_column_of_a_bad_row(tmp_path, capsys):
    def calibrate(folder, text):
        folder.mkdir(parents=True)
        (folder / "placements-aws.csv").write_text(text)
        argv = ["profile", "imagenet", "--gpu", "t4", "--output", str(tmp_path / "out"), "--force", "-q"]
        assert main([*argv, "--calibrate", str(folder)]) == 2
        err = capsys.readouterr().err
        assert "internal error" not in err
        return err

    head = "placement,local_bsz,step_time,sync_time\n"
    err = calibrate(tmp_path / "a" / "cifar10", "placement,local_bsz,step_time\n1,32,0.1\n")
    assert "placements-aws.csv: missing column(s) ['sync_time']" in err
    err = calibrate(tmp_path / "b" / "cifar10", head + "1,32,0.1,0\n1a,32,0.1,0\n")
    assert "line 3, column placement" in err
    err = calibrate(tmp_path / "c" / "cifar10", head + "1,32,nan,0\n")
    assert "line 2, column step_time" in err
    err = calibrate(tmp_path / "my-runs", head + "1,32,0.1,0\n")
    assert "calibration trace folder" in err and "its name is the application" in err


def test_profile_output_that_is_a_file_is_named(tmp_path, capsys):
    out = tmp_path / "w.csv"
    out.write_text("name\n")
    assert main(["profile", "ncf", "--gpu", "h100", "--output", str(out), "-q"]) == 2
    assert f"--output {out} is a file" in capsys.readouterr().err
    assert out.read_text() == "name\n"


def test_scale_says_max_nodes_is_not_scaled(tmp_path, capsys):
    work = tmp_path / "w.csv"
    work.write_text("name,time,application,num_replicas,batch_size\nx,0,cifar10,1,128\n")
    assert main(["simulate", str(work), "--scale", "2", "--nodes", "4", "--max-nodes", "6", "-q"]) == 2
    assert "--max-nodes 6 is below the scaled cluster's 8 nodes" in capsys.readouterr().err


def test_a_profile_keeps_the_fewest_gpus_a_model_runs_on(tmp_path, capsys):
    # gpt-1.3b needs eight 4 GiB GPUs: the trace-driven run refuses one, as the oracle's does.
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(
        '[gpu_types.small]\nbase = "t4"\nmemory_gib = 4\ngpus_per_node = 1\n\n[[group]]\ntype = "small"\ncount = 8\n'
    )
    prof = tmp_path / "prof"
    argv = ["profile", "gpt-1.3b", "--gpu", "small", "--gpu-types", str(cluster), "--output", str(prof), "-q"]
    assert main(argv) == 0
    assert (prof / "gpt-1.3b" / "min-replicas-small.csv").read_text().splitlines() == ["min_replicas", "8"]
    work = tmp_path / "w.csv"
    work.write_text("name,time,application,num_replicas,batch_size\nb,0,gpt-1.3b,1,512\n")
    argv = ["simulate", str(work), "--traces", str(prof), "--cluster", str(cluster), "--policy", "tiresias", "-q"]
    assert main(argv) == 2
    assert "fewer than its model runs on" in capsys.readouterr().err


def test_llm_workload_of_zero_jobs_is_refused():
    with pytest.raises(ValueError, match="num_jobs must be an integer >= 1, got 0"):
        llm_workload(0)
