"""The first run says it compiles; ``info``, ``warmup`` and ``--version``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fastsched._version import __version__
from fastsched.cli import main

ROOT = Path(__file__).resolve().parents[2]

# In a fresh process with an empty NUMBA_CACHE_DIR: the notice is shown; once one kernel is
# compiled (and so cached) it is not. Compiling that one small kernel takes about a second.
_SCRIPT = """
import io, numpy as np
from fastsched import _firstrun
first = io.StringIO()
print(_firstrun.compile_notice("simulate", stream=first))
print(first.getvalue().strip())
from fastsched.goodput import _kernels
_kernels.network_time(np.ones(7), False, 1.0)
second = io.StringIO()
print(_firstrun.compile_notice("simulate", stream=second), repr(second.getvalue()))
# another area's kernels do not make this one warm
print(_firstrun.cache_state(("fastsched.policy",)).cold, _firstrun.cache_state(("fastsched.goodput",)).cold)
"""


def _run(code, cache_dir, *args):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args, "-c", code] if code else [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


def test_notice_with_an_empty_cache(tmp_path):
    proc = _run(_SCRIPT, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "True"
    assert lines[1].startswith("fastsched: compiling kernels, first run only: about ") and " s " in lines[1]
    assert str(tmp_path / "cache") in lines[1]
    assert lines[2] == "False ''"
    assert lines[3] == "True False"


def test_notice_goes_to_stderr_before_the_run(tmp_path):
    # The real command on a workload whose only job arrives after a one-round cap: it passes
    # every check, prints the notice, and ends without compiling much.
    w = tmp_path / "w.csv"
    w.write_text("name,time,application,num_replicas,batch_size\nlate,999999,ncf,1,32768\n")
    proc = _run(
        None,
        tmp_path / "cache",
        "-m",
        "fastsched",
        "simulate",
        str(w),
        "--policy",
        "tiresias",
        "--max-time",
        "60",
        "--allow-incomplete",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("fastsched: compiling kernels, first run only")
    assert "average JCT" in proc.stdout
    quiet = _run(
        None,
        tmp_path / "cache2",
        "-m",
        "fastsched",
        "simulate",
        str(w),
        "--max-time",
        "60",
        "-q",
        "--allow-incomplete",
        "--policy",
        "tiresias",
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"fastsched {__version__}"


def test_info(capsys):
    assert main(["info", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["fastsched"] == __version__ and d["packages"]["numba"]
    assert isinstance(d["cuda"], bool) and d["threading_layer"] and 0 <= d["kernels_cached"] <= d["kernels"]
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "threading layer" in out and "kernel cache" in out and "CUDA" in out


def test_python_m_fastsched(tmp_path):
    proc = _run(None, tmp_path / "cache", "-m", "fastsched", "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"fastsched {__version__}"


def test_warmup(capsys):
    assert main(["warmup"]) == 0
    err = capsys.readouterr().err
    assert "simulate (pollux)" in err and "warm:" in err
