"""Every CUDA kernel compiles to PTX for sm_90 (the H200's target), with no GPU needed.

The simulator cannot show this (it runs device functions as Python). Runs
``tests/cuda/ptx_compile.py`` in a fresh process without ``NUMBA_ENABLE_CUDASIM``; skips when
the CUDA toolkit's libnvvm/libdevice are absent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"),
    reason="runs once, in the plain pytest process (it needs the real CUDA target, not the simulator)",
)
def test_kernels_compile_for_sm90():
    pytest.importorskip("numba_cuda", reason="numba-cuda not installed")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "cuda" / "ptx_compile.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )
    out = proc.stdout
    if out.startswith("SKIP"):
        pytest.skip(out.strip())
    assert proc.returncode == 0, out + proc.stderr
    compiled = [ln.split()[1] for ln in out.splitlines() if ln.startswith("PTX")]
    assert "evaluate_population_kernel" in compiled and "checked_optimize_kernel" in compiled
