"""simulate() and the command line on typed clusters: equivalence, presets, bad input."""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim import PRESETS, simulate
from fastsched.sim.inputs.workload import WorkloadJob, write_workload
from tests.sim.two_types import toy_workload

from .conftest import write_tiny_traces


@pytest.mark.parametrize("policy", ["pollux", "tiresias", "optimus"])
def test_one_type_cluster_is_todays_result_bit_for_bit(two_type_traces, policy):
    wl = toy_workload(n=8, spacing=30)
    plain = simulate(wl, traces=two_type_traces, nodes=2, gpus=2, policy=policy)
    typed = simulate(wl, traces=two_type_traces, cluster="2xslow:2", policy=policy, policy_options=None)
    # Same job mechanics (30 s restarts for an application without a measured delay).
    assert [j.completion_time for j in typed.jobs] == [j.completion_time for j in plain.jobs]
    assert [j.num_restarts for j in typed.jobs] == [j.num_restarts for j in plain.jobs]
    assert (typed.allocations == plain.allocations).all()


def test_presets_describe_the_sia_study():
    assert PRESETS["sia"]["cluster"] == "6xaws,3xrtx,2xdgx-ext" and PRESETS["sia"]["interval"] == 60
    assert PRESETS["sia-homogeneous"]["cluster"] == "16xaws"
    assert PRESETS["sia"]["policy"] == "sia"


def test_preset_policy_override_and_gavel_interval(two_type_traces):
    r = simulate(toy_workload(n=2), traces=two_type_traces, cluster="1xslow:2,1xfast:2", preset="sia", policy="gavel")
    assert r.policy == "gavel" and r.config["interval"] == 360
    r = simulate(toy_workload(n=2), traces=two_type_traces, cluster="1xslow:2", preset="sia", policy="tiresias")
    assert r.policy == "tiresias" and r.config["interval"] == 60


def test_sia_and_gavel_run_on_a_plain_cluster():
    r = simulate(preset="default", policy="sia", nodes=4, gpus=4, max_time=3600)
    assert r.policy == "sia" and r.config["cluster"] == "4xgpu:4"


def test_request_above_the_largest_type(two_type_traces):
    wl = [WorkloadJob("big", 0, "toy", 3, 8)]
    with pytest.raises(ValueError, match=r"request more GPUs than the largest GPU type has \(2\)"):
        simulate(wl, traces=two_type_traces, cluster="1xslow:2,1xfast:2", policy="gavel")
    r = simulate(wl, traces=two_type_traces, cluster="1xslow:2,1xfast:2", policy="gavel", cap_replicas=True)
    assert r.completed == 1 and r.allocations.max() == 2


def test_typed_cluster_needs_typed_traces(two_type_traces, tmp_path):
    tiny_traces = tmp_path / "plain"
    write_tiny_traces(tiny_traces)
    with pytest.raises(ValueError, match="needs per-type traces"):
        simulate(toy_workload(n=1), cluster="1xslow:2")
    with pytest.raises(FileNotFoundError, match=r"placements-fast\.csv"):
        simulate([WorkloadJob("t", 0, "toy", 1, 4)], traces=tiny_traces, cluster="1xfast:2")
    with pytest.raises(ValueError, match="either cluster or nodes/gpus"):
        simulate(toy_workload(n=1), traces=two_type_traces, cluster="1xslow:2", nodes=2)


def test_bad_category_in_workload(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("name,time,application,num_replicas,batch_size,category\na,0,toy,1,8,elastic\n")
    from fastsched.sim.inputs.workload import read_workload

    with pytest.raises(ValueError, match=r"w\.csv:2:\d+: category must be one of"):
        read_workload(path)
    path.write_text("name,time,application,num_replicas,batch_size,category\na,0,toy,1,8,rigid\nb,0,toy,1,8,\n")
    assert [j.category for j in read_workload(path)] == ["rigid", None]


def test_job_that_can_never_run_stops_the_run(two_type_traces):
    from fastsched.sim.policies import TiresiasPolicy

    class Never(TiresiasPolicy):
        def optimize(self, now, jobs, nodes, allocations):
            return {}

    with pytest.raises(ValueError, match=r"can never run"):
        simulate(toy_workload(n=1), traces=two_type_traces, cluster="1xslow:2", policy=Never())


def test_cli_cluster_json_and_log(two_type_traces, tmp_path_factory, capsys):
    out_dir = tmp_path_factory.mktemp("out")  # never inside the traces folder (refused: it is an input)
    wl = out_dir / "w.csv"
    write_workload(toy_workload(n=3), wl)
    log = out_dir / "log.jsonl"
    argv = [
        "simulate",
        str(wl),
        "--traces",
        str(two_type_traces),
        "--cluster",
        "1xslow:2,1xfast:2",
        "--policy",
        "sia",
        "--json",
        "-q",
        "--output",
        str(log),
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    keys = (
        "avg_jct p50_jct p99_jct makespan gpu_hours_per_job gpu_hours_by_type restarts_per_job "
        "contention_mean contention_max ftf_worst ftf_unfair_fraction"
    ).split()
    assert set(keys) <= set(out) and out["cluster"] == "1xslow:2,1xfast:2"
    last = json.loads(log.read_text().splitlines()[-1])
    assert set(keys) <= set(last["summary"])
    assert main(argv[:-4] + ["-q"]) == 0
    table = capsys.readouterr().out
    assert "finish-time fairness" in table and "by GPU type" in table
    assert main(["simulate", "--cluster", "2xzz100", "-q"]) == 2
    assert "unknown GPU type 'zz100'" in capsys.readouterr().err


def test_fractional_submission_times_round_up(tmp_path):
    from fastsched.sim.inputs.workload import read_workload

    path = tmp_path / "w.csv"
    path.write_text("name,time,application,num_replicas,batch_size\na,487.661836,toy,1,8\nb,12.0,toy,1,8\n")
    assert [j.time for j in read_workload(path)] == [488, 12]
    path.write_text("name,time,application,num_replicas,batch_size\na,nan,toy,1,8\n")
    with pytest.raises(ValueError, match="time must be finite"):
        read_workload(path)


@pytest.mark.parametrize("policy", ["tiresias", "optimus"])
def test_typed_cluster_checks_batch_sizes_before_the_first_round(two_type_traces, policy):
    # A row whose batch size lies outside the application's validated range used to fail
    # inside Cluster.step, hours into the run, with a message naming neither job nor file.
    jobs = [*toy_workload(n=2), WorkloadJob("late-bad", 80_000, "toy", 1, 1)]
    with pytest.raises(ValueError, match=r"job 'late-bad' \(toy\): batch_size 1 is below"):
        simulate(jobs, traces=two_type_traces, cluster="1xslow:2,1xfast:2", policy=policy)
