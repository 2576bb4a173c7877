"""Availability and backend resolution without numba-cuda or without a working driver.

These run in fresh subprocesses so that blocking numba-cuda (a ``sys.modules`` entry of
``None`` makes its import raise ImportError, as if it were not installed) cannot leak into
the rest of the session; they need no GPU and run in every pytest process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_BLOCK_NUMBA_CUDA = """
import sys
sys.modules["numba_cuda"] = None  # as if not installed: importing a None entry raises ImportError
"""

_BLOCK_ALL_CUDA = """
import sys
for name in ("numba_cuda", "numba.cuda", "numba.cuda.simulator"):
    sys.modules[name] = None
"""

_BREAK_DRIVER = """
import numba.cuda as _c
def _boom():
    raise OSError("libcuda.so: cannot open shared object file")
_c.is_available = _boom
"""

_REPORT = """
import json
import fastsched.cuda as fc
out = {"available": fc.is_available(), "reason": fc.unavailable_reason(), "threshold": fc.AUTO_THRESHOLDS["optimize"],
       "auto_small": fc.resolve_backend("auto", 1), "auto_huge": fc.resolve_backend("auto", 10**12),
       "cpu": fc.resolve_backend("cpu", 10**12)}
try:
    fc.resolve_backend("cuda", 10**12)
    out["cuda_error"] = None
except fc.CudaUnavailableError as exc:
    out["cuda_error"] = str(exc)
    out["is_runtime_error"] = isinstance(exc, RuntimeError)
try:
    fc.optimize_keys(None, None, [1])
    out["entry_error"] = None
except fc.CudaUnavailableError as exc:
    out["entry_error"] = str(exc)
print("REPORT" + json.dumps(out))
"""


def _run(prelude: str, env_extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(env_extra or {})
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    code = textwrap.dedent(prelude) + _REPORT
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT"))
    return json.loads(line[len("REPORT") :])


def _check_fallback(rep: dict, why: str) -> None:
    assert rep["available"] is False
    assert why in rep["reason"]
    assert rep["auto_small"] == "cpu" and rep["auto_huge"] == "cpu" and rep["cpu"] == "cpu"
    assert rep["is_runtime_error"] and "backend='cuda'" in rep["cuda_error"] and why in rep["cuda_error"]
    assert "unavailable" in rep["entry_error"]


def test_without_numba_cuda_imports_and_falls_back():
    rep = _run(_BLOCK_NUMBA_CUDA, {"FASTSCHED_CUDA_THRESHOLD": "5"})
    _check_fallback(rep, "numba-cuda is not installed")
    assert rep["threshold"] == 5


def test_without_any_numba_cuda_module():
    # Even numba's deprecated built-in target blocked (and the simulator requested): still no error.
    rep = _run(_BLOCK_ALL_CUDA, {"NUMBA_ENABLE_CUDASIM": "1"})
    _check_fallback(rep, "numba-cuda is not installed")


def test_broken_driver_never_raises():
    pytest.importorskip("numba_cuda", reason="numba-cuda not installed: the driver path is not reachable")
    rep = _run(_BREAK_DRIVER, {"FASTSCHED_CUDA_THRESHOLD": "not-a-number"})
    # Without a driver library the probe stops before numba-cuda's own (broken) check.
    why = "CUDA initialisation failed" if "initialisation" in rep["reason"] else "no CUDA driver library"
    _check_fallback(rep, why)
    assert rep["threshold"] == 20_000  # a bad environment value falls back to the default
