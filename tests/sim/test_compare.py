"""Issue 24.3: several policies in one command: same workload and cluster, one table, deterministic."""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim import WorkloadJob, write_workload
from fastsched.sim._compare import run_policies

ROWS = [WorkloadJob(f"j{i}", 20 * i, "ncf", 1, 32768) for i in range(5)] + [WorkloadJob("c", 50, "cifar10", 2, 256)]
FIGURES = ("policy", "completed", "avg_jct", "p99_jct", "makespan", "restarts", "gpu_hours_per_job", "contention_mean")


def _figures(summary):
    return {k: summary[k] for k in FIGURES}


def test_parallel_processes_give_the_serial_results():
    kwargs = dict(workload=ROWS, nodes=2, gpus=4)
    serial = run_policies(["srtf", "tiresias"], workers=1, **kwargs)
    parallel = run_policies(["srtf", "tiresias"], workers=2, **kwargs)
    assert [_figures(r.summary()) for r in serial] == [_figures(r.summary()) for r in parallel]
    assert [r.policy for r in parallel] == ["srtf", "tiresias"]  # the order asked, not of completion


def test_one_command_one_table_and_json_lines(tmp_path, capsys):
    w = tmp_path / "w.csv"
    write_workload(ROWS, w)
    assert (
        main(["simulate", str(w), "--policy", "fifo,tiresias", "--nodes", "2", "--gpus", "4", "--workers", "1", "-q"])
        == 0
    )
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split()[:3] == ["policy", "done", "avg"]
    assert [line.split()[0] for line in lines[1:]] == ["fifo", "tiresias"]
    assert [line.split()[1] for line in lines[1:]] == ["6", "6"]
    args = ["simulate", str(w), "--policy", "fifo,tiresias", "--nodes", "2", "--gpus", "4", "--workers", "1", "--json"]
    assert main([*args, "-q"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [r["policy"] for r in rows] == ["fifo", "tiresias"]
    assert all(r["completed"] == 6 and r["nodes"] == 2 for r in rows)


def test_comparison_plot_is_written(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="--plot needs the plot extra")
    w = tmp_path / "w.csv"
    write_workload(ROWS, w)
    args = ["simulate", str(w), "--policy", "fifo,tiresias", "--nodes", "2", "--gpus", "4", "--workers", "1", "-q"]
    assert main([*args, "--plot", str(tmp_path / "cmp.png")]) == 0
    assert (tmp_path / "cmp.png").stat().st_size > 0


def test_several_policies_refuse_one_log(tmp_path, capsys):
    args = ["simulate", "--policy", "fifo,srtf", "--output", str(tmp_path / "log.jsonl"), "-q"]
    assert main(args) == 2
    assert "--output" in capsys.readouterr().err
    assert main(["simulate", "--policy", "fifo,fifo", "-q"]) == 2
    assert "twice" in capsys.readouterr().err
