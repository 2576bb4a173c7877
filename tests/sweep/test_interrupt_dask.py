"""Ctrl-C during a dask sweep: one line saying how to resume, no tracebacks, exit 130.

Kept quick (one worker, interrupted soon after start). The workers' own tracebacks, which
appear when Ctrl-C reaches two busy workers ten seconds in, are kept away by starting them with
SIGINT ignored (``fastsched.sweep.client``); that case was checked by hand, not here, as it
needs a run of 20 s or more.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="distributed is not installed (pip install -e .[dask])")

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_stops_cleanly(tmp_path):
    spec = tmp_path / "spec.json"
    # Pollux on the builtin workload: seconds per run, so the sweep is mid-flight when interrupted.
    spec.write_text(json.dumps({"workloads": "builtin", "policy": "pollux", "seeds": 6}))
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fastsched", "sweep", str(spec), "--workers", "1", "--output", str(out), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True,  # its own process group, as a terminal would make it
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "runs.jsonl").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole group, workers included
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted" in err and f"resume with: fastsched sweep {spec} --output {out}" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    for line in (out / "runs.jsonl").read_text().splitlines():
        json.loads(line)  # what was written is valid
