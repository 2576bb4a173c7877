"""Ctrl-C inside a compiled kernel (issue 26, item 2): exit 130, never an internal error.

When SIGINT is handled while a numba kernel's result is being returned, the interpreter
reports ``SystemError: CPUDispatcher(...) returned a result with an exception set`` with the
``KeyboardInterrupt`` as its cause. These tests raise exactly that from inside a simulation
round; ``benchmarks/interrupt_tries.py`` sends real SIGINTs at random moments.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

import fastsched.sim
from fastsched.cli import main
from fastsched.sim import api
from fastsched.sweep.store import LOG_NAME

from ._helpers import TINY, listing, tiny_args, write


def _kernel_interrupt():
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as ki:
        raise SystemError("CPUDispatcher(<function search_serial>) returned a result with an exception set") from ki


def _step_interrupted_after(n, real_step):
    calls = []

    def step(self, seconds):
        calls.append(1)
        if len(calls) == n:
            _kernel_interrupt()
        return real_step(self, seconds)

    return step


def test_simulate_kernel_interrupt_exits_130_and_writes_nothing(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)
    monkeypatch.setattr(api.Cluster, "step", _step_interrupted_after(3, api.Cluster.step))
    log = tmp_path / "rounds.jsonl"
    assert main([*tiny_args(w), "--output", str(log)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "rerun the same command" in err
    assert "internal error" not in err and "SystemError" not in err
    assert listing(tmp_path) == ["w.csv"]  # no log, no temporary file


def test_serial_sweep_kernel_interrupt_stops_and_resumes(tmp_path, capsys, monkeypatch):
    spec = tmp_path / "spec.json"
    w = write(tmp_path, "w.csv", TINY)
    spec.write_text(json.dumps({"workloads": [w], "policy": ["tiresias", "optimus"], "nodes": 2, "gpus": 4}))
    out = tmp_path / "out"
    real_step, real_simulate = api.Cluster.step, fastsched.sim.simulate
    runs = []

    def simulate(**kwargs):
        runs.append(1)
        return real_simulate(**kwargs)

    def step(self, seconds):
        if len(runs) == 2:  # inside the second run
            _kernel_interrupt()
        return real_step(self, seconds)

    monkeypatch.setattr(fastsched.sim, "simulate", simulate)
    monkeypatch.setattr(api.Cluster, "step", step)
    assert main(["sweep", str(spec), "--serial", "-q", "--output", str(out)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "resume with:" in err and "SystemError" not in err
    rows = [json.loads(line) for line in (out / LOG_NAME).read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["error"] is None  # the interrupted run is not a failed run
    monkeypatch.setattr(api.Cluster, "step", real_step)
    assert main(["sweep", str(spec), "--serial", "-q", "--output", str(out)]) == 0
    assert "(1 from an earlier sweep), 0 failed" in capsys.readouterr().err


def test_an_unrelated_system_error_is_still_an_internal_error(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)

    def step(self, seconds):
        raise SystemError("something else")

    monkeypatch.setattr(api.Cluster, "step", step)
    assert main(tiny_args(w)) == 1
    assert "internal error: SystemError: something else" in capsys.readouterr().err


def test_console_script_interrupted_while_importing_exits_130():
    # Ctrl-C while `import fastsched` is still running (seconds on a cold start)
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def imp(name, *a, **k):\n"
        "    if name == 'fastsched.cli':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = imp\n"
        "import fastsched_launch\n"
        "sys.exit(fastsched_launch.main(['--version']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130
    assert proc.stderr.strip() == "fastsched: interrupted" and "Traceback" not in proc.stderr


def test_console_script_entry_point_is_the_launcher():
    import importlib.metadata

    (ep,) = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "fastsched"]
    assert ep.value.split(":")[0] == "fastsched_launch"


class _SwallowsInterrupt:
    """Raises SIGINT from its finalizer: Python prints the KeyboardInterrupt as "Exception ignored"."""

    def __del__(self):
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):  # bytecodes, so the handler runs here, inside the finalizer
            pass


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the swallowed interrupt
def test_interrupt_swallowed_by_a_finalizer_still_stops_simulate(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)
    real_step = api.Cluster.step
    calls = []

    def step(self, seconds):
        calls.append(1)
        if len(calls) == 2:
            _SwallowsInterrupt()  # dropped at once: the finalizer runs now
        return real_step(self, seconds)

    monkeypatch.setattr(api.Cluster, "step", step)
    log = tmp_path / "rounds.jsonl"
    assert main([*tiny_args(w), "--output", str(log)]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert listing(tmp_path) == ["w.csv"]
    assert len(calls) == 2  # stopped after the round in which it arrived
