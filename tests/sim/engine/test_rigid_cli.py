"""``fastsched simulate LOG --policy themis``: the rigid Themis, and the first-run notice of a replay."""

from __future__ import annotations

import json

import pytest

from fastsched import _firstrun
from fastsched.cli import main
from fastsched.sim.engine.rigid import run_rigid
from fastsched.sim.inputs.logs import read_log, synthetic_log


@pytest.fixture
def log(tmp_path):
    return synthetic_log(tmp_path / "cluster_log.csv", num_jobs=120, seed=3).path


@pytest.fixture
def notices(monkeypatch):
    calls = []
    monkeypatch.setattr(_firstrun, "compile_notice", lambda command="simulate", **kw: calls.append(command))
    return calls


def test_themis_on_a_log_is_the_rigid_policy(log, notices, capsys):
    assert main(["simulate", str(log), "--nodes", "8", "--gpus", "8", "--policy", "themis", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    jobs = read_log(log).jobs
    ref = run_rigid(jobs.submit, jobs.duration, jobs.gpus, nodes=8, gpus_per_node=8, policy="themis")
    assert summary["policy"] == "themis" and summary["completed"] == len(jobs)
    assert summary["makespan"] == pytest.approx(float(ref.finish.max() - jobs.submit.min()))


def test_the_first_replay_announces_its_compile_once_after_the_inputs_are_checked(log, notices):
    assert main(["simulate", str(log), "--nodes", "8", "--gpus", "8", "--policy", "fifo,themis", "-q"]) == 0
    assert notices == []  # --quiet: no notice
    assert main(["simulate", str(log), "--nodes", "8", "--gpus", "8", "--policy", "fifo,themis"]) == 0
    assert notices == ["simulate-log"]  # once, for the first policy, with the event loop's kernels only
    assert main(["simulate", str(log), "--nodes", "1", "--gpus", "8", "--policy", "fifo"]) == 2  # 64-GPU jobs
    assert notices == ["simulate-log"]  # refused before the run: nothing announced


def test_the_replay_notice_counts_the_event_loop_kernels_only():
    n, seconds, state = _firstrun.compile_estimate("simulate-log")
    names = state.missing + state.present
    assert "fastsched.sim.engine._rigid_kernels.run_rigid_kernel" in names
    assert all(k.startswith("fastsched.sim.engine._rigid_kernels.") for k in names)
    assert 0 <= n <= state.kernels
