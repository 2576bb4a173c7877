"""The policies load scipy's solvers only when they solve a linear or integer program."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_simulator_loads_no_scipy_solver():
    code = (
        "import sys, fastsched.sim.api, fastsched.sim.policies.registry\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scipy.optimize', 'scipy.sparse'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
