"""The policies load scipy's solvers only when they solve a linear or integer program."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_goodput_policies_loads_no_scipy_solver():
    code = (
        "import sys\n"
        "import fastsched.sim.policies.sia, fastsched.sim.policies.gavel, fastsched.sim.policies.gavel_objectives\n"
        "import fastsched.sim.policies.pollux, fastsched.sim.policies._assign, fastsched.sim.policies._interior_lp\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scipy.optimize', 'scipy.sparse'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_importing_the_simulator_loads_no_scipy_solver():
    # The simulator's API loads every registered policy module, Themis and Shockwave included.
    code = (
        "import sys\n"
        "import fastsched.sim.api, fastsched.sim.policies.themis, fastsched.sim.policies.shockwave\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scipy.optimize', 'scipy.sparse'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
