"""Same inputs and seed give the same simulation, bit for bit, at any thread count.

The simulation runs in fresh interpreters with NUMBA_NUM_THREADS=1 and 2 (and matching
BLAS/OpenMP thread counts); their per-job completion times and average JCT, printed with
``repr``, must be identical.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
from fastsched.sim import simulate
from fastsched.sim.truth.builtin import builtin_workload
jobs = builtin_workload()[:12]
r = simulate(jobs, seed=3, max_time=4 * 3600)
print(repr(r.avg_jct), [j.completion_time for j in r.jobs], [j.num_restarts for j in r.jobs])
"""


def _run(threads: str) -> str:
    env = dict(os.environ, NUMBA_NUM_THREADS=threads, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True)
    return res.stdout


def test_short_simulation_identical_at_one_and_two_threads():
    one, two = _run("1"), _run("2")
    assert one.strip() and "nan" not in one
    assert one == two
