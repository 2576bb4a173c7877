"""Issue 39, point 2: a comparison keeps every finished run (interrupts, a failing policy, early checks)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fastsched.cli import main
from fastsched.sim import api

from ._helpers import TINY, write

ROOT = Path(__file__).resolve().parents[2]

# Policies of one's own, in a module the command line imports from the current folder.
POLICIES = '''
import time
from fastsched.sim.policies import SimPolicy, free_gpus, pack


class Slow(SimPolicy):
    """First come, first served, half a second per round: a run that lasts minutes."""

    name = "slow"

    def optimize(self, now, jobs, nodes, allocations):
        time.sleep(0.5)
        free = free_gpus(nodes, allocations)
        out = dict(allocations)
        for job in self.views(jobs):
            if not job.running:
                alloc = pack(job.requested_gpus, free)
                if alloc is not None:
                    out[job.name] = alloc
        return out


class Broken(Slow):
    """Raises in its fifth round."""

    name = "broken"

    def optimize(self, now, jobs, nodes, allocations):
        if now >= 300:
            raise RuntimeError("the policy broke mid-run")
        return super().optimize(now, jobs, nodes, allocations)
'''


def _setup(tmp_path):
    (tmp_path / "my_policies.py").write_text(POLICIES)
    return write(tmp_path, "w.csv", TINY)


def test_an_interrupted_comparison_prints_the_runs_that_finished(tmp_path):
    w = _setup(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT), FASTSCHED_PROGRESS_SECONDS="3600")
    cmd = [sys.executable, "-m", "fastsched", "simulate", w, "--policy", "fifo,tiresias,my_policies:Slow",
           "--nodes", "2", "--gpus", "4", "--workers", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # until two policies are done
        line = proc.stderr.readline()
        err.append(line)
        if "done (2/3)" in line or not line:
            break
    assert "done (2/3)" in err[-1], "".join(err)
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=60)
    err = "".join(err) + rest
    assert proc.returncode == 130, err
    rows = [line.split()[0] for line in out.splitlines()]
    assert rows[0] == "policy" and sorted(rows[1:]) == ["fifo", "tiresias"], out
    assert "2 of 3 policies finished, printed above (" in err and "interrupted" in err


def test_a_policy_that_raises_mid_run_loses_none_of_the_others(tmp_path, capsys, monkeypatch):
    w = _setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = ["simulate", w, "--policy", "fifo,my_policies:Broken,tiresias", "--nodes", "2", "--gpus", "4", "--json"]
    assert main([*argv, "--workers", "1", "-q"]) == 1  # the exit status says a run failed
    out, err = capsys.readouterr()
    assert sorted(json.loads(line)["policy"] for line in out.splitlines()) == ["fifo", "tiresias"]
    assert "my_policies:Broken failed: " in err and "the policy broke mid-run" in err
    assert "1 of 3 policies failed" in err


def test_every_policy_is_checked_before_the_first_run(tmp_path, capsys, monkeypatch):
    # gavel runs the workload's batch size; 1 is below cifar10's range: refused before any run,
    # although pollux (first) would run it (it chooses the batch itself)
    w = write(tmp_path, "w.csv", "name,time,application,num_replicas,batch_size\na,0,cifar10,1,1\n")
    runs = []
    real = api.Cluster.step
    monkeypatch.setattr(api.Cluster, "step", lambda self, s: (runs.append(1), real(self, s))[1])
    assert main(["simulate", w, "--policy", "pollux,gavel", "--nodes", "1", "--gpus", "4", "--workers", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fastsched simulate: error: gavel: ") and "job 'a' (cifar10): batch_size 1" in err
    assert runs == []


def test_rows_print_as_runs_finish(tmp_path, capsys, monkeypatch):
    # one run at a time: the first policy's row is on stdout before the second run starts
    w = write(tmp_path, "w.csv", TINY)
    seen = []
    real = api.simulate

    def simulate(*args, **kwargs):
        seen.append(capsys.readouterr().out)
        return real(*args, **kwargs)

    monkeypatch.setattr("fastsched.sim._compare.simulate", simulate)
    assert main(["simulate", w, "--policy", "fifo,srtf", "--nodes", "2", "--gpus", "4", "--workers", "1", "-q"]) == 0
    assert len(seen[0].splitlines()) == 1 and seen[0].startswith("policy")  # the header, alone
    assert seen[1].split()[0] == "fifo"  # fifo's row printed before srtf's run started
