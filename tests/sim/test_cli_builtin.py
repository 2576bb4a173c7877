"""The command line, the builtin default and the Pollux adapter on small inputs."""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim import simulate
from fastsched.sim.builtin import builtin_applications, builtin_workload
from fastsched.sim.workload import WorkloadJob, read_workload

from .conftest import require_shared
from .test_job import ConstApp


def test_builtin_profiles_and_workload():
    apps = builtin_applications()
    assert {"cifar10", "ncf", "bert", "imagenet", "deepspeech2", "yolov3"} <= set(apps)
    wl = builtin_workload()
    assert len(wl) >= 20 and all(j.application in apps for j in wl)
    cifar = apps["cifar10"]
    step, sync = cifar.throughput((4, 4), 128)
    assert step > sync > 0
    assert cifar.throughput((1,), 128)[1] == pytest.approx(0.0, abs=1e-6)
    assert apps["ncf"].fixed_batch_size == 32768 and apps["ncf"].max_replicas == 1


def test_cli_json_summary(capsys, tmp_path):
    log = tmp_path / "log.jsonl"
    rc = main(["simulate", "--policy", "tiresias", "--json", "-q", "--output", str(log)])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("avg_jct", "p99_jct", "makespan", "jobs", "wall_s", "gpu_utilization", "restarts"):
        assert key in out
    assert out["jobs"] == out["completed"] == len(builtin_workload())
    lines = log.read_text().splitlines()
    assert len(lines) == out["rounds"]
    first = json.loads(lines[0])
    assert {"timestamp", "used_gpus", "jobs"} <= set(first)


def test_cli_table_and_progress(capsys):
    assert main(["simulate", "--policy", "optimus", "--nodes", "8"]) == 0
    cap = capsys.readouterr()
    assert "average JCT" in cap.out and "8 nodes x 4 GPUs" in cap.out
    assert "simulate [" in cap.err  # progress bar on stderr


def test_cli_errors(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,time,app\nx,0,cifar10\n")
    assert main(["simulate", str(bad), "-q"]) == 2
    assert "missing column" in capsys.readouterr().err
    assert main(["simulate", str(tmp_path / "none.csv"), "-q"]) == 2
    assert main(["simulate", "--nodes", "0", "-q"]) == 2
    assert main(["simulate", "--traces", str(tmp_path / "nowhere"), "-q"]) == 2
    with pytest.raises(SystemExit):
        main(["simulate", "--policy", "fifo"])
    with pytest.raises(SystemExit):
        main(["simulate", "--preset", "nope"])


def test_workload_errors(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("name,time,application,num_replicas,batch_size\na,0,x,1,8\na,5,x,1,8\n")
    with pytest.raises(ValueError, match="duplicate"):
        read_workload(p)
    p.write_text("name,time,application,num_replicas,batch_size\na,-1,x,1,8\n")
    with pytest.raises(ValueError, match="time"):
        read_workload(p)
    p.write_text("name,time,application,num_replicas,batch_size\na,zero,x,1,8\n")
    with pytest.raises(ValueError, match="number"):
        read_workload(p)


@pytest.mark.parametrize("preset", ["default", "osdi21"])
def test_pollux_adapter_small(preset):
    apps = {"const": ConstApp()}
    wl = [WorkloadJob(f"j{i}", 60 * i, "const", 1, 8) for i in range(4)]
    r = simulate(
        wl,
        applications=apps,
        preset=preset,
        nodes=2,
        gpus=2,
        seed=3,
        policy_options={"pop_size": 16, "generations": 5},
    )
    assert r.completed == 4 and r.policy == "pollux"
    assert r.used_gpus.max() <= 4


def test_derive_matches_shipped_profiles():
    pollux = require_shared()
    from fastsched.sim.derive import derive_profile
    from fastsched.sim.traces import load_application

    derived = derive_profile(load_application(pollux / "traces" / "bert")).to_dict()
    shipped = builtin_applications()["bert"].to_dict()
    assert derived["perf_params"] == pytest.approx(
        shipped["perf_params"], rel=2e-2
    )  # the fit may move slightly as the goodput core evolves
    assert derived["noise_knots"] == pytest.approx(shipped["noise_knots"], abs=1e-3)
    assert derived["max_epochs"] == shipped["max_epochs"]
