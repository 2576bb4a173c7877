"""``fastsched simulate LOG --nodes N --gpus G --policy fifo,sjf,tiresias --jobs out.csv`` on each format."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from fastsched.cli import main
from fastsched.sim.engine.rigid import run_rigid
from fastsched.sim.inputs.logs import read_log
from tests.sim.inputs.logs import _write as w
from tests.sim.inputs.logs.test_log_formats import _helios_rows, _pai, _philly_jobs, _slurm_rows


def _log(fmt, folder):
    if fmt == "helios":
        return w.helios(folder, _helios_rows())
    if fmt == "slurm":
        return w.slurm(folder, _slurm_rows())
    if fmt == "philly":
        return w.philly(folder, _philly_jobs())
    return w.pai(folder / "pai", *_pai())


@pytest.mark.parametrize("fmt", ["helios", "slurm", "philly", "pai"])
def test_simulate_a_log_of_each_format_with_no_other_flag(fmt, tmp_path, capsys):
    log = _log(fmt, tmp_path)
    out = tmp_path / "out.csv"
    argv = ["simulate", str(log), "--nodes", "2", "--gpus", "8", "--policy", "fifo,sjf,tiresias", "--jobs", str(out)]
    assert main(argv) == 0
    assert "tiresias" in capsys.readouterr().out
    jobs = read_log(log).jobs
    for policy in ("fifo", "sjf", "tiresias"):
        with open(tmp_path / f"out-{policy}.csv", newline="") as f:  # the study's per-job table, one per policy
            mine = list(csv.DictReader(f))
        assert [r["name"] for r in mine] == jobs.name.tolist()  # joined back to the log by its ids
        ref = run_rigid(jobs.submit, jobs.duration, jobs.gpus, nodes=2, gpus_per_node=8, policy=policy)
        assert [float(r["finish_s"]) for r in mine] == ref.finish.tolist()
        assert [float(r["first_start_s"]) for r in mine] == ref.first_start.tolist()
        assert [int(r["final_gpus"]) for r in mine] == jobs.gpus.tolist()
        jct = np.array([float(r["jct_s"]) for r in mine])
        assert np.all(jct >= jobs.duration)  # no job runs faster than it did
    assert not out.exists()


def test_a_log_with_round_based_options_or_policies_is_refused(tmp_path, capsys):
    log = str(w.helios(tmp_path, _helios_rows()))
    assert main(["simulate", log, "--policy", "pollux", "-q"]) == 2
    assert "--policy: a log replays rigid jobs" in capsys.readouterr().err
    assert main(["simulate", log, "--interval", "30", "-q"]) == 2
    assert "--interval: not for a production log" in capsys.readouterr().err


def test_log_format_overrides_detection(tmp_path):
    log = w.helios(tmp_path, _helios_rows(), name="renamed.txt")
    out = tmp_path / "o.csv"
    assert (
        main(["simulate", str(log), "--log-format", "helios", "--nodes", "4", "--gpus", "8", "--jobs", str(out), "-q"])
        == 0
    )
    assert out.exists()
