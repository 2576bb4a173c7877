"""What a simulation's start-up loads: only what it uses (issue 22's whole-command floors).

Each check runs in a fresh interpreter (the test process has imported everything already).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code, **env):
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


_INTERPOLATE = """
import json, sys, tempfile
from fastsched.sim.truth.traces import TraceApplication, write_example_application
app = TraceApplication(write_example_application(tempfile.mkdtemp()))
step, sync = app.throughput((2, 2), 4)  # unmeasured: interpolated over the triangulation
assert not app.is_modelled((2, 2), 4) and 2.0 < step < 4.0
print(json.dumps([m in sys.modules for m in ("scipy.spatial", "scipy.interpolate", "scipy.optimize")]))
"""


def test_an_unmeasured_placement_needs_no_scipy_interpolate(tmp_path):
    cache = str(tmp_path / "cache")
    assert _run(_INTERPOLATE, NUMBA_CACHE_DIR=cache) == [True, False, False]  # Qhull runs once
    assert _run(_INTERPOLATE, NUMBA_CACHE_DIR=cache) == [False, False, False]  # then kept


_BAR = """
import io, json, sys
from fastsched._progress import JobsBar, progress_bar
bar = JobsBar(file=io.StringIO())
bar(1, 2, 60.0)
bar.close()
with progress_bar(3, desc="sweep", unit="run") as b:  # stderr is a pipe here
    b.update(3)
print(json.dumps(["tqdm" in sys.modules, bar._bar.disable, b.disable]))
"""


def test_a_bar_that_is_not_shown_does_not_import_tqdm():
    assert _run(_BAR) == [False, True, True]


# A fresh cache holding the kernel of the one kernel module loaded: the notice has nothing to
# announce, and says so without importing every other policy's modules to count their kernels.
_WARM_NOTICE = """
import io, json, sys
import numpy as np
from fastsched.sim.engine._step import advance_fixed
from fastsched import _firstrun
gain = np.ones(3)
prog = np.array([1.0, 2.0, 3.0])
advance_fixed(60.0, 0.0, 0, 0.0, 0.0, 0.0, 1, False, 1.0, 0.0, gain, prog, 2, 3)  # compiled and cached
import numba
from fastsched import _warmup
out = io.StringIO()
shown = [_firstrun.compile_notice("simulate", stream=out)]  # no warm-up record: not cold
rec = {"numba": numba.__version__, "rate_s": 1.0, "kernels": {"simulate": ["fastsched.sim.engine._step.advance_fixed"]}}
_warmup.record_path().write_text(json.dumps(rec))
shown.append(_firstrun.compile_notice("simulate", stream=out))  # the record's kernel is cached
loaded = ["fastsched.policy._ga" in sys.modules, "fastsched.sim.policies.sia" in sys.modules]
_firstrun.compile_notice("sweep", stream=out)  # announced before the workers load anything: a full count
print(json.dumps([shown, out.getvalue(), *loaded, "fastsched.sim.policies.sia" in sys.modules]))
"""


def test_a_warm_notice_imports_no_other_module(tmp_path):
    assert _run(_WARM_NOTICE, NUMBA_CACHE_DIR=str(tmp_path / "cache")) == [[False, False], "", False, False, True]
