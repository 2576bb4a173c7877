"""No compile in the middle of a run: after ``prepare``, a large round's path compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fastsched.policy import PolluxPolicy

ROOT = Path(__file__).resolve().parents[2]

# On an empty numba cache: small rounds (what a run's first rounds compile), then ``prepare``,
# then two rounds of the large path (threaded driver, parallel kernels, relaxation seed) with
# other jobs and nodes; numba's compile events counted in each phase.
_SCRIPT = r"""
import json
import numba.core.event as ev
from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy

GPU = "nvidia.com/gpu"
count = [0]


class Compiles(ev.Listener):
    def on_start(self, event):
        count[0] += 1

    def on_end(self, event):
        pass


def fn(nodes, replicas):
    return replicas ** 0.7


def rounds(policy, njobs, nnodes):
    jobs = {f"j{i}": JobInfo({GPU: 1, "pods": 1}, fn, i, 0, [2, 4, 8][i % 3]) for i in range(njobs)}
    nodes = {f"n{i}": NodeInfo({GPU: 8, "pods": 32}, False) for i in range(nnodes)}
    template = NodeInfo({GPU: 8, "pods": 32}, True)
    first, _ = policy.optimize(jobs, nodes, {}, template)
    policy.optimize(jobs, nodes, first, template)


out = {}
with ev.install_listener("numba:compile", Compiles()):
    rounds(PolluxPolicy(seed=0, parallel=False), 4, 2)
    out["small"] = count[0]
    PolluxPolicy(seed=0, parallel=True).prepare(600)
    out["prepare"] = count[0] - out["small"]
    large = PolluxPolicy(seed=3, p=-1.0, parallel=True)
    large._relax = True
    rounds(large, 30, 6)
    out["large"] = count[0] - out["small"] - out["prepare"]
    # A large round's speedup tables: many functions filled at once (the parallel fill), and written.
    import numpy as np
    from fastsched.goodput import GoodputFunction, SpeedupFunction
    from fastsched.policy._tables import speedup_tables

    fns = [
        SpeedupFunction(GoodputFunction([0.2, 0.02, 0.3, 0.02, 0.04, 0.002, 1.5], (1.0, 2.0), 64), 1024 + i)
        for i in range(100)
    ]
    speedup_tables(fns, list(range(100)), np.arange(100) % 9, 4)
    out["tables"] = count[0] - out["small"] - out["prepare"] - out["large"]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_prepared_large_round_compiles_nothing():
    """On an empty cache the large path needs kernels the small rounds did not compile; ``prepare``
    compiles them, and the large rounds (and a large round's speedup tables) that follow compile nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(Path(tmp) / "cache"))
        res = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, check=True)
    counts = json.loads(res.stdout.strip().splitlines()[-1])
    assert counts["small"] > 0 and counts["prepare"] > 0
    assert counts["large"] == 0
    assert counts["tables"] == 0


def test_prepare_checks_its_argument():
    with pytest.raises((TypeError, ValueError), match="max_jobs"):
        PolluxPolicy(seed=0).prepare(-1)
