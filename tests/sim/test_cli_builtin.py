"""The command line, the builtin default and the Pollux adapter on small inputs."""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim import simulate
from fastsched.sim.inputs.workload import WorkloadJob, read_workload
from fastsched.sim.truth.builtin import builtin_applications, builtin_workload
from tests.sim.engine.test_job import ConstApp

from .conftest import require_shared


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
    assert len(lines) == out["rounds"] + 1  # one line per round, then the summary
    assert json.loads(lines[-1])["summary"]["avg_jct"] == pytest.approx(out["avg_jct"])
    first = json.loads(lines[0])
    assert {"timestamp", "used_gpus", "jobs"} <= set(first)


def test_cli_table_and_progress(capsys):
    assert main(["simulate", "--policy", "optimus", "--nodes", "8"]) == 0
    cap = capsys.readouterr()
    assert "average JCT" in cap.out and "8 nodes x 4 GPUs" in cap.out
    assert "simulate" not in cap.err  # stderr is not a terminal here: no progress bar (tests/cli covers one)


def test_cli_errors(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("name,time,app\nx,0,cifar10\n")
    assert main(["simulate", str(bad), "-q"]) == 2
    assert "missing column" in capsys.readouterr().err
    assert main(["simulate", str(tmp_path / "none.csv"), "-q"]) == 2
    assert main(["simulate", "--nodes", "0", "-q"]) == 2
    assert main(["simulate", "--traces", str(tmp_path / "nowhere"), "-q"]) == 2
    capsys.readouterr()
    assert main(["simulate", "--policy", "nosuch", "-q"]) == 2  # a policy name is no argparse choice since issue 24
    assert "--policy" in capsys.readouterr().err
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


@pytest.mark.parametrize("preset", ["default", "osdi21", "osdi21-exact"])
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
    from fastsched.sim.truth.derive import derive_profile
    from fastsched.sim.truth.traces import load_application

    derived = derive_profile(load_application(pollux / "traces" / "bert")).to_dict()
    shipped = builtin_applications()["bert"].to_dict()
    assert derived["perf_params"] == pytest.approx(
        shipped["perf_params"], rel=2e-2
    )  # the fit may move slightly as the goodput core evolves
    assert derived["noise_knots"] == pytest.approx(shipped["noise_knots"], abs=1e-3)
    assert derived["max_epochs"] == shipped["max_epochs"]


def test_osdi21_restart_factors_reach_the_policy():
    from fastsched.sim.engine.job import Job
    from fastsched.sim.policies.pollux import PolluxSimPolicy

    app = ConstApp()
    young, old, new = Job("young", app, 0), Job("old", app, 0), Job("new", app, 590)
    young.num_restarts, old.num_restarts = 25, 2
    seen = {}

    class Spy:
        def optimize(self, jobs, nodes, base, template):
            seen["jobs"], seen["template"] = jobs, template
            return {k: [] for k in jobs}, len(nodes)

    pol = PolluxSimPolicy("osdi21", seed=1, restart_penalty="osdi21", placeholders=False)
    assert pol.restart_factor(600, old) == pytest.approx((600 - 60) / 630)
    assert pol.restart_factor(600, young) == 0.0  # more restart time than age: never moved
    assert pol.restart_factor(600, new) == pytest.approx(10 / 40)
    pol.policy = Spy()
    pol._trusted = False  # the spy reads the JobInfo dicts of the validated entry
    pol.optimize(600, [young, old, new], {"n0": 4, "n1": 4}, {"old": ["n0"]})
    jobs = seen["jobs"]
    assert seen["template"] is None
    assert jobs["young"].restart_penalty == 1.0
    assert jobs["old"].restart_penalty == pytest.approx(1 - 540 / 630)
    assert jobs["new"].restart_penalty == pytest.approx(0.75)
    # The default osdi21 variant: one penalty per round, placeholders, no per-job values.
    pol = PolluxSimPolicy("osdi21", seed=1)
    pol.policy = Spy()
    pol._trusted = False  # the spy reads the JobInfo dicts of the validated entry
    pol.optimize(600, [young, old, new], {"n0": 4, "n1": 4}, {"old": ["n0"]})
    assert seen["template"] is not None
    assert all(j.restart_penalty is None for j in seen["jobs"].values())
    assert pol.policy.restart_penalty == pytest.approx(1 - 540 / 630)
    with pytest.raises(ValueError, match="restart_penalty"):
        PolluxSimPolicy("osdi21", restart_penalty="osdi22")


def test_pollux_runs_do_not_depend_on_earlier_runs():
    """Same seed, same answer, whatever the process simulated before (shared app objects)."""
    apps = builtin_applications()
    wl = [j for j in builtin_workload() if j.time < 1800][:10]

    def run(seed):
        r = simulate(
            wl, applications=apps, nodes=2, gpus=4, seed=seed, policy_options={"pop_size": 16, "generations": 5}
        )
        return r.summary()["avg_jct"], r.summary()["restarts"]

    first = run(1)
    run(2)  # a different run in between, on the same application objects
    assert run(1) == first


def test_jobs_share_a_fit_only_for_identical_observations():
    """Two jobs seeing one (nodes, replicas, atomic) key on different placements (2+2 vs
    3+1 GPUs) measure different times and must not share a fitted model."""
    from fastsched.sim.engine.job import Job

    app = ConstApp()
    a, b, c = (Job(name, app, 0, target_batch_size=4) for name in "abc")
    a.observe(2, 4, 64, 1.0, 0.2, 1.0, 1.0)
    b.observe(2, 4, 64, 1.3, 0.5, 1.0, 1.0)
    c.observe(2, 4, 64, 1.0, 0.2, 1.0, 1.0)
    assert a.perf_params != b.perf_params
    assert a.perf_params == c.perf_params
