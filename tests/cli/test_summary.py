"""What a run says about itself: completed jobs, why others did not, which profiles and workload."""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim import simulate
from fastsched.sim.inputs.workload import WorkloadJob
from fastsched.sim.truth.builtin import builtin_workload

from ._helpers import TINY, tiny_args, write

LATE = TINY + "late-1,900000,ncf,1,32768\n"  # arrives after a 3-day cap


def test_incomplete_run_exits_3_and_says_why(tmp_path, capsys):
    w = write(tmp_path, "w.csv", LATE)
    assert main([*tiny_args(w), "--max-time", "3d"]) == 3
    cap = capsys.readouterr()
    assert "2 / 3" in cap.out and "1 arrived after the end" in cap.out
    assert "1 of 3 jobs did not complete" in cap.err and "--allow-incomplete" in cap.err
    assert main([*tiny_args(w), "--max-time", "3d", "--allow-incomplete", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["completed"], out["jobs"]) == (2, 3)
    assert out["incomplete"] == {"arrived after the end": 1}
    assert out["max_time"] == 3 * 86400 and out["workload"] == w and out["profiles"] == "builtin"


def test_default_cap_can_be_raised(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY + "late-1,6000000,ncf,1,32768\n")  # after the 60-day default
    assert main(tiny_args(w)) == 3
    capsys.readouterr()
    assert main([*tiny_args(w), "--max-time", "80d", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["completed"] == out["jobs"] == 3 and out["incomplete"] == {}


def test_nothing_completed_prints_no_nan(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    assert main([*tiny_args(w), "--max-time", "60", "--allow-incomplete"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower() and "0 / 2" in out and "no job completed" in out
    assert main([*tiny_args(w), "--max-time", "60", "--allow-incomplete", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # strict JSON: NaN became null
    assert out["avg_jct"] is None and out["completed"] == 0


def test_reasons_distinguish_pending_and_running():
    jobs = [WorkloadJob("a", 0, "cifar10", 4, 512), WorkloadJob("b", 0, "cifar10", 4, 512)]
    r = simulate(jobs, policy="tiresias", nodes=1, gpus=4, max_time=600)
    assert r.summary()["incomplete"] == {"running at the end": 1, "never started": 1}
    assert r.summary()["workload"] == "2 jobs given"


def test_profiles_source_is_the_traces_folder(shared_dir):
    traces = shared_dir / "pollux-traces" / "traces"
    r = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], traces=traces, policy="tiresias", max_time=120)
    assert r.summary()["profiles"] == str(traces.resolve())


@pytest.mark.parametrize("progress", [False, None, True])
def test_progress_flags(progress):
    r = simulate(builtin_workload()[:2], policy="tiresias", nodes=2, progress=progress)
    assert r.completed == 2


def test_progress_callable_gets_a_first_call_before_the_first_round():
    calls = []
    simulate(builtin_workload()[:2], policy="tiresias", nodes=2, progress=lambda *a: calls.append(a))
    assert calls[0] == (0, 2, 0) and calls[-1][0] == 2
    with pytest.raises(TypeError, match="progress"):
        simulate(builtin_workload()[:2], progress="yes")


def test_progress_bar_on_a_terminal():
    from fastsched._progress import JobsBar

    class Tty:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

        def isatty(self):
            return True

    tty = Tty()
    bar = JobsBar(file=tty)
    simulate(builtin_workload()[:2], policy="tiresias", nodes=2, progress=bar)
    bar.close()
    assert "simulate" in tty.text and "2/2" in tty.text
    quiet = Tty()
    bar = JobsBar(file=quiet, quiet=True)
    simulate(builtin_workload()[:2], policy="tiresias", nodes=2, progress=bar)
    bar.close()
    assert quiet.text == ""
